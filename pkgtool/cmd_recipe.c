/*
 * cmd_recipe.c - keeping recipes current.  'cfapkg recipe add-version'
 * downloads a new upstream build, hashes it and writes it into the recipe
 * file as text; 'cfapkg recipe outdated' lists upstream releases newer
 * than each recipe's newest version, with the add-version line that
 * records one; 'cfapkg recipe deb-set' reads a Debian package set's
 * closure from a repository folder and prints each .deb's pin.  Trust on
 * first use (trust, untrust, trusted, export-trusted) is cmd_trust.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "progress.h"
#include "render.h"

/* A releases list is a few hundred KiB: more is not one. */
#define RELEASES_CAP (4ull << 20)
#define ADD_OPTS                                                                         \
	(OPTS_GLOBAL | OPT_BIT(OPT_JSON) | OPTS_FETCH | OPT_BIT(OPT_MAX_SIZE) |              \
	 OPT_BIT(OPT_SOURCE) | OPT_BIT(OPT_FORMAT) | OPT_BIT(OPT_STRIP))
#define OUTDATED_OPTS (OPTS_GLOBAL | OPT_BIT(OPT_JSON) | OPTS_FETCH | OPT_BIT(OPT_RELEASES_URL))
#define DEBSET_OPTS (OPTS_GLOBAL | OPT_BIT(OPT_JSON) | OPT_BIT(OPT_SUITE))

static int usage(void)
{
	cli_error("usage: cfapkg recipe add-version NAME VERSION --source "
	                "OS-ARCH=URL... [--format FMT] [--strip N] [--recipes DIR]\n"
	                "       cfapkg recipe outdated [NAME...] [--releases-url URL]\n"
	                "       cfapkg recipe trust|untrust NAME VERSION [OS-ARCH]\n"
	                "       cfapkg recipe trusted | export-trusted [NAME...]\n"
	                "       cfapkg recipe deb-set DIR --suite SUITE... PACKAGE[=VERSION]...\n");
	return EXIT_USAGE;
}

/* The recipe named name, or NULL after saying there is none; the caller then
 * exits EXIT_NOTFOUND. */
static const struct cfapkg_recipe *find_recipe(struct cfapkg_ctx *ctx, const char *name)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(ctx, name);

	if (!r)
		cli_error("no recipe named \"%s\" (cfapkg search lists them)\n",
		        name);
	return r;
}

/* The strings up to NULL, one after another; NULL when out of memory. */
static char *cat(const char *first, ...)
{
	va_list ap;
	const char *s;
	size_t n = 0;
	char *out;

	va_start(ap, first);
	for (s = first; s; s = va_arg(ap, char *))
		n += strlen(s);
	va_end(ap);
	if (!(out = malloc(n + 1)))
		return NULL;
	n = 0;
	va_start(ap, first);
	for (s = first; s; s = va_arg(ap, char *)) {
		memcpy(out + n, s, strlen(s));
		n += strlen(s);
	}
	va_end(ap);
	out[n] = '\0';
	return out;
}

/* --source OS-ARCH=URL (repeatable), --format, --strip. */
/* One per platform: far more than any recipe has (each download's
 * result is several KiB, kept on the stack). */
#define MAX_SOURCES 16

/* Fills srcs from each --source in command-line order.  Each platform string
 * is allocated here and freed by add_version; url points into the command
 * line.  Without --strip, strip -1 takes the newest version's for the
 * platform; the size is not known until the download. */
