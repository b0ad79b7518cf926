/*
 * cmd_env.c - living with environments: env create|list, list, history,
 * rollback, mark-good/unmark, pin/unpin/pins (lock and verify are in
 * cmd_lock.c; env remove and gc, which delete, in cmd_clean.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* A generation number as typed; false for anything but plain digits. */
static bool parse_uint(const char *s, unsigned *out)
{
	unsigned long long v;

	/* A generation number: digits only, well inside an unsigned. */
	if (!cli_number(s, 1000000000ull, &v))
		return false;
	*out = (unsigned)v;
	return true;
}

/* Runs a change under the root's lock.
 * fn's error is reported once the lock is let go; a lock that could not be
 * taken was already reported by take_lock. */
static int locked_call(struct cfapkg_ctx *ctx, const struct cli *cli,
                       enum cfapkg_err (*fn)(struct cfapkg_ctx *, const char *), const char *arg)
{
	struct cfapkg_writer_lock *lock = NULL;
	enum cfapkg_err e;
	int rc;

	if ((rc = take_lock(ctx, cli, &lock)))
		return rc;
	e = fn(ctx, arg);
	cfapkg_writer_unlock(lock);
	return e ? report_error(ctx, e) : EXIT_OK;
}

/* env list: every environment with its current generation; one whose
 * generation cannot be read is shown as having nothing installed rather than
 * failing the whole list. */
static int env_list(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	char **names = NULL;
	cJSON *a = cJSON_CreateArray();
	size_t i, n;
	enum cfapkg_err e = cfapkg_env_list(ctx, &names, &n);

	if (e) {
		cJSON_Delete(a);
		return report_error(ctx, e);
	}
	for (i = 0; i < n; i++) {
		unsigned gen = 0;
		cJSON *o = cJSON_CreateObject();
		cfapkg_env_current(ctx, names[i], &gen);
		cfapkg_ctx_clear_error(ctx);
		json_str(o, "name", names[i]);
		cJSON_AddNumberToObject(o, "generation", gen);
		cJSON_AddItemToArray(a, o);
		if (cli->quiet && !cli->json)
			printf("%s\n", names[i]); /* names only, for completion scripts */
		else if (!cli->json && gen)
			printf("%-20s generation %u\n", names[i], gen);
		else if (!cli->json)
			printf("%-20s (nothing installed)\n", names[i]);
	}
	cfapkg_free(names);
	if (cli->json)
		json_print_list("environments", a);
	else
		cJSON_Delete(a);
	return EXIT_OK;
}

/* env deactivate: the shell --shell names, else the user's. */
static int deactivate(const struct cli *cli)
{
	const char *shell = shell_from_cli(cli);

	return shell ? shell_deactivate(shell) : EXIT_USAGE;
}

/* env SUBCOMMAND.  activate and deactivate print shell code that the shell
 * evaluates, so --json is refused for them rather than mixed in. */
int cmd_env(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *sub = cli->nargs ? cli->args[0] : "";
	const char *name = cli->nargs > 1 ? cli->args[1] : NULL;

	if (cli->json && (strcmp(sub, "activate") == 0 || strcmp(sub, "deactivate") == 0)) {
		cli_error("'env %s' does not take --json: its output is a shell's\n", sub);
		return EXIT_USAGE;
	}
	if (strcmp(sub, "list") == 0 && cli->nargs == 1)
		return env_list(ctx, cli);
	if (strcmp(sub, "show") == 0 || strcmp(sub, "activate") == 0)
		return cmd_env_runtime(ctx, cli);
	if (strcmp(sub, "deactivate") == 0 && cli->nargs == 1)
		return deactivate(cli);
	if (name && cli->nargs == 2 && strcmp(sub, "create") == 0) {
		/* A new environment has no generation yet: its switch document
		 * says 0 -> 0. */
		int rc = locked_call(ctx, cli, cfapkg_env_create, name);
		if (!rc && cli->json)
			json_print(switch_json(name, 0, 0, NULL));
		else if (!rc && !cli->quiet)
			printf("Created environment \"%s\"\n", name);
		return rc;
	}
	if (name && cli->nargs == 2 && strcmp(sub, "remove") == 0)
		return cmd_env_remove(ctx, cli, name);
	cli_error("usage: cfapkg env create|remove NAME, cfapkg env list, "
	        "cfapkg env show|activate [--env NAME], cfapkg env deactivate --shell SHELL\n");
	return EXIT_USAGE;
}

