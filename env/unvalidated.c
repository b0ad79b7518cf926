/*
 * unvalidated.c - the parts of an environment that run experimental on
 * this GPU though another GPU validated them, which run warns of before
 * it starts the program.  A version's statuses are in its recipe's head
 * (recipe_image.c), so only the heads of the set's own recipes are read,
 * as a plan reads what it reaches; reading every recipe whole cost a
 * launch about a millisecond on these machines.
 */
#include "core/mem.h"
#include "core/registry.h"
#include "env/env.h"

struct found {
	struct cfapkg_unvalidated *v;
	size_t n, cap;
};

static bool add(struct found *f, const struct cfapkg_version *v, const char *gfx)
{
	if (cfa_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(*f->v)) != 0)
		return false;
	f->v[f->n++] = (struct cfapkg_unvalidated){v->recipe->name, v->version, gfx};
	return true;
}

/* Each part experimental on gfx, once for every GPU it was validated on. */
static bool collect(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock, const char *gfx,
                    struct found *f)
{
	size_t i, s;

	for (i = 0; i < lock->nparts; i++) {
		/* A part whose recipe or version is gone has nothing to say. */
		const struct cfapkg_version *v = cfa_part_recipe_version(ctx, &lock->parts[i]);
		if (!v || cfapkg_version_status(ctx, v, gfx) != CFAPKG_STATUS_EXPERIMENTAL)
			continue;
		for (s = 0; s < v->nstatus; s++)
			if (v->status[s].status == CFAPKG_STATUS_VALIDATED && !add(f, v, v->status[s].gfx))
				return false;
	}
	return true;
}

/* The heads of the set's recipes, and of what they require (the walk a
 * plan makes; no platform is left out, as the set was made for this one). */
static enum cfapkg_err load_heads(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock)
{
	const char **names = cfa_calloc(lock->nparts + 1, sizeof(*names));
	enum cfapkg_err e;
	size_t i;

	if (!names)
		return cfa_nomem(ctx);
	for (i = 0; i < lock->nparts; i++)
		names[i] = lock->parts[i].name;
	e = cfa_recipes_load_reaching(ctx, names, lock->nparts, NULL, NULL);
	/* Nothing more is read from them here; a later caller that wants a
	 * version's details opens its image again. */
	cfa_recipe_images_close(ctx);
	cfa_free(names);
	return e;
}

enum cfapkg_err cfapkg_env_unvalidated(struct cfapkg_ctx *ctx, const char *env, const char *gfx,
                                       struct cfapkg_unvalidated **out, size_t *n)
{
	struct cfapkg_lockfile *lock = NULL;
	struct found f = {NULL, 0, 0};
	enum cfapkg_err e;

	*out = NULL;
	*n = 0;
	/* A set that cannot be read has nothing to warn of: the program it
	 * runs is the user's to try. */
	if (cfapkg_env_lockfile(ctx, env, 0, &lock)) {
		cfapkg_ctx_clear_error(ctx);
		return CFAPKG_E_OK;
	}
	e = lock->nparts ? load_heads(ctx, lock) : CFAPKG_E_OK;
	if (!e && !collect(ctx, lock, gfx, &f))
		e = cfa_nomem(ctx);
	cfapkg_lockfile_free(lock);
	if (e) {
		cfa_free(f.v);
		return e;
	}
	*out = f.v;
	*n = f.n;
	return CFAPKG_E_OK;
}
