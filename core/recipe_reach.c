/*
 * recipe_reach.c - loads only the recipes a request can reach.
 *
 * Each recipe folder is one libsolv repository of names (recipe_index.c),
 * read from its cache when the folder has not changed.  The walk starts at
 * the requested names and at what every plan reads (CFA_INDEX_ALWAYS),
 * follows each reached recipe's requirements to every recipe that provides
 * them, as solver/closure.c does on a parsed set, and only the recipes it
 * reaches are parsed.  The pool a plan builds is then the same as after
 * reading every recipe.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dep.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/recipe_cache.h"
#include "core/recipe_image.h"
#include "core/recipe_index.h"
#include "core/registry.h"
#include "core/firstuse.h"
#include "core/layout.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "platform/platform.h"

#include <solv/chksum.h>
#include <solv/knownid.h>
#include <solv/util.h>

struct folder {
	char *dir;
	const char *origin;         /* NULL: "folder DIR", made when needed */
	Repo *repo;
	struct cfapkg_ctx *parsed;  /* read whole (no usable cache): its set */
	struct cfa_recipe_image *image; /* else the recipes as parsed before */
	char *image_path;
};

struct reach {
	Pool *pool;
	struct folder *f;
	size_t n, cap;
	Id *win;                    /* name -> the solvable whose recipe wins */
	unsigned char *seen;
	Id *queue;
	size_t nqueue;
	bool missing;               /* a name nothing provides */
	bool narrow;                /* the platform is known: on[] holds */
	Id on[4];                   /* its marks (recipe_index.h) */
	bool narrowed;              /* a recipe was left out for its platform */
};

/* Parses the whole folder into a context of its own, makes its index and
 * caches both. */
static enum cfapkg_err index_fresh(struct cfapkg_ctx *ctx, struct reach *r, struct folder *f,
                                   char *const *names, size_t n, const char *key)
{
	enum cfapkg_err e;

	if (!(f->parsed = cfapkg_ctx_new()))
		return cfa_nomem(ctx);
	/* The caches are this context's to write, under its root. */
	f->parsed->no_index = true;
	if ((e = cfa_recipe_dir_parse(f->parsed, f->dir, f->origin)))
		return cfa_fail(ctx, e, "%s", cfapkg_ctx_error(f->parsed));
	f->repo = cfa_recipe_index_build(r->pool, f->parsed->recipes, f->parsed->nrecipes);
	if (key && f->image_path)
		e = cfa_recipe_caches_write(ctx, f->dir, names, n, key, f->repo, f->parsed->recipes);
	return e;
}

/* The cached index of f and the image beside it.  A large folder has no
 * image: the recipes reached are parsed from their files.  A small one
 * without its image (a write cut short) is read whole and both are made
 * again. */
static enum cfapkg_err cached(struct cfapkg_ctx *ctx, struct reach *r, struct folder *f,
                              char *const *names, size_t n, const char *path, const char *key)
{
	size_t len = strlen(path) - strlen(".solv");
	bool small = false;
	enum cfapkg_err e;

	if (!(f->image_path = cfa_aprintf("%.*s.img", (int)len, path)))
		return cfa_nomem(ctx);
	if (!(f->repo = cfa_recipe_index_read(r->pool, path, key)))
		return CFAPKG_E_OK;
	e = cfa_recipe_image_open(ctx, f->image_path, key, (size_t)f->repo->nsolvables, &f->image);
	if (!e && !f->image && !(e = cfa_recipe_folder_small(ctx, f->dir, names, n, &small)) &&
	    small) {
		repo_free(f->repo, 1);
		f->repo = NULL;
	}
	return e;
}

static enum cfapkg_err add_folder(struct cfapkg_ctx *ctx, const char *dir, const char *origin,
                                  void *arg)
{
	struct reach *r = arg;
	struct folder *f;
	char **names = NULL, key[65], *path = NULL;
	size_t n = 0;
	bool keyed;
	enum cfapkg_err e;

	if (!dir)
		return CFAPKG_E_OK;
	if (cfa_grow((void **)&r->f, &r->cap, r->n + 1, sizeof(*r->f)) != 0)
		return cfa_nomem(ctx);
	f = &r->f[r->n];
	memset(f, 0, sizeof(*f));
	if (!(f->dir = cfa_strdup(dir)))
		return cfa_nomem(ctx);
	r->n++;
	f->origin = origin;
	if ((e = cfa_recipe_dir_names(ctx, dir, &names, &n)))
		return e;
	e = cfa_recipe_index_key(ctx, dir, names, n, key, &keyed);
	if (!e && keyed)
		e = cfa_recipe_cache_path(ctx, dir, "solv", &path);
	if (!e && path)
		e = cached(ctx, r, f, names, n, path, key);
	if (!e && !f->repo)
		e = index_fresh(ctx, r, f, names, n, keyed ? key : NULL);
	cfa_free(path);
	cfa_strv_free(names, n);
	return e;
}

/* The marks a recipe installable on OS and ARCH provides: exact, either
 * part any, both any.  An unknown OS narrows nothing; an unknown arch has
 * no download, so only the marks without one can hold. */