static int sources_from_cli(const struct cli *cli, struct cfapkg_new_source *srcs, size_t *n)
{
	const char *fmt = cli_value(cli, OPT_FORMAT), *strip = cli_value(cli, OPT_STRIP);
	unsigned long long v = 0;
	size_t i;

	if (strip && !cli_number(strip, 16, &v)) {
		cli_error("--strip takes 0..16 leading folders\n");
		return EXIT_USAGE;
	}
	for (*n = 0, i = 0; i < cli->nopts; i++) {
		struct cfapkg_new_source *s = &srcs[*n];
		const char *eq;
		char *plat;
		if (cli->opts[i].id != OPT_SOURCE)
			continue;
		if (*n == MAX_SOURCES) {
			cli_error("at most %d --source options\n", MAX_SOURCES);
			return EXIT_USAGE;
		}
		/* An empty OS-ARCH before the "=" is refused here, before
		 * anything is downloaded. */
		if (!(eq = strchr(cli->opts[i].value, '=')) || eq == cli->opts[i].value) {
			cli_error("--source %s: expected OS-ARCH=URL "
			                "(windows-x86_64=https://...)\n", cli->opts[i].value);
			return EXIT_USAGE;
		}
		memset(s, 0, sizeof(*s));
		if (!(plat = malloc((size_t)(eq - cli->opts[i].value) + 1))) {
			cli_error("out of memory\n");
			return EXIT_ERROR;
		}
		memcpy(plat, cli->opts[i].value, (size_t)(eq - cli->opts[i].value));
		plat[eq - cli->opts[i].value] = '\0';
		s->platform = plat;
		s->url = eq + 1;
		s->format = fmt;
		s->strip = strip ? (int)v : -1;
		s->size = -1;
		(*n)++;
	}
	return EXIT_OK;
}

/* Downloads each source with progress shown; on a failure every item that
 * failed is named.  The label is put in front of an error only when the
 * library's message does not already name it. */
static int fetch_sources(struct cfapkg_ctx *ctx, const struct cli *cli,
                         struct cfapkg_fetch_item *items, size_t n)
{
	static struct progress p;
	struct cfapkg_fetch_opts o;
	enum cfapkg_err e;
	size_t i;
	int rc;

	if ((rc = fetch_opts_from_cli(cli, &o)))
		return rc;
	progress_init(&p, cli, &o);
	progress_catch_interrupt();
	e = cfapkg_fetch(ctx, items, n, &o);
	progress_end(&p);
	for (i = 0; e && i < n; i++)
		if (items[i].err)
			cli_error("%s%s%s\n",
			        strstr(items[i].error, items[i].label) ? "" : items[i].label,
			        strstr(items[i].error, items[i].label) ? "" : ": ", items[i].error);
	return e ? report_error_code(e) : EXIT_OK;
}

/* What add-version reports: one line per source, or with --json the new
 * version as written, so a script can check the hashes it recorded. */
static void print_added(const struct cfapkg_recipe *r, const struct cfapkg_new_version *nv,
                        const char *file, const struct cli *cli)
{
	cJSON *o, *a;
	char size[32];
	size_t i;

	if (cli->quiet)
		return;
	if (!cli->json) {
		for (i = 0; i < nv->nsources; i++)
			printf("%s %s: %s %s %s sha256 %s\n", r->name, nv->version,
			       nv->sources[i].platform, nv->sources[i].format,
			       human_size(nv->sources[i].size, size, sizeof(size)), nv->sources[i].sha256);
		printf("added to %s\n", file);
		return;
	}
	o = cJSON_CreateObject();
	json_str(o, "name", r->name);
	json_str(o, "version", nv->version);
	json_str(o, "file", file);
	a = cJSON_AddArrayToObject(o, "sources");
	for (i = 0; i < nv->nsources; i++) {
		cJSON *s = cJSON_CreateObject();
		json_str(s, "platform", nv->sources[i].platform);
		json_str(s, "url", nv->sources[i].url);
		json_str(s, "sha256", nv->sources[i].sha256);
		cJSON_AddNumberToObject(s, "size", (double)nv->sources[i].size);
		json_str(s, "format", nv->sources[i].format);
		if (nv->sources[i].strip >= 0)
			cJSON_AddNumberToObject(s, "strip", nv->sources[i].strip);
		cJSON_AddItemToArray(a, s);
	}
	json_print(o);
}

/* Downloads (under the root's lock), then writes: nothing is written
 * unless every download arrived. */
