/*
 * cmd_fetch.c - 'cfapkg prefetch URL' (a recipe author pins a new artifact:
 * download it, print its SHA-256 and size) and 'cfapkg fetch SPEC...'
 * (fill the download cache for a plan without installing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "progress.h"
#include "render.h"

/* The option's value, else the setting's (cfapkg.conf, the environment:
 * the library checked those). */
static const char *option_or_setting(const struct cli *cli, enum opt_id id, const char *key)
{
	const char *v = cli_value(cli, id);

	return v ? v : cfapkg_setting(cli_settings(), key, NULL);
}

/* The download options every fetching command shares.  Each one given on the
 * command line beats cfapkg.conf and the environment; 0 leaves the library's
 * default in place. */
int fetch_opts_from_cli(const struct cli *cli, struct cfapkg_fetch_opts *o)
{
	unsigned long long v;
	const char *s;

	memset(o, 0, sizeof(*o));
	/* --offline cannot be turned off by a setting: either one asking for
	 * it is enough. */
	o->offline = (cli->seen & OPT_BIT(OPT_OFFLINE)) ||
	             cfapkg_setting_switch(cli_settings(), "offline");
	o->no_index_cache = (cli->seen & OPT_BIT(OPT_NO_INDEX_CACHE)) != 0;
	o->ca_bundle = option_or_setting(cli, OPT_CA_BUNDLE, "ca-bundle");
	o->proxy = cfapkg_setting(cli_settings(), "proxy", NULL);
	o->no_proxy = cfapkg_setting(cli_settings(), "no-proxy", NULL);
	if ((s = option_or_setting(cli, OPT_PARALLEL, "parallel")) &&
	    (!cli_number(s, 16, &v) || v == 0))
		goto bad;
	o->parallel = s ? (unsigned)v : 0;
	if ((s = option_or_setting(cli, OPT_RETRIES, "retries")) && !cli_number(s, 20, &v))
		goto bad;
	/* --retries counts the tries after the first; the library counts every
	 * attempt. */
	o->attempts = s ? (unsigned)v + 1 : 0;
	if ((s = option_or_setting(cli, OPT_STALL_TIMEOUT, "stall-timeout")) &&
	    (!cli_number(s, 3600, &v) || v == 0))
		goto bad;
	o->stall_secs = s ? (unsigned)v : 0;
	if ((s = cli_value(cli, OPT_MAX_SIZE)) && !parse_size(s, &o->max_unknown_size)) {
		cli_error("bad value \"%s\": --max-size takes a number of bytes, "
		          "optionally with K, M or G (4G)\n", s);
		return EXIT_USAGE;
	}
	return EXIT_OK;
bad:
	cli_error("bad value \"%s\": --parallel takes 1..16, --retries "
	                "0..20, --stall-timeout 1..3600 seconds\n", s);
	return EXIT_USAGE;
}

/* "SHA256  SIZE  LABEL": the hash first, so the line can be pasted into a
 * recipe or checked with sha256sum. */
static void print_item(const struct cfapkg_fetch_item *it, const struct cli *cli)
{
	char size[32];

	if (cli->quiet || it->err)
		return;
	printf("%s  %llu  %s  (%s, %s%s)\n", it->sha256_out, (unsigned long long)it->size_out,
	       it->label, human_size((int64_t)it->size_out, size, sizeof(size)),
	       it->from_cache ? "from the cache" : "downloaded",
	       it->resumed_from ? ", resumed" : "");
}

/* Only the first URL is named; "tried" says which URLs were given up
 * before another served the file. */
static cJSON *item_json(const struct cfapkg_fetch_item *it)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "label", it->label);
	json_str(o, "url", it->nurls ? it->urls[0] : NULL);
	json_str(o, "sha256", it->err ? NULL : it->sha256_out);
	cJSON_AddNumberToObject(o, "size", (double)it->size_out);
	json_str(o, "path", it->err ? NULL : it->path);
	cJSON_AddBoolToObject(o, "from_cache", it->from_cache);
	cJSON_AddNumberToObject(o, "resumed_from", (double)it->resumed_from);
	cJSON_AddNumberToObject(o, "attempts", it->attempts);
	cJSON_AddBoolToObject(o, "unpacked", it->unpacked);
	cJSON_AddBoolToObject(o, "streamed", it->streamed);
	json_str(o, "error", it->err ? it->error : NULL);
	json_str(o, "tried", it->tried);
	return o;
}