static void platform_marks(struct reach *r, const char *os, const char *arch)
{
	char mark[4][CFA_NAME_MAX * 2 + 16];
	bool ok[4];
	size_t i;

	if (!os || !*os)
		return;
	r->narrow = true;
	ok[0] = arch && cfa_snprintf(mark[0], sizeof(mark[0]), "%s%s-%s", CFA_INDEX_ON, os, arch);
	ok[1] = cfa_snprintf(mark[1], sizeof(mark[1]), "%s%s-*", CFA_INDEX_ON, os);
	ok[2] = arch && cfa_snprintf(mark[2], sizeof(mark[2]), "%s*-%s", CFA_INDEX_ON, arch);
	ok[3] = cfa_snprintf(mark[3], sizeof(mark[3]), "%s*-*", CFA_INDEX_ON);
	/* A mark no recipe provides is not in the pool: ID_NULL, never met. */
	for (i = 0; i < 4; i++)
		r->on[i] = ok[i] ? pool_str2id(r->pool, mark[i], 0) : ID_NULL;
}

/* Whether solvable p's recipe can be installed on the plan's platform
 * (the pool would rule out every version of one that cannot). */
static bool runs_here(const struct reach *r, Id p)
{
	const Solvable *s = r->pool->solvables + p;
	Id *dp = s->provides ? s->repo->idarraydata + s->provides : NULL;
	size_t i;

	if (!r->narrow)
		return true;
	for (; dp && *dp; dp++)
		for (i = 0; i < 4; i++)
			if (r->on[i] && *dp == r->on[i])
				return true;
	return false;
}

/* Queues every winning recipe that provides name. */
static void visit_name(struct reach *r, Id name)
{
	Pool *pool = r->pool;
	Id p, pp;
	bool found = false;

	FOR_PROVIDES(p, pp, name)
	{
		/* A recipe replaced by a later folder's of the same name
		 * provides nothing any more. */
		if (r->win[pool->solvables[p].name] != p)
			continue;
		found = true;
		if (!r->seen[p] && !runs_here(r, p)) {
			r->seen[p] = 1;
			r->narrowed = true;
		} else if (!r->seen[p]) {
			r->seen[p] = 1;
			r->queue[r->nqueue++] = p;
		}
	}
	if (!found)
		r->missing = true;
}

static enum cfapkg_err walk(struct cfapkg_ctx *ctx, struct reach *r, const char *const *names,
                            size_t n)
{
	Pool *pool = r->pool;
	Id p, pp, always;
	size_t i;

	pool_createwhatprovides(pool);
	r->win = cfa_calloc((size_t)pool->ss.nstrings, sizeof(*r->win));
	r->seen = cfa_calloc((size_t)pool->nsolvables, 1);
	r->queue = cfa_calloc((size_t)pool->nsolvables, sizeof(*r->queue));
	if (!r->win || !r->seen || !r->queue)
		return cfa_nomem(ctx);
	/* Repositories are in folder order, so the last one of a name wins. */
	for (p = 2; p < pool->nsolvables; p++)
		if (pool->solvables[p].repo)
			r->win[pool->solvables[p].name] = p;
	for (i = 0; i < n && !r->missing; i++)
		visit_name(r, pool_str2id(pool, names[i], 0));
	if ((always = pool_str2id(pool, CFA_INDEX_ALWAYS, 0)) != 0)
		FOR_PROVIDES(p, pp, always)
			if (r->win[pool->solvables[p].name] == p)
				visit_name(r, pool->solvables[p].name);
	/* Breadth first: the queue grows behind the cursor. */
	for (i = 0; i < r->nqueue && !r->missing; i++) {
		Solvable *s = pool->solvables + r->queue[i];
		Id *rp = s->requires ? s->repo->idarraydata + s->requires : NULL;
		while (rp && *rp)
			visit_name(r, *rp++);
	}
	return CFAPKG_E_OK;
}

static struct folder *folder_of(struct reach *r, const Solvable *s)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->f[i].repo == s->repo)
			return &r->f[i];
	return NULL;
}

/* The parsed recipe of solvable p: from its folder's whole read, else its
 * own file (the file name is the recipe's name). */
static enum cfapkg_err recipe_of(struct cfapkg_ctx *ctx, struct reach *r, Id p,
                                 struct cfapkg_recipe **out)
{
	const Solvable *s = r->pool->solvables + p;
	struct folder *f = folder_of(r, s);
	const char *name = pool_id2str(r->pool, s->name);
	enum cfapkg_err e;
	char *path;

	if (f->parsed) {
		*out = f->parsed->recipes[p - f->repo->start];
		return CFAPKG_E_OK;
	}
	if (!f->origin && !(f->origin = cfa_recipe_folder_origin(ctx, f->dir)))
		return cfa_nomem(ctx);
	*out = NULL;
	if (f->image && (e = cfa_recipe_image_get(ctx, f->image, (size_t)(p - f->repo->start), out)))
		return e;
	/* A damaged block, or one of another recipe: its file is parsed. */
	if (*out && strcmp((*out)->name, name) == 0) {
		(*out)->origin = f->origin;
		return CFAPKG_E_OK;
	}
	if (!(path = cfa_aprintf("%s/%s.json", f->dir, name)))
		return cfa_nomem(ctx);
	e = cfa_recipe_parse(ctx, path, out);
	cfa_free(path);
	if (!e)
		(*out)->origin = f->origin;
	return e;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct cfapkg_recipe *const *)a)->name,
	              (*(struct cfapkg_recipe *const *)b)->name);
}

