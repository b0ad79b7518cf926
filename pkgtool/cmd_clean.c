/*
 * cmd_clean.c - the commands that delete: env remove (shows what goes and
 * asks), gc (--dry-run lists what it would remove), and cache info|clean
 * (cfapkg's downloads and the stack's compute caches).  The library
 * decides what goes; this file shows it, asks, and reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* "1 generation", "3 generations". */
static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* A deletion goes ahead on --yes or a "y" typed at a terminal.  Without a
 * terminal there is no one to ask: refused (install, which changes
 * nothing that cannot be rolled back, goes ahead instead). */
static int confirm_delete(const struct cli *cli, const char *question, const char *what)
{
	char line[16];

	if (cli->yes)
		return EXIT_OK;
	if (!cfapkg_is_terminal(stdin)) {
		cli_error("not removing %s: standard input is not a terminal "
		        "to ask on; pass --yes to remove it\n", what);
		return EXIT_USAGE;
	}
	/* Anything but an answer starting with y or Y is a no, an empty line
	 * and end of input included: deleting needs a yes. */
	printf("%s [y/N] ", question);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) && (line[0] == 'y' || line[0] == 'Y'))
		return EXIT_OK;
	printf("Nothing changed.\n");
	return -1; /* answered no: nothing to do, exit 0 */
}

/* What removing env takes: its generations and its current set. */
static int show_env(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env)
{
	struct cfapkg_history_entry *h = NULL;
	struct cfapkg_lockfile *lock = NULL;
	size_t i, n, gens = 0;
	enum cfapkg_err e;

	if ((e = cfapkg_env_history(ctx, env, &h, &n)))
		return report_error(ctx, e);
	for (i = 0; i < n; i++)
		/* Switches are not generations, and a generation gc already
		 * removed is no longer there to lose. */
		gens += !h[i].is_switch && h[i].exists;
	cfapkg_history_free(h, n);
	/* Generation 0 is the current one; an environment with nothing
	 * installed has none, which is not an error here. */
	if ((e = cfapkg_env_lockfile(ctx, env, 0, &lock)) && e != CFAPKG_E_NOTFOUND)
		return report_error(ctx, e);
	cfapkg_ctx_clear_error(ctx);
	if (cli->quiet) {
		cfapkg_lockfile_free(lock);
		return EXIT_OK;
	}
	printf("Removing environment \"%s\" deletes its %lu %s (no rollback to them) and ", env,
	       (unsigned long)gens, plural(gens, "generation", "generations"));
	if (!lock || lock->nparts == 0)
		printf("nothing installed\n");
	else
		printf("the packages of the current one:\n");
	for (i = 0; lock && i < lock->nparts; i++)
		printf("  %s %s%s\n", lock->parts[i].name, lock->parts[i].version,
		       lock->parts[i].requested ? " (requested)" : "");
	if (lock && lock->nparts)
		/* Removing an environment frees no store folder by itself:
		 * another environment may share it, and only gc looks at all
		 * of them. */
		printf("Store folders no other environment uses go at the next 'cfapkg gc'.\n");
	cfapkg_lockfile_free(lock);
	return EXIT_OK;
}

