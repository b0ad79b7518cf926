/*
 * kept.c - why an install or update changed nothing.  For each part
 * asked about (every requested one when none is named) whose recipe has
 * a newer version than the one kept, the solver itself is asked for that
 * newer version, and its answer is the reason: a pin holds the part, the
 * environment's own request does ("zluda==6-preview.69", which an update
 * keeps), the newer one does not fit (the solver's problem says why), or
 * it fits but has a lower status on this GPU than the kept one.
 */
#include <string.h>

#include "core/mem.h"
#include "trans/trans.h"

struct cfapkg_kept_list {
	struct cfapkg_kept *items;
	size_t n;
	struct cfapkg_plan **plans; /* one per misfit: their problems are borrowed */
	size_t nplans;
	char **pins;
	char **wants;               /* the NAME==NEWEST specs asked for */
	size_t nwants;
};

/* A pin on the name holds it whatever its constraint says: the pin, not the
 * solver, is then the answer. */
static const char *pin_on(char **pins, size_t npins, const char *name)
{
	size_t i;

	for (i = 0; i < npins; i++)
		if (cfapkg_spec_names(pins[i], name))
			return pins[i];
	return NULL;
}

/* The environment's request for name when it rules version out (the
 * request "zluda==6-preview.69" and the newer 7-preview.10), else NULL. */
static const char *request_against(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *set,
                                   const char *name, const char *version)
{
	size_t i, n;
	bool fits;

	for (i = 0; i < set->nrequests; i++) {
		const char *spec = set->requests[i];
		if (!cfapkg_spec_names(spec, name))
			continue;
		n = cfapkg_spec_name_len(spec);
		/* A request whose constraint cannot be judged is not counted
		 * against the version; the solver's own answer then stands. */
		if (spec[n] && !cfapkg_version_matches(ctx, version, spec + n, &fits) && !fits)
			return spec;
		cfapkg_ctx_clear_error(ctx);
	}
	return NULL;
}

/* The status of the recipe version the kept part is, on gfx; a version
 * no longer in the recipe is as little known as an experimental one. */
static enum cfapkg_status kept_status(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                      const char *version, const char *gfx)
{
	size_t i;

	for (i = 0; i < r->nversions; i++)
		if (strcmp(r->versions[i].version, version) == 0)
			return cfapkg_version_status(ctx, &r->versions[i], gfx);
	return CFAPKG_STATUS_EXPERIMENTAL;
}

/* The first problem that is not the chain of requirements above it. */
static const struct cfapkg_problem *misfit(const struct cfapkg_plan *plan)
{
	size_t i, n;
	const struct cfapkg_problem *p = cfapkg_plan_problems(plan, &n);

	/* The problems open with the chain of requirements that led to the
	 * conflict: the first that is something else is the reason, else the
	 * chain's last link. */
	for (i = 0; i < n; i++)
		if (p[i].kind != CFAPKG_PROBLEM_REQUIRES || i + 1 == n)
			return &p[i];
	return NULL;
}

/* The request set with name's request replaced by want. */
static const char **specs_with(const struct cfapkg_lockfile *set, const char *name,
                               const char *want, size_t *n)
{
	const char **v = cfa_calloc(set->nrequests + 1, sizeof(*v));
	size_t i;

	*n = 0;
	for (i = 0; v && i < set->nrequests; i++)
		if (!cfapkg_spec_names(set->requests[i], name))
			v[(*n)++] = set->requests[i];
	if (v)
		v[(*n)++] = want;
	return v;
}

/* Why k's newer version, which fits, was not chosen: the request, a
 * lower status (the enum's order: validated first), or an install
 * keeping what is there. */
static void fits(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *set,
                 const struct cfapkg_recipe *r, struct cfapkg_kept *k)
{
	k->newest_status = cfapkg_version_status(ctx, &r->versions[0], set->facts.gfx);
	k->status = kept_status(ctx, r, k->version, set->facts.gfx);
	if ((k->holder = request_against(ctx, set, k->name, k->newest)))
		k->why = CFAPKG_KEPT_REQUEST;
	else
		k->why = k->newest_status > k->status ? CFAPKG_KEPT_STATUS : CFAPKG_KEPT_INSTALLED;
}

