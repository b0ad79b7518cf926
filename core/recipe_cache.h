/*
 * recipe_cache.h - where the caches made from recipe folders live
 * (ROOT/cache/recipes), when a file is old enough to be cached, and the
 * GPU table read through its cache.
 */
#ifndef CFA_RECIPE_CACHE_H
#define CFA_RECIPE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cache_key.h"
#include "core/ctx.h"

/* ROOT/cache/recipes/KEY.EXT, KEY the key of source (a folder or file
 * path), in *out; NULL when the root does not exist (a plan never creates
 * one), no root can be chosen or the folder cannot be made.  Only a want
 * of memory fails. */
enum cfapkg_err cfa_recipe_cache_path(struct cfapkg_ctx *ctx, const char *source, const char *ext,
                                      char **out);

/* Two such paths of one source (its index and image, say), both NULL
 * when there is no cache folder. */
enum cfapkg_err cfa_recipe_cache_pair(struct cfapkg_ctx *ctx, const char *source,
                                      const char *ext_a, const char *ext_b, char **a, char **b);

/* ROOT/cache/recipes/NAME, as above. */
enum cfapkg_err cfa_recipe_cache_file(struct cfapkg_ctx *ctx, const char *name, char **out);

/* The key of the parts, each with its terminator (a single part without
 * one). */
void cfa_recipe_cache_hash(const char *const *parts, size_t n, char hex[65]);

/* Whether every named file of dir was last written more than a second
 * ago: a file written within the second may be written again within the
 * same stamp (file systems keep coarse times), so it is not cached yet, as
 * git treats a racily clean index. */
enum cfapkg_err cfa_recipe_files_settled(struct cfapkg_ctx *ctx, const char *dir,
                                         char *const *names, size_t n, bool *out);

struct s_Repo;

/* After a whole parse of dir: its index (repo, or one made here when
 * NULL) and its image written for key, once its files have settled; a
 * cache that cannot be written is only not written.  A folder of more than
 * CFA_IMAGE_FOLDER_MAX bytes of recipes gets no image: at a channel's size
 * an image is larger than the JSON and slower to write than a plan is to
 * parse the recipes it reaches. */
#define CFA_IMAGE_FOLDER_MAX (4u << 20)
enum cfapkg_err cfa_recipe_caches_write(struct cfapkg_ctx *ctx, const char *dir,
                                        char *const *names, size_t n, const char key[65],
                                        struct s_Repo *repo, struct cfapkg_recipe *const *recipes);

/* Whether the named files of dir hold at most CFA_IMAGE_FOLDER_MAX bytes
 * (the folder then has an image). */
enum cfapkg_err cfa_recipe_folder_small(struct cfapkg_ctx *ctx, const char *dir,
                                        char *const *names, size_t n, bool *out);

/* Removes the image at img and the index beside it (a damaged image is
 * found only once its index was read), so that both are made again. */
void cfa_recipe_caches_drop(const char *img);

/* The n recipes of dir (its file names, in order) from the folder's image
 * when it was written for key (cfa_recipe_index_key), in out; *found false
 * otherwise (the folder is then parsed). */
enum cfapkg_err cfa_recipe_dir_cached(struct cfapkg_ctx *ctx, const char *dir, char *const *names,
                                      size_t n, const char key[65], struct cfapkg_recipe **out,
                                      bool *found);

/* cfa_gpus_load through the table's cache, keyed by the file's path and
 * stamp; the file is parsed when the cache is missing, stale or damaged,
 * or the index is turned off.  Where nothing is at path there is no
 * table, and nothing is loaded. */
enum cfapkg_err cfa_gpus_load_cached(struct cfapkg_ctx *ctx, const char *path);

/* The recipes a request reached (reach_record.c): for each, the place of
 * its folder in the load order and its own in the folder's file names.
 * Kept per key, which covers the request, the platform, cfapkg's version
 * and every folder's files, so that a plan asked again finds its recipes
 * without building the index's pool. */
struct cfa_reached {
	bool narrowed;               /* recipes for other platforms were left out */
	size_t n;
	uint32_t *folder, *recipe;
};

/* The record for key in *out (*found false when there is none; a cache
 * that cannot be read is none). */
enum cfapkg_err cfa_reached_find(struct cfapkg_ctx *ctx, const char key[65],
                                 struct cfa_reached *out, bool *found);
/* Keeps the record for key, ahead of the others (the oldest past a few
 * dozen are dropped). */
enum cfapkg_err cfa_reached_keep(struct cfapkg_ctx *ctx, const char key[65],
                                 const struct cfa_reached *r);
void cfa_reached_fini(struct cfa_reached *r);

#endif
