/*
 * cmd_install.c - 'cfapkg install', 'remove' and 'update': one transaction
 * each.  Under the root's lock: finish what an interrupted run left, work
 * out the new set (solve, or read a lockfile), show what changes, ask,
 * fetch and unpack what the store lacks, then commit a new generation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

#define MAX_SPECS 128

enum mode { MODE_INSTALL, MODE_REMOVE, MODE_UPDATE };

const char *env_from_cli(const struct cli *cli)
{
	const char *env = cli_value(cli, OPT_ENV);
	return env ? env : CFAPKG_DEFAULT_ENV;
}

int solve_specs(struct cfapkg_ctx *ctx, const struct cli *cli, const struct cfapkg_facts *facts,
                const char *const *specs, size_t nspecs, const char *const *prefer,
                size_t nprefer, struct cfapkg_plan **out)
{
	struct cfapkg_plan_opts opts = {0};
	const char *pins[CLI_MAX_ARGS * 2];
	char **env_pins = NULL;
	size_t i, n = 0;
	enum cfapkg_err e;

	if (cfapkg_env_exists(ctx, env_from_cli(cli)) &&
	    (e = cfapkg_env_pins(ctx, env_from_cli(cli), &env_pins, &n)))
		return report_error(ctx, e);
	for (i = 0; i < n && i < CLI_MAX_ARGS; i++)
		pins[opts.npins++] = env_pins[i];
	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_PIN)
			pins[opts.npins++] = cli->opts[i].value;
	opts.pins = pins;
	opts.prefer = prefer;
	opts.nprefer = nprefer;
	opts.allow_experimental = cli->seen & OPT_BIT(OPT_ALLOW_EXPERIMENTAL);
	/* A testcase holds the whole problem, so the pool holds every recipe. */
	opts.full_pool = cli_value(cli, OPT_TESTCASE) != NULL;
	e = cfapkg_plan_solve(ctx, facts, specs, nspecs, &opts, out);
	cfapkg_free(env_pins);
	return e ? report_error(ctx, e) : EXIT_OK;
}

int solve_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_plan **out)
{
	struct cfapkg_facts facts;
	int rc;

	if ((rc = facts_from_cli(ctx, cli, &facts)))
		return rc;
	return solve_specs(ctx, cli, &facts, cli->args, cli->nargs, NULL, 0, out);
}

static size_t name_len(const char *spec)
{
	return strcspn(spec, " <>=!");
}

static bool same_name(const char *spec, const char *name)
{
	return name_len(spec) == name_len(name) && strncmp(spec, name, name_len(spec)) == 0;
}

static bool named(const struct cli *cli, const char *name)
{
	size_t i;

	for (i = 0; i < cli->nargs; i++)
		if (same_name(cli->args[i], name))
			return true;
	return false;
}

/* The requests of the new set: the old ones, changed by the command. */
static int new_requests(const struct cli *cli, enum mode mode, const struct cfapkg_lock *old,
                        const char **out, size_t *n)
{
	size_t i;

	*n = 0;
	for (i = 0; old && i < old->nrequests && *n < MAX_SPECS; i++)
		if (mode == MODE_UPDATE || !named(cli, old->requests[i]))
			out[(*n)++] = old->requests[i];
	if (mode == MODE_INSTALL)
		for (i = 0; i < cli->nargs && *n < MAX_SPECS; i++)
			out[(*n)++] = cli->args[i];
	if (mode == MODE_REMOVE)
		for (i = 0; i < cli->nargs; i++) {
			size_t k;
			for (k = 0; old && k < old->nrequests && !same_name(old->requests[k], cli->args[i]);
			     k++)
				;
			if (!old || k == old->nrequests) {
				fprintf(stderr, "cfapkg: error: %s was not installed by request in "
				        "environment \"%s\" ('cfapkg list --env %s' shows what was)\n",
				        cli->args[i], env_from_cli(cli), env_from_cli(cli));
				return EXIT_NOTFOUND;
			}
		}
	return EXIT_OK;
}

/* Installed versions stay unless the command is about them. */
static size_t keep_installed(const struct cli *cli, enum mode mode, const struct cfapkg_lock *old,
                             char (*buf)[256], const char **out)
{
	size_t i, n = 0;

	for (i = 0; old && i < old->nparts && n < MAX_SPECS; i++) {
		const struct cfapkg_locked *p = &old->parts[i];
		if (mode == MODE_UPDATE && (cli->nargs == 0 || named(cli, p->name)))
			continue;
		snprintf(buf[n], 256, "%s==%s", p->name, p->version);
		out[n] = buf[n];
		n++;
	}
	return n;
}

