/*
 * cmd_channel.c - channel keygen|build|add|list|remove|update: publishing a
 * recipe folder as a signed channel, and the channels a root follows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "render.h"

#define DEFAULT_PRIORITY 50
#define MAX_NEXT_KEYS 16

static int usage(void)
{
	fprintf(stderr, "usage: cfapkg channel keygen FILE | build DIR --key FILE [--name NAME] "
	        "[--index-version N] [--expires-days D] [--next-key PUB]... | add NAME URL --key "
	        "PUB [--priority N] | list | remove NAME | update [NAME]\n");
	return EXIT_USAGE;
}

static int keygen(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	char pub[64], *pubfile;
	int rc;
	enum cfapkg_err e;

	if (cli->nargs != 2)
		return usage();
	if (!(pubfile = malloc(strlen(cli->args[1]) + 5)))
		return report_error(ctx, CFAPKG_E_NOMEM);
	/* The public half sits beside the private key as FILE.pub, as
	 * ssh-keygen names it. */
	memcpy(pubfile, cli->args[1], strlen(cli->args[1]));
	memcpy(pubfile + strlen(cli->args[1]), ".pub", 5);
	e = cfapkg_channel_keygen(ctx, cli->args[1], pubfile, pub, sizeof(pub));
	if (e)
		rc = report_error(ctx, e);
	else {
		rc = EXIT_OK;
		if (!cli->quiet)
			printf("private key: %s (keep it secret: it signs the channel)\n"
			       "public key:  %s\n  ed25519 %s\n", cli->args[1], pubfile, pub);
	}
	free(pubfile);
	return rc;
}

/* The last path component of dir: a channel's default name. */
static const char *base_name(const char *dir)
{
	const char *p, *base = dir;
	size_t n = strlen(dir);

	/* "recipes/" names the same folder as "recipes"; both separators, as
	 * a Windows user may type either. */
	while (n > 1 && (dir[n - 1] == '/' || dir[n - 1] == '\\'))
		n--;
	for (p = dir; p < dir + n; p++)
		if (*p == '/' || *p == '\\')
			base = p + 1;
	return base;
}

/* An option not given leaves *out as the caller set it, its default; one given
 * must be a whole number within max, or the command stops with usage. */
static int number_opt(const struct cli *cli, enum opt_id id, unsigned long long max,
                      unsigned long long *out)
{
	const char *v = cli_value(cli, id);

	if (v && !cli_number(v, max, out)) {
		cli_error("--%s takes a whole number up to %llu\n",
		        cli_opt_name(id), max);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* The keys given with --next-key (MAX_NEXT_KEYS at most; more are left out) go
 * into the index as the ones a later index may be signed by, so that a key's
 * rotation is announced before it happens. */
static int build(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_channel_build_opts o = {0};
	const char *next[MAX_NEXT_KEYS], *key = cli_value(cli, OPT_KEY);
	unsigned long long version = 0, days = 0;
	char name[256];
	uint64_t made = 0;
	size_t i;
	enum cfapkg_err e;

	if (cli->nargs != 2 || !key)
		return usage();
	if (number_opt(cli, OPT_INDEX_VERSION, 9007199254740991ull, &version) ||
	    number_opt(cli, OPT_EXPIRES_DAYS, 36500, &days))
		return EXIT_USAGE;
	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_NEXT_KEY && o.nnext_keys < MAX_NEXT_KEYS)
			next[o.nnext_keys++] = cli->opts[i].value;
	/* The channel's name defaults to its folder's; one too long is refused
	 * rather than cut into another name. */
	if (!cli_snprintf(name, sizeof(name), "%s", base_name(cli->args[1])) &&
	    !cli_value(cli, OPT_NAME)) {
		cli_error("%s: the folder's name is too long for a channel name; give one with "
		          "--name\n", cli->args[1]);
		return EXIT_USAGE;
	}
	/* base_name ends before trailing separators: drop them here. */
	name[strcspn(name, "/\\")] = '\0';
	o.name = cli_value(cli, OPT_NAME) ? cli_value(cli, OPT_NAME) : name;
	o.version = version;
	o.expires_days = (unsigned)days;
	o.next_keys = next;
	if ((e = cfapkg_channel_build(ctx, cli->args[1], key, &o, &made)))
		return report_error(ctx, e);
	if (!cli->quiet)
		printf("channel %s: index version %llu signed into %s/index.json and "
		       "index.json.sig\n", o.name, (unsigned long long)made, cli->args[1]);
	return EXIT_OK;
}

static int add(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_fetch_opts fo;
	struct cfapkg_writer_lock *lock = NULL;
	unsigned long long priority = DEFAULT_PRIORITY;
	const char *key = cli_value(cli, OPT_KEY);
	enum cfapkg_err e;
	int rc;

	if (cli->nargs != 3 || !key)
		return usage();
	if ((rc = number_opt(cli, OPT_PRIORITY, 1000000, &priority)) ||
	    (rc = fetch_opts_from_cli(cli, &fo)) || (rc = take_lock(ctx, cli, &lock)))
		return rc;
	/* Adding fetches and checks the first index, under the root's lock:
	 * two adds of one name cannot both write its state. */
	e = cfapkg_channel_add(ctx, cli->args[1], cli->args[2], key, (int)priority, &fo);
	cfapkg_writer_unlock(lock);
	if (e)
		return report_error(ctx, e);
	if (!cli->quiet)
		printf("channel %s added from %s\n", cli->args[1], cli->args[2]);
	return EXIT_OK;
}

static cJSON *channel_json(const struct cfapkg_channel *c)
{
	cJSON *o = cJSON_CreateObject(), *keys = cJSON_CreateArray();
	char when[32] = "";
	size_t k;

	if (c->expires)
		cfapkg_format_utc(c->expires, when);
	json_str(o, "name", c->name);
	json_str(o, "url", c->url);
	json_str(o, "channel", c->upstream);
	cJSON_AddNumberToObject(o, "priority", c->priority);
	cJSON_AddNumberToObject(o, "version", (double)c->version);
	json_str(o, "expires", when[0] ? when : NULL);
	/* Said, not refused: an expired index is still listed so it can be
	 * updated or removed. */
	cJSON_AddBoolToObject(o, "expired", c->expires && c->expires <= (int64_t)time(NULL));
	for (k = 0; k < c->nkey_ids; k++)
		cJSON_AddItemToArray(keys, cJSON_CreateString(c->key_ids[k]));
	cJSON_AddItemToObject(o, "keys", keys);
	return o;
}

static int list(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_channel *cs = NULL;
	cJSON *a = cJSON_CreateArray();
	size_t i, n = 0;
	enum cfapkg_err e = cfapkg_channel_list(ctx, &cs, &n);

	if (e) {
		cJSON_Delete(a);
		return report_error(ctx, e);
	}
	for (i = 0; i < n; i++) {
		cJSON *o = channel_json(&cs[i]);
		const cJSON *exp = cJSON_GetObjectItemCaseSensitive(o, "expires");
		if (!cli->json)
			printf("%-16s priority %-4d index %-6llu %s%s %s\n", cs[i].name, cs[i].priority,
			       (unsigned long long)cs[i].version,
			       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "expired"))
			               ? "EXPIRED "
			               : "expires ",
			       cJSON_IsString(exp) ? exp->valuestring : "-", cs[i].url);
		cJSON_AddItemToArray(a, o);
	}
	if (!cli->json && n == 0)
		printf("no channels ('cfapkg channel add NAME URL --key PUB' adds one)\n");
	if (cli->json)
		json_print_list("channels", a); /* takes a */
	else
		cJSON_Delete(a);
	cfapkg_channel_list_free(cs, n);
	return EXIT_OK;
}