/* Asks the solver for the newest version in place of the kept one. */
static enum cfapkg_err try_newest(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *set,
                                  const struct cfapkg_recipe *r, struct cfapkg_kept_list *l,
                                  size_t npins, struct cfapkg_kept *k)
{
	struct cfapkg_plan_opts o = {.pins = (const char *const *)l->pins, .npins = npins};
	struct cfapkg_plan *plan = NULL;
	char *want = cfa_aprintf("%s==%s", k->name, k->newest);
	const char **specs = NULL;
	enum cfapkg_err e = CFAPKG_E_NOMEM;
	size_t n;

	/* The spec is kept in the list, as the entry points at it; so is a plan
	 * that failed, whose problem the entry borrows. */
	if (want && (l->wants[l->nwants++] = want) && (specs = specs_with(set, k->name, want, &n)))
		e = cfapkg_plan_solve(ctx, &set->facts, specs, n, &o, &plan);
	cfa_free(specs);
	k->want = want;
	if (e == CFAPKG_E_OK && !cfapkg_plan_solved(plan)) {
		k->why = CFAPKG_KEPT_MISFIT;
		k->problem = misfit(plan);
		l->plans[l->nplans++] = plan;
		return CFAPKG_E_OK;
	}
	cfapkg_plan_free(plan);
	if (e == CFAPKG_E_OK)
		fits(ctx, set, r, k);
	return e;
}

static enum cfapkg_err explain(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *set,
                               const struct cfapkg_lockfile_part *p, struct cfapkg_kept_list *l,
                               size_t npins)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(ctx, p->name);
	struct cfapkg_kept *k = &l->items[l->n];
	enum cfapkg_err e = CFAPKG_E_OK;

	if (!r || r->nversions == 0)
		return CFAPKG_E_OK; /* no recipe any more: nothing newer is known */
	*k = (struct cfapkg_kept){.name = p->name, .version = p->version,
	                          .newest = r->versions[0].version};
	/* Cheapest first: the newest kept needs no reason, and a pin needs no
	 * solve. */
	if (strcmp(k->newest, k->version) == 0)
		k->why = CFAPKG_KEPT_NEWEST;
	else if ((k->holder = pin_on(l->pins, npins, p->name)))
		k->why = CFAPKG_KEPT_PINNED;
	else
		e = try_newest(ctx, set, r, l, npins, k);
	if (e == CFAPKG_E_NOMEM)
		return e;
	/* A solve that fails outright says nothing about this part: it is
	 * left out, as one the solver could not be asked about. */
	if (e == CFAPKG_E_OK)
		l->n++;
	cfapkg_ctx_clear_error(ctx);
	return CFAPKG_E_OK;
}

static bool asked(const struct cfapkg_lockfile_part *p, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (cfapkg_spec_names(names[i], p->name))
			return true;
	/* None named: the parts the environment asked for, not what they pulled
	 * in. */
	return n == 0 && p->requested;
}

static enum cfapkg_err list_new(struct cfapkg_ctx *ctx, size_t nparts,
                                struct cfapkg_kept_list **out)
{
	struct cfapkg_kept_list *l = cfa_calloc(1, sizeof(*l));

	/* One entry per part at most, as each part is explained once. */
	if (!l || !(l->items = cfa_calloc(nparts + 1, sizeof(*l->items))) ||
	    !(l->plans = cfa_calloc(nparts + 1, sizeof(*l->plans))) ||
	    !(l->wants = cfa_calloc(nparts + 1, sizeof(*l->wants)))) {
		cfapkg_kept_free(l);
		return cfa_nomem(ctx);
	}
	*out = l;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_trans_kept(struct cfapkg_ctx *ctx, const struct cfapkg_trans *t,
                                  const char *const *names, size_t nnames,
                                  struct cfapkg_kept_list **out)
{
	const struct cfapkg_lockfile *set = cfapkg_trans_new(t);
	struct cfapkg_kept_list *l = NULL;
	size_t i, npins = 0;
	enum cfapkg_err e;

	*out = NULL;
	if (!set)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "the transaction has no set to explain");
	if ((e = list_new(ctx, set->nparts, &l)) ||
	    (e = cfapkg_env_pins(ctx, t->env, &l->pins, &npins))) {
		cfapkg_kept_free(l);
		return e;
	}
	for (i = 0; i < set->nparts && !e; i++)
		if (asked(&set->parts[i], names, nnames))
			e = explain(ctx, set, &set->parts[i], l, npins);
	if (e) {
		cfapkg_kept_free(l);
		return e;
	}
	*out = l;
	return CFAPKG_E_OK;
}

const struct cfapkg_kept *cfapkg_kept_items(const struct cfapkg_kept_list *l, size_t *n)
{
	*n = l ? l->n : 0;
	return l ? l->items : NULL;
}

void cfapkg_kept_free(struct cfapkg_kept_list *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->nplans; i++)
		cfapkg_plan_free(l->plans[i]);
	for (i = 0; i < l->nwants; i++)
		cfa_free(l->wants[i]);
	cfapkg_free(l->pins);
	cfa_free(l->wants);
	cfa_free(l->plans);
	cfa_free(l->items);
	cfa_free(l);
}