static int fetch_and_write(struct cfapkg_ctx *ctx, const struct cli *cli,
                           const struct cfapkg_recipe *r, struct cfapkg_new_version *nv,
                           const char *file)
{
	struct cfapkg_fetch_item items[MAX_SOURCES];
	struct cfapkg_writer_lock *lock = NULL;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;
	int rc;

	/* Each item's URL points into nv, which outlives the download; only
	 * the label is allocated here, and freed below with the item. */
	memset(items, 0, sizeof(items));
	for (i = 0, rc = EXIT_OK; i < nv->nsources; i++) {
		items[i].label = cat(r->name, " ", nv->version, " ", nv->sources[i].platform,
		                     (char *)NULL);
		items[i].urls = &nv->sources[i].url;
		items[i].nurls = 1;
		items[i].size = -1;
		if (!items[i].label)
			rc = EXIT_ERROR;
	}
	if (rc)
		cli_error("out of memory\n");
	else if (!(rc = take_lock(ctx, cli, &lock)) &&
	         !(rc = fetch_sources(ctx, cli, items, nv->nsources))) {
		for (i = 0; i < nv->nsources; i++) {
			/* The hash and size come from the bytes that arrived,
			 * not from upstream: the recipe pins what was really
			 * downloaded. */
			nv->sources[i].sha256 = items[i].sha256_out;
			nv->sources[i].size = (int64_t)items[i].size_out;
		}
		if ((e = cfapkg_recipe_add_version(ctx, r, nv)))
			rc = report_error(ctx, e);
		else
			print_added(r, nv, file, cli);
	} else if (rc != EXIT_BUSY) {
		/* A busy lock already said why nothing happened; any other
		 * failure says that the recipe file was left as it was. */
		fprintf(stderr, "cfapkg: %s was not changed\n", file);
	}
	cfapkg_writer_unlock(lock);
	for (i = 0; i < nv->nsources; i++) {
		free((char *)items[i].label);
		cfapkg_fetch_item_clear(&items[i]);
	}
	return rc;
}

/* recipe add-version NAME VERSION: the recipe and its file are checked before
 * any download, so that a version already there, or a recipe file that cannot
 * be edited, costs no transfer. */
static int add_version(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_new_source srcs[MAX_SOURCES];
	struct cfapkg_new_version nv;
	const struct cfapkg_recipe *r;
	const char *file = NULL;
	enum cfapkg_err e;
	size_t i;
	int rc;

	if (cli->nargs != 3)
		return usage();
	if (!cli_check_allowed(cli, ADD_OPTS))
		return EXIT_USAGE;
	if (!(r = find_recipe(ctx, cli->args[1])))
		return EXIT_NOTFOUND;
	nv.version = cli->args[2];
	nv.sources = srcs;
	nv.nsources = 0;
	rc = sources_from_cli(cli, srcs, &nv.nsources);
	if (!rc && ((e = cfapkg_recipe_edit_file(ctx, r, &file)) ||
	            (e = cfapkg_recipe_check_version(ctx, r, &nv))))
		rc = report_error(ctx, e);
	if (!rc)
		rc = fetch_and_write(ctx, cli, r, &nv, file);
	for (i = 0; i < nv.nsources; i++)
		free((char *)srcs[i].platform);
	return rc;
}


/* One recipe to look at, and what its upstream said. */
struct check {
	const struct cfapkg_recipe *r;
	char *url;
	size_t item;                  /* its download (recipes may share one) */
	struct cfapkg_releases *rel;
	char *error;
	int rc;
};

/* Text grown by appending; NULL data when out of memory. */
struct text {
	char *s;
	size_t n, cap;
	bool failed;
};

/* Grown by doubling past what is needed, so that a line built piece by piece is
 * copied a few times, not once per piece; a failure sticks. */
static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->failed)
		return;
	if (t->n + n + 1 > t->cap) {
		size_t cap = (t->n + n + 1) * 2;
		char *p = realloc(t->s, cap);
		if (!p) {
			t->failed = true;
			return;
		}
		t->s = p;
		t->cap = cap;
	}
	memcpy(t->s + t->n, s, n);
	t->n += n;
	t->s[t->n] = '\0';
}

/* An argument as a POSIX shell reads it back: quoted unless plain. */
static void text_arg(struct text *t, const char *a)
{
	const char *p;

	text_add(t, " ", 1);
	if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	                    "._/:=@%+,-") == strlen(a)) {
		text_add(t, a, strlen(a));
		return;
	}
	text_add(t, "'", 1);
	for (p = a; *p; p++)
		if (*p == '\'')
			text_add(t, "'\\''", 4);
		else
			text_add(t, p, 1);
	text_add(t, "'", 1);
}

/* The add-version line that records rel: the assets picked for the
 * recipe's platforms, and the recipe folders this command was given.
 * NULL when no asset was picked (or out of memory). */
