/*
 * passed.c - what a solved plan left aside because it cannot be installed
 * here: for each installable part it chose, the newer versions of the
 * same recipe that the machine's facts and the request allow but whose
 * source for this OS is "unavailable" (no pinned download).  The first
 * solve forbids those versions while an installable set fits (solve.c);
 * this says which ones, so that a user who expected the newest version
 * learns why it is not in the plan.
 */
#include <string.h>

#include "core/mem.h"
#include "solver/solver.h"

/* A fact rules v out (another GPU, OS, driver, experimental here): then it
 * was never a candidate, pinned or not. */
static bool ruled_out(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	size_t i;

	for (i = 0; i < plan->nmarkers; i++)
		if (plan->markers[i].version == v)
			return true;
	return false;
}

/* Every request and pin on the version's name admits it. */
static bool admitted(const struct cfa_range *r, size_t n, const struct cfapkg_version *v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(r[i].name, v->recipe->name) == 0 && !cfa_range_match(&r[i], v->parsed))
			return false;
	return true;
}

/* Passed over for want of a pin: newer than what was chosen, validated
 * here at least as well (else the chosen one wins its tier anyway), a
 * candidate on every other count, and its source here marked
 * "unavailable" (a version with no source at all for this OS is ruled out
 * by a fact). */
static const char *passed_why(const struct cfapkg_plan *plan, const struct cfapkg_version *v,
                              const struct cfapkg_plan_item *chosen)
{
	const struct cfapkg_source *s = cfapkg_version_source(v, plan->facts.os, plan->facts.arch);

	if (!s || !s->unavailable || cfa_ver_cmp(v->parsed, chosen->version->parsed) <= 0 ||
	    cfapkg_version_status(plan->ctx, v, plan->facts.gfx) > chosen->status ||
	    ruled_out(plan, v) || !admitted(plan->specs, plan->nspecs, v) ||
	    !admitted(plan->pins, plan->npins, v))
		return NULL;
	return s->unavailable;
}

static enum cfapkg_err note(struct cfapkg_plan *plan, const struct cfapkg_version *v,
                            const struct cfapkg_version *chosen, const char *why, size_t *cap)
{
	struct cfapkg_passed_over *p;

	if (cfa_grow((void **)&plan->passed, cap, plan->npassed + 1, sizeof(*plan->passed)) != 0)
		return cfa_nomem(plan->ctx);
	p = &plan->passed[plan->npassed++];
	p->version = v;
	p->chosen = chosen;
	p->why = why;
	p->platform = cfapkg_version_source(v, plan->facts.os, plan->facts.arch)->platform;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_passed_over(struct cfapkg_plan *plan)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, k, cap = 0;

	for (i = 0; i < plan->nitems && !e; i++) {
		const struct cfapkg_plan_item *it = &plan->items[i];
		const struct cfapkg_recipe *r = it->version->recipe;
		if (r->kind != CFAPKG_KIND_PACKAGE || !it->installable)
			continue;
		/* Versions are newest first: the ones before the chosen one. */
		for (k = 0; k < r->nversions && &r->versions[k] != it->version && !e; k++) {
			const char *why = passed_why(plan, &r->versions[k], it);
			if (why)
				e = note(plan, &r->versions[k], it->version, why, &cap);
		}
	}
	return e;
}

size_t cfapkg_plan_passed_over_count(const struct cfapkg_plan *plan)
{
	return plan->npassed;
}

const struct cfapkg_passed_over *cfapkg_plan_passed_over(const struct cfapkg_plan *plan, size_t i)
{
	return i < plan->npassed ? &plan->passed[i] : NULL;
}