/* tried holds one line per URL that was given up before another served the
 * file; a download that worked is still worth a warning about a mirror that
 * failed. */
void print_tried(const struct cfapkg_fetch_item *items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *line = items[i].tried;
		while (line && *line) {
			size_t len = strcspn(line, "\n");
			fprintf(stderr, "cfapkg: warning: %s: %.*s; the next URL was tried\n",
			        items[i].label, (int)len, line);
			line += len + (line[len] == '\n');
		}
	}
}

/* An interrupt with text output says what the .part files kept for a resume
 * instead of listing the items; with --json the document still lists every
 * item. */
static int report_items(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *items, size_t n,
                        const struct cli *cli, enum cfapkg_err e)
{
	bool named = false;
	size_t i;

	if (e == CFAPKG_E_INTERRUPTED && !cli->json)
		return report_interrupted(ctx, items, n);
	if (cli->json) {
		cJSON *a = cJSON_CreateArray();
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(a, item_json(&items[i]));
		json_print_list("downloads", a);
	}
	print_tried(items, n);
	for (i = 0; i < n; i++) {
		if (!cli->json)
			print_item(&items[i], cli);
		named |= items[i].err != CFAPKG_E_OK;
		/* The label goes in front of an error only when the message
		 * does not name it already. */
		if (items[i].err && strstr(items[i].error, items[i].label))
			cli_error("%s\n", items[i].error);
		else if (items[i].err)
			cli_error("%s: %s\n", items[i].label, items[i].error);
	}
	if (e && !named)
		return report_error(ctx, e); /* before any download: a bad mirror file, say */
	return e ? report_error_code(e) : EXIT_OK;
}

/* The downloads run under the root's lock: the download cache and its
 * .part files are shared by every cfapkg using the root. */
static int fetch_with_progress(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *items,
                               size_t n, struct cfapkg_fetch_opts *o, const struct cli *cli)
{
	static struct progress p;
	struct cfapkg_writer_lock *lock = NULL;
	enum cfapkg_err e;
	int rc;

	if ((rc = take_lock(ctx, cli, &lock)))
		return rc;
	progress_init(&p, cli, o);
	progress_catch_interrupt();
	e = cfapkg_fetch(ctx, items, n, o);
	progress_end(&p);
	cfapkg_writer_unlock(lock);
	return report_items(ctx, items, n, cli, e);
}

