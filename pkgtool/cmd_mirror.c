/*
 * cmd_mirror.c - 'cfapkg mirror create DIR [SPEC...|--env NAME|--locked
 * FILE]': the archives a set needs, laid out by URL in DIR for a web
 * server as it is, with the rewrite rules a client puts in mirrors.conf.
 * The set is planned as install plans it, read from a lockfile, or an
 * environment's current one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "progress.h"
#include "render.h"

#define USAGE                                                                          \
	"usage: cfapkg mirror create DIR [SPEC... | --env NAME | --locked FILE] [--key FILE " \
	"[--name NAME]]"

/* A lockfile, checked as 'install --locked' checks it, but against the
 * machine it was made for: the mirror serves that machine, not this one. */
static int from_lockfile(struct cfapkg_ctx *ctx, const char *file, struct cfapkg_lockfile **out)
{
	struct cfapkg_lockfile_verify_opts vo = {0};
	enum cfapkg_err e = cfapkg_lockfile_read(ctx, file, out);

	vo.allow_experimental = true; /* the client's install decides */
	if (!e)
		e = cfapkg_lockfile_verify(ctx, *out, &(*out)->facts, &vo);
	return e ? report_error(ctx, e) : EXIT_OK;
}

/* The SPECs (after "create DIR") planned as install would plan them. */
static int from_plan(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_lockfile **out)
{
	/* The SPECs start after "create DIR": the copy starts past those two
	 * words, so the plan sees only the packages. */
	struct cli specs = *cli;
	struct cfapkg_plan *plan = NULL;
	enum cfapkg_err e;
	int rc;

	specs.nargs = cli->nargs - 2;
	specs.args = cli->args + 2;
	if ((rc = solve_from_cli(ctx, &specs, &plan)))
		return rc;
	/* A set with a part that cannot be fetched is refused whole, as
	 * install would refuse it: a mirror missing a part would fail the
	 * client later. */
	if (!cfapkg_plan_solved(plan)) {
		print_problems_text(plan, cli);
		rc = unsolved_exit(plan);
	} else if (!(rc = refuse_unfetchable(plan)) &&
	           (e = cfapkg_lockfile_from_plan(ctx, plan, specs.args, specs.nargs, out))) {
		rc = report_error(ctx, e);
	}
	cfapkg_plan_free(plan);
	return rc;
}

/* The set to mirror: --locked FILE, else the SPECs, else the environment's
 * current set.  *out is the caller's to free, also on failure. */
static int mirror_set(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_lockfile **out)
{
	const char *locked = cli_value(cli, OPT_LOCKED);
	enum cfapkg_err e;

	*out = NULL;
	if (locked)
		return from_lockfile(ctx, locked, out);
	if (cli->nargs > 2)
		return from_plan(ctx, cli, out);
	if (!cfapkg_env_exists(ctx, env_from_cli(cli))) {
		cli_error("no environment \"%s\"\n", env_from_cli(cli));
		return EXIT_NOTFOUND;
	}
	e = cfapkg_env_lockfile(ctx, env_from_cli(cli), 0, out);
	if (e == CFAPKG_E_NOTFOUND) {
		cli_error("environment \"%s\" has nothing installed; name the "
		        "packages to mirror (SPEC...) or a lockfile (--locked FILE)\n",
		        env_from_cli(cli));
		return EXIT_NOTFOUND;
	}
	return e ? report_error(ctx, e) : EXIT_OK;
}

/* How each file came into DIR: reused from the download cache, fetched now, or
 * already in DIR from an earlier run. */
static const char *how_text(enum cfapkg_mirror_how how)
{
	return how == CFAPKG_MIRROR_FROM_CACHE ? "copied from the download cache"
	       : how == CFAPKG_MIRROR_DOWNLOADED ? "downloaded" : "already there";
}

/* Each file with where it came from and the prefix rules a client needs, so
 * that a script can check the mirror against the set without reading the
 * text. */
static void print_json(const struct cfapkg_mirror_result *r, const char *dir)
{
	cJSON *o = cJSON_CreateObject(), *files = cJSON_AddArrayToObject(o, "files");
	cJSON *rules = cJSON_AddArrayToObject(o, "prefixes"), *left;
	size_t i;

	json_str(o, "dir", dir);
	for (i = 0; i < r->nfiles; i++) {
		const struct cfapkg_mirror_file *f = &r->files[i];
		cJSON *x = cJSON_CreateObject();
		json_str(x, "part", f->part);
		json_str(x, "version", f->version);
		json_str(x, "url", f->url);
		json_str(x, "path", f->path);
		json_str(x, "sha256", f->sha256);
		cJSON_AddNumberToObject(x, "size", (double)f->size);
		cJSON_AddBoolToObject(x, "index", f->index);
		json_str(x, "how", how_text(f->how));
		cJSON_AddItemToArray(files, x);
	}
	for (i = 0; i < r->nprefixes; i++) {
		cJSON *x = cJSON_CreateObject();
		json_str(x, "prefix", r->prefixes[i]);
		json_str(x, "folder", r->folders[i]);
		cJSON_AddItemToArray(rules, x);
	}
	/* example is the file of rules written into DIR, with MIRROR standing
	 * for the server's address. */
	json_str(o, "example", r->example);
	left = cJSON_AddArrayToObject(o, "left_out");
	for (i = 0; i < r->nleft_out; i++)
		cJSON_AddItemToArray(left, cJSON_CreateString(r->left_out[i]));
	json_print(o);
}

