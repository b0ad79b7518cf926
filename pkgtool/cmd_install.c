/*
 * cmd_install.c - 'cfapkg install', 'remove', 'update' and 'repair': the
 * options become one library transaction (cfapkg_trans_*); this file only
 * shows the plan and the changes, asks, and prints the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "progress.h"
#include "render.h"

/* The change lines the library made ("+zluda 6-preview.69"), then the new
 * set's size and what of it still has to be downloaded. */
static void print_changes(struct cfapkg_trans *t, const char *env)
{
	const struct cfapkg_lockfile *new = cfapkg_trans_new(t);
	const struct cfapkg_change *c;
	int64_t total = 0;
	char size[32], fetch[32]; /* two buffers: both sizes are in one printf */
	size_t i, n;

	c = cfapkg_trans_changes(t, &n);
	printf("Changes to environment \"%s\":\n", env);
	for (i = 0; i < n; i++)
		printf("  %s\n", c[i].text);
	if (n == 0)
		printf("  (the same parts; what was asked for changes)\n");
	for (i = 0; i < new->nparts; i++)
		total += new->parts[i].size > 0 ? new->parts[i].size : 0;
	printf("Packages in the new set: %s in total; to download: %s\n",
	       human_size(total, size, sizeof(size)),
	       human_size((int64_t)cfapkg_trans_download_bytes(t), fetch, sizeof(fetch)));
}

/* An install goes ahead without a terminal, with --yes or with --json: it
 * changes nothing a rollback cannot undo.  At the question, an empty answer
 * means yes. */
static bool confirm(const struct cli *cli)
{
	char line[16];

	if (cli->yes || !cfapkg_is_terminal(stdin) || cli->json)
		return true;
	printf("Proceed? [Y/n] ");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return false;
	return line[0] == '\n' || line[0] == 'y' || line[0] == 'Y';
}

/* The command as typed, for history ("install zluda==7 --locked x"). */
static char *command_text(const struct cli *cli)
{
	const char *locked = cli_value(cli, OPT_LOCKED);
	size_t len = strlen(cli->command) + 16 + (locked ? strlen(locked) : 0), used, i;
	char *buf;

	for (i = 0; i < cli->nargs; i++)
		len += strlen(cli->args[i]) + 1;
	if (!(buf = malloc(len)))
		return NULL;
	/* Each argument's length plus its space was counted above, and 16
	 * covers " --locked " with the NUL, so nothing here is cut. */
	used = (size_t)snprintf(buf, len, "%s", cli->command); /* len holds it all */
	for (i = 0; i < cli->nargs; i++)
		used += (size_t)snprintf(buf + used, len - used, " %s", cli->args[i]);
	if (locked)
		cli_fit(buf + used, len - used, " --locked %s", locked);
	return buf;
}

/* Said once the lock is found taken, so a user sees why nothing happens. */
static void waiting(void *arg, const char *root)
{
	const struct cli *cli = arg;

	if (!cli->quiet)
		fprintf(stderr, "Waiting for another cfapkg to finish with %s ...\n", root);
}

/* The --pin options, in order. */
static const char **cli_pins(const struct cli *cli, size_t *n)
{
	const char **pins = calloc(cli->nopts + 1, sizeof(*pins));
	size_t i;

	*n = 0;
	for (i = 0; pins && i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_PIN)
			pins[(*n)++] = cli->opts[i].value;
	return pins;
}

/* The warning about host-only libraries comes first and even with --quiet or
 * --json: the generation works here but would not elsewhere. */
