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

#include <solv/knownid.h>
#include <solv/util.h>

struct folder {
	char *dir;
	const char *origin;         /* NULL: "folder DIR", made when needed */
	char **names;               /* its recipe files, sorted */
	size_t nnames;
	char key[65];               /* of those files (cfa_recipe_index_key) */
	bool keyed;
	char *solv_path, *image_path; /* its caches; NULL without a root */
	Repo *repo;
	struct cfapkg_ctx *parsed;  /* read whole (no usable cache): its set */
	struct cfa_recipe_image *image; /* else the recipes as parsed before */
	bool image_opened;
	int small;                  /* -1 not known yet, else whether it has an image */
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

/* Whether f is small enough to have an image, looked at once. */
static enum cfapkg_err folder_small(struct cfapkg_ctx *ctx, struct folder *f, bool *small)
{
	enum cfapkg_err e = CFAPKG_E_OK;

	if (f->small < 0 && !(e = cfa_recipe_folder_small(ctx, f->dir, f->names, f->nnames, small)))
		f->small = *small;
	*small = f->small > 0;
	return e;
}

/* A large folder (one too large for an image) is indexed a slice of
 * files at a time, each slice's recipes dropped once added: the recipes a
 * request reaches are parsed again from their files (a few percent of a
 * channel's), and a cold plan holds one slice's recipes instead of every
 * one (at 100,000 versions, 170 MiB of fresh pages, each a page fault). */
#define INDEX_SLICE 512

static enum cfapkg_err index_slice(struct cfapkg_ctx *ctx, Repo *repo, struct folder *f,
                                   size_t start, size_t n)
{
	struct cfapkg_ctx *part = cfapkg_ctx_new();
	struct cfapkg_recipe **out = part ? cfa_calloc(n + 1, sizeof(*out)) : NULL;
	enum cfapkg_err e = out ? CFAPKG_E_OK : cfa_nomem(ctx);

	if (!e && (e = cfa_recipe_files_parse(part, f->dir, f->names + start, n, f->origin, out)))
		e = cfa_fail(ctx, e, "%s", cfapkg_ctx_error(part));
	if (!e)
		cfa_recipe_index_add(repo, out, n);
	cfa_free(out);
	cfapkg_ctx_free(part);
	return e;
}

static enum cfapkg_err index_in_slices(struct cfapkg_ctx *ctx, struct reach *r, struct folder *f)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t start;

	f->repo = repo_create(r->pool, "recipes");
	/* Each slice frees what the next one allocates again: kept, its
	 * pages are used again instead of faulted in afresh (at 100,000
	 * versions 46,000 faults become 11,000). */
	cfa_plat_keep_freed_memory(true);
	for (start = 0; start < f->nnames && !e; start += INDEX_SLICE)
		e = index_slice(ctx, f->repo, f, start,
		                f->nnames - start < INDEX_SLICE ? f->nnames - start : INDEX_SLICE);
	cfa_plat_keep_freed_memory(false);
	repo_internalize(f->repo);
	if (!e && f->keyed && f->solv_path)
		e = cfa_recipe_caches_write(ctx, f->dir, f->names, f->nnames, f->key, f->repo, NULL);
	return e;
}

/* A small folder is parsed whole into a context of its own (the image
 * needs every recipe), indexed, and both caches are written; a large one
 * is indexed in slices. */
static enum cfapkg_err index_fresh(struct cfapkg_ctx *ctx, struct reach *r, struct folder *f)
{
	bool small = false;
	enum cfapkg_err e = folder_small(ctx, f, &small);

	if (e || !small)
		return e ? e : index_in_slices(ctx, r, f);
	if (!(f->parsed = cfapkg_ctx_new()))
		return cfa_nomem(ctx);
	/* The caches are this context's to write, under its root. */
	f->parsed->no_index = true;
	if ((e = cfa_recipe_dir_parse(f->parsed, f->dir, f->origin)))
		return cfa_fail(ctx, e, "%s", cfapkg_ctx_error(f->parsed));
	f->repo = cfa_recipe_index_build(r->pool, f->parsed->recipes, f->parsed->nrecipes);
	if (f->keyed && f->solv_path)
		e = cfa_recipe_caches_write(ctx, f->dir, f->names, f->nnames, f->key, f->repo,
		                            f->parsed->recipes);
	return e;
}