static char *add_line(const struct cfapkg_recipe *r, const struct cfapkg_release *rel,
                      const struct cli *cli)
{
	struct text t = {NULL, 0, 0, false};
	size_t i, picks = 0;

	/* The library marks with pick the one asset add-version would take for
	 * each platform of the newest version; only those become --source
	 * options. */
	text_add(&t, "cfapkg recipe add-version", 25);
	text_arg(&t, r->name);
	text_arg(&t, rel->version);
	for (i = 0; i < rel->nassets; i++) {
		const struct cfapkg_release_asset *a = &rel->assets[i];
		char *src;
		if (!a->pick)
			continue;
		picks++;
		text_add(&t, " --source", 9);
		if (!(src = cat(a->platform, "=", a->url, (char *)NULL)))
			t.failed = true;
		else
			text_arg(&t, src);
		free(src);
	}
	/* The line repeats --recipes so that running it edits the same recipe
	 * tree that was looked at. */
	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_RECIPES) {
			text_add(&t, " --recipes", 10);
			text_arg(&t, cli->opts[i].value);
		}
	if (t.failed || !picks) {
		free(t.s);
		return NULL;
	}
	return t.s;
}

/* The recipes to look at (the named ones, else every one with an
 * upstream) with their releases URLs.  *n 0 and EXIT_OK: none has one. */
static int select_checks(struct cfapkg_ctx *ctx, const struct cli *cli, struct check **out,
                         size_t *n)
{
	const char *given = cli_value(cli, OPT_RELEASES_URL);
	size_t i, nall;
	const struct cfapkg_recipe *const *all = cfapkg_recipes(ctx, &nall);
	size_t count = cli->nargs > 1 ? cli->nargs - 1 : nall;
	struct check *cs = calloc(count ? count : 1, sizeof(*cs));
	enum cfapkg_err e;

	*out = cs;
	*n = 0;
	if (!cs)
		return report_error_code(CFAPKG_E_NOMEM);
	if (given && cli->nargs != 2) {
		cli_error("--releases-url is for one recipe: name it "
		                "(cfapkg recipe outdated NAME --releases-url URL)\n");
		return EXIT_USAGE;
	}
	for (i = 0; i < count; i++) {
		struct check *c = &cs[*n];
		c->r = cli->nargs > 1 ? find_recipe(ctx, cli->args[i + 1]) : all[i];
		if (!c->r)
			return EXIT_NOTFOUND;
		if (given)
			c->url = cat(given, (char *)NULL);
		else if ((e = cfapkg_recipe_releases_url(ctx, c->r, &c->url)))
			return report_error(ctx, e);
		/* A --releases-url copy that could not be made is out of
		 * memory; a recipe without an upstream instead leaves url NULL
		 * and is skipped below. */
		if (given && !c->url)
			return report_error_code(CFAPKG_E_NOMEM);
		if (c->url)
			(*n)++;
		else if (cli->nargs > 1) {
			cli_error("%s names no upstream: give its recipe \"upstream\": "
			                "{\"releases\": URL} or a GitHub \"homepage\", or use --releases-url "
			                "URL\n", c->r->name);
			return EXIT_USAGE;
		}
	}
	return EXIT_OK;
}

/* One download per distinct URL (two fetches of one URL would share a
 * .part file), under the root's lock, at most RELEASES_CAP each. */
static int fetch_lists(struct cfapkg_ctx *ctx, const struct cli *cli, struct check *cs, size_t n,
                       struct cfapkg_fetch_item *items, size_t *nitems)
{
	static struct progress p;
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_fetch_opts o;
	size_t i, k;
	int rc;

	if ((rc = fetch_opts_from_cli(cli, &o)))
		return rc;
	/* A releases list has no pinned size: the cap stops an upstream that
	 * sends something else from filling the disk. */
	o.max_unknown_size = RELEASES_CAP;
	for (*nitems = 0, i = 0; i < n; i++) {
		for (k = 0; k < *nitems && strcmp(items[k].urls[0], cs[i].url) != 0; k++)
			;
		cs[i].item = k;
		if (k < *nitems)
			continue;
		memset(&items[k], 0, sizeof(items[k]));
		items[k].label = cs[i].url;
		items[k].urls = (const char *const *)&cs[i].url;
		items[k].nurls = 1;
		items[k].size = -1;
		(*nitems)++;
	}
	if ((rc = take_lock(ctx, cli, &lock)))
		return rc;
	progress_init(&p, cli, &o);
	progress_catch_interrupt();
	cfapkg_fetch(ctx, items, *nitems, &o); /* each item says how it went */
	progress_end(&p);
	cfapkg_writer_unlock(lock);
	/* Each list's failure is kept on its item and reported per recipe by
	 * read_lists, so the context's last error is not the command's. */
	cfapkg_ctx_clear_error(ctx);
	return EXIT_OK;
}

