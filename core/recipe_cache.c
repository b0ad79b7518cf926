/*
 * recipe_cache.c - the folder of caches made from recipe sources, and the
 * GPU table's cache: gpus.json parsed once, then read as an image
 * (recipe_image.c) until its stamp changes.
 */
#include <string.h>
#include <time.h>

#include <solv/pool.h>
#include <solv/repo.h>

#include "core/gpus.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/recipe_cache.h"
#include "core/recipe_image.h"
#include "core/recipe_index.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* The key of the parts, each with its terminator (a single part without
 * one). */
static void key_of(const char *const *parts, size_t n, char key[65])
{
	struct cfa_key k;
	size_t i;

	cfa_key_start(&k);
	for (i = 0; i < n; i++)
		cfa_key_add(&k, parts[i], strlen(parts[i]) + (n > 1));
	cfa_key_hex(&k, key);
}

/* ROOT/cache/recipes, made once per context and root: NULL (and OK) when
 * there is no root to cache under. */
static enum cfapkg_err cache_folder(struct cfapkg_ctx *ctx, const char **out)
{
	char *folder;
	enum cfapkg_err e;

	*out = ctx->recipe_cache;
	if (*out)
		return CFAPKG_E_OK;
	if (!ctx->root && (e = cfapkg_ctx_set_root(ctx, NULL))) {
		if (e == CFAPKG_E_NOMEM)
			return e;
		cfapkg_ctx_clear_error(ctx); /* no home folder: no cache either */
		return CFAPKG_E_OK;
	}
	if (!(folder = cfa_root_path(ctx, CFA_CACHE, "recipes")))
		return ctx->err_code;
	/* Made only when missing, and only under a root that exists (a
	 * mistyped --root gets no tree of cache folders): the usual case
	 * costs one look. */
	if (!cfa_plat_is_dir(folder) && (!cfa_plat_is_dir(ctx->root) || cfa_plat_mkdir_p(folder) != 0)) {
		cfa_free(folder);
		return CFAPKG_E_OK;
	}
	*out = ctx->recipe_cache = folder;
	return CFAPKG_E_OK;
}

/* ROOT/cache/recipes/NAME in *out; NULL as above. */
static enum cfapkg_err cache_file(struct cfapkg_ctx *ctx, const char *name, char **out)
{
	const char *folder;
	enum cfapkg_err e = cache_folder(ctx, &folder);

	*out = NULL;
	if (!e && folder && !(*out = cfa_aprintf("%s/%s", folder, name)))
		e = cfa_nomem(ctx);
	return e;
}

enum cfapkg_err cfa_recipe_cache_path(struct cfapkg_ctx *ctx, const char *source, const char *ext,
                                      char **out)
{
	char hex[65], name[96];

	*out = NULL;
	key_of(&source, 1, hex);
	/* A key and a short extension always fit. */
	if (!cfa_snprintf(name, sizeof(name), "%s.%s", hex, ext))
		return CFAPKG_E_OK;
	return cache_file(ctx, name, out);
}

enum cfapkg_err cfa_recipe_cache_file(struct cfapkg_ctx *ctx, const char *name, char **out)
{
	return cache_file(ctx, name, out);
}

void cfa_recipe_cache_hash(const char *const *parts, size_t n, char hex[65])
{
	key_of(parts, n, hex);
}

static bool settled(const char *path, long long now)
{
	return cfa_plat_file_mtime(path) < now - 1;
}