/* f's image, opened once (NULL: none, or another build's). */
static enum cfapkg_err open_image(struct cfapkg_ctx *ctx, struct folder *f)
{
	if (f->image_opened || !f->image_path)
		return CFAPKG_E_OK;
	f->image_opened = true;
	return cfa_recipe_image_open(ctx, f->image_path, f->key, f->nnames, &f->image);
}

/* The cached index of f and the image beside it.  A large folder has no
 * image: the recipes reached are parsed from their files.  A small one
 * without its image (a write cut short) is read whole and both are made
 * again. */
static enum cfapkg_err cached(struct cfapkg_ctx *ctx, struct reach *r, struct folder *f)
{
	bool small = false;
	enum cfapkg_err e;

	if (!(f->repo = cfa_recipe_index_read(r->pool, f->solv_path, f->key)))
		return CFAPKG_E_OK;
	if ((size_t)f->repo->nsolvables != f->nnames)
		e = CFAPKG_E_OK; /* another listing: read whole below */
	else if ((e = open_image(ctx, f)) || f->image ||
	         (e = folder_small(ctx, f, &small)) || !small)
		return e;
	repo_free(f->repo, 1);
	f->repo = NULL;
	return e;
}

/* The folder's index, cached or made. */
static enum cfapkg_err index_folder(struct cfapkg_ctx *ctx, struct reach *r, struct folder *f)
{
	enum cfapkg_err e = f->solv_path ? cached(ctx, r, f) : CFAPKG_E_OK;

	if (!e && !f->repo)
		e = index_fresh(ctx, r, f);
	return e;
}

/* Lists a folder and keys its files; its index is read only if the
 * request is not one asked before (reach_record.c). */
static enum cfapkg_err scan_folder(struct cfapkg_ctx *ctx, const char *dir, const char *origin,
                                   void *arg)
{
	struct reach *r = arg;
	struct folder *f;
	enum cfapkg_err e;
	size_t len;

	if (!dir)
		return CFAPKG_E_OK;
	if (cfa_grow((void **)&r->f, &r->cap, r->n + 1, sizeof(*r->f)) != 0)
		return cfa_nomem(ctx);
	f = &r->f[r->n];
	memset(f, 0, sizeof(*f));
	f->small = -1;
	if (!(f->dir = cfa_strdup(dir)))
		return cfa_nomem(ctx);
	r->n++;
	f->origin = origin;
	if ((e = cfa_recipe_dir_names(ctx, dir, &f->names, &f->nnames)) ||
	    (e = cfa_recipe_index_key(ctx, dir, f->names, f->nnames, f->key, &f->keyed)))
		return e;
	if (f->keyed && (e = cfa_recipe_cache_path(ctx, dir, "solv", &f->solv_path)))
		return e;
	len = f->solv_path ? strlen(f->solv_path) - strlen(".solv") : 0;
	if (f->solv_path && !(f->image_path = cfa_aprintf("%.*s.img", (int)len, f->solv_path)))
		return cfa_nomem(ctx);
	return CFAPKG_E_OK;
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

/* Recipe i of f (its i-th file name): its head from the folder's image
 * (the plan reads the details of what it picks), else its file whole. */
static enum cfapkg_err recipe_at(struct cfapkg_ctx *ctx, struct folder *f, size_t i,
                                 struct cfapkg_recipe **out)
{
	size_t len = strlen(f->names[i]) - strlen(".json");
	enum cfapkg_err e;
	char *path;

	*out = NULL;
	if (!f->origin && !(f->origin = cfa_recipe_folder_origin(ctx, f->dir)))
		return cfa_nomem(ctx);
	if ((e = open_image(ctx, f)) ||
	    (f->image && (e = cfa_recipe_image_head(ctx, f->image, i, out))))
		return e;
	/* A damaged block, or one of another recipe: its file is parsed. */
	if (*out && strncmp((*out)->name, f->names[i], len) == 0 && (*out)->name[len] == '\0') {
		(*out)->origin = f->origin;
		return CFAPKG_E_OK;
	}
	if (!(path = cfa_aprintf("%s/%s", f->dir, f->names[i])))
		return cfa_nomem(ctx);
	e = cfa_recipe_parse(ctx, path, out);
	cfa_free(path);
	if (!e)
		(*out)->origin = f->origin;
	return e;
}

/* Recipe i of f: from the folder's whole read, else as recipe_at reads
 * it (solvables are in the folder's file order). */
static enum cfapkg_err recipe_in(struct cfapkg_ctx *ctx, struct folder *f, size_t i,
                                 struct cfapkg_recipe **out)
{
	if (f->parsed) {
		*out = f->parsed->recipes[i];
		return CFAPKG_E_OK;
	}
	return recipe_at(ctx, f, i, out);
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct cfapkg_recipe *const *)a)->name,
	              (*(struct cfapkg_recipe *const *)b)->name);
}