/* Reads each downloaded list into its check.  A failure is copied into the
 * check, so that one upstream that failed does not hide the others. */
static void read_lists(struct cfapkg_ctx *ctx, struct check *cs, size_t n,
                       const struct cfapkg_fetch_item *items)
{
	size_t i;
	enum cfapkg_err e;

	for (i = 0; i < n; i++) {
		const struct cfapkg_fetch_item *it = &items[cs[i].item];
		if (it->err) {
			cs[i].error = cat(it->error, (char *)NULL);
			cs[i].rc = report_error_code(it->err);
		} else if ((e = cfapkg_releases_read(ctx, cs[i].r, it->path, cs[i].url, &cs[i].rel))) {
			cs[i].error = cat(cfapkg_ctx_error(ctx), (char *)NULL);
			cs[i].rc = report_error_code(e);
			cfapkg_ctx_clear_error(ctx);
		}
	}
}

/* One newer release: its assets with their platforms, and the command that
 * would record it, or why there is none to give. */
static void print_release(const struct cfapkg_recipe *r, const struct cfapkg_release *rel,
                          const struct cli *cli)
{
	char size[32], *line = add_line(r, rel, cli);
	size_t i;

	printf("  %s  (tag %s%s%s%s)\n", rel->version, rel->tag,
	       rel->prerelease ? ", pre-release" : "", rel->published_at ? ", " : "",
	       rel->published_at ? rel->published_at : "");
	for (i = 0; i < rel->nassets; i++)
		printf("    %-16s %10s  %s\n", rel->assets[i].platform ? rel->assets[i].platform : "-",
		       human_size(rel->assets[i].size, size, sizeof(size)), rel->assets[i].url);
	if (line)
		printf("    %s\n", line);
	else
		printf("    (no asset is an archive for a platform of %s's newest version: add it "
		       "with --source OS-ARCH=URL by hand)\n", r->name);
	free(line);
}

/* Errors go to standard error even with --quiet; only the up-to-date report is
 * silenced. */
static void print_check(const struct check *c, const struct cli *cli)
{
	const struct cfapkg_releases *rel = c->rel;
	size_t i;

	if (c->error) {
		cli_error("%s: %s\n", c->r->name, c->error);
		return;
	}
	if (cli->quiet)
		return;
	if (rel->nnewer == 0) {
		printf("%s %s: up to date (%lu releases at %s)\n", c->r->name, rel->newest,
		       (unsigned long)rel->nread, c->url);
	} else {
		printf("%s %s: %lu newer upstream (%s)\n", c->r->name, rel->newest,
		       (unsigned long)rel->nnewer, c->url);
		for (i = 0; i < rel->nnewer; i++)
			print_release(c->r, &rel->newer[i], cli);
	}
	if (!rel->nskipped)
		return;
	/* Tags that are not versions are shown, at most five, so that a
	 * release missed because of its tag's name can be noticed. */
	printf("  tags that name no version:");
	for (i = 0; i < rel->nskipped && i < 5; i++)
		printf(" %s", rel->skipped[i]);
	if (rel->nskipped > 5)
		printf(" (and %lu more)", (unsigned long)(rel->nskipped - 5));
	printf("\n");
}

static cJSON *release_json(const struct cfapkg_recipe *r, const struct cfapkg_release *rel,
                           const struct cli *cli)
{
	cJSON *o = cJSON_CreateObject(), *as;
	char *line = add_line(r, rel, cli);
	size_t i;

	json_str(o, "version", rel->version);
	json_str(o, "tag", rel->tag);
	cJSON_AddBoolToObject(o, "prerelease", rel->prerelease);
	json_str(o, "published_at", rel->published_at);
	as = cJSON_AddArrayToObject(o, "assets");
	for (i = 0; i < rel->nassets; i++) {
		const struct cfapkg_release_asset *a = &rel->assets[i];
		cJSON *j = cJSON_CreateObject();
		json_str(j, "name", a->name);
		json_str(j, "url", a->url);
		if (a->size >= 0)
			cJSON_AddNumberToObject(j, "size", (double)a->size);
		else
			cJSON_AddNullToObject(j, "size");
		json_str(j, "platform", a->platform);
		json_str(j, "format", a->format);
		cJSON_AddBoolToObject(j, "pick", a->pick);
		cJSON_AddItemToArray(as, j);
	}
	json_str(o, "command", line);
	free(line);
	return o;
}