/* list: the current generation's packages; an environment with nothing
 * installed prints an empty list and still succeeds. */
int cmd_list(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *env = env_from_cli(cli);
	struct cfapkg_lockfile *lock = NULL;
	struct table t;
	unsigned gen = 0;
	cJSON *a;
	size_t i;
	enum cfapkg_err e;
	int rc;

	if ((rc = need_env(ctx, env)) || (e = cfapkg_env_current(ctx, env, &gen), e))
		return rc ? rc : report_error(ctx, e);
	if (gen && (e = cfapkg_env_lockfile(ctx, env, gen, &lock)))
		return report_error(ctx, e);
	if (!lock || lock->nparts == 0) { /* nothing installed yet, or all removed */
		if (cli->json)
			json_print_list("packages", cJSON_CreateArray());
		else if (!cli->quiet)
			printf("(nothing installed)\n");
		cfapkg_lockfile_free(lock);
		return EXIT_OK;
	}
	a = cJSON_CreateArray();
	table_init(&t, 4);
	table_row(&t, (const char *const[]){"NAME", "VERSION", "KIND", "REQUESTED"});
	for (i = 0; i < lock->nparts; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		cJSON *o = part_json(p);
		/* The store path and hash are only in --json: the table is for
		 * people, the JSON for scripts that check the files. */
		json_str(o, "sha256", p->sha256);
		json_str(o, "store", p->store);
		cJSON_AddItemToArray(a, o);
		table_row(&t, (const char *const[]){p->name, p->version, cfapkg_kind_name(p->kind),
		                                    p->requested ? "yes" : ""});
	}
	if (cli->json) {
		json_print_list("packages", a);
		table_free(&t);
	} else {
		table_print(&t);
		cJSON_Delete(a);
	}
	cfapkg_lockfile_free(lock);
	return EXIT_OK;
}

/* "2026-11-30T07:12:03Z" as "2026-11-30 07:12 UTC".
 * Anything that is not the expected UTC form is shown as written, so an odd
 * timestamp stays readable. */
static void format_when(const char *iso, char *buf, size_t len)
{
	if (strlen(iso) >= 16 && iso[10] == 'T')
		cli_fit(buf, len, "%.10s %.5s UTC", iso, iso + 11);
	else
		cli_fit(buf, len, "%s", iso[0] ? iso : "an unknown time");
}

/* "[known-good: doctor 2026-11-30 07:12 UTC]", "[checked]"...
 * Only a live probe (doctor) or the user can make a generation known-good;
 * "checked" means only its static checks passed. */
static void state_tag(const struct cfapkg_history_entry *h, char *buf, size_t len)
{
	char when[48];

	format_when(h->mark.time, when, sizeof(when));
	if (h->state == CFAPKG_GEN_KNOWN_GOOD && h->mark.by == CFAPKG_MARK_HAND)
		cli_fit(buf, len, "[known-good by hand %s]", when);
	else if (h->state == CFAPKG_GEN_KNOWN_GOOD)
		cli_fit(buf, len, "[known-good: doctor %s]", when);
	else
		cli_fit(buf, len, "[%s]", h->checked ? "checked" : "not checked");
}

/* The mark as marks.log keeps it, "by" named as history prints it, so that the
 * text and the document say the same. */
static cJSON *mark_json(const struct cfapkg_gen_mark *m)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "time", m->time);
	cJSON_AddBoolToObject(o, "good", m->good);
	json_str(o, "by", cfapkg_mark_source_name(m->by));
	json_str(o, "reason", m->reason);
	json_str(o, "command", m->command);
	return o;
}

/* Each mark and unmark of a generation: into its JSON, and as lines
 * under it in the text.
 * The marks are read only for generations that have any; a history whose marks
 * cannot be read still lists its generations. */