/* The set loaded, in name order, with what this machine trusted applied. */
static enum cfapkg_err finish_set(struct cfapkg_ctx *ctx)
{
	if (ctx->nrecipes)
		qsort(ctx->recipes, ctx->nrecipes, sizeof(*ctx->recipes), by_name);
	return cfa_first_use_apply(ctx);
}

/* The set: the recipes a record names, in its order. */
static enum cfapkg_err take_set(struct cfapkg_ctx *ctx, struct reach *r,
                                const struct cfa_reached *rec)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	ctx->nrecipes = 0;
	if (cfa_grow((void **)&ctx->recipes, &ctx->recipes_cap, rec->n + 1,
	             sizeof(*ctx->recipes)) != 0)
		return cfa_nomem(ctx);
	for (i = 0; i < rec->n && !e; i++)
		e = recipe_in(ctx, &r->f[rec->folder[i]], rec->recipe[i],
		              &ctx->recipes[ctx->nrecipes++]);
	if (e) {
		ctx->nrecipes = 0;
		return e;
	}
	return finish_set(ctx);
}

/* What the walk reached, as the record of it (reach_record.c). */
static enum cfapkg_err record_of(struct cfapkg_ctx *ctx, const struct reach *r,
                                 struct cfa_reached *rec)
{
	size_t i;

	memset(rec, 0, sizeof(*rec));
	rec->narrowed = r->narrowed;
	rec->folder = cfa_calloc(r->nqueue + 1, sizeof(*rec->folder));
	rec->recipe = cfa_calloc(r->nqueue + 1, sizeof(*rec->recipe));
	if (!rec->folder || !rec->recipe)
		return cfa_nomem(ctx);
	for (i = 0; i < r->nqueue; i++) {
		const Solvable *s = r->pool->solvables + r->queue[i];
		const struct folder *f = folder_of((struct reach *)r, s);
		rec->folder[i] = (uint32_t)(f - r->f);
		rec->recipe[i] = (uint32_t)(r->queue[i] - f->repo->start);
	}
	rec->n = r->nqueue;
	return CFAPKG_E_OK;
}

/* The set from a record of the same request: *done false when the record
 * names a recipe these folders do not hold (it then plays no part). */
static enum cfapkg_err from_record(struct cfapkg_ctx *ctx, struct reach *r,
                                   const struct cfa_reached *rec, bool *done)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	*done = false;
	for (i = 0; i < rec->n; i++)
		if (rec->folder[i] >= r->n || rec->recipe[i] >= r->f[rec->folder[i]].nnames)
			return CFAPKG_E_OK;
	/* A folder whose index is not whole, or a small one whose image is
	 * gone (found damaged, or cut short), is left to the walk, which
	 * makes them again. */
	for (i = 0; i < r->n; i++)
		if (!cfa_recipe_index_whole(r->f[i].solv_path, r->f[i].key))
			return CFAPKG_E_OK;
	for (i = 0; i < rec->n; i++) {
		struct folder *f = &r->f[rec->folder[i]];
		bool small = false;
		if ((e = open_image(ctx, f)) || (!f->image && (e = folder_small(ctx, f, &small))))
			return e;
		if (!f->image && small)
			return CFAPKG_E_OK;
	}
	r->narrowed = rec->narrowed;
	*done = true;
	return take_set(ctx, r, rec);
}

/* The key of a request's record: the format, this cfapkg, the platform, the
 * names asked for and each folder with the key of its files; *ok false
 * when a folder cannot be keyed or has no cache (no record then). */