enum cfapkg_err cfa_recipe_files_settled(struct cfapkg_ctx *ctx, const char *dir,
                                         char *const *names, size_t n, bool *out)
{
	long long now = (long long)time(NULL);
	size_t i;

	*out = true;
	for (i = 0; i < n && *out; i++) {
		char *path = cfa_aprintf("%s/%s", dir, names[i]);
		if (!path)
			return cfa_nomem(ctx);
		*out = settled(path, now);
		cfa_free(path);
	}
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_recipe_cache_pair(struct cfapkg_ctx *ctx, const char *source,
                                      const char *ext_a, const char *ext_b, char **a, char **b)
{
	enum cfapkg_err e = cfa_recipe_cache_path(ctx, source, ext_a, a);

	*b = NULL;
	if (!e && *a && (e = cfa_recipe_cache_path(ctx, source, ext_b, b)))
		CFA_FREE(*a);
	return e;
}

/* ROOT/cache/recipes/SHA.solv and .img for dir, both NULL when there is
 * no cache folder. */
static enum cfapkg_err cache_paths(struct cfapkg_ctx *ctx, const char *dir, char **solv,
                                   char **img)
{
	return cfa_recipe_cache_pair(ctx, dir, "solv", "img", solv, img);
}

enum cfapkg_err cfa_recipe_folder_small(struct cfapkg_ctx *ctx, const char *dir, char *const *names,
                                    size_t n, bool *out)
{
	long long total = 0;
	size_t i;

	for (i = 0; i < n && total <= CFA_IMAGE_FOLDER_MAX; i++) {
		char *path = cfa_aprintf("%s/%s", dir, names[i]);
		long long size = path ? cfa_plat_file_size(path) : -1;
		cfa_free(path);
		if (!path)
			return cfa_nomem(ctx);
		total += size > 0 ? size : 0;
	}
	*out = total <= CFA_IMAGE_FOLDER_MAX;
	return CFAPKG_E_OK;
}

void cfa_recipe_caches_drop(const char *img)
{
	size_t len = strlen(img) - strlen(".img");
	char *solv = cfa_aprintf("%.*s.solv", (int)len, img);

	cfa_plat_remove(img);
	if (solv)
		cfa_plat_remove(solv);
	cfa_free(solv);
}

enum cfapkg_err cfa_recipe_caches_write(struct cfapkg_ctx *ctx, const char *dir,
                                        char *const *names, size_t n, const char key[65],
                                        Repo *repo, struct cfapkg_recipe *const *recipes)
{
	char *solv = NULL, *img = NULL;
	Pool *pool = NULL;
	bool ripe = false, small = false;
	enum cfapkg_err e = cfa_recipe_files_settled(ctx, dir, names, n, &ripe);

	if (!e && ripe)
		e = cache_paths(ctx, dir, &solv, &img);
	if (!e && solv && !repo) {
		pool = pool_create();
		repo = cfa_recipe_index_build(pool, recipes, n);
	}
	if (!e && solv && !(e = cfa_recipe_index_write(ctx, repo, solv, key)) &&
	    !(e = cfa_recipe_folder_small(ctx, dir, names, n, &small)) && small)
		e = cfa_recipe_image_write(ctx, img, key, recipes, n);
	if (pool)
		pool_free(pool);
	cfa_free(solv);
	cfa_free(img);
	return e;
}

/* Every block of the image, in out; *found false at the first that is
 * damaged or of another name (the caller then removes the image and its
 * index, to be made again). */
static enum cfapkg_err all_blocks(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im,
                                  char *const *names, size_t n,
                                  struct cfapkg_recipe **out, bool *found)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, len;

	*found = true;
	for (i = 0; i < n && !e && *found; i++) {
		e = cfa_recipe_image_get(ctx, im, i, &out[i]);
		len = strlen(names[i]) - strlen(".json");
		*found = out[i] && strncmp(out[i]->name, names[i], len) == 0 &&
		         out[i]->name[len] == '\0';
	}
	return e;
}

enum cfapkg_err cfa_recipe_dir_cached(struct cfapkg_ctx *ctx, const char *dir, char *const *names,
                                      size_t n, const char key[65], struct cfapkg_recipe **out,
                                      bool *found)
{
	struct cfa_recipe_image *im = NULL;
	char *solv = NULL, *img = NULL;
	enum cfapkg_err e = cache_paths(ctx, dir, &solv, &img);

	*found = false;
	if (!e && img)
		e = cfa_recipe_image_open(ctx, img, key, n, &im);
	if (!e && im)
		e = all_blocks(ctx, im, names, n, out, found);
	cfa_recipe_image_close(im);
	/* Removed once closed: Windows removes no file that is open. */
	if (!e && im && !*found)
		cfa_recipe_caches_drop(img);
	cfa_free(solv);
	cfa_free(img);
	return e;
}

/* Parses the table and caches it once it has settled. */
static enum cfapkg_err parse_and_cache(struct cfapkg_ctx *ctx, const char *path,
                                       const char *cache, const char key[65])
{
	enum cfapkg_err e = cfa_gpus_load(ctx, path);

	if (!e && cache && settled(path, (long long)time(NULL)))
		e = cfa_gpus_image_write(ctx, cache, key, ctx->gpus);
	return e;
}

enum cfapkg_err cfa_gpus_load_cached(struct cfapkg_ctx *ctx, const char *path)
{
	char stamp[64], key[65], *cache = NULL;
	const char *parts[2] = {path, stamp};
	struct cfa_gpus *g = NULL;
	enum cfapkg_err e;

	/* The look for the table is also the look at its stamp. */
	if (!cfa_plat_file_stamp(path, stamp))
		return CFAPKG_E_OK;
	if (ctx->no_index)
		return cfa_gpus_load(ctx, path);
	key_of(parts, 2, key);
	if ((e = cfa_recipe_cache_path(ctx, path, "gpus", &cache)))
		return e;
	if (cache && (e = cfa_gpus_image_read(ctx, cache, key, &g)) == CFAPKG_E_OK && g)
		cfa_gpus_take(ctx, g);
	else if (!e)
		e = parse_and_cache(ctx, path, cache, key);
	cfa_free(cache);
	return e;
}