/* A byte count, or a number with K, M or G (powers of 1024): "4G". */
bool parse_size(const char *s, uint64_t *out)
{
	char digits[24];
	size_t n = s ? strlen(s) : 0;
	unsigned shift = 0;
	unsigned long long v;

	if (n < 1 || n >= sizeof(digits))
		return false;
	memcpy(digits, s, n + 1);
	switch (digits[n - 1]) {
	case 'K': case 'k': shift = 10; break;
	case 'M': case 'm': shift = 20; break;
	case 'G': case 'g': shift = 30; break;
	default: break;
	}
	if (shift)
		digits[n - 1] = '\0';
	/* The bound keeps the shifted value from overflowing; 0 is no size cap
	 * the user could mean. */
	if (!cli_number(digits, (1ull << 62) >> shift, &v) || v == 0)
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* The last part of a URL's path ("zluda.zip"), without a query.
 * Returns the length of the part; *base points into url, which it borrows. */
static size_t url_base(const char *url, const char **base)
{
	size_t end = strcspn(url, "?#"), start = end;

	while (start > 0 && url[start - 1] != '/')
		start--;
	*base = url + start;
	return end - start;
}

/* Each URL's file name, so that two downloads are told apart; one named
 * like an earlier one gets its place on the command line ("x.zip (2)"). */
static const char *url_label(const char *const *urls, size_t i, char *buf, size_t len)
{
	const char *base, *other;
	size_t n = url_base(urls[i], &base), k;
	bool twice = false;

	for (k = 0; k < i && !twice; k++)
		twice = url_base(urls[k], &other) == n && strncmp(other, base, n) == 0;
	if (n == 0) /* "https://host/": the URL itself */
		cli_fit(buf, len, "%s", urls[i]);
	else if (twice)
		cli_fit(buf, len, "%.*s (%lu)", (int)n, base, (unsigned long)i + 1);
	else
		cli_fit(buf, len, "%.*s", (int)n, base);
	return buf;
}

/* The items of prefetch's URLs, on the heap however many are named. */
static int prefetch_items(struct cfapkg_ctx *ctx, const struct cli *cli, const char **mirrors,
                          size_t nmirrors, struct cfapkg_fetch_opts *o)
{
	struct cfapkg_fetch_item *items = calloc(cli->nargs, sizeof(*items));
	char (*labels)[256] = calloc(cli->nargs, sizeof(*labels));
	const char *sha = cli_value(cli, OPT_SHA256), *s;
	unsigned long long size;
	size_t i;
	int rc;

	if (!items || !labels) {
		free(items);
		free(labels);
		return report_error(ctx, CFAPKG_E_NOMEM);
	}
	for (i = 0; i < cli->nargs; i++) {
		items[i].label = url_label(cli->args, i, labels[i], sizeof(labels[i]));
		items[i].urls = i == 0 ? mirrors : &cli->args[i];
		items[i].nurls = i == 0 ? nmirrors : 1;
		items[i].size = -1;
		items[i].user_urls = true; /* typed here: a file:// URL may be read */
	}
	/* --sha256, --size and the mirrors are for one URL only (cmd_prefetch
	 * refused them with several): they belong to the first item. */
	items[0].sha256 = sha;
	if ((s = cli_value(cli, OPT_SIZE)) && !cli_number(s, (1ull << 62), &size)) {
		cli_error("--size takes a number of bytes\n");
		free(items);
		free(labels);
		return EXIT_USAGE;
	}
	if (s)
		items[0].size = (int64_t)size;
	rc = fetch_with_progress(ctx, items, cli->nargs, o, cli);
	for (i = 0; i < cli->nargs; i++)
		cfapkg_fetch_item_clear(&items[i]);
	free(items);
	free(labels);
	return rc;
}

/* prefetch URL...: the same download code as install, so a recipe author sees
 * the hash cfapkg itself would check. */
int cmd_prefetch(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *mirrors[CLI_MAX_ARGS + 1];
	struct cfapkg_fetch_opts o;
	const char *sha = cli_value(cli, OPT_SHA256);
	size_t i, nmirrors = 0;
	int rc;

	if (cli->nargs == 0 || (cli->nargs > 1 && (sha || cli_value(cli, OPT_SIZE) ||
	                                           (cli->seen & OPT_BIT(OPT_MIRROR))))) {
		cli_error("usage: cfapkg prefetch URL [--sha256 HEX] [--size N] "
		                "[--mirror URL]... [--max-size SIZE] (or several URLs, without "
		                "--sha256, --size and --mirror)\n");
		return EXIT_USAGE;
	}
	if ((rc = fetch_opts_from_cli(cli, &o)))
		return rc;
	/* The URL given first, then each --mirror in the order given: the
	 * order the download tries them in. */
	mirrors[nmirrors++] = cli->args[0];
	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_MIRROR && nmirrors < CLI_MAX_ARGS)
			mirrors[nmirrors++] = cli->opts[i].value;
	return prefetch_items(ctx, cli, mirrors, nmirrors, &o);
}

/* fetch also unpacks into the store: each package's store folder, and whether
 * it was already there. */
static void print_unpacked(const struct cfapkg_fetch_item *items, size_t n,
                           const struct cli *cli)
{
	size_t i;

	for (i = 0; i < n && !cli->quiet && !cli->json; i++)
		if (items[i].unpacked)
			printf("%s: %s (%s)\n", items[i].unpack_name,
			       items[i].unpack.path ? items[i].unpack.path : "",
			       items[i].unpack.existed ? "already in the store"
			       : items[i].streamed   ? "unpacked while downloading"
			                             : "unpacked");
}