/* "+zluda 7-preview.10", "-foo 1", "zluda 6-preview.69 -> 7-preview.10". */
static size_t diff_locks(const struct cfapkg_lock *old, const struct cfapkg_lock *new,
                         char (*buf)[256], size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < new->nparts && n < max; i++) {
		const struct cfapkg_locked *p = &new->parts[i], *o = cfapkg_lock_find(old, p->name);
		if (!o)
			snprintf(buf[n++], 256, "+%s %s", p->name, p->version);
		else if (strcmp(o->version, p->version) != 0 ||
		         (p->sha256 && (!o->sha256 || strcmp(o->sha256, p->sha256) != 0)))
			snprintf(buf[n++], 256, "%s %s -> %s", p->name, o->version, p->version);
	}
	for (i = 0; old && i < old->nparts && n < max; i++)
		if (!cfapkg_lock_find(new, old->parts[i].name))
			snprintf(buf[n++], 256, "-%s %s", old->parts[i].name, old->parts[i].version);
	return n;
}

static bool same_requests(const struct cfapkg_lock *a, const struct cfapkg_lock *b)
{
	size_t i;

	if (!a || a->nrequests != b->nrequests)
		return false;
	for (i = 0; i < a->nrequests; i++)
		if (strcmp(a->requests[i], b->requests[i]) != 0)
			return false;
	return true;
}

static void print_changes(const struct cfapkg_lock *new, char (*changes)[256], size_t n,
                          const char *env)
{
	int64_t total = 0;
	char size[32];
	size_t i;

	printf("Changes to environment \"%s\":\n", env);
	for (i = 0; i < n; i++)
		printf("  %s\n", changes[i]);
	if (n == 0)
		printf("  (the same parts; what was asked for changes)\n");
	for (i = 0; i < new->nparts; i++)
		total += new->parts[i].size > 0 ? new->parts[i].size : 0;
	printf("Packages in the new set: %s in total (already unpacked ones cost nothing)\n",
	       human_size(total, size, sizeof(size)));
}

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

/* The new set, by solving or from --locked. */
static int new_lock(struct cfapkg_ctx *ctx, const struct cli *cli, enum mode mode,
                    const struct cfapkg_lock *old, struct cfapkg_lock **out,
                    struct cfapkg_plan **plan_out)
{
	const char *locked = cli_value(cli, OPT_LOCKED), *specs[MAX_SPECS], *prefer[MAX_SPECS];
	static char keep[MAX_SPECS][256];
	struct cfapkg_plan *plan = NULL;
	struct cfapkg_facts facts;
	size_t nspecs, nprefer;
	enum cfapkg_err e;
	int rc;

	if ((rc = facts_from_cli(ctx, cli, &facts)))
		return rc;
	if (locked) {
		if ((e = cfapkg_lock_read(ctx, locked, out))) {
			*out = NULL;
			return report_error(ctx, e);
		}
		if ((e = cfapkg_lock_check(ctx, *out, &facts))) {
			fprintf(stderr, "cfapkg: error: %s does not fit this machine: %s\n", locked,
			        cfapkg_ctx_error(ctx));
			cfapkg_lock_free(*out);
			*out = NULL;
			return EXIT_UNSOLVABLE;
		}
		return EXIT_OK;
	}
	if ((rc = new_requests(cli, mode, old, specs, &nspecs)))
		return rc;
	if (nspecs == 0) {
		fprintf(stderr, "cfapkg: error: nothing would be left in environment \"%s\"; "
		        "'cfapkg env remove %s' removes an environment\n", env_from_cli(cli),
		        env_from_cli(cli));
		return EXIT_USAGE;
	}
	nprefer = keep_installed(cli, mode, old, keep, prefer);
	if ((rc = solve_specs(ctx, cli, &facts, specs, nspecs, prefer, nprefer, &plan)))
		return rc;
	if (!cfapkg_plan_solved(plan)) {
		print_problems_text(plan, cli);
		cfapkg_plan_free(plan);
		return EXIT_UNSOLVABLE;
	}
	e = cfapkg_lock_from_plan(ctx, plan, specs, nspecs, out);
	if (e) {
		cfapkg_plan_free(plan);
		return report_error(ctx, e);
	}
	*plan_out = plan;
	return EXIT_OK;
}

static void command_text(const struct cli *cli, char *buf, size_t len)
{
	size_t i, used;

	snprintf(buf, len, "%s", cli->command);
	for (i = 0; i < cli->nargs; i++) {
		used = strlen(buf);
		snprintf(buf + used, len - used, " %s", cli->args[i]);
	}
	if (cli_value(cli, OPT_LOCKED)) {
		used = strlen(buf);
		snprintf(buf + used, len - used, " --locked %s", cli_value(cli, OPT_LOCKED));
	}
}

