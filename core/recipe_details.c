/*
 * recipe_details.c - the rest of the versions a plan picked.
 *
 * A plan reads the recipes it reaches as heads (recipe_reach.c,
 * recipe_image.c): what the solver and the explanations need.  Once it
 * has picked, the versions it picked are read whole here, each image
 * opened once for all the versions waiting in it.  A details block found
 * damaged, or an image written since for other files, gives way to the
 * recipe's own file, parsed whole; a damaged image and its index are
 * dropped, to be made again by the next command.
 */
#include <string.h>

#include "core/recipe.h"
#include "core/recipe_cache.h"
#include "core/recipe_image.h"
#include "core/registry.h"

/* Whether from is v as its head was read: the same version with the
 * same sources, in the same order. */
static bool same_version(const struct cfapkg_version *v, const struct cfapkg_version *from)
{
	size_t i;

	if (strcmp(v->version, from->version) != 0 || v->nsources != from->nsources)
		return false;
	for (i = 0; i < v->nsources; i++)
		if (strcmp(v->sources[i].platform, from->sources[i].platform) != 0 ||
		    !v->sources[i].apt != !from->sources[i].apt)
			return false;
	return true;
}

/* v's details from its recipe file, parsed whole. */
static enum cfapkg_err from_file(struct cfapkg_ctx *ctx, struct cfapkg_version *v)
{
	struct cfapkg_recipe *r = NULL;
	enum cfapkg_err e = cfa_recipe_parse(ctx, v->recipe->file, &r);
	size_t i;

	for (i = 0; !e && i < r->nversions; i++)
		if (same_version(v, &r->versions[i])) {
			cfa_version_take_details(v, &r->versions[i]);
			return CFAPKG_E_OK;
		}
	return e ? e : cfa_fail(ctx, CFAPKG_E_RECIPE, "%s: changed while cfapkg read it (%s %s "
	                        "is not as it was); run the command again", v->recipe->file,
	                        v->recipe->name, v->version);
}

/* Every version of v[from..n) whose details wait in v[from]'s image. */
static enum cfapkg_err from_image(struct cfapkg_ctx *ctx, struct cfapkg_version *const *v,
                                  size_t n, size_t from)
{
	const struct cfa_pending *p = v[from]->pending;
	struct cfa_recipe_image *im = NULL;
	enum cfapkg_err e = cfa_pending_open(ctx, p, &im);
	bool ok, damaged;
	size_t i;

	for (i = from; i < n && !e; i++) {
		if (!v[i]->pending || !cfa_pending_same_image(v[i]->pending, p))
			continue;
		ok = false;
		if (im && (e = cfa_recipe_image_details(ctx, im, v[i], &ok)))
			break;
		if (!ok)
			e = from_file(ctx, v[i]);
	}
	damaged = im && cfa_recipe_image_damaged(im);
	/* Closed first: Windows removes no file that is open. */
	cfa_recipe_image_close(im);
	if (damaged)
		cfa_recipe_caches_drop(cfa_pending_path(p));
	return e;
}

enum cfapkg_err cfa_versions_complete(struct cfapkg_ctx *ctx,
                                      const struct cfapkg_version *const *v, size_t n)
{
	/* The versions are the recipe set's own, in ctx's arena: read-only
	 * to callers, completed here once. */
	struct cfapkg_version *const *own = (struct cfapkg_version *const *)v;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < n && !e; i++)
		if (own[i]->pending)
			e = from_image(ctx, own, n, i);
	return e;
}