/* Before any download: a plan with a package that cannot be fetched (no
 * hash, "unavailable") is refused whole, as install refuses it,
 * naming each such package and why. */
int refuse_unfetchable(const struct cfapkg_plan *plan)
{
	size_t i, n;
	const struct cfapkg_plan_item *items = cfapkg_plan_items(plan, &n);
	int rc = EXIT_OK;

	for (i = 0; i < n; i++) {
		const struct cfapkg_plan_item *it = &items[i];
		if (it->version->recipe->kind != CFAPKG_KIND_PACKAGE || it->installable)
			continue;
		cli_error("%s %s cannot be fetched: %s\n",
		        it->version->recipe->name, it->version->version, it->why_not);
		rc = EXIT_UNSUPPORTED;
	}
	return rc;
}

/* The plan's packages into the store, as an install would fetch them.
 * The lockfile is made from the plan before the lock is taken, so a plan that
 * cannot become a lockfile costs no wait. */
static int fetch_plan(struct cfapkg_ctx *ctx, const struct cli *cli,
                      const struct cfapkg_plan *plan, struct cfapkg_fetch_opts *o)
{
	static struct progress p;
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_lockfile *set = NULL;
	struct cfapkg_fetch_item *items = NULL;
	size_t n = 0;
	enum cfapkg_err e;
	int rc;

	if ((e = cfapkg_lockfile_from_plan(ctx, plan, cli->args, cli->nargs, &set)))
		return report_error(ctx, e);
	if ((rc = take_lock(ctx, cli, &lock))) {
		cfapkg_lockfile_free(set);
		return rc;
	}
	progress_init(&p, cli, o);
	progress_catch_interrupt();
	/* A part from an APT source needs its pinned index read first (a
	 * download of its own) to know its .debs: hence under the lock, with
	 * the progress shown. */
	e = cfapkg_lockfile_resolve(ctx, set, o);
	if (!e)
		e = cfapkg_lockfile_fetch(ctx, set, o, &items, &n);
	progress_end(&p);
	cfapkg_writer_unlock(lock);
	rc = report_items(ctx, items, n, cli, e);
	print_unpacked(items, n, cli);
	cfapkg_lockfile_fetch_free(items, n);
	cfapkg_lockfile_free(set);
	return rc;
}

/* fetch SPEC...: plan and fill the store as install would, but make no
 * generation, so a later install needs no network. */
int cmd_fetch(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_fetch_opts o;
	struct cfapkg_plan *plan = NULL;
	int rc;

	if ((rc = fetch_opts_from_cli(cli, &o)) || (rc = solve_from_cli(ctx, cli, &plan)))
		return rc;
	if (!cfapkg_plan_solved(plan)) {
		print_problems_text(plan, cli);
		rc = unsolved_exit(plan);
	} else if (!(rc = refuse_unfetchable(plan))) {
		rc = fetch_plan(ctx, cli, plan, &o);
	}
	cfapkg_plan_free(plan);
	return rc;
}

/* add-file PATH...: files a recipe expects by their SHA-256 but that the
 * user supplies.  Each file is tried even when one before failed; the
 * last failure gives the exit code. */
int cmd_add_file(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	int rc = EXIT_OK;
	size_t i;

	if (cli->nargs == 0) {
		cli_error("usage: cfapkg add-file PATH...\n");
		return EXIT_USAGE;
	}
	struct cfapkg_writer_lock *lock = NULL;

	if ((rc = take_lock(ctx, cli, &lock)))
		return rc;
	for (i = 0; i < cli->nargs; i++) {
		struct cfapkg_added_file added;
		enum cfapkg_err e = cfapkg_add_file(ctx, cli->args[i], &added);
		if (e) {
			rc = report_error(ctx, e);
			cfapkg_ctx_clear_error(ctx);
			continue;
		}
		if (!cli->quiet)
			printf("%s  %s  accepted as %s of %s %s\n", added.sha256, cli->args[i],
			       added.what, added.recipe, added.version);
		cfapkg_added_file_clear(&added);
	}
	cfapkg_writer_unlock(lock);
	return rc;
}