static enum cfapkg_err take_reached(struct cfapkg_ctx *ctx, struct reach *r)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	ctx->nrecipes = 0;
	if (cfa_grow((void **)&ctx->recipes, &ctx->recipes_cap, r->nqueue + 1,
	             sizeof(*ctx->recipes)) != 0)
		return cfa_nomem(ctx);
	for (i = 0; i < r->nqueue && !e; i++)
		e = recipe_of(ctx, r, r->queue[i], &ctx->recipes[ctx->nrecipes++]);
	if (e) {
		ctx->nrecipes = 0;
		return e;
	}
	if (ctx->nrecipes)
		qsort(ctx->recipes, ctx->nrecipes, sizeof(*ctx->recipes), by_name);
	return cfa_first_use_apply(ctx);
}

/* The names and platform this closure was loaded for, kept to answer a
 * later call. */
static enum cfapkg_err remember(struct cfapkg_ctx *ctx, const struct reach *r,
                                const char *const *names, size_t n, const char *os,
                                const char *arch)
{
	size_t i;

	ctx->narrowed = r->narrowed;
	if ((os && !(ctx->reach_os = cfa_arena_strdup(&ctx->arena, os))) ||
	    (arch && !(ctx->reach_arch = cfa_arena_strdup(&ctx->arena, arch))))
		return cfa_nomem(ctx);

	ctx->reach_names = cfa_arena_alloc(&ctx->arena, (n + 1) * sizeof(*ctx->reach_names));
	if (!ctx->reach_names)
		return cfa_nomem(ctx);
	for (i = 0; i < n; i++)
		if (!(ctx->reach_names[i] = cfa_arena_strdup(&ctx->arena, names[i])))
			return cfa_nomem(ctx);
	ctx->nreach_names = n;
	ctx->partial = true;
	return CFAPKG_E_OK;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether a closure narrowed to a platform holds this call's names; one
 * narrowed to another platform does not. */
static bool all_reached(const struct cfapkg_ctx *ctx, const char *const *names, size_t n,
                        const char *os, const char *arch)
{
	size_t i, k;

	if (ctx->narrowed && (!same(ctx->reach_os, os) || !same(ctx->reach_arch, arch)))
		return false;
	for (i = 0; i < n; i++) {
		for (k = 0; k < ctx->nreach_names && strcmp(ctx->reach_names[k], names[i]); k++)
			;
		if (k == ctx->nreach_names)
			return false;
	}
	return true;
}

static void reach_free(struct reach *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		/* What the set took from a whole read was moved into ctx's
		 * arena before this. */
		cfapkg_ctx_free(r->f[i].parsed);
		/* A damaged image and its index are made again by the next
		 * command. */
		if (r->f[i].image && cfa_recipe_image_damaged(r->f[i].image))
			cfa_recipe_caches_drop(r->f[i].image_path);
		cfa_recipe_image_close(r->f[i].image);
		cfa_free(r->f[i].image_path);
		cfa_free(r->f[i].dir);
	}
	cfa_free(r->f);
	cfa_free(r->win);
	cfa_free(r->seen);
	cfa_free(r->queue);
	pool_free(r->pool);
}

enum cfapkg_err cfa_recipes_load_reaching(struct cfapkg_ctx *ctx, const char *const *names,
                                          size_t n, const char *os, const char *arch)
{
	struct reach r;
	enum cfapkg_err e;
	bool channels = false;
	size_t i;

	if (ctx->loaded || (ctx->partial && all_reached(ctx, names, n, os, arch)))
		return CFAPKG_E_OK;
	if ((e = cfa_have_channels(ctx, &channels)))
		return e;
	/* Channels are read whole (their index is one signed file); a second
	 * request beyond the first closure reads everything. */
	if (ctx->no_index || ctx->partial || channels)
		return cfapkg_recipes_load(ctx);
	if ((e = cfa_gpus_ensure(ctx)))
		return e;
	memset(&r, 0, sizeof(r));
	r.pool = pool_create();
	e = cfa_recipe_folders(ctx, add_folder, &r);
	if (!e) {
		platform_marks(&r, os, arch);
		e = walk(ctx, &r, names, n);
	}
	/* A name nothing provides is explained from every recipe (notes,
	 * suggestions): then they are all read. */
	if (!e && r.missing)
		e = cfapkg_recipes_load(ctx);
	else if (!e && !(e = take_reached(ctx, &r)))
		e = remember(ctx, &r, names, n, os, arch);
	for (i = 0; i < r.n && !e && ctx->partial; i++)
		if (r.f[i].parsed)
			cfa_arena_adopt(&ctx->arena, &r.f[i].parsed->arena);
	reach_free(&r);
	return e;
}