/* Then what to do with DIR: serve it as it is, and give clients the rules
 * written into it. */
static void print_text(const struct cfapkg_mirror_result *r, const char *dir)
{
	char size[32];
	size_t i;

	for (i = 0; i < r->nfiles; i++)
		printf("%s  (%s %s%s, %s, %s)\n", r->files[i].path, r->files[i].part,
		       r->files[i].version, r->files[i].index ? ", APT index" : "",
		       human_size(r->files[i].size, size, sizeof(size)), how_text(r->files[i].how));
	for (i = 0; i < r->nleft_out; i++)
		printf("Left out: %s\n", r->left_out[i]);
	printf("Wrote %s: %lu rule%s for clients, MIRROR standing for this server's address\n",
	       r->example, (unsigned long)r->nprefixes, r->nprefixes == 1 ? "" : "s");
	printf("Serve %s as it is (nginx: \"root %s;\" in a server block); each client puts the "
	       "rules, MIRROR replaced, in its mirrors.conf (docs/offline.md)\n", dir, dir);
}

/* Every download that failed is named before the error; the result is printed
 * only when the whole set was mirrored. */
static int report(struct cfapkg_ctx *ctx, const struct cfapkg_mirror_result *r, const char *dir,
                  enum cfapkg_err e, const struct cli *cli)
{
	bool named = false;
	size_t i;

	if (r)
		print_tried(r->items, r->nitems);
	for (i = 0; r && i < r->nitems; i++)
		if (r->items[i].err) {
			cli_error("%s: %s\n", r->items[i].label, r->items[i].error);
			named = true;
		}
	if (e)
		return named ? report_error_code(e) : report_error(ctx, e);
	if (cli->json)
		print_json(r, dir);
	else if (!cli->quiet)
		print_text(r, dir);
	return EXIT_OK;
}

/* With --key: DIR/channel, a signed channel of exactly the set's recipes,
 * which clients add beside the mirror rules. */
static int sign_channel(struct cfapkg_ctx *ctx, const struct cli *cli,
                        const struct cfapkg_lockfile *set, const char *dir)
{
	struct cfapkg_channel_build_opts o = {0};
	char *sub = malloc(strlen(dir) + sizeof("/channel"));
	uint64_t version = 0;
	enum cfapkg_err e;

	if (!sub)
		return report_error(ctx, CFAPKG_E_NOMEM);
	memcpy(sub, dir, strlen(dir));
	memcpy(sub + strlen(dir), "/channel", sizeof("/channel"));
	o.name = cli_value(cli, OPT_NAME) ? cli_value(cli, OPT_NAME) : "mirror";
	e = cfapkg_channel_publish_set(ctx, set, sub, cli_value(cli, OPT_KEY), &o, &version);
	if (!e && !cli->quiet && !cli->json)
		printf("Signed channel %s (index %llu) of the set's recipes in %s: clients run "
		       "'cfapkg channel add %s http://MIRROR/channel --key PUB'\n", o.name,
		       (unsigned long long)version, sub, o.name);
	free(sub);
	return e ? report_error(ctx, e) : EXIT_OK;
}

/* The set is decided before the lock is taken; the copying and downloads run
 * under it, since they share the download cache. */
static int create(struct cfapkg_ctx *ctx, const struct cli *cli, const char *dir)
{
	static struct progress p;
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_mirror_result *r = NULL;
	struct cfapkg_fetch_opts o;
	struct cfapkg_lockfile *set = NULL;
	enum cfapkg_err e;
	int rc;

	if ((rc = fetch_opts_from_cli(cli, &o)) || (rc = mirror_set(ctx, cli, &set)) ||
	    (rc = take_lock(ctx, cli, &lock))) {
		cfapkg_lockfile_free(set);
		return rc;
	}
	progress_init(&p, cli, &o);
	progress_catch_interrupt();
	e = cfapkg_mirror_create(ctx, set, dir, &o, &r);
	progress_end(&p);
	cfapkg_writer_unlock(lock);
	rc = report(ctx, r, dir, e, cli);
	/* The channel is signed only over a complete mirror, so that clients
	 * never see recipes whose archives are not there. */
	if (rc == EXIT_OK && cli_value(cli, OPT_KEY))
		rc = sign_channel(ctx, cli, set, dir);
	cfapkg_mirror_result_free(r);
	cfapkg_lockfile_free(set);
	return rc;
}

/* --locked names the whole set, so packages beside it would be a second,
 * conflicting answer to what is mirrored. */
int cmd_mirror(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	if (cli->nargs < 2 || strcmp(cli->args[0], "create") != 0) {
		cli_error("" USAGE "\n");
		return EXIT_USAGE;
	}
	if (cli_value(cli, OPT_LOCKED) && cli->nargs > 2) {
		cli_error("--locked mirrors exactly the lockfile's set; name no "
		        "packages with it\n");
		return EXIT_USAGE;
	}
	return create(ctx, cli, cli->args[1]);
}