/* A check that failed has no releases: its document stops after "error". */
static cJSON *check_json(const struct check *c, const struct cli *cli)
{
	cJSON *o = cJSON_CreateObject(), *newer, *skipped;
	size_t i;

	json_str(o, "name", c->r->name);
	json_str(o, "file", c->r->file);
	json_str(o, "newest", c->r->versions[0].version);
	json_str(o, "releases_url", c->url);
	json_str(o, "error", c->error);
	if (!c->rel)
		return o;
	cJSON_AddNumberToObject(o, "releases_read", (double)c->rel->nread);
	newer = cJSON_AddArrayToObject(o, "newer");
	for (i = 0; i < c->rel->nnewer; i++)
		cJSON_AddItemToArray(newer, release_json(c->r, &c->rel->newer[i], cli));
	skipped = cJSON_AddArrayToObject(o, "skipped_tags");
	for (i = 0; i < c->rel->nskipped; i++)
		cJSON_AddItemToArray(skipped, cJSON_CreateString(c->rel->skipped[i]));
	return o;
}

/* Exit 0 whether or not anything is newer (as apt list --upgradable and
 * pip list --outdated): the list is the answer; a failure is not. */
static int outdated(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_fetch_item *items = NULL;
	struct check *cs = NULL;
	size_t i, n = 0, nitems = 0;
	cJSON *all = NULL;
	int rc;

	if (!cli_check_allowed(cli, OUTDATED_OPTS))
		return EXIT_USAGE;
	if ((rc = select_checks(ctx, cli, &cs, &n)) == EXIT_OK && n == 0 && !cli->quiet)
		fprintf(cli->json ? stderr : stdout, "no recipe names an upstream (\"upstream\" or a "
		        "GitHub \"homepage\")\n");
	if (rc == EXIT_OK && n && !(items = calloc(n, sizeof(*items))))
		rc = report_error_code(CFAPKG_E_NOMEM);
	if (rc == EXIT_OK && n && (rc = fetch_lists(ctx, cli, cs, n, items, &nitems)) == EXIT_OK)
		read_lists(ctx, cs, n, items);
	if (rc == EXIT_OK && cli->json)
		all = cJSON_CreateArray();
	for (i = 0; rc == EXIT_OK && i < n; i++) {
		if (all)
			cJSON_AddItemToArray(all, check_json(&cs[i], cli));
		/* With --json a failed recipe is in the document and also said
		 * on standard error, where a person sees it. */
		if (!all || cs[i].error)
			print_check(&cs[i], cli);
	}
	if (all)
		json_print_list("recipes", all);
	for (i = 0; i < n; i++) {
		/* The first recipe that failed gives the exit code; the others
		 * are already reported. */
		if (rc == EXIT_OK && cs[i].rc)
			rc = cs[i].rc;
		free(cs[i].url);
		free(cs[i].error);
		cfapkg_releases_free(cs[i].rel);
	}
	for (i = 0; i < nitems; i++)
		cfapkg_fetch_item_clear(&items[i]);
	free(items);
	free(cs);
	return rc;
}

/* What each suite's InRelease said, so that a reader can see which file the
 * pins below were read from and when it was published. */
static cJSON *suite_json(const struct cfapkg_deb_suite_info *s)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "suite", s->suite);
	json_str(o, "archive_suite", s->archive_suite);
	json_str(o, "codename", s->codename);
	json_str(o, "date", s->date);
	json_str(o, "valid_until", s->valid_until);
	cJSON_AddBoolToObject(o, "clearsigned", s->clearsigned);
	json_str(o, "index", s->index_path);
	json_str(o, "index_sha256", s->index_sha256);
	cJSON_AddNumberToObject(o, "index_size", (double)s->index_size);
	return o;
}

/* Under the member names a recipe's pinned packages use (file, sha256, size
 * ...), so that a maintainer can copy them as they are. */