static int commit(struct cfapkg_ctx *ctx, const struct cli *cli, const struct cfapkg_lock *new,
                  char (*changes)[256], size_t nchanges)
{
	const char *list[64];
	struct cfapkg_commit_result r;
	char command[1024];
	enum cfapkg_err e;
	size_t i;
	int rc;

	if ((rc = fetch_locked(ctx, cli, new)))
		return rc;
	for (i = 0; i < nchanges && i < 64; i++)
		list[i] = changes[i];
	command_text(cli, command, sizeof(command));
	if ((e = cfapkg_env_commit(ctx, env_from_cli(cli), new, command, list, i, &r)))
		return report_error(ctx, e);
	if (!cli->quiet)
		printf("Environment \"%s\" is now at generation %u (was %u); static checks passed, "
		       "marked known-good (%zu hard links, %zu symbolic links, %zu copies)\n",
		       env_from_cli(cli), r.generation, r.previous, r.hardlinks, r.symlinks, r.copies);
	return EXIT_OK;
}

static int transact(struct cfapkg_ctx *ctx, const struct cli *cli, enum mode mode)
{
	static char changes[64][256];
	struct cfapkg_root_lock *rlock = NULL;
	struct cfapkg_lock *old = NULL, *new = NULL;
	struct cfapkg_plan *plan = NULL;
	const char *env = env_from_cli(cli);
	enum cfapkg_err e;
	size_t nchanges;
	int rc;

	if (!cfapkg_env_exists(ctx, env)) {
		fprintf(stderr, "cfapkg: error: no environment \"%s\"; create it with 'cfapkg env "
		        "create %s'\n", env, env);
		return EXIT_NOTFOUND;
	}
	if ((rc = take_lock(ctx, cli, &rlock)))
		return rc;
	e = cfapkg_env_lock(ctx, env, 0, &old);
	if (e == CFAPKG_E_NOTFOUND) {
		cfapkg_ctx_clear_error(ctx);
		old = NULL;
	} else if (e) {
		rc = report_error(ctx, e);
		goto out;
	}
	if (mode != MODE_INSTALL && !old) {
		fprintf(stderr, "cfapkg: error: environment \"%s\" has nothing installed\n", env);
		rc = EXIT_NOTFOUND;
		goto out;
	}
	if ((rc = new_lock(ctx, cli, mode, old, &new, &plan)))
		goto out;
	nchanges = diff_locks(old, new, changes, 64);
	if (old && nchanges == 0 && same_requests(old, new)) {
		if (!cli->quiet)
			printf("Nothing to do: environment \"%s\" already has this set\n", env);
		goto out;
	}
	if (!cli->quiet && !cli->json && plan) {
		print_plan_text(ctx, plan);
		printf("\n");
	} else if (!cli->quiet && !cli->json) {
		print_detection_notes(stdout, detected_machine()); /* --locked: no plan table */
	}
	if (!cli->quiet && !cli->json)
		print_changes(new, changes, nchanges, env);
	if (cli->seen & OPT_BIT(OPT_DRY_RUN))
		goto out;
	if (!confirm(cli)) {
		printf("Nothing changed.\n");
		goto out;
	}
	rc = commit(ctx, cli, new, changes, nchanges);
out:
	cfapkg_plan_free(plan);
	cfapkg_lock_free(old);
	cfapkg_lock_free(new);
	cfapkg_root_unlock(rlock);
	return rc;
}

int cmd_install(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	if (cli->nargs == 0 && !cli_value(cli, OPT_LOCKED)) {
		fprintf(stderr, "cfapkg: error: usage: cfapkg install SPEC... (or --locked FILE)\n");
		return EXIT_USAGE;
	}
	if (cli->nargs && cli_value(cli, OPT_LOCKED)) {
		fprintf(stderr, "cfapkg: error: --locked installs exactly the lockfile's set; "
		        "name no packages with it\n");
		return EXIT_USAGE;
	}
	if ((cli->seen & OPT_BIT(OPT_DRY_RUN)) && cli->json)
		return cmd_plan(ctx, cli);
	return transact(ctx, cli, MODE_INSTALL);
}

int cmd_remove(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	if (cli->nargs == 0) {
		fprintf(stderr, "cfapkg: error: usage: cfapkg remove NAME...\n");
		return EXIT_USAGE;
	}
	return transact(ctx, cli, MODE_REMOVE);
}

int cmd_update(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	return transact(ctx, cli, MODE_UPDATE);
}
