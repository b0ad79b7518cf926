/*
 * cmd_trust.c - trust on first use, the user's choice for a download
 * nobody has pinned: 'cfapkg recipe trust NAME VERSION [OS-ARCH]' records
 * what the server sends now, 'recipe untrust' forgets it, 'recipe trusted'
 * lists the pins and whether the recipes use them, 'recipe export-trusted'
 * prints them as recipe fragments for a channel maintainer.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "progress.h"
#include "render.h"

#define TRUST_OPTS (OPTS_GLOBAL | OPT_BIT(OPT_JSON) | OPTS_FETCH | OPT_BIT(OPT_MAX_SIZE))
#define LIST_OPTS (OPTS_GLOBAL | OPT_BIT(OPT_JSON))
/* This machine's OS-ARCH: an OS's name, '-' and an architecture as the
 * system names it (uname's machine is at most 64 bytes). */
#define PLATFORM_MAX 96

/* OS-ARCH as given, else this machine's: into buf (PLATFORM_MAX holds
 * it); "" when out of memory (no source has that platform). */
static const char *platform_arg(const struct cli *cli, char *buf, size_t len)
{
	struct cfapkg_facts f = {0};
	int n = -1;

	if (cli->nargs > 3)
		return cli->args[3];
	if (cfapkg_facts_init_host(&f) == CFAPKG_E_OK)
		n = snprintf(buf, len, "%s-%s", f.os, f.arch);
	cfapkg_facts_clear(&f);
	return n > 0 && (size_t)n < len ? buf : "";
}

/* NAME VERSION [OS-ARCH] of trust and untrust (sub), and their options. */
static int source_args(const struct cli *cli, const char *sub, unsigned long long allowed,
                       char *host, size_t len, const char **platform)
{
	if (cli->nargs < 3 || cli->nargs > 4) {
		cli_error("usage: cfapkg recipe %s NAME VERSION [OS-ARCH]\n", sub);
		return EXIT_USAGE;
	}
	if (!cli_check_allowed(cli, allowed))
		return EXIT_USAGE;
	*platform = platform_arg(cli, host, len);
	return EXIT_OK;
}

/* The warning goes to standard error even when the pin is printed as JSON: a
 * first-use pin is only as good as the server was at that moment. */
static void print_trusted(const struct cfapkg_fetch_item *it, const char *name,
                          const char *version, const char *platform, const struct cli *cli)
{
	char size[32];
	cJSON *o;

	if (cli->quiet)
		return;
	if (cli->json) {
		o = cJSON_CreateObject();
		json_str(o, "name", name);
		json_str(o, "version", version);
		json_str(o, "platform", platform);
		json_str(o, "sha256", it->sha256_out);
		cJSON_AddNumberToObject(o, "size", (double)it->size_out);
		json_str(o, "trust", "first-use");
		json_print(o);
		return;
	}
	printf("%s %s %s: trusted on first use: sha256 %s, %s\n", name, version, platform,
	       it->sha256_out, human_size((int64_t)it->size_out, size, sizeof(size)));
	fprintf(stderr, "cfapkg: warning: this pin is what the server sent now, not checked "
	        "against anyone else's; from now on every download of it must match it "
	        "('cfapkg recipe export-trusted' gives it to a channel maintainer)\n");
}

/* recipe trust: downloads the source under the root's lock and records its
 * hash.  The library clears it before anything can fail, so clearing it on
 * every path is safe. */
static int trust(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	static struct progress p;
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_fetch_item it;
	struct cfapkg_fetch_opts o;
	const char *platform;
	char host[PLATFORM_MAX];
	enum cfapkg_err e;
	int rc;

	if ((rc = source_args(cli, "trust", TRUST_OPTS, host, sizeof(host), &platform)) ||
	    (rc = fetch_opts_from_cli(cli, &o)) || (rc = take_lock(ctx, cli, &lock)))
		return rc;
	progress_init(&p, cli, &o);
	progress_catch_interrupt();
	e = cfapkg_recipe_trust(ctx, cli->args[1], cli->args[2], platform, &o, &it);
	progress_end(&p);
	cfapkg_writer_unlock(lock);
	if (e) {
		cfapkg_fetch_item_clear(&it);
		return report_error(ctx, e);
	}
	print_trusted(&it, cli->args[1], cli->args[2], platform, cli);
	cfapkg_fetch_item_clear(&it);
	return EXIT_OK;
}