static void add_marks(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env,
                      const struct cfapkg_history_entry *h, cJSON *o)
{
	struct cfapkg_gen_mark *m = NULL;
	cJSON *a = cJSON_AddArrayToObject(o, "marks");
	size_t i, n = 0;

	cJSON_AddItemToObject(o, "known_good", h->good ? mark_json(&h->mark) : cJSON_CreateNull());
	if (!h->nmarks || cfapkg_env_marks(ctx, env, h->generation, &m, &n)) {
		cfapkg_ctx_clear_error(ctx);
		return;
	}
	for (i = 0; i < n; i++) {
		cJSON_AddItemToArray(a, mark_json(&m[i]));
		if (cli->json)
			continue;
		printf("        %s  %s by %s%s%s%s%s%s\n", m[i].time,
		       m[i].good ? "marked known-good" : "unmarked", cfapkg_mark_source_name(m[i].by),
		       m[i].reason[0] ? ": " : "", m[i].reason, m[i].command[0] ? " (" : "",
		       m[i].command, m[i].command[0] ? ")" : "");
	}
	cfapkg_free(m);
}

/* A history entry as JSON; with_changes reads the generation's change
 * lines (the text output has no use for them).
 * A switch (a rollback) creates no generation: it carries "from" and no state
 * of its own. */
static cJSON *history_json(struct cfapkg_ctx *ctx, const char *env,
                           const struct cfapkg_history_entry *h, bool with_changes)
{
	cJSON *o = cJSON_CreateObject();
	char **lines = NULL;
	size_t n;

	cJSON_AddStringToObject(o, "event", h->is_switch ? "switch" : "generation");
	cJSON_AddNumberToObject(o, "generation", h->generation);
	if (h->is_switch)
		cJSON_AddNumberToObject(o, "from", h->from);
	json_str(o, "time", h->time);
	json_str(o, "command", h->command);
	/* Each change its own line (the entry joins them). */
	if (with_changes && !h->is_switch &&
	    cfapkg_env_gen_changes(ctx, env, h->generation, &lines, &n))
		cfapkg_ctx_clear_error(ctx);
	cJSON_AddItemToObject(o, "changes", changes_json(lines));
	cfapkg_free(lines);
	if (!h->is_switch) {
		json_str(o, "state", cfapkg_gen_state_name(h->state));
		cJSON_AddBoolToObject(o, "checked", h->checked);
	}
	cJSON_AddBoolToObject(o, "good", h->good);
	cJSON_AddBoolToObject(o, "current", h->current);
	return o;
}

/* history: every generation and every switch, oldest first; "*" marks the
 * current generation. */
int cmd_history(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *env = env_from_cli(cli);
	struct cfapkg_history_entry *h = NULL;
	char tag[128];
	cJSON *a;
	size_t i, n;
	enum cfapkg_err e;
	int rc;

	if ((rc = need_env(ctx, env)))
		return rc;
	if ((e = cfapkg_env_history(ctx, env, &h, &n)))
		return report_error(ctx, e);
	a = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		cJSON *o = history_json(ctx, env, &h[i], cli->json);
		cJSON_AddItemToArray(a, o);
		if (h[i].is_switch) {
			if (!cli->json)
				printf("   %s  switch %u -> %u  (%s)\n", h[i].time, h[i].from,
				       h[i].generation, h[i].command);
			continue;
		}
		state_tag(&h[i], tag, sizeof(tag));
		if (!cli->json)
			printf("%s %3u %s  %-28s %s  %s\n", h[i].current ? "*" : " ", h[i].generation,
			       h[i].time, h[i].command, h[i].changes, tag);
		add_marks(ctx, cli, env, &h[i], o);
	}
	cfapkg_history_free(h, n);
	if (!n && !cli->json)
		printf("(no generations yet)\n");
	if (cli->json)
		json_print_list("history", a);
	else
		cJSON_Delete(a);
	return EXIT_OK;
}

/* Why a known-good generation is one: "marked known-good by doctor on
 * 2026-11-30 07:12 UTC (usable: driver, cuBLAS, cuBLASLt OK)".
 * doctor records what its probe found as the reason; a mark by hand records
 * the user's reason and the command that made it. */
static void known_good_why(const struct cfapkg_gen_mark *m, char *buf, size_t len)
{
	char when[48];

	format_when(m->time, when, sizeof(when));
	if (m->by == CFAPKG_MARK_HAND)
		cli_fit(buf, len, "marked known-good by hand on %s (%s%s%s)", when, m->reason,
		        m->reason[0] && m->command[0] ? ": " : "", m->command);
	else
		cli_fit(buf, len, "marked known-good by doctor on %s (%s)", when, m->reason);
}