/* env remove NAME: named, shown, asked, removed. */
int cmd_env_remove(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env)
{
	struct cfapkg_writer_lock *lock = NULL;
	char question[160], what[128];
	enum cfapkg_err e;
	int rc;

	if ((e = cfapkg_env_check_name(ctx, env)))
		return report_error(ctx, e);
	if (strcmp(env, CFAPKG_DEFAULT_ENV) == 0) { /* the library refuses it, before any question */
		e = cfapkg_env_remove(ctx, env);
		return e ? report_error(ctx, e) : EXIT_OK;
	}
	/* The lock first: its recovery finishes a removal a kill cut short,
	 * which is also when the environment is already gone. */
	if ((rc = take_lock(ctx, cli, &lock)))
		return rc;
	if (!cfapkg_env_exists(ctx, env)) {
		cfapkg_writer_unlock(lock);
		cli_error("no environment \"%s\" ('cfapkg env list' shows "
		        "them)\n", env);
		return EXIT_NOTFOUND;
	}
	/* Names are at most 64 characters: both texts fit. */
	cli_fit(question, sizeof(question), "Remove environment \"%s\"?", env);
	cli_fit(what, sizeof(what), "environment \"%s\"", env);
	/* The question is asked under the lock, so what was shown is what
	 * goes: no other cfapkg can install into the environment in
	 * between. */
	if (!(rc = show_env(ctx, cli, env)) && !(rc = confirm_delete(cli, question, what))) {
		if ((e = cfapkg_env_remove(ctx, env)))
			rc = report_error(ctx, e);
		else if (!cli->quiet)
			printf("Removed environment \"%s\" ('cfapkg gc' frees what only it used)\n", env);
	}
	cfapkg_writer_unlock(lock);
	/* -1 is confirm_delete's "answered no": nothing was removed, and that
	 * is no failure. */
	return rc < 0 ? EXIT_OK : rc;
}

/* "generation" only for a generation, "unpacked" only for a download: the
 * other kinds have no such field. */
static cJSON *gc_item_json(const struct cfapkg_gc_item *it)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "kind", cfapkg_gc_kind_name(it->kind));
	json_str(o, "env", it->env);
	if (it->kind == CFAPKG_GC_GENERATION)
		cJSON_AddNumberToObject(o, "generation", it->generation);
	json_str(o, "name", it->name);
	cJSON_AddNumberToObject(o, "bytes", (double)it->bytes);
	if (it->kind == CFAPKG_GC_DOWNLOAD)
		cJSON_AddBoolToObject(o, "unpacked", it->unpacked);
	return o;
}

static cJSON *gc_items_json(const struct cfapkg_gc_result *r)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < r->nitems; i++)
		cJSON_AddItemToArray(a, gc_item_json(&r->items[i]));
	return a;
}

/* "generation 2 of environment "default"", "store folder zluda-..." */
static void print_gc_item(const char *verb, const struct cfapkg_gc_item *it)
{
	char size[32];

	human_size((int64_t)it->bytes, size, sizeof(size));
	if (it->kind == CFAPKG_GC_GENERATION)
		printf("%s generation %u of environment \"%s\"\n", verb, it->generation, it->env);
	else if (it->kind == CFAPKG_GC_STORE)
		printf("%s store folder %s (%s)\n", verb, it->name, size);
	else if (it->kind == CFAPKG_GC_DOWNLOAD)
		printf("%s download %s (%s%s)\n", verb, it->name, size,
		       it->unpacked ? ", unpacked in the store" : ", no kept generation uses it");
	else if (it->kind == CFAPKG_GC_LOOKUP)
		printf("%s APT lookup %s (%s, its index is no longer pinned or cached)\n", verb,
		       it->name, size);
	else if (it->kind == CFAPKG_GC_RECIPE_CACHE)
		printf("%s recipe cache %s (%s, of a recipe folder no longer read)\n", verb,
		       it->name, size);
	else
		printf("%s partial download %s (%s, last written over a day ago)\n", verb, it->name,
		       size);
}