static enum cfapkg_err record_key(struct cfapkg_ctx *ctx, const struct reach *r,
                                  const char *const *names, size_t n, const char *os,
                                  const char *arch, char key[65], bool *ok)
{
	size_t i, k = 0, total = 4 + n + 2 * r->n;
	const char **parts = cfa_calloc(total + 1, sizeof(*parts));

	if (!parts)
		return cfa_nomem(ctx);
	parts[k++] = "cfapkg-reached 1";
	parts[k++] = cfapkg_version_string();
	parts[k++] = os ? os : "";
	parts[k++] = arch ? arch : "";
	for (i = 0; i < n; i++)
		parts[k++] = names[i];
	*ok = true;
	for (i = 0; i < r->n; i++) {
		*ok = *ok && r->f[i].keyed && r->f[i].solv_path;
		parts[k++] = r->f[i].dir;
		parts[k++] = r->f[i].key;
	}
	if (*ok)
		cfa_recipe_cache_hash(parts, total, key);
	cfa_free(parts);
	return CFAPKG_E_OK;
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

/* f's image handed to ctx when heads read from it wait for their
 * details (the plan reads them once it has picked, and closes it). */
static bool lend_image(struct cfapkg_ctx *ctx, struct folder *f)
{
	struct cfa_recipe_image *im = f->image;

	if (!im || cfa_recipe_image_damaged(im) || !cfa_recipe_image_holds(im, NULL) ||
	    cfa_grow((void **)&ctx->images, &ctx->images_cap, ctx->nimages + 1,
	             sizeof(*ctx->images)) != 0)
		return false;
	ctx->images[ctx->nimages++] = im;
	f->image = NULL;
	return true;
}

static void reach_free(struct cfapkg_ctx *ctx, struct reach *r)
{
	size_t i;
	bool damaged;

	for (i = 0; i < r->n; i++) {
		/* What the set took from a whole read was moved into ctx's
		 * arena before this. */
		cfapkg_ctx_free(r->f[i].parsed);
		/* A damaged image and its index are made again by the next
		 * command. */
		damaged = r->f[i].image && cfa_recipe_image_damaged(r->f[i].image);
		/* Closed first: Windows removes no file that is open. */
		if (!lend_image(ctx, &r->f[i]))
			cfa_recipe_image_close(r->f[i].image);
		if (damaged)
			cfa_recipe_caches_drop(r->f[i].image_path);
		cfa_free(r->f[i].image_path);
		cfa_free(r->f[i].solv_path);
		cfa_strv_free(r->f[i].names, r->f[i].nnames);
		cfa_free(r->f[i].dir);
	}
	cfa_free(r->f);
	cfa_free(r->win);
	cfa_free(r->seen);
	cfa_free(r->queue);
	if (r->pool)
		pool_free(r->pool);
}

/* The walk over the folders' indexes; its result kept under key (NULL:
 * not kept).  A name nothing provides is explained from every recipe
 * (notes, suggestions): then they are all read. */
static enum cfapkg_err walk_folders(struct cfapkg_ctx *ctx, struct reach *r,
                                    const char *const *names, size_t n, const char *os,
                                    const char *arch, const char *key)
{
	struct cfa_reached rec = {0};
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	r->pool = pool_create();
	for (i = 0; i < r->n && !e; i++)
		e = index_folder(ctx, r, &r->f[i]);
	if (!e) {
		platform_marks(r, os, arch);
		e = walk(ctx, r, names, n);
	}
	if (!e && r->missing)
		return cfapkg_recipes_load(ctx);
	if (!e && !(e = record_of(ctx, r, &rec)))
		e = take_set(ctx, r, &rec);
	if (!e && key)
		e = cfa_reached_keep(ctx, key, &rec);
	cfa_reached_fini(&rec);
	return e;
}

enum cfapkg_err cfa_recipes_load_reaching(struct cfapkg_ctx *ctx, const char *const *names,
                                          size_t n, const char *os, const char *arch)
{
	struct reach r;
	struct cfa_reached rec = {0};
	char key[65];
	enum cfapkg_err e;
	bool channels = false, keyed = false, found = false, done = false;
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
	e = cfa_recipe_folders(ctx, scan_folder, &r);
	if (!e)
		e = record_key(ctx, &r, names, n, os, arch, key, &keyed);
	if (!e && keyed && !(e = cfa_reached_find(ctx, key, &rec, &found)) && found)
		e = from_record(ctx, &r, &rec, &done);
	cfa_reached_fini(&rec);
	if (!e && !done)
		e = walk_folders(ctx, &r, names, n, os, arch, keyed ? key : NULL);
	if (!e && !r.missing)
		e = remember(ctx, &r, names, n, os, arch);
	if (!e && !r.missing && keyed)
		memcpy(ctx->reach_key, key, sizeof(key));
	for (i = 0; i < r.n && !e && ctx->partial; i++)
		if (r.f[i].parsed)
			cfa_arena_adopt(&ctx->arena, &r.f[i].parsed->arena);
	reach_free(ctx, &r);
	return e;
}
