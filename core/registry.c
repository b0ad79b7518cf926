/*
 * registry.c - the set of loaded recipes: sources in order (the built-in
 * folder, the root's channels from the lowest priority up, CFAPKG_RECIPES,
 * then --recipes), later recipes replacing earlier ones of the same name,
 * kept sorted by name for lookups.
 */
#include <stdlib.h>
#include <string.h>

#include "core/channel.h"
#include "core/ctx.h"
#include "core/dep.h"
#include "core/firstuse.h"
#include "core/gpus.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/recipe_cache.h"
#include "core/recipe_index.h"
#include "core/registry.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "platform/platform.h"

/* The recipe file names of one folder, collected for sorting before any is
 * parsed. */
struct dir_scan {
	struct cfapkg_ctx *ctx;
	const char *dir;
	char **names;
	size_t n, cap;
	enum cfapkg_err err;
};

static bool is_recipe_file(const char *name)
{
	size_t n = strlen(name);
	/* The folder's GPU facts file is also JSON but no recipe; hidden
	 * files are skipped. */
	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0 &&
	       strcmp(name, CFA_GPUS_FILE) != 0;
}

static int collect(const char *name, void *arg)
{
	struct dir_scan *s = arg;
	char *copy;

	if (!is_recipe_file(name))
		return 0;
	if (cfa_grow((void **)&s->names, &s->cap, s->n + 1, sizeof(char *)) != 0 ||
	    !(copy = cfa_strdup(name))) {
		s->err = cfa_nomem(s->ctx);
		/* Stops the listing: the error is in s->err, which load_dir
		 * reports before the listing's own result. */
		return 1;
	}
	s->names[s->n++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_recipe(const void *a, const void *b)
{
	const struct cfapkg_recipe *ra = *(struct cfapkg_recipe *const *)a;
	const struct cfapkg_recipe *rb = *(struct cfapkg_recipe *const *)b;
	return strcmp(ra->name, rb->name);
}

/* Replaces a recipe of the same name from an earlier folder (recipes
 * [0, nearlier) are sorted by name), or appends. */
static enum cfapkg_err add_recipe(struct cfapkg_ctx *ctx, size_t nearlier,
                                  struct cfapkg_recipe *r)
{
	struct cfapkg_recipe **hit =
		nearlier ? bsearch(&r, ctx->recipes, nearlier, sizeof(*ctx->recipes), cmp_recipe)
		         : NULL;

	/* The later source wins; the earlier recipe is only unlinked, not
	 * freed. */
	if (hit) {
		*hit = r;
		return CFAPKG_E_OK;
	}
	if (cfa_grow((void **)&ctx->recipes, &ctx->recipes_cap, ctx->nrecipes + 1,
	             sizeof(*ctx->recipes)) != 0)
		return cfa_nomem(ctx);
	ctx->recipes[ctx->nrecipes++] = r;
	return CFAPKG_E_OK;
}

/* A slice of a folder's files, parsed by one thread into its own context
 * (arena and error), adopted by the caller afterwards. */
struct parse_job {
	const char *dir;
	char **names;
	size_t n, done;
	struct cfapkg_ctx *wctx;
	struct cfapkg_recipe **out;
	enum cfapkg_err err;
};

/* Runs in a worker thread on its own slice of names, with its own context for
 * allocations and errors. */
static void parse_slice(void *arg)
{
	struct parse_job *j = arg;

	/* done counts the recipes parsed, so on an error the caller adds only
	 * those before the failing file. */
	for (j->done = 0; j->done < j->n; j->done++) {
		char *path = cfa_aprintf("%s/%s", j->dir, j->names[j->done]);
		j->err = path ? cfa_recipe_parse(j->wctx, path, &j->out[j->done]) : cfa_nomem(j->wctx);
		cfa_free(path);
		if (j->err)
			return;
	}
}

/* Threads only for large folders, and at most PARALLEL_MAX_JOBS of them, each
 * with a context of its own. */
#define PARALLEL_MIN_FILES 256
#define PARALLEL_MAX_JOBS 8

/* Parses the sorted file names, in threads when there are many; recipes
 * are added in name order and the first failing file (in that order) is
 * the one reported. */
static enum cfapkg_err parse_files(struct cfapkg_ctx *ctx, const char *dir, char **names,
                                   size_t n, size_t nearlier, const char *origin,
                                   struct cfapkg_recipe **out)
{
	struct parse_job jobs[PARALLEL_MAX_JOBS];
	size_t njobs = cfa_plat_cpu_count(), i, k, per;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (njobs > PARALLEL_MAX_JOBS)
		njobs = PARALLEL_MAX_JOBS;
	if (n < PARALLEL_MIN_FILES)
		njobs = 1;
	/* Rounded up, so the last slice may be shorter or empty;
	 * cfa_plat_cpu_count is never 0. */
	per = (n + njobs - 1) / njobs;
	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < njobs; i++) {
		size_t start = i * per < n ? i * per : n;
		/* With one job the caller's own context parses, and errors
		 * need no copying. */
		jobs[i] = (struct parse_job){dir, names + start, n - start < per ? n - start : per,
		                             0, njobs == 1 ? ctx : cfapkg_ctx_new(), out + start,
		                             CFAPKG_E_OK};
		if (!jobs[i].wctx)
			e = cfa_nomem(ctx);
	}
	if (!e)
		cfa_plat_parallel(parse_slice, jobs, sizeof(jobs[0]), njobs);
	for (i = 0; i < njobs; i++) {
		/* Slices are in name order, so the first job with an error
		 * holds the first failing file; later jobs' errors are
		 * dropped. */
		if (!e && jobs[i].err) {
			e = jobs[i].wctx == ctx ? jobs[i].err
			                        : cfa_fail(ctx, jobs[i].err, "%s",
			                                   cfapkg_ctx_error(jobs[i].wctx));
		}
		for (k = 0; !e && k < jobs[i].done; k++) {
			jobs[i].out[k]->origin = origin;
			e = add_recipe(ctx, nearlier, jobs[i].out[k]);
		}
		if (jobs[i].wctx && jobs[i].wctx != ctx) {
			/* The recipes live in the worker's arena: it moves
			 * into ctx's before the worker context is freed, even
			 * after an error, since some of them may already be
			 * in ctx->recipes. */
			cfa_arena_adopt(&ctx->arena, &jobs[i].wctx->arena);
			cfapkg_ctx_free(jobs[i].wctx);
		}
	}
	return e;
}

/* A folder's recipes from its image when that matches its files, else
 * parsed (and the caches written for the next command).  The key is taken
 * before the files are read: a file changed meanwhile then has a stamp
 * the cache does not carry. */
static enum cfapkg_err read_files(struct cfapkg_ctx *ctx, const char *dir, char **names,
                                  size_t n, size_t nearlier, const char *origin)
{
	struct cfapkg_recipe **out = cfa_calloc(n + 1, sizeof(*out));
	char key[65];
	bool found = false, keyed = false;
	enum cfapkg_err e = out ? CFAPKG_E_OK : cfa_nomem(ctx);
	size_t i;

	if (!e && !ctx->no_index && n)
		e = cfa_recipe_index_key(ctx, dir, names, n, key, &keyed);
	/* An empty folder is known by its path: a file put in it keys it. */
	if (!e)
		cfa_load_key_add(ctx, keyed ? key : n ? NULL : dir);
	if (!e && keyed)
		e = cfa_recipe_dir_cached(ctx, dir, names, n, key, out, &found);
	for (i = 0; !e && found && i < n; i++) {
		out[i]->origin = origin;
		e = add_recipe(ctx, nearlier, out[i]);
	}
	if (!e && !found && !(e = parse_files(ctx, dir, names, n, nearlier, origin, out)) && keyed)
		e = cfa_recipe_caches_write(ctx, dir, names, n, key, NULL, out);
	cfa_free(out);
	return e;
}

const char cfa_builtin_origin[] = "built-in";

const char *cfa_recipe_folder_origin(struct cfapkg_ctx *ctx, const char *dir)
{
	char *text = cfa_aprintf("folder %s", dir);
	const char *kept = text ? cfa_arena_strdup(&ctx->arena, text) : NULL;

	cfa_free(text);
	return kept;
}

/* A channel's recipes replace those of the same name added before. */
static enum cfapkg_err add_channel(struct cfapkg_ctx *ctx, struct cfapkg_recipe **recipes,
                                   size_t n, void *arg)
{
	size_t i, nearlier = ctx->nrecipes;
	enum cfapkg_err e = CFAPKG_E_OK;

	(void)arg;
	/* add_recipe's bsearch needs the recipes so far sorted; the channel's
	 * own are appended after them. */
	if (ctx->nrecipes)
		qsort(ctx->recipes, ctx->nrecipes, sizeof(*ctx->recipes), cmp_recipe);
	for (i = 0; i < n && !e; i++)
		e = add_recipe(ctx, nearlier, recipes[i]);
	return e;
}

enum cfapkg_err cfa_recipe_dir_names(struct cfapkg_ctx *ctx, const char *dir, char ***names,
                                     size_t *n)
{
	struct dir_scan s = {ctx, dir, NULL, 0, 0, CFAPKG_E_OK};
	/* A folder that cannot be listed, a missing one included, fails the
	 * load rather than giving no recipes. */
	int rc = cfa_plat_list_dir(dir, collect, &s);
	enum cfapkg_err e = s.err;

	if (!e && rc)
		e = cfa_fail(ctx, CFAPKG_E_IO, "recipe folder %s: %s", dir, cfa_plat_strerror(rc));
	if (e) {
		cfa_strv_free(s.names, s.n);
		return e;
	}
	/* Files are read in name order so that errors and overrides are
	 * stable. */
	if (s.n)
		qsort(s.names, s.n, sizeof(char *), cmp_str);
	*names = s.names;
	*n = s.n;
	return CFAPKG_E_OK;
}

/* A folder's GPU facts (CFA_GPUS_FILE), beside its recipes, when it has
 * them. */
static enum cfapkg_err load_gpus(struct cfapkg_ctx *ctx, const char *dir)
{
	char *path = cfa_aprintf("%s/%s", dir, CFA_GPUS_FILE);
	enum cfapkg_err e = path ? CFAPKG_E_OK : cfa_nomem(ctx);

	if (!e)
		e = cfa_gpus_load_cached(ctx, path);
	cfa_free(path);
	return e;
}

enum cfapkg_err cfa_recipe_files_parse(struct cfapkg_ctx *ctx, const char *dir, char **names,
                                       size_t n, const char *origin, struct cfapkg_recipe **out)
{
	return parse_files(ctx, dir, names, n, ctx->nrecipes, origin, out);
}

enum cfapkg_err cfa_recipe_dir_parse(struct cfapkg_ctx *ctx, const char *dir, const char *origin)
{
	enum cfapkg_err e;
	char **names = NULL;
	size_t n = 0, nearlier;

	if ((e = cfa_recipe_dir_names(ctx, dir, &names, &n)))
		return e;
	/* Names are unique within a folder (file name = recipe name), so only
	 * recipes of earlier folders can be replaced. */
	if (ctx->nrecipes)
		qsort(ctx->recipes, ctx->nrecipes, sizeof(*ctx->recipes), cmp_recipe);
	nearlier = ctx->nrecipes;
	if (!origin && !(origin = cfa_recipe_folder_origin(ctx, dir)))
		e = cfa_nomem(ctx);
	if (!e)
		e = read_files(ctx, dir, names, n, nearlier, origin);
	cfa_strv_free(names, n);
	return e;
}

enum cfapkg_err cfa_recipe_folders(struct cfapkg_ctx *ctx, cfa_folder_fn fn, void *arg)
{
	const char *builtin = NULL, *env = getenv("CFAPKG_RECIPES");
	char sep = cfa_plat_path_list_sep();
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	/* Set only by the variable's presence, whatever its value; fn still
	 * hears where the built-in folder would stand (dir NULL). */
	if (!getenv("CFAPKG_NO_BUILTIN_RECIPES"))
		e = cfa_builtin_recipe_dir(ctx, &builtin);
	if (!e)
		e = fn(ctx, builtin, cfa_builtin_origin, arg);
	/* CFAPKG_RECIPES is a list like PATH (':' on POSIX, ';' on Windows);
	 * empty entries are skipped, not read as the current folder. */
	while (!e && env && *env) {
		const char *end = strchr(env, sep);
		size_t n = end ? (size_t)(end - env) : strlen(env);
		char *dir = n ? cfa_strndup(env, n) : NULL;
		if (n && !dir)
			return cfa_nomem(ctx);
		if (dir)
			e = fn(ctx, dir, NULL, arg);
		cfa_free(dir);
		env = end ? end + 1 : NULL;
	}
	for (i = 0; i < ctx->nrecipe_dirs && !e; i++)
		e = fn(ctx, ctx->recipe_dirs[i], NULL, arg);
	return e;
}

static enum cfapkg_err gpus_of_folder(struct cfapkg_ctx *ctx, const char *dir,
                                      const char *origin, void *arg)
{
	(void)origin;
	(void)arg;
	return dir ? load_gpus(ctx, dir) : CFAPKG_E_OK;
}

enum cfapkg_err cfa_have_channels(struct cfapkg_ctx *ctx, bool *any)
{
	char **names = NULL;
	size_t n = 0;
	enum cfapkg_err e = cfa_channel_names(ctx, &names, &n);

	cfa_strv_free(names, n);
	*any = n > 0;
	return e;
}

enum cfapkg_err cfa_gpus_ensure(struct cfapkg_ctx *ctx)
{
	enum cfapkg_err e;
	bool channels = false;

	if (ctx->loaded || ctx->gpus_loaded)
		return CFAPKG_E_OK;
	/* Channels carry GPU tables of their own, ranked among the folders':
	 * the whole load keeps that order. */
	if ((e = cfa_have_channels(ctx, &channels)))
		return e;
	if (channels)
		return cfapkg_recipes_load(ctx);
	if ((e = cfa_recipe_folders(ctx, gpus_of_folder, NULL)))
		return e;
	ctx->gpus_loaded = true;
	return CFAPKG_E_OK;
}

/* A folder's recipes, then its GPU facts unless they were read before
 * (cfa_gpus_ensure); the root's channels rank right above the built-in
 * folder. */
static enum cfapkg_err load_folder(struct cfapkg_ctx *ctx, const char *dir, const char *origin,
                                   void *arg)
{
	enum cfapkg_err e = dir ? cfa_recipe_dir_parse(ctx, dir, origin) : CFAPKG_E_OK;

	(void)arg;
	if (!e && dir && !ctx->gpus_loaded)
		e = load_gpus(ctx, dir);
	if (!e && origin == cfa_builtin_origin)
		e = cfa_channels_load(ctx, add_channel, NULL);
	return e;
}

enum cfapkg_err cfapkg_recipes_load(struct cfapkg_ctx *ctx)
{
	enum cfapkg_err e;

	/* Loading is done once per context: the recipe set does not change
	 * under a caller that holds recipes from it. */
	if (ctx->loaded)
		return CFAPKG_E_OK;
	/* After a load of a request's closure the rest is read too; the
	 * recipes loaded then stay in the arena, so what callers hold of them
	 * stays valid. */
	ctx->nrecipes = 0;
	ctx->partial = false;
	ctx->narrowed = false;
	ctx->reach_key[0] = '\0';
	cfa_key_start(&ctx->load_key);
	ctx->load_unkeyed = false;
	cfa_load_key_add(ctx, "cfapkg-whole-load 1");
	e = cfa_recipe_folders(ctx, load_folder, NULL);
	if (e)
		return e; /* detail set by the failing load */
	/* Folders and channels append, so the set is sorted once more for
	 * cfapkg_recipes and lookups by name. */
	if (ctx->nrecipes)
		qsort(ctx->recipes, ctx->nrecipes, sizeof(*ctx->recipes), cmp_recipe);
	/* Last: what this machine trusted applies to whichever recipe won. */
	if ((e = cfa_first_use_apply(ctx)))
		return e;
	if (!ctx->load_unkeyed)
		cfa_key_hex(&ctx->load_key, ctx->reach_key);
	ctx->loaded = ctx->gpus_loaded = true;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_recipe_parse_file(struct cfapkg_ctx *ctx, const char *path,
                                         const struct cfapkg_recipe **out)
{
	struct cfapkg_recipe *r = NULL;
	enum cfapkg_err e = cfa_recipe_parse(ctx, path, &r);

	if (!e)
		*out = r;
	return e;
}

const struct cfapkg_recipe *const *cfapkg_recipes(const struct cfapkg_ctx *ctx, size_t *n)
{
	*n = ctx->nrecipes;
	return (const struct cfapkg_recipe *const *)ctx->recipes;
}

bool cfapkg_version_supports_gfx(const struct cfapkg_version *v, const char *gfx)
{
	size_t i;

	/* No gfx list means the version does not depend on the GPU; no GPU
	 * given means nothing to rule out. */
	if (v->ngfx == 0 || !gfx || !*gfx)
		return true;
	for (i = 0; i < v->ngfx; i++)
		if (strcmp(v->gfx[i], gfx) == 0)
			return true;
	return false;
}

const struct cfapkg_source *cfapkg_version_source(const struct cfapkg_version *v,
                                                  const char *os, const char *arch)
{
	size_t i, n = strlen(os);

	/* A facts' arch may be unknown (NULL): no download is for it. */
	for (i = 0; arch && i < v->nsources; i++) {
		const char *p = v->sources[i].platform;
		/* Platforms are spelt "OS-ARCH" ("linux-x86_64"); the '-'
		 * test keeps "linux" from matching an OS whose name merely
		 * starts with it. */
		if (strncmp(p, os, n) == 0 && p[n] == '-' && strcmp(p + n + 1, arch) == 0)
			return &v->sources[i];
	}
	return NULL;
}

/* Status of a part on a GPU, in order:
 * 1. an experimental GPU target makes every part experimental;
 * 2. the version's entry for this target;
 * 3. the version's "*" entry;
 * 4. otherwise candidate. */
enum cfapkg_status cfapkg_version_status(const struct cfapkg_ctx *ctx,
                                         const struct cfapkg_version *v, const char *gfx)
{
	const struct cfapkg_gpu_target *t = gfx && *gfx ? cfa_gpus_target(ctx, gfx) : NULL;

	if (t && t->status == CFAPKG_STATUS_EXPERIMENTAL)
		return CFAPKG_STATUS_EXPERIMENTAL;
	return cfa_version_own_status(v, gfx);
}

enum cfapkg_status cfa_version_own_status(const struct cfapkg_version *v, const char *gfx)
{
	const struct cfapkg_gpu_status *star = NULL;
	size_t i;

	for (i = 0; i < v->nstatus; i++) {
		/* The exact target wins over "*" wherever each comes in the
		 * list. */
		if (gfx && strcmp(v->status[i].gfx, gfx) == 0)
			return v->status[i].status;
		if (strcmp(v->status[i].gfx, "*") == 0)
			star = &v->status[i];
	}
	return star ? star->status : CFAPKG_STATUS_CANDIDATE;
}

const char *cfapkg_status_name(enum cfapkg_status s)
{
	static const char *const names[] = {[CFAPKG_STATUS_VALIDATED] = "validated",
	                                    [CFAPKG_STATUS_CANDIDATE] = "candidate",
	                                    [CFAPKG_STATUS_EXPERIMENTAL] = "experimental"};
	/* A value from outside the enum (a newer library's, a cast) names
	 * itself "?" rather than reading past the table. */
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *cfapkg_kind_name(enum cfapkg_kind k)
{
	static const char *const names[] = {[CFAPKG_KIND_PACKAGE] = "package",
	                                    [CFAPKG_KIND_SYSTEM] = "system",
	                                    [CFAPKG_KIND_META] = "meta", [CFAPKG_KIND_USER] = "user"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

enum cfapkg_err cfapkg_version_matches(struct cfapkg_ctx *ctx, const char *version,
                                       const char *constraint, bool *out)
{
	struct cfa_arena a;
	struct cfa_range r;
	struct cfa_ver v;
	const char *why = NULL;
	char *spec;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (!cfa_ver_parse(version, strlen(version), &v, &why))
		return cfa_fail(ctx, CFAPKG_E_VERSION, "version \"%s\": %s", version, why);
	/* The range parser reads a dependency: a stand-in name, then the constraint. */
	if (!(spec = cfa_aprintf("x%s", constraint)))
		return cfa_nomem(ctx);
	cfa_arena_init(&a);
	/* A failure without why is out of memory; with it, the constraint's
	 * own fault. */
	if (!cfa_range_parse(&a, spec, &r, &why))
		e = why ? cfa_fail(ctx, CFAPKG_E_VERSION, "constraint \"%s\": %s", constraint, why)
		        : cfa_nomem(ctx);
	else
		*out = cfa_range_match(&r, &v);
	cfa_arena_fini(&a);
	cfa_free(spec);
	return e;
}

/* One name holds the other ("zlud", "zluda"), or a typo or two apart
 * ("zlude"); short names must be closer, or every short name would be
 * like every other. */
static bool similar_name(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* At most two edits between names of five characters or more, one
	 * between shorter ones. */
	unsigned most = (la < lb ? la : lb) >= 5 ? 2 : 1;

	return strstr(a, b) || strstr(b, a) || cfa_edit_distance(a, b) <= most;
}

/* The names among n (name_at gives each) like name, comma-separated. */
static char *names_like(const char *name, const char *(*name_at)(const void *, size_t),
                        const void *arg, size_t n)
{
	struct cfa_buf b;
	char *out = NULL;
	size_t i;

	if (!name || !*name)
		return NULL;
	/* A buffer failure is sticky (b.failed) and gives no suggestion
	 * rather than a cut list. */
	cfa_buf_init(&b, 4096);
	for (i = 0; i < n; i++) {
		const char *other = name_at(arg, i);
		if (strcmp(other, name) != 0 && similar_name(other, name))
			cfa_buf_printf(&b, "%s%s", b.len ? ", " : "", other);
	}
	if (b.len && !b.failed)
		out = cfa_strdup(cfa_buf_str(&b));
	cfa_buf_fini(&b);
	return out;
}

static const char *recipe_name_at(const void *arg, size_t i)
{
	return ((const struct cfapkg_ctx *)arg)->recipes[i]->name;
}

static const char *listed_name_at(const void *arg, size_t i)
{
	return ((const char *const *)arg)[i];
}

char *cfapkg_recipe_suggest(const struct cfapkg_ctx *ctx, const char *name)
{
	return names_like(name, recipe_name_at, ctx, ctx->nrecipes);
}

char *cfapkg_names_suggest(const char *name, const char *const *names, size_t n)
{
	return names_like(name, listed_name_at, names, n);
}
