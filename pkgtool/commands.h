/*
 * commands.h - the command handlers and what they share.  Each handler gets
 * a loaded context and the parsed command line, and returns an exit code.
 */
#ifndef CFAPKG_COMMANDS_H
#define CFAPKG_COMMANDS_H

#include "cfapkg.h"

struct cJSON;
#include "opts.h"

/* Exit codes (docs/cli.md). */
enum exit_code {
	EXIT_OK = 0,
	EXIT_ERROR = 1,        /* I/O and anything not listed */
	EXIT_USAGE = 2,        /* bad command line, spec or facts */
	EXIT_UNSOLVABLE = 3,   /* no consistent set exists */
	EXIT_NOTFOUND = 4,     /* no such package */
	EXIT_RECIPE = 5,       /* a recipe or the GPU table is broken */
	EXIT_UNSUPPORTED = 6,  /* not available in this build or on this platform */
	EXIT_NO_GPU = 7,       /* no AMD GPU on this machine (and none was named) */
	EXIT_NETWORK = 8,      /* a download failed */
	EXIT_INTEGRITY = 9,    /* a download did not match its SHA-256 or size */
	EXIT_BUSY = 10,        /* another cfapkg kept the root's lock too long */
	EXIT_INTERRUPTED = 130, /* Ctrl-C (SIGINT) stopped it: 128 + the signal, as shells say */
	/* run: the program, not cfapkg, is missing or cannot be started (the
	 * shell's codes, so they never mix with cfapkg's own). */
	EXIT_NOT_EXECUTABLE = 126,
	EXIT_NO_PROGRAM = 127
};


int cmd_plan(struct cfapkg_ctx *ctx, const struct cli *cli);
/* Facts, pins and the solve shared by plan and fetch (install solves in
 * the library).  The environment's pins bind too. */
int solve_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_plan **out);
void print_problems_text(const struct cfapkg_plan *plan, const struct cli *cli);
/* The exit status of a plan that did not solve: EXIT_NOTFOUND when a
 * request names no package, else EXIT_UNSOLVABLE. */