/* One line for gc and for --dry-run alike, so the two can be compared. */
static void print_gc_summary(const struct cfapkg_gc_result *r, bool dry_run)
{
	char size[32];

	char lookups[96] = "";
	size_t len;

	/* Named only when there are some: most roots have no APT source, and
	 * keep reading the same recipe folders. */
	if (r->lookups)
		cli_fit(lookups, sizeof(lookups), ", %lu APT %s", (unsigned long)r->lookups,
		        plural(r->lookups, "lookup", "lookups"));
	len = strlen(lookups);
	if (r->recipe_caches)
		cli_fit(lookups + len, sizeof(lookups) - len, ", %lu recipe %s",
		        (unsigned long)r->recipe_caches, plural(r->recipe_caches, "cache", "caches"));
	printf("%s %lu %s, %lu store %s, %lu %s and %lu partial %s%s: %s %s\n",
	       dry_run ? "gc would remove" : "Removed", (unsigned long)r->generations,
	       plural(r->generations, "generation", "generations"), (unsigned long)r->prefixes,
	       plural(r->prefixes, "prefix", "prefixes"), (unsigned long)r->downloads,
	       plural(r->downloads, "download", "downloads"), (unsigned long)r->parts,
	       plural(r->parts, "download", "downloads"), lookups,
	       human_size((int64_t)r->bytes, size, sizeof(size)), dry_run ? "to free" : "freed");
}

/* --keep N keeps the newest N generations of each environment; without
 * --keep, 0 tells the library to keep them all. */
static int parse_keep(const struct cli *cli, unsigned *keep)
{
	const char *text = cli_value(cli, OPT_KEEP);
	unsigned long long v = 0;

	*keep = 0;
	if (text && (!cli_number(text, 100000000ull, &v) || v == 0)) {
		cli_error("--keep takes a number of generations (1 or more)\n");
		return EXIT_USAGE;
	}
	*keep = (unsigned)v;
	return EXIT_OK;
}

int cmd_gc(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_gc_opts o = {0, (cli->seen & OPT_BIT(OPT_DRY_RUN)) != 0, false};
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_gc_result r;
	enum cfapkg_err e;
	size_t i;
	int rc;

	if ((rc = parse_keep(cli, &o.keep)) || (rc = take_lock(ctx, cli, &lock)))
		return rc;
	/* The lock is held only while gc runs; the report needs none of the
	 * root.  A dry run takes it too, so its list is not read while another
	 * cfapkg is changing the root. */
	e = cfapkg_gc_run(ctx, &o, &r);
	cfapkg_writer_unlock(lock);
	if (e) {
		cfapkg_gc_result_free(&r);
		return report_error(ctx, e);
	}
	if (cli->json) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddBoolToObject(j, "dry_run", o.dry_run);
		cJSON_AddNumberToObject(j, "generations", (double)r.generations);
		cJSON_AddNumberToObject(j, "prefixes", (double)r.prefixes);
		cJSON_AddNumberToObject(j, "downloads", (double)r.downloads);
		cJSON_AddNumberToObject(j, "parts", (double)r.parts);
		cJSON_AddNumberToObject(j, "lookups", (double)r.lookups);
		cJSON_AddNumberToObject(j, "recipe_caches", (double)r.recipe_caches);
		cJSON_AddNumberToObject(j, "bytes_freed", (double)r.bytes);
		cJSON_AddItemToObject(j, "items", gc_items_json(&r));
		json_print(j);
	} else if (!cli->quiet) {
		/* A real run names nothing one by one: the summary says what
		 * was freed. */
		for (i = 0; o.dry_run && i < r.nitems; i++)
			print_gc_item("Would remove", &r.items[i]);
		print_gc_summary(&r, o.dry_run);
	}
	cfapkg_gc_result_free(&r);
	return EXIT_OK;
}

/* The compute caches differ per OS: the heading says which one's are
 * listed. */
static const char *os_title(void)
{
	return strcmp(cfapkg_host_os(), "windows") == 0 ? "Windows" : "Linux";
}

/* set_by names the variable that moved a cache from its default place; NULL
 * when it is where the stack puts it by default. */
static cJSON *stack_cache_json(const struct cfapkg_stack_cache *c)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "name", c->name);
	json_str(o, "what", c->what);
	json_str(o, "path", c->path);
	json_str(o, "set_by", c->set_by);
	cJSON_AddBoolToObject(o, "present", c->present);
	cJSON_AddNumberToObject(o, "files", (double)c->files);
	cJSON_AddNumberToObject(o, "bytes", (double)c->bytes);
	return o;
}