/* A refusal goes to the error stream with its reason, so that a script reading
 * the output sees only the channels that were updated or current. */
static void print_update(const struct cfapkg_channel_update *u)
{
	switch (u->outcome) {
	case CFAPKG_CHANNEL_UPDATED:
		printf("%s: index %llu -> %llu\n", u->name, (unsigned long long)u->from,
		       (unsigned long long)u->to);
		break;
	case CFAPKG_CHANNEL_CURRENT:
		printf("%s: index %llu is current\n", u->name, (unsigned long long)u->to);
		break;
	case CFAPKG_CHANNEL_REFUSED:
		cli_error("%s\n", u->why ? u->why : u->name);
		break;
	}
}

/* Every channel's outcome is shown even when one of them failed: the list comes
 * back with the error, which then gives the exit status. */
static int update(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_channel_update *u = NULL;
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_fetch_opts fo;
	size_t i, n = 0;
	enum cfapkg_err e;
	int rc;

	if (cli->nargs > 2)
		return usage();
	if ((rc = fetch_opts_from_cli(cli, &fo)) || (rc = take_lock(ctx, cli, &lock)))
		return rc;
	e = cfapkg_channel_update(ctx, cli->nargs == 2 ? cli->args[1] : NULL, &fo, &u, &n);
	cfapkg_writer_unlock(lock);
	if (!u)
		return report_error(ctx, e);
	for (i = 0; i < n && !cli->quiet; i++)
		print_update(&u[i]);
	if (n == 0 && !cli->quiet)
		printf("no channels to update\n");
	cfapkg_channel_updates_free(u, n);
	return e ? report_error_code(e) : EXIT_OK;
}

/* A subcommand is matched with its count of arguments where it has a fixed one,
 * so that "list extra" is a usage error rather than a quiet list. */
int cmd_channel(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *sub = cli->nargs ? cli->args[0] : "";
	enum cfapkg_err e;

	if (strcmp(sub, "keygen") == 0)
		return keygen(ctx, cli);
	if (strcmp(sub, "build") == 0)
		return build(ctx, cli);
	if (strcmp(sub, "add") == 0)
		return add(ctx, cli);
	if (strcmp(sub, "list") == 0 && cli->nargs == 1)
		return list(ctx, cli);
	if (strcmp(sub, "update") == 0)
		return update(ctx, cli);
	if (strcmp(sub, "remove") == 0 && cli->nargs == 2) {
		struct cfapkg_writer_lock *lock = NULL;
		int rc = take_lock(ctx, cli, &lock);
		if (rc)
			return rc;
		e = cfapkg_channel_remove(ctx, cli->args[1]);
		cfapkg_writer_unlock(lock);
		if (e)
			return report_error(ctx, e);
		if (!cli->quiet)
			printf("channel %s removed\n", cli->args[1]);
		return EXIT_OK;
	}
	return usage();
}
