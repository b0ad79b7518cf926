/*
 * recipe_index.h - a recipe folder as one libsolv repository kept on disk:
 * which recipe provides and requires which names, read in one step, so
 * that a plan parses only the recipes its request can reach.
 */
#ifndef CFA_RECIPE_INDEX_H
#define CFA_RECIPE_INDEX_H

#include <stddef.h>

#include <solv/pool.h>
#include <solv/repo.h>

#include "core/ctx.h"

/* Provided by every recipe the solver reads whatever the request: system
 * parts (the facts behind them, their install hints) and recipes with
 * notes (explanations quote them about any name). */
#define CFA_INDEX_ALWAYS "cfapkg:always"

/* Prefix of "OS-ARCH", provided for each platform where some version can
 * be installed ("*" for either part: any); a plan for a known platform
 * leaves out the recipes that cannot be installed there. */
#define CFA_INDEX_ON "cfapkg:on:"

/* One solvable per recipe: its name, every name any of its versions
 * provides (its own included) and every name any of them requires, without
 * versions, and the platforms it can be installed on.  The recipes are the folder's, whole. */
Repo *cfa_recipe_index_build(Pool *pool, struct cfapkg_recipe *const *recipes, size_t n);
/* The same a slice at a time: recipes added to repo (made with
 * repo_create), which is internalized once all are in. */
void cfa_recipe_index_add(Repo *repo, struct cfapkg_recipe *const *recipes, size_t n);

/* What the index of dir is built from: the folder's path and each recipe
 * file's name and stamp (names sorted).  *keyed false when a file cannot be
 * looked at (it is then parsed, and fails there with its name). */
enum cfapkg_err cfa_recipe_index_key(struct cfapkg_ctx *ctx, const char *dir, char *const *names,
                                     size_t n, char key[65], bool *keyed);

/* The index cached at path when it was written by this cfapkg for key and
 * is whole; NULL otherwise (missing, another version, damaged), never an
 * error: the caller builds it again. */
Repo *cfa_recipe_index_read(Pool *pool, const char *path, const char key[65]);

/* Whether the cache at path is the one cfa_recipe_index_read would take,
 * without reading it into a pool. */
bool cfa_recipe_index_whole(const char *path, const char key[65]);

/* Replaces the cache at path (atomically); a cache that cannot be written
 * is only not written: the one error is a want of memory. */
enum cfapkg_err cfa_recipe_index_write(struct cfapkg_ctx *ctx, Repo *repo, const char *path,
                            const char key[65]);

#endif