/* A cache that is not there is still listed, with where it would be, so that a
 * user can see where each program keeps its own. */
static void print_stack_cache(const struct cfapkg_stack_cache *c)
{
	char size[32];

	if (!c->present) {
		printf("  %-10s %-40s %s (none)\n", c->name, c->what, c->path ? c->path : "?");
		return;
	}
	printf("  %-10s %-40s %s: %lu %s, %s%s%s\n", c->name, c->what, c->path,
	       (unsigned long)c->files, plural(c->files, "file", "files"),
	       human_size((int64_t)c->bytes, size, sizeof(size)), c->set_by ? ", from " : "",
	       c->set_by ? c->set_by : "");
}

/* cache info changes nothing and takes no lock: the numbers are a snapshot. */
static int cache_info(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_downloads_info d;
	struct cfapkg_store_info st;
	struct cfapkg_stack_cache *c = NULL;
	char size[32], parts[32];
	size_t i, n = 0;
	enum cfapkg_err e;

	if ((e = cfapkg_downloads_info(ctx, &d)) || (e = cfapkg_store_info(ctx, &st)) ||
	    (e = cfapkg_stack_caches(ctx, &c, &n)))
		return report_error(ctx, e);
	if (cli->json) {
		cJSON *o = cJSON_CreateObject(), *dl = cJSON_AddObjectToObject(o, "downloads"),
		      *so = cJSON_AddObjectToObject(o, "store"), *a = cJSON_AddArrayToObject(o, "compute");
		cJSON_AddNumberToObject(dl, "files", (double)d.files);
		cJSON_AddNumberToObject(dl, "bytes", (double)d.bytes);
		cJSON_AddNumberToObject(dl, "partial", (double)d.parts);
		cJSON_AddNumberToObject(dl, "partial_bytes", (double)d.part_bytes);
		cJSON_AddNumberToObject(so, "folders", (double)st.folders);
		cJSON_AddNumberToObject(so, "files", (double)st.files);
		cJSON_AddNumberToObject(so, "bytes", (double)st.bytes);
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(a, stack_cache_json(&c[i]));
		json_print(o);
	} else {
		printf("cfapkg's store (%s/store): %lu unpacked %s, %lu %s, %s ('cfapkg gc' removes "
		       "what no generation uses)\n", cfapkg_ctx_root(ctx), (unsigned long)st.folders,
		       plural(st.folders, "package", "packages"), (unsigned long)st.files,
		       plural(st.files, "file", "files"), human_size((int64_t)st.bytes, size, sizeof(size)));
		printf("cfapkg's downloads (%s/downloads): %lu %s, %s; %lu partial, %s\n",
		       cfapkg_ctx_root(ctx), (unsigned long)d.files, plural(d.files, "file", "files"),
		       human_size((int64_t)d.bytes, size, sizeof(size)), (unsigned long)d.parts,
		       human_size((int64_t)d.part_bytes, parts, sizeof(parts)));
		printf("Compute caches the stack writes (%s):\n", os_title());
		for (i = 0; i < n; i++)
			print_stack_cache(&c[i]);
		printf("'cfapkg cache clean' removes the downloads no generation needs; with "
		       "--compute, these caches too (rebuilt on next use)\n");
	}
	cfapkg_stack_caches_free(c, n);
	return EXIT_OK;
}