/* --to N (0 when not given) and --known-good; usage errors here. */
static int rollback_args(const struct cli *cli, unsigned *to, bool *known_good)
{
	const char *text = cli_value(cli, OPT_TO);

	*to = 0;
	*known_good = cli->seen & OPT_BIT(OPT_KNOWN_GOOD);
	if (text && *known_good) {
		cli_error("--to and --known-good each choose the generation; "
		        "give one of them\n");
		return EXIT_USAGE;
	}
	if (text && (!parse_uint(text, to) || *to == 0)) {
		cli_error("--to takes a generation number, from 1 ('cfapkg history' lists them)\n");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static void print_rollback(const struct cli *cli, const char *env, const struct cfapkg_rollback *r)
{
	char why[1200] = "";

	if (r->why)
		known_good_why(r->why, why, sizeof(why));
	if (cli->json)
		json_print(switch_json(env, r->from, r->to, why));
	else if (!cli->quiet && r->to == r->from)
		printf("Environment \"%s\" is already at generation %u; nothing to do\n", env, r->to);
	else if (!cli->quiet)
		printf("Environment \"%s\" is %s generation %u (was %u)%s%s\n", env,
		       r->to < r->from ? "back at" : "now at the later", r->to, r->from,
		       why[0] ? ": the newest earlier known-good one, " : "", why);
}

/* rollback [--to N | --known-good]: a switch to an existing generation, so it
 * needs no network and unpacks nothing.  Which one, and the switch, are the
 * library's (cfapkg_env_rollback), under the lock, so the target is chosen
 * from what is really current. */
int cmd_rollback(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *env = env_from_cli(cli);
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_rollback r;
	unsigned to;
	bool known_good;
	enum cfapkg_err e;
	int rc;

	if ((rc = rollback_args(cli, &to, &known_good)) || (rc = need_env(ctx, env)) ||
	    (rc = take_lock(ctx, cli, &lock)))
		return rc;
	if ((e = cfapkg_env_rollback(ctx, env, to, known_good, &r))) {
		rc = report_error(ctx, e);
	} else {
		print_rollback(cli, env, &r);
		/* Staged venvs follow only a switch that happened; a failed
		 * one left the environment, and so the venvs, as they were. */
		follow_venvs(ctx, cli, env);
	}
	cfapkg_free(r.why);
	cfapkg_writer_unlock(lock);
	return rc;
}

/* "cfapkg mark-good 3 --env lab": the command line history records.
 * Only the words that chose the generation are kept: other options do not
 * change what was marked. */
static void command_line(const struct cli *cli, char *buf, size_t len)
{
	size_t i;

	cli_fit(buf, len, "cfapkg %s", cli->command);
	for (i = 0; i < cli->nargs; i++)
		cli_fit_add(buf, len, " %s", cli->args[i]);
	if (cli_value(cli, OPT_ENV))
		cli_fit_add(buf, len, " --env %s", cli_value(cli, OPT_ENV));
}

/* mark-good and unmark: the user's word on one generation, recorded. */
static void print_mark_json(const char *env, unsigned gen, bool good, bool changed)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "env", env);
	cJSON_AddNumberToObject(o, "generation", gen);
	cJSON_AddBoolToObject(o, "known_good", good);
	cJSON_AddBoolToObject(o, "changed", changed);
	json_print(o);
}

/* The library records every mark call, even one that leaves the state as it
 * was; a mark that would change nothing is therefore not made, and says so
 * instead. */
static int set_mark(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env,
                    unsigned gen, bool good)
{
	enum cfapkg_gen_state state;
	char command[512];
	bool same;
	enum cfapkg_err e;

	if ((e = cfapkg_env_gen_state(ctx, env, gen, &state)))
		return report_error(ctx, e);
	same = good == (state == CFAPKG_GEN_KNOWN_GOOD);
	command_line(cli, command, sizeof(command));
	if (!same && (e = cfapkg_env_mark(ctx, env, gen,
	                                  good ? CFAPKG_GEN_KNOWN_GOOD : CFAPKG_GEN_CHECKED,
	                                  CFAPKG_MARK_HAND, "on the user's word", command)))
		return report_error(ctx, e);
	if (cli->json)
		print_mark_json(env, gen, good, !same);
	if (cli->json || cli->quiet)
		return EXIT_OK;
	if (same)
		printf("Generation %u of environment \"%s\" %s; nothing changed\n", gen, env,
		       good ? "is already known-good" : "is not marked known-good");
	else if (good)
		printf("Marked generation %u of environment \"%s\" known-good, on your word "
		       "(recorded in history; 'cfapkg rollback --known-good' may choose it)\n", gen, env);
	else
		printf("Generation %u of environment \"%s\" is no longer marked known-good "
		       "(recorded in history)\n", gen, env);
	return EXIT_OK;
}