static void print_result(const struct cli *cli, const char *env,
                         const struct cfapkg_trans_result *r)
{
	size_t i;

	/* Works here, not on a machine without those libraries: always said. */
	if (r->commit.load_host && r->commit.load_note)
		fprintf(stderr, "cfapkg: warning: %s%s\n", r->commit.load_note,
		        r->commit.load_host > 1 ? " (and more found only on this system)" : "");
	if (cli->quiet || cli->json)
		return;
	/* The archives of a set share one store folder: named once. */
	for (i = 0; i < r->nitems; i++)
		if (r->items[i].unpacked &&
		    (i == 0 || !r->items[i].unpack_set || !r->items[i - 1].unpack_set ||
		     strcmp(r->items[i - 1].unpack_name, r->items[i].unpack_name) != 0))
			printf("Unpacked %s (%llu files%s)\n", r->items[i].unpack_name,
			       (unsigned long long)r->items[i].unpack.files,
			       r->items[i].streamed ? ", while downloading" : "");
	printf("Environment \"%s\" is now at generation %u (was %u); static checks passed "
	       "(%zu hard links, %zu symbolic links, %zu copies); it becomes known-good when "
	       "'cfapkg doctor' passes on this machine, or by 'cfapkg mark-good'\n", env,
	       r->commit.generation, r->commit.previous, r->commit.hardlinks, r->commit.symlinks,
	       r->commit.copies);
}

/* What went wrong: the solver's reasons, or each failed download named.
 * An interrupt says what was kept for a resume; an unsolvable request shows
 * the solver's reasons and exits 3 or 4 as plan does. */
static int report_failure(struct cfapkg_ctx *ctx, struct cfapkg_trans *t,
                          const struct cfapkg_trans_result *r, enum cfapkg_err e,
                          const struct cli *cli)
{
	bool named = false;
	size_t i;

	if (e == CFAPKG_E_INTERRUPTED)
		return report_interrupted(ctx, r->items, r->nitems);
	if (e == CFAPKG_E_UNSOLVABLE && t && cfapkg_trans_plan(t)) {
		print_problems_text(cfapkg_trans_plan(t), cli);
		return unsolved_exit(cfapkg_trans_plan(t));
	}
	for (i = 0; i < r->nitems; i++)
		if (r->items[i].err) {
			cli_error("%s\n", r->items[i].error);
			named = true;
		}
	/* When the downloads were named one by one, only the exit code is left
	 * to give; else the context's message says what failed. */
	return named ? report_error_code(e) : report_error(ctx, e);
}

/* Shows what the prepared transaction will do; NULL: go on, else the
 * outcome that stops here. */
static const char *show_and_ask(struct cfapkg_ctx *ctx, struct cfapkg_trans *t,
                                const struct cli *cli, const char *env)
{
	/* Nothing to do is a success: the environment already is what was
	 * asked. */
	if (cfapkg_trans_nothing_to_do(t)) {
		if (!cli->quiet && !cli->json) {
			printf("Nothing to do: environment \"%s\" already has this set, and its store "
			       "folders are whole\n", env);
			explain_nothing_to_do(ctx, t, cli);
		}
		return "nothing-to-do";
	}
	if (cfapkg_trans_plan(t))
		print_decisions(cfapkg_trans_plan(t), cli);
	if (!cli->quiet && !cli->json && cfapkg_trans_plan(t)) {
		print_plan_text(ctx, cfapkg_trans_plan(t));
		printf("\n");
	} else if (!cli->quiet && !cli->json) {
		print_detection_notes(stdout, detected_machine()); /* --locked: no plan table */
	}
	if (!cli->quiet && !cli->json)
		print_changes(t, env);
	/* --dry-run stops after showing everything: nothing is downloaded or
	 * changed. */
	if (cli->seen & OPT_BIT(OPT_DRY_RUN))
		return "dry-run";
	if (!confirm(cli)) {
		printf("Nothing changed.\n");
		return "declined";
	}
	return NULL;
}

/* begin, prepare, show and ask, then commit.  The library takes and keeps the
 * root's lock from begin to free, so what was shown is what is committed. */
static int run_trans(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_trans_opts *o)
{
	static struct progress p;
	struct cfapkg_trans_result r = {0};
	struct cfapkg_trans *t = NULL;
	const char *env = env_from_cli(cli), *stop = NULL;
	enum cfapkg_err e;
	int rc = EXIT_OK;

	progress_init(&p, cli, &o->fetch);
	if (!(e = cfapkg_trans_begin(ctx, o, &t)) && !(e = cfapkg_trans_prepare(t)) &&
	    !(stop = show_and_ask(ctx, t, cli, env))) {
		/* Only now: a Ctrl-C at the question above ends cfapkg at once. */
		progress_catch_interrupt();
		e = cfapkg_trans_commit(t, &r);
		progress_end(&p);
		print_tried(r.items, r.nitems);
		if (!e)
			print_result(cli, env, &r);
		if (!e && r.commit.generation)
			follow_venvs(ctx, cli, env); /* the root's lock is still held */
	} else {
		progress_end(&p);
	}
	if (!e && cli->json)
		json_print(trans_json(env, t, stop ? NULL : &r, stop ? stop : "done"));
	/* On any failure the library left the environment as it was: only
	 * the report is left to make. */
	if (e)
		rc = report_failure(ctx, t, &r, e, cli);
	cfapkg_trans_free(t);
	return rc;
}