/* The compute caches, each named as it goes; the first failure's code. */
static int clean_compute(struct cfapkg_ctx *ctx, const struct cli *cli, bool dry_run,
                         cJSON *out, uint64_t *freed)
{
	struct cfapkg_stack_cache *c = NULL;
	size_t i, n = 0;
	enum cfapkg_err e;
	int rc = EXIT_OK;
	char size[32];

	if ((e = cfapkg_stack_caches(ctx, &c, &n)))
		return report_error(ctx, e);
	for (i = 0; i < n; i++) {
		cJSON *o;
		if (!c[i].present)
			continue;
		/* One cache that cannot be removed does not stop the others;
		 * the first failure gives the exit code and each is named in
		 * the JSON. */
		e = dry_run ? CFAPKG_E_OK : cfapkg_stack_cache_remove(ctx, &c[i]);
		cJSON_AddItemToArray(out, o = stack_cache_json(&c[i]));
		cJSON_AddBoolToObject(o, "removed", !dry_run && !e);
		if (e) {
			json_str(o, "error", cfapkg_ctx_error(ctx));
			rc = rc ? rc : report_error(ctx, e);
			cfapkg_ctx_clear_error(ctx);
			continue;
		}
		*freed += c[i].bytes;
		if (!cli->json && !cli->quiet)
			printf("%s %s: %s (%lu %s, %s)\n", dry_run ? "Would remove" : "Removed",
			       c[i].what, c[i].path, (unsigned long)c[i].files,
			       plural(c[i].files, "file", "files"),
			       human_size((int64_t)c[i].bytes, size, sizeof(size)));
	}
	cfapkg_stack_caches_free(c, n);
	return rc;
}

/* The download cache is swept under the root's lock, as gc sweeps it; the
 * programs' own caches outside the root need none. */
static int cache_clean(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_gc_opts o = {0, (cli->seen & OPT_BIT(OPT_DRY_RUN)) != 0, true};
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_gc_result r;
	cJSON *j = cJSON_CreateObject(), *compute = cJSON_CreateArray();
	uint64_t freed = 0;
	char size[32];
	enum cfapkg_err e;
	size_t i;
	int rc;

	if ((rc = take_lock(ctx, cli, &lock))) {
		cJSON_Delete(j);
		cJSON_Delete(compute);
		return rc;
	}
	/* gc with downloads only: generations and store folders stay, so a
	 * rollback still has everything it needs. */
	if ((e = cfapkg_gc_run(ctx, &o, &r)))
		rc = report_error(ctx, e);
	cfapkg_writer_unlock(lock);
	for (i = 0; !e && !cli->json && !cli->quiet && i < r.nitems; i++)
		print_gc_item(o.dry_run ? "Would remove" : "Removed", &r.items[i]);
	/* The compute caches are not cfapkg's, so they go only when --compute
	 * asks, and after cfapkg's own downloads. */
	freed = e ? 0 : r.bytes;
	if (!e && (cli->seen & OPT_BIT(OPT_COMPUTE)))
		rc = clean_compute(ctx, cli, o.dry_run, compute, &freed);
	cJSON_AddBoolToObject(j, "dry_run", o.dry_run);
	cJSON_AddItemToObject(j, "downloads", gc_items_json(&r));
	cJSON_AddItemToObject(j, "compute", compute);
	cJSON_AddNumberToObject(j, "bytes_freed", (double)freed);
	if (cli->json && !e)
		json_print(j);
	else
		cJSON_Delete(j);
	if (!e && !cli->json && !cli->quiet)
		printf("%s %s\n", o.dry_run ? "cache clean would free" : "Freed",
		       human_size((int64_t)freed, size, sizeof(size)));
	cfapkg_gc_result_free(&r);
	return rc;
}

/* --compute and --dry-run belong to clean: info refuses them rather than
 * ignoring them. */
int cmd_cache(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *sub = cli->nargs == 1 ? cli->args[0] : "";
	bool clean_opts = cli->seen & (OPT_BIT(OPT_COMPUTE) | OPT_BIT(OPT_DRY_RUN));

	if (strcmp(sub, "info") == 0 && !clean_opts)
		return cache_info(ctx, cli);
	if (strcmp(sub, "clean") == 0)
		return cache_clean(ctx, cli);
	cli_error("usage: cfapkg cache info, cfapkg cache clean [--compute] "
	        "[--dry-run]\n");
	return EXIT_USAGE;
}