/* Generation 0 never exists: it stands for "the current one", looked up under
 * the lock. */
static int change_mark(struct cfapkg_ctx *ctx, const struct cli *cli, bool good)
{
	const char *env = env_from_cli(cli);
	struct cfapkg_writer_lock *lock = NULL;
	unsigned gen = 0;
	enum cfapkg_err e;
	int rc;

	if (cli->nargs > 1 || (cli->nargs == 1 && (!parse_uint(cli->args[0], &gen) || gen == 0))) {
		cli_error("usage: cfapkg %s [N] [--env NAME]: N is a "
		        "generation number (default: the current one)\n", cli->command);
		return EXIT_USAGE;
	}
	if ((rc = need_env(ctx, env)) || (rc = take_lock(ctx, cli, &lock)))
		return rc;
	if (gen == 0 && (e = cfapkg_env_current(ctx, env, &gen)))
		rc = report_error(ctx, e);
	else
		rc = set_mark(ctx, cli, env, gen, good);
	cfapkg_writer_unlock(lock);
	return rc;
}

int cmd_mark_good(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	return change_mark(ctx, cli, true);
}

int cmd_unmark(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	return change_mark(ctx, cli, false);
}

/* pin and unpin: one change per argument, under the root's lock.
 * They stop at the first argument that fails; the pins before it stay made,
 * and each was already reported. */
static int change_pins(struct cfapkg_ctx *ctx, const struct cli *cli, bool pin)
{
	const char *env = env_from_cli(cli);
	struct cfapkg_writer_lock *lock = NULL;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;
	int rc;

	if (cli->nargs == 0) {
		cli_error("usage: cfapkg %s [--env NAME]\n",
		        pin ? "pin SPEC..." : "unpin NAME...");
		return EXIT_USAGE;
	}
	if ((rc = need_env(ctx, env)) || (rc = take_lock(ctx, cli, &lock)))
		return rc;
	for (i = 0; i < cli->nargs && !e; i++) {
		e = pin ? cfapkg_env_pin(ctx, env, cli->args[i])
		        : cfapkg_env_unpin(ctx, env, cli->args[i]);
		if (!e && !cli->quiet && !cli->json)
			printf("%s %s in environment \"%s\"%s\n", pin ? "Pinned" : "Unpinned",
			       cli->args[i], env, pin ? " (binds every later install and update)" : "");
	}
	cfapkg_writer_unlock(lock);
	if (e)
		return report_error(ctx, e);
	/* --json prints the pins as they now are, rather than one document per
	 * change. */
	return cli->json ? cmd_pins(ctx, cli) : EXIT_OK;
}

int cmd_pin(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	return change_pins(ctx, cli, true);
}

int cmd_unpin(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	return change_pins(ctx, cli, false);
}

/* Reading takes no lock: pins.json is replaced in one rename, so a reader sees
 * the old list or the new one, never a mix. */
int cmd_pins(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *env = env_from_cli(cli);
	char **pins = NULL;
	cJSON *a = cJSON_CreateArray();
	size_t i, n;
	enum cfapkg_err e;
	int rc;

	if ((rc = need_env(ctx, env)) || (e = cfapkg_env_pins(ctx, env, &pins, &n), e)) {
		cJSON_Delete(a);
		return rc ? rc : report_error(ctx, e);
	}
	for (i = 0; i < n; i++) {
		cJSON_AddItemToArray(a, cJSON_CreateString(pins[i]));
		if (!cli->json)
			printf("%s\n", pins[i]);
	}
	cfapkg_free(pins);
	if (cli->json)
		json_print_list("pins", a);
	else
		cJSON_Delete(a);
	return EXIT_OK;
}