static cJSON *member_json(const struct cfapkg_deb_member *m)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "name", m->name);
	json_str(o, "version", m->version);
	json_str(o, "suite", m->suite);
	json_str(o, "file", m->filename);
	json_str(o, "sha256", m->sha256);
	cJSON_AddNumberToObject(o, "size", (double)m->size);
	json_str(o, "depends", m->depends);
	json_str(o, "provides", m->provides);
	json_str(o, "gpu_architecture", m->gpu_arch);
	return o;
}

/* With no C library floor the glibc member is left out: its two fields then go
 * to no object, which json_str passes over. */
static void print_set_json(const struct cfapkg_deb_set *set)
{
	cJSON *doc = cJSON_CreateObject(), *a, *g;
	size_t i;

	a = cJSON_AddArrayToObject(doc, "suites");
	for (i = 0; i < set->nsuites; i++)
		cJSON_AddItemToArray(a, suite_json(&set->suites[i]));
	a = cJSON_AddArrayToObject(doc, "packages");
	for (i = 0; i < set->nmembers; i++)
		cJSON_AddItemToArray(a, member_json(&set->members[i]));
	g = set->glibc ? cJSON_AddObjectToObject(doc, "glibc") : NULL;
	json_str(g, "version", set->glibc);
	json_str(g, "needed_by", set->glibc_by);
	json_print(doc);
}

/* The suites' InRelease dates and index hashes come first: they are what the
 * pins below were read from. */
static void print_set_text(const struct cfapkg_deb_set *set)
{
	struct table t;
	int64_t total = 0;
	char size[32];
	size_t i;

	for (i = 0; i < set->nsuites; i++)
		printf("%s: InRelease Date %s, %s %s\n", set->suites[i].suite, set->suites[i].date,
		       set->suites[i].index_path, set->suites[i].index_sha256);
	table_init(&t, 4);
	table_row(&t, (const char *[]){"PACKAGE", "VERSION", "SUITE", "SIZE"});
	for (i = 0; i < set->nmembers; i++) {
		const struct cfapkg_deb_member *m = &set->members[i];
		total += m->size;
		table_row(&t, (const char *[]){m->name, m->version, m->suite,
		                               human_size(m->size, size, sizeof(size))});
	}
	table_print(&t);
	printf("%zu packages, %s", set->nmembers, human_size(total, size, sizeof(size)));
	/* The closure stops at libc6: the machine's C library must be at
	 * least the highest floor a member asks for, named with that member. */
	if (set->glibc)
		printf("; the C library is the machine's: glibc >= %s (for %s)", set->glibc,
		       set->glibc_by);
	printf("\n");
}

/* deb-set DIR --suite S... ROOT...: the closure and its pins. */
static int deb_set(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *suites[CLI_MAX_ARGS];
	struct cfapkg_deb_set *set = NULL;
	size_t i, n = 0;
	enum cfapkg_err e;

	if (!cli_check_allowed(cli, DEBSET_OPTS))
		return EXIT_USAGE;
	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_SUITE)
			suites[n++] = cli->opts[i].value;
	if (cli->nargs < 3 || n == 0)
		return usage();
	e = cfapkg_deb_set_read(ctx, cli->args[1], "main", "amd64", suites, n, cli->args + 2,
	                        cli->nargs - 2, &set);
	if (e)
		return report_error(ctx, e);
	if (cli->json)
		print_set_json(set);
	else
		print_set_text(set);
	cfapkg_deb_set_free(set);
	return EXIT_OK;
}

/* recipe SUBCOMMAND: each subcommand checks its own arguments and options;
 * anything else prints the usage (EXIT_USAGE). */
int cmd_recipe(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	if (cli->nargs >= 1 && strcmp(cli->args[0], "deb-set") == 0)
		return deb_set(ctx, cli);
	if (cli->nargs >= 1 && strcmp(cli->args[0], "add-version") == 0)
		return add_version(ctx, cli);
	if (cli->nargs >= 1 && strcmp(cli->args[0], "outdated") == 0)
		return outdated(ctx, cli);
	if (cli->nargs >= 1 && (strcmp(cli->args[0], "trust") == 0 ||
	                        strcmp(cli->args[0], "untrust") == 0 ||
	                        strcmp(cli->args[0], "trusted") == 0 ||
	                        strcmp(cli->args[0], "export-trusted") == 0))
		return cmd_recipe_trust(ctx, cli);
	return usage();
}
