/*
 * closure.c - which recipes a request can reach.
 *
 * A version can only matter to a solve if some chain of requirements leads
 * to it from the request, so the pool is built from that closure alone
 * (following requirements by name to every recipe that provides the name).
 * On a large channel this is most of the difference between building the
 * whole pool and building what the solver will look at.
 */
#include <stdint.h>
#include <string.h>

#include "core/mem.h"
#include "solver/solver.h"

struct provider {
	const char *name;
	size_t recipe;     /* index into ctx->recipes */
	size_t next;       /* next provider of the same hash bucket, +1 (0 ends) */
};

struct index {
	size_t *buckets;   /* head provider + 1 */
	size_t mask;
	struct provider *p;
	size_t n, cap;
};

/* FNV-1a: names are short and this only picks a bucket, so any even spread will
 * do. */
static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int add(struct index *ix, const char *name, size_t recipe)
{
	size_t b = hash(name) & ix->mask, i;

	/* A recipe is listed once per name, however many of its versions
	 * provide it, so that a walk reaches it once per name. */
	for (i = ix->buckets[b]; i; i = ix->p[i - 1].next)
		if (ix->p[i - 1].recipe == recipe && strcmp(ix->p[i - 1].name, name) == 0)
			return 0;
	if (cfa_grow((void **)&ix->p, &ix->cap, ix->n + 1, sizeof(*ix->p)) != 0)
		return -1;
	ix->p[ix->n] = (struct provider){name, recipe, ix->buckets[b]};
	ix->buckets[b] = ++ix->n;
	return 0;
}

static int build_index(const struct cfapkg_ctx *ctx, struct index *ix)
{
	size_t i, j, k, nprov = 0;

	for (i = 0; i < ctx->nrecipes; i++)
		nprov += 1 + ctx->recipes[i]->nversions;
	/* A power of two, so that a mask picks the bucket, and about one bucket
	 * per entry, so that chains stay short. */
	for (ix->mask = 1023; ix->mask < nprov; ix->mask = ix->mask * 2 + 1)
		;
	ix->buckets = cfa_calloc(ix->mask + 1, sizeof(*ix->buckets));
	if (!ix->buckets)
		return -1;
	for (i = 0; i < ctx->nrecipes; i++) {
		const struct cfapkg_recipe *r = ctx->recipes[i];
		if (add(ix, r->name, i) != 0)
			return -1;
		for (j = 0; j < r->nversions; j++)
			for (k = 0; k < r->versions[j].nprovides; k++)
				if (add(ix, r->versions[j].provides[k].name, i) != 0)
					return -1;
	}
	return 0;
}

struct walk {
	const struct index *ix;
	unsigned char *reach;
	size_t *queue, nqueue;
};

static void visit_name(struct walk *w, const char *name)
{
	size_t i;

	for (i = w->ix->buckets[hash(name) & w->ix->mask]; i; i = w->ix->p[i - 1].next) {
		const struct provider *p = &w->ix->p[i - 1];
		/* Marked as it is queued, so that each recipe is queued once
		 * and the queue, sized to the recipes, never overflows. */
		if (!w->reach[p->recipe] && strcmp(p->name, name) == 0) {
			w->reach[p->recipe] = 1;
			w->queue[w->nqueue++] = p->recipe;
		}
	}
}

/* Every version's requirements, not only the one that will win: which one wins
 * is the solver's to decide, on the pool this builds. */
static void visit_recipe(struct walk *w, const struct cfapkg_recipe *r)
{
	size_t j, k;

	for (j = 0; j < r->nversions; j++)
		for (k = 0; k < r->versions[j].nrequires; k++)
			visit_name(w, r->versions[j].requires[k].name);
}

enum cfapkg_err cfa_closure(struct cfapkg_plan *plan, unsigned char **out)
{
	const struct cfapkg_ctx *ctx = plan->ctx;
	struct index ix = {0};
	struct walk w = {&ix, NULL, NULL, 0};
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	w.reach = cfa_calloc(ctx->nrecipes + 1, 1);
	w.queue = cfa_calloc(ctx->nrecipes + 1, sizeof(*w.queue));
	if (!w.reach || !w.queue || build_index(ctx, &ix) != 0) {
		e = cfa_nomem(plan->ctx);
		goto out;
	}
	for (i = 0; i < plan->nspecs; i++)
		visit_name(&w, plan->specs[i].name);
	/* Breadth first: the queue grows behind the cursor until nothing new is
	 * reached. */
	for (i = 0; i < w.nqueue; i++)
		visit_recipe(&w, ctx->recipes[w.queue[i]]);
	*out = w.reach;
	w.reach = NULL;
out:
	cfa_free(w.reach);
	cfa_free(w.queue);
	cfa_free(ix.buckets);
	cfa_free(ix.p);
	return e;
}
