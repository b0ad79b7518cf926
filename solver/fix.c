/*
 * fix.c - for a request that does not solve, the fix to lead with: the
 * fewest changes to the machine (a system part to install, a newer
 * driver, a HIP runtime) or to the options (--allow-experimental) that
 * make it solve.  The candidates come from the problem records; a fix is
 * only offered after a solve with it succeeded, so it is never a guess.
 */
#include <string.h>

#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "solver/solver.h"

#define MAX_STEPS 8
#define MAX_CHANGES 3   /* changes combined in one fix */
#define MAX_TRIES 40    /* solves spent looking */

/* "amd-driver>=25.5.1" -> "25.5.1"; "amdhip64==7" -> "7"; false when the
 * requirement names no single version to reach. */
static bool floor_of(const char *dep, const char *op, char *buf, size_t len)
{
	const char *p = dep ? strstr(dep, op) : NULL;

	if (!p)
		return false;
	p += strlen(op);
	/* The version ends where the next clause or a blank starts. */
	return cfa_snprintf(buf, len, "%.*s", (int)strcspn(p, ", "), p) && buf[0];
}

static bool add_step(struct cfapkg_plan *plan, struct cfapkg_plan_fix_step *steps, size_t *n,
                     const char *fact, const char *value, const char *part, const char *hint)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(steps[i].fact, fact) == 0 && strcmp(steps[i].value, value) == 0)
			return true;
	/* Past MAX_STEPS a candidate is dropped, not an error: the search could
	 * not try every mix of more anyway.  The texts are copied into the
	 * plan, as the caller builds them in buffers of its own that do not
	 * outlive the call. */
	if (*n == MAX_STEPS)
		return true;
	steps[*n].fact = fact;
	steps[*n].value = cfa_arena_strdup(&plan->arena, value);
	steps[*n].part = cfa_arena_strdup(&plan->arena, part);
	steps[*n].hint = hint;
	if (!steps[*n].value || !steps[*n].part)
		return false;
	(*n)++;
	return true;
}

/* Each version a system part would need to be ("6.2.4, 6.1.2"). */
static bool system_steps(struct cfapkg_plan *plan, const struct cfapkg_problem *p,
                         struct cfapkg_plan_fix_step *steps, size_t *n)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(plan->ctx, p->package);
	const char *v = p->versions;
	char one[64], part[160];

	/* Only an SDK is offered per version it could be; the driver and the
	 * runtime get their own steps from their own problems. */
	if (!r || !r->fact || strcmp(r->fact, "hip_sdk") != 0)
		return true;
	while (v && *v) {
		size_t len = strcspn(v, ",");
		if (cfa_snprintf(one, sizeof(one), "%.*s", (int)len, v) &&
		    cfa_snprintf(part, sizeof(part), "%s %s", r->name, one) &&
		    !add_step(plan, steps, n, "hip-sdk", one, part, r->install_hint))
			return false;
		v += len;
		v += strspn(v, ", ");
	}
	return true;
}

/* The changes the problems point at, in the order they were reported. */
static bool candidate_steps(struct cfapkg_plan *plan, struct cfapkg_plan_fix_step *steps,
                            size_t *n)
{
	char value[64], part[160];
	size_t i;
	bool ok = true;

	for (i = 0; i < plan->nproblems && ok; i++) {
		const struct cfapkg_problem *p = &plan->problems[i];
		if (p->kind == CFAPKG_PROBLEM_EXPERIMENTAL)
			ok = add_step(plan, steps, n, "experimental", "yes", "--allow-experimental", NULL);
		else if (p->kind == CFAPKG_PROBLEM_SYSTEM_MISSING)
			ok = system_steps(plan, p, steps, n);
		else if (p->kind == CFAPKG_PROBLEM_DRIVER_TOO_OLD && floor_of(p->dep, ">=", value,
		                                                              sizeof(value)) &&
		         cfa_snprintf(part, sizeof(part), "an AMD driver %s or newer", value))
			ok = add_step(plan, steps, n, "driver", value, part, p->hint);
		else if (p->kind == CFAPKG_PROBLEM_HIP_RUNTIME && floor_of(p->dep, "==", value,
		                                                           sizeof(value)) &&
		         cfa_snprintf(part, sizeof(part), "the HIP runtime %s in the driver", value))
			ok = add_step(plan, steps, n, "hip-runtime", value, part, p->hint);
	}
	return ok;
}