/* Forgetting a pin downloads nothing, so it takes no download options. */
static int untrust(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_writer_lock *lock = NULL;
	const char *platform;
	char host[PLATFORM_MAX];
	enum cfapkg_err e;
	int rc;

	if ((rc = source_args(cli, "untrust", LIST_OPTS, host, sizeof(host), &platform)) ||
	    (rc = take_lock(ctx, cli, &lock)))
		return rc;
	e = cfapkg_recipe_untrust(ctx, cli->args[1], cli->args[2], platform);
	cfapkg_writer_unlock(lock);
	if (e)
		return report_error(ctx, e);
	if (!cli->quiet && !cli->json)
		printf("%s %s %s: no longer trusted on first use\n", cli->args[1], cli->args[2],
		       platform);
	return EXIT_OK;
}

static cJSON *pin_json(const struct cfapkg_first_use_pin *p)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "name", p->recipe);
	json_str(o, "version", p->version);
	json_str(o, "platform", p->platform);
	json_str(o, "url", p->url);
	json_str(o, "sha256", p->sha256);
	cJSON_AddNumberToObject(o, "size", (double)p->size);
	json_str(o, "recorded", p->recorded);
	json_str(o, "status", p->status);
	return o;
}

/* Each pin with its status: "applied", or why the loaded recipes do not
 * use it. */
static int trusted(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_first_use *fu = NULL;
	enum cfapkg_err e;
	cJSON *a;
	size_t i;

	if (cli->nargs != 1 || !cli_check_allowed(cli, LIST_OPTS)) {
		if (cli->nargs != 1)
			cli_error("usage: cfapkg recipe trusted\n");
		return EXIT_USAGE;
	}
	if ((e = cfapkg_first_use_list(ctx, &fu)))
		return report_error(ctx, e);
	if (cli->json) {
		a = cJSON_CreateArray();
		for (i = 0; i < fu->npins; i++)
			cJSON_AddItemToArray(a, pin_json(&fu->pins[i]));
		json_print_list("pins", a);
	} else if (!cli->quiet) {
		if (!fu->npins)
			printf("nothing is trusted on first use here (%s)\n", fu->file);
		for (i = 0; i < fu->npins; i++)
			printf("%s %s %s: sha256 %s, %lld bytes, recorded %s from %s; %s\n",
			       fu->pins[i].recipe, fu->pins[i].version, fu->pins[i].platform,
			       fu->pins[i].sha256, (long long)fu->pins[i].size, fu->pins[i].recorded,
			       fu->pins[i].url, fu->pins[i].status);
	}
	cfapkg_first_use_free(fu);
	return EXIT_OK;
}

/* The fragments are JSON whatever --json says: they are meant for a file. */
static int export_trusted(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	char *json = NULL;
	enum cfapkg_err e;

	if (!cli_check_allowed(cli, LIST_OPTS))
		return EXIT_USAGE;
	if ((e = cfapkg_first_use_export(ctx, cli->args + 1, cli->nargs - 1, &json)))
		return report_error(ctx, e);
	if (!cli->quiet)
		printf("%s\n", json);
	cfapkg_free(json);
	return EXIT_OK;
}

/* cmd_recipe sends only these four subcommands here: anything that is not the
 * first three is export-trusted. */
int cmd_recipe_trust(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *sub = cli->args[0];

	if (strcmp(sub, "trust") == 0)
		return trust(ctx, cli);
	if (strcmp(sub, "untrust") == 0)
		return untrust(ctx, cli);
	if (strcmp(sub, "trusted") == 0)
		return trusted(ctx, cli);
	return export_trusted(ctx, cli);
}
