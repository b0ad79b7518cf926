/*
 * recipe_details.c - the rest of the versions a plan picked.
 *
 * A plan reads the recipes it reaches as heads (recipe_reach.c,
 * recipe_image.c): what the solver and the explanations need.  Once it
 * has picked, the versions it picked are read whole here, each image
 * opened once for all the versions waiting in it.  A details block found
 * damaged, or an image written since for other files, gives way to the
 * recipe's own file, parsed whole; a damaged image and its index are
 * dropped, to be made again by the next command.  The load leaves open
 * the images it read heads from (ctx->images), and the plan closes them
 * when it is done.
 */
#include <string.h>

#include "core/mem.h"
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

/* The image p's details wait in, as the load left it open (*held), else
 * opened again. */
static enum cfapkg_err image_of(struct cfapkg_ctx *ctx, const struct cfa_pending *p,
                                struct cfa_recipe_image **im, bool *held)
{
	size_t i;

	for (i = 0; i < ctx->nimages; i++)
		if (cfa_recipe_image_holds(ctx->images[i], p)) {
			*im = ctx->images[i];
			*held = true;
			return CFAPKG_E_OK;
		}
	*held = false;
	return cfa_pending_open(ctx, p, im);
}

/* Closes im, and drops a damaged one with its index: the next command
 * makes them again. */
static void image_done(struct cfa_recipe_image *im)
{
	char *damaged = im && cfa_recipe_image_damaged(im) ? cfa_strdup(cfa_recipe_image_path(im))
	                                                   : NULL;

	/* Closed first: Windows removes no file that is open. */
	cfa_recipe_image_close(im);
	if (damaged)
		cfa_recipe_caches_drop(damaged);
	cfa_free(damaged);
}

/* Every version of v[from..n) whose details wait in v[from]'s image. */
static enum cfapkg_err from_image(struct cfapkg_ctx *ctx, struct cfapkg_version *const *v,
                                  size_t n, size_t from)
{
	const struct cfa_pending *p = v[from]->pending;
	struct cfa_recipe_image *im = NULL;
	bool ok, held = false;
	enum cfapkg_err e = image_of(ctx, p, &im, &held);
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
	if (!held)
		image_done(im);
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

void cfa_recipe_images_close(struct cfapkg_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->nimages; i++)
		image_done(ctx->images[i]);
	CFA_FREE(ctx->images);
	ctx->nimages = ctx->images_cap = 0;
}