/* Whether the request solves with the steps picked (bits of mask). */
static bool solves_with(struct cfapkg_plan *plan, const struct cfapkg_plan_fix_step *steps,
                        size_t n, unsigned mask, const struct cfa_plan_request *req)
{
	struct cfapkg_plan_opts opts = req->opts ? *req->opts : (struct cfapkg_plan_opts){0};
	/* Copies: a try changes its own facts and options, never the plan's. */
	struct cfapkg_facts f = {0};
	bool solved;
	size_t i;

	/* A trial that cannot be made (out of memory) does not solve, as a
	 * trial whose solve fails does not. */
	if (cfapkg_facts_copy(&plan->facts, &f))
		return false;
	opts.allow_experimental = plan->allow_experimental;
	for (i = 0; i < n; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (strcmp(steps[i].fact, "experimental") == 0)
			opts.allow_experimental = true;
		else if (cfapkg_facts_set(plan->ctx, &f, steps[i].fact, steps[i].value))
			break;
	}
	solved = i == n && req->try_solve(plan->ctx, &f, req, &opts);
	cfapkg_facts_clear(&f);
	return solved;
}

/* Two changes of one fact (two SDKs, two drivers) are not one fix. */
static bool one_per_fact(const struct cfapkg_plan_fix_step *steps, size_t n, unsigned mask)
{
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = i + 1; k < n; k++)
			if ((mask & (1u << i)) && (mask & (1u << k)) &&
			    strcmp(steps[i].fact, steps[k].fact) == 0)
				return false;
	return true;
}

static unsigned bits(unsigned mask)
{
	unsigned c = 0;

	/* Each step clears the lowest set bit. */
	for (; mask; mask &= mask - 1)
		c++;
	return c;
}

/* Masks in order of size, then of the steps' order: the first that
 * solves is the fix. */
static unsigned search(struct cfapkg_plan *plan, const struct cfapkg_plan_fix_step *steps,
                       size_t n, const struct cfa_plan_request *req)
{
	unsigned size, mask, tries = 0;

	/* Fewest changes first, so that the first fix that solves is the
	 * smallest one; MAX_TRIES bounds the cost, each try being a whole
	 * solve. */
	for (size = 1; size <= MAX_CHANGES && size <= n; size++)
		for (mask = 1; mask < (1u << n) && tries < MAX_TRIES; mask++) {
			if (bits(mask) != size || !one_per_fact(steps, n, mask))
				continue;
			tries++;
			if (solves_with(plan, steps, n, mask, req))
				return mask;
		}
	return 0;
}

enum cfapkg_err cfa_plan_find_fix(struct cfapkg_plan *plan, const struct cfa_plan_request *req)
{
	struct cfapkg_plan_fix_step steps[MAX_STEPS];
	size_t n = 0, i;
	unsigned mask;
	bool clean = !*cfapkg_ctx_error(plan->ctx);

	if (!candidate_steps(plan, steps, &n))
		return cfa_nomem(plan->ctx);
	mask = n ? search(plan, steps, n, req) : 0;
	/* A failed try leaves no detail behind: it is not this plan's error. */
	if (clean)
		cfapkg_ctx_clear_error(plan->ctx);
	for (i = 0; i < n && plan->fix.nsteps < CFAPKG_FIX_STEPS; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (strcmp(steps[i].fact, "experimental") == 0)
			plan->fix.allow_experimental = true;
		else
			plan->fix.steps[plan->fix.nsteps++] = steps[i];
	}
	plan->fix.found = mask != 0;
	return CFAPKG_E_OK;
}

const struct cfapkg_plan_fix *cfapkg_plan_fix(const struct cfapkg_plan *plan)
{
	return plan->fix.found ? &plan->fix : NULL;
}
