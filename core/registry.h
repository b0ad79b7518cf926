/*
 * registry.h - the recipe folders and how they are read, for the loaders
 * of core/: the whole set (registry.c), a request's closure
 * (recipe_reach.c) and the details of the versions a plan picks
 * (recipe_details.c).
 */
#ifndef CFA_REGISTRY_H
#define CFA_REGISTRY_H

#include "core/ctx.h"

/* The built-in folder's origin, compared by address. */
extern const char cfa_builtin_origin[];

/* The recipe file names of dir, sorted (cfa_strv_free); a folder that
 * cannot be listed is an error naming it. */
enum cfapkg_err cfa_recipe_dir_names(struct cfapkg_ctx *ctx, const char *dir, char ***names,
                                     size_t *n);
/* Parses every recipe of dir into ctx's set (its GPU table is not read).
 * origin NULL: "folder DIR". */
enum cfapkg_err cfa_recipe_dir_parse(struct cfapkg_ctx *ctx, const char *dir, const char *origin);
/* Parses the n named files of dir (a slice of cfa_recipe_dir_names) into
 * ctx's set, each given origin, and into out[0..n) in their order. */
enum cfapkg_err cfa_recipe_files_parse(struct cfapkg_ctx *ctx, const char *dir, char **names,
                                       size_t n, const char *origin, struct cfapkg_recipe **out);
/* "folder DIR", in ctx's arena. */
const char *cfa_recipe_folder_origin(struct cfapkg_ctx *ctx, const char *dir);

/* Calls fn for each recipe folder in the order they rank: the built-in one
 * (origin cfa_builtin_origin; dir NULL when CFAPKG_NO_BUILTIN_RECIPES
 * leaves it out), CFAPKG_RECIPES's, then the context's (origin NULL). */
typedef enum cfapkg_err (*cfa_folder_fn)(struct cfapkg_ctx *ctx, const char *dir,
                                         const char *origin, void *arg);
enum cfapkg_err cfa_recipe_folders(struct cfapkg_ctx *ctx, cfa_folder_fn fn, void *arg);

/* Whether the root has any channel (their recipes are then read whole). */
enum cfapkg_err cfa_have_channels(struct cfapkg_ctx *ctx, bool *any);
/* The GPU tables, without parsing any recipe where no channel adds its
 * own. */
enum cfapkg_err cfa_gpus_ensure(struct cfapkg_ctx *ctx);

/* The recipes the names can reach (and those every plan reads), from the
 * folders' indexes, less those that cannot be installed on os and arch
 * when os is known (ctx->narrowed says whether any was left out); the
 * whole set where an index cannot answer alike (channels, a name nothing
 * provides, the index turned off). */
enum cfapkg_err cfa_recipes_load_reaching(struct cfapkg_ctx *ctx, const char *const *names,
                                          size_t n, const char *os, const char *arch);

/* The n versions read whole: those the load above read as heads (their
 * pending set) get their details, from their image, else from their
 * recipe file.  A plan calls it for the versions it picked. */
enum cfapkg_err cfa_versions_complete(struct cfapkg_ctx *ctx,
                                      const struct cfapkg_version *const *v, size_t n);
/* Closes the images the load kept open for that (ctx->images); a plan
 * calls it when it is done, whether or not it solved. */
void cfa_recipe_images_close(struct cfapkg_ctx *ctx);

#endif
