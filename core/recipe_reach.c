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

#include "core/mem.h"
#include "core/recipe.h"
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
};

/* ROOT/cache/recipes/SHA.solv, SHA the folder path's; *out NULL when the
 * root does not exist (a plan never creates one), no root can be chosen
 * or the cache folder cannot be made.  Only a want of memory fails. */
static enum cfapkg_err cache_path(struct cfapkg_ctx *ctx, const char *dir, char **out)
{
	Chksum *c = solv_chksum_create(REPOKEY_TYPE_SHA256);
	char hex[65], name[80], *folder;
	const unsigned char *md;
	enum cfapkg_err e;
	int len = 0;

	*out = NULL;
	solv_chksum_add(c, dir, (int)strlen(dir));
	md = solv_chksum_get(c, &len);
	solv_bin2hex(md, len, hex);
	solv_chksum_free(c, NULL);
	if (!ctx->root && (e = cfapkg_ctx_set_root(ctx, NULL))) {
		if (e == CFAPKG_E_NOMEM)
			return e;
		cfapkg_ctx_clear_error(ctx); /* no home folder: no cache either */
		return CFAPKG_E_OK;
	}
	/* 77 characters always fit. */
	if (!cfa_plat_is_dir(ctx->root) || !cfa_snprintf(name, sizeof(name), "recipes/%s.solv", hex))
		return CFAPKG_E_OK;
	if (!(folder = cfa_root_path(ctx, CFA_CACHE, "recipes")))
		return ctx->err_code;
	if (cfa_plat_mkdir_p(folder) == 0 && !(*out = cfa_root_path(ctx, CFA_CACHE, name)))
		e = ctx->err_code;
	else
		e = CFAPKG_E_OK;
	cfa_free(folder);
	return e;
}

/* A file written within the last second may be written again within the
 * same stamp (file systems keep coarse times): such a folder is not cached
 * yet, as git treats a racily clean index. */
static enum cfapkg_err settled(struct cfapkg_ctx *ctx, const char *dir, char *const *names,
                               size_t n, bool *out)
{
	long long now = (long long)time(NULL);
	size_t i;

	*out = true;
	for (i = 0; i < n && *out; i++) {
		char *path = cfa_aprintf("%s/%s", dir, names[i]);
		if (!path)
			return cfa_nomem(ctx);
		*out = cfa_plat_file_mtime(path) < now - 1;
		cfa_free(path);
	}
	return CFAPKG_E_OK;
}

/* Parses the whole folder into a context of its own, makes its index and
 * caches it. */
static enum cfapkg_err index_fresh(struct cfapkg_ctx *ctx, struct reach *r, struct folder *f,
                                   char *const *names, size_t n, const char *path,
                                   const char *key)
{
	enum cfapkg_err e;
	bool ripe = false;

	if (!(f->parsed = cfapkg_ctx_new()))
		return cfa_nomem(ctx);
	if ((e = cfa_recipe_dir_parse(f->parsed, f->dir, f->origin)))
		return cfa_fail(ctx, e, "%s", cfapkg_ctx_error(f->parsed));
	f->repo = cfa_recipe_index_build(r->pool, f->parsed->recipes, f->parsed->nrecipes);
	if (path && key && !(e = settled(ctx, f->dir, names, n, &ripe)) && ripe)
		e = cfa_recipe_index_write(ctx, f->repo, path, key);
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
		e = cache_path(ctx, dir, &path);
	if (!e && path)
		f->repo = cfa_recipe_index_read(r->pool, path, key);
	if (!e && !f->repo)
		e = index_fresh(ctx, r, f, names, n, path, keyed ? key : NULL);
	cfa_free(path);
	cfa_strv_free(names, n);
	return e;
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
		if (!r->seen[p]) {
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

/* The names this closure was loaded for, kept to answer a later call. */
static enum cfapkg_err remember(struct cfapkg_ctx *ctx, const char *const *names, size_t n)
{
	size_t i;

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

static bool all_reached(const struct cfapkg_ctx *ctx, const char *const *names, size_t n)
{
	size_t i, k;

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
		cfa_free(r->f[i].dir);
	}
	cfa_free(r->f);
	cfa_free(r->win);
	cfa_free(r->seen);
	cfa_free(r->queue);
	pool_free(r->pool);
}

enum cfapkg_err cfa_recipes_load_reaching(struct cfapkg_ctx *ctx, const char *const *names,
                                          size_t n)
{
	struct reach r;
	enum cfapkg_err e;
	bool channels = false;
	size_t i;

	if (ctx->loaded || (ctx->partial && all_reached(ctx, names, n)))
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
	if (!e)
		e = walk(ctx, &r, names, n);
	/* A name nothing provides is explained from every recipe (notes,
	 * suggestions): then they are all read. */
	if (!e && r.missing)
		e = cfapkg_recipes_load(ctx);
	else if (!e && !(e = take_reached(ctx, &r)))
		e = remember(ctx, names, n);
	for (i = 0; i < r.n && !e && ctx->partial; i++)
		if (r.f[i].parsed)
			cfa_arena_adopt(&ctx->arena, &r.f[i].parsed->arena);
	reach_free(&r);
	return e;
}