/* repair needs no facts: it fetches again what the current generation already
 * lists. */
static int transact(struct cfapkg_ctx *ctx, const struct cli *cli, enum cfapkg_trans_kind kind)
{
	struct cfapkg_trans_opts o = {0};
	struct cfapkg_facts facts = {0};
	char *command = command_text(cli);
	const char **pins = cli_pins(cli, &o.npins);
	int rc;

	if (!command || !pins)
		rc = report_error(ctx, CFAPKG_E_NOMEM);
	else if (!(rc = fetch_opts_from_cli(cli, &o.fetch)) &&
	         (kind == CFAPKG_TRANS_REPAIR || !(rc = facts_from_cli(ctx, cli, &facts)))) {
		o.kind = kind;
		o.env = env_from_cli(cli);
		o.args = cli->args;
		o.nargs = cli->nargs;
		o.locked = cli_value(cli, OPT_LOCKED);
		o.facts = &facts;
		o.pins = pins;
		o.allow_experimental = cli->seen & OPT_BIT(OPT_ALLOW_EXPERIMENTAL);
		o.full_pool = cli_value(cli, OPT_TESTCASE) != NULL;
		o.command = command;
		o.lock_wait_ms = lock_wait_ms();
		o.waiting = waiting;
		o.arg = (void *)cli;
		rc = run_trans(ctx, cli, &o);
	}
	cfapkg_facts_clear(&facts);
	free(command);
	free(pins);
	return rc;
}

/* A lockfile is read before the machine is looked at: a file that is not
 * a lockfile is the first thing to hear about, on a machine without a
 * GPU too (the file records the facts it was made for).
 * Read and freed: the transaction reads it again itself. */
static int lockfile_readable(struct cfapkg_ctx *ctx, const char *file)
{
	struct cfapkg_lockfile *lock = NULL;
	enum cfapkg_err e = cfapkg_lockfile_read(ctx, file, &lock);

	cfapkg_lockfile_free(lock);
	return e ? report_error(ctx, e) : EXIT_OK;
}

/* A lockfile that does not read is refused before anything else, so that its
 * own message, not a later step's, says what is wrong with it. */
int cmd_install(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	int rc;

	if (cli->nargs == 0 && !cli_value(cli, OPT_LOCKED)) {
		cli_error("usage: cfapkg install SPEC... (or --locked FILE)\n");
		return EXIT_USAGE;
	}
	if (cli->nargs && cli_value(cli, OPT_LOCKED)) {
		cli_error("--locked installs exactly the lockfile's set; "
		        "name no packages with it\n");
		return EXIT_USAGE;
	}
	if (cli_value(cli, OPT_LOCKED) && (rc = lockfile_readable(ctx, cli_value(cli, OPT_LOCKED))))
		return rc;
	/* install --dry-run --json prints the plan document, the same as plan
	 * does, so a script has one shape to read. */
	if ((cli->seen & OPT_BIT(OPT_DRY_RUN)) && cli->json)
		return cmd_plan(ctx, cli);
	return transact(ctx, cli, CFAPKG_TRANS_INSTALL);
}

/* remove names what to drop; it never means "everything". */
int cmd_remove(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	if (cli->nargs == 0) {
		cli_error("usage: cfapkg remove NAME...\n");
		return EXIT_USAGE;
	}
	return transact(ctx, cli, CFAPKG_TRANS_REMOVE);
}

int cmd_update(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	return transact(ctx, cli, CFAPKG_TRANS_UPDATE);
}

int cmd_repair(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	return transact(ctx, cli, CFAPKG_TRANS_REPAIR);
}