int unsolved_exit(const struct cfapkg_plan *plan);
void print_plan_text(struct cfapkg_ctx *ctx, const struct cfapkg_plan *plan);
/* --verbose: what the solver decided, on standard error. */
void print_decisions(const struct cfapkg_plan *plan, const struct cli *cli);
/* The plan as JSON (for --json).  Owned by the caller. */
struct cJSON *plan_json(struct cfapkg_ctx *ctx, const struct cfapkg_plan *plan);
int cmd_install(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_search(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_info(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_config(struct cfapkg_ctx *ctx, const struct cli *cli);
/* --version: cfapkg's and its libraries' versions (--json: an object). */
int print_versions(const struct cli *cli);
/* cmd_gpus.c */
int cmd_gpus(struct cfapkg_ctx *ctx, const struct cli *cli);
/* A GPU as --gpu or CFAPKG_GPU name it (target, name or PCI id) into gfx;
 * when it names none or several, prints the nearest or the candidates
 * and returns EXIT_USAGE. */
int gpu_from_cli(struct cfapkg_ctx *ctx, const char *text, char *gfx, size_t len);
/* cmd_channel.c */
int cmd_channel(struct cfapkg_ctx *ctx, const struct cli *cli);

/* facts_opts.c: detected facts (unless --gpu, CFAPKG_GPU or --facts name
 * another machine), then --facts, then the fact flags in order: a copy
 * into f (zeroed or holding facts) that the caller clears. */
int facts_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_facts *f);
/* --gpu-index as a number (-1 when absent). */
int gpu_index_from_cli(const struct cli *cli, int *index);
/* The machine the last facts_from_cli detected; NULL when the facts
 * describe another machine (--gpu, CFAPKG_GPU, --facts). */
const struct cfapkg_machine *detected_machine(void);
/* Frees what facts_from_cli kept (main, once the command has ended). */
void forget_facts_choice(void);

/* cmd_fetch.c */
int cmd_prefetch(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_fetch(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_add_file(struct cfapkg_ctx *ctx, const struct cli *cli);
/* The root's writer lock: at once if free, else after saying who waits
 * (up to CFAPKG_LOCK_WAIT seconds, default 600). */
int take_lock(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_writer_lock **lock);
int fetch_opts_from_cli(const struct cli *cli, struct cfapkg_fetch_opts *o);
/* A warning for each URL a download gave up before another (its "tried"). */
void print_tried(const struct cfapkg_fetch_item *items, size_t n);
/* A plan holding a package that cannot be fetched is refused, naming it
 * and why (EXIT_UNSUPPORTED); EXIT_OK otherwise. */
int refuse_unfetchable(const struct cfapkg_plan *plan);

/* cmd_mirror.c: mirror create */
int cmd_mirror(struct cfapkg_ctx *ctx, const struct cli *cli);
/* --max-size's value: bytes, or a number with K, M or G (powers of 1024). */
bool parse_size(const char *s, uint64_t *out);

/* cmd_recipe.c: recipe add-version, recipe outdated */
int cmd_recipe(struct cfapkg_ctx *ctx, const struct cli *cli);
/* cmd_trust.c: recipe trust, untrust, trusted, export-trusted (args[0]) */
int cmd_recipe_trust(struct cfapkg_ctx *ctx, const struct cli *cli);

/* cmd_install.c */
int cmd_remove(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_update(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_repair(struct cfapkg_ctx *ctx, const struct cli *cli);
/* How long a writer waits for the root's lock: CFAPKG_LOCK_WAIT seconds,
 * default 600. */
unsigned lock_wait_ms(void);
/* The environment named by --env (the last one), else "default". */
const char *env_from_cli(const struct cli *cli);

/* cmd_env.c */
int cmd_env(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_list(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_history(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_rollback(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_mark_good(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_unmark(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_pin(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_unpin(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_pins(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_lock(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_verify(struct cfapkg_ctx *ctx, const struct cli *cli);
/* EXIT_OK when env names an environment that exists; else says so. */
int need_env(struct cfapkg_ctx *ctx, const char *env);

/* cmd_clean.c: what deletes (env remove asks first; gc and cache clean
 * have --dry-run). */
int cmd_env_remove(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env);
int cmd_gc(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_cache(struct cfapkg_ctx *ctx, const struct cli *cli);

/* cmd_run.c */
int cmd_env_runtime(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_run(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_stage(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_unstage(struct cfapkg_ctx *ctx, const struct cli *cli);
/* cmd_venv.c: --venv DIR, else (active) the active venv ($VIRTUAL_ENV). */
const char *venv_from_cli(const struct cli *cli, bool active);
int stage_venv(struct cfapkg_ctx *ctx, const struct cli *cli, const char *dir);
/* After env's generation changed: its staged venvs follow, saying so. */
void follow_venvs(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env);
/* doctor's PyTorch probe of the venv doctor_venv_dir picks (--venv, or
 * the active venv when it was staged from env; NULL: none). */
const char *doctor_venv_dir(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env);
int doctor_venv(struct cfapkg_ctx *ctx, const struct cli *cli, const char *dir,
                unsigned timeout_s, struct cJSON **json, bool *ok, char *failed, size_t len);
/* The environment's runtime resolved for this machine (--gpu-index).  m
 * (the caller's: zeroed, or from an earlier call; NULL: none kept) gets
 * the machine detected, to be cleared by the caller; *machine is m when
 * detection worked, else NULL. */
int load_runtime(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env,
                 struct cfapkg_runtime **rt, struct cfapkg_machine *m,
                 const struct cfapkg_machine **machine);

/* shell_snippet.c: env activate's snippet (it saves what it changes and
 * defines cfapkg_deactivate), and env deactivate's. */
int shell_activate(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt, const char *shell);
int shell_deactivate(const char *shell);
/* Whether --shell names a shell the snippets know; prints why not. */
bool shell_known(const char *shell);
/* --shell, else the user's shell: $SHELL's (bash, zsh, fish, pwsh), or
 * PowerShell on Windows; NULL (said why) when none is known. */
const char *shell_from_cli(const struct cli *cli);
/* Puts back, in this process, what an earlier activation saved. */
void shell_undo_here(void);

/* cmd_doctor.c */
int cmd_doctor(struct cfapkg_ctx *ctx, const struct cli *cli);

/* cmd_bench.c */
int cmd_bench(struct cfapkg_ctx *ctx, const struct cli *cli);

/* cmd_detect.c */
int cmd_detect(struct cfapkg_ctx *ctx, const struct cli *cli);
int cmd_report(struct cfapkg_ctx *ctx, const struct cli *cli);
/* Detection's warnings, and how to choose another GPU when the chosen one
 * is probably not the one meant: shown with every plan made from
 * detection, before anything is installed.  Nothing for NULL. */
void print_detection_notes(FILE *out, const struct cfapkg_machine *m);
/* How to plan for the GPU the chosen one was preferred to (a hint line). */
void print_choice_hint(FILE *out, const struct cfapkg_machine *m);
/* o[key] = index, or null when negative (none). */
void json_index(struct cJSON *o, const char *key, int index);
/* The same as JSON: null for NULL (the facts describe another machine). */
struct cJSON *detection_json(const struct cfapkg_machine *m);

/* cmd_completion.c: completion scripts made from the command and option
 * tables. */
int cmd_completion(struct cfapkg_ctx *ctx, const struct cli *cli);

/* Reports the context's error as "cfapkg: error: ..." and maps the code. */
int report_error(struct cfapkg_ctx *ctx, enum cfapkg_err err);
/* The exit code of an error, without printing. */
int report_error_code(enum cfapkg_err err);

/* json_docs.c: documents of the commands that change an environment.
 * outcome is "done", "nothing-to-do", "dry-run" or "declined"; t and r
 * may be NULL. */
/* A part of a set: {"name", "version", "kind", "requested"}. */
struct cJSON *part_json(const struct cfapkg_lockfile_part *p);
/* Change lines ("+zluda 6-preview.69") as {"action", "name", "from", "to", "text"}. */
struct cJSON *changes_json(char *const *lines);
struct cJSON *trans_json(const char *env, struct cfapkg_trans *t,
                         const struct cfapkg_trans_result *r, const char *outcome);
struct cJSON *switch_json(const char *env, unsigned from, unsigned to, const char *why);
/* stage and unstage: {"dir", KEY: n}. */
void print_count_json(const char *dir, const char *key, size_t n);

/* cmd_why.c and explain_kept.c: which request pulls a part in; why a
 * transaction with nothing to do kept each package it was asked about. */
int cmd_why(struct cfapkg_ctx *ctx, const struct cli *cli);
void explain_nothing_to_do(struct cfapkg_ctx *ctx, struct cfapkg_trans *t, const struct cli *cli);

#endif
