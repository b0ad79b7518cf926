/*
 * hip_runtime.c - the HIP runtime as a name the solver can satisfy.
 *
 * The runtime a machine has (the fact "hip_runtime": amdhip64_6.dll in
 * System32, libamdhip64.so.6 under /opt/rocm) becomes one solvable per
 * major of the fact's recipe; a packaged ROCm (Linux, where the runtime is
 * user space) provides "amdhip64 = N" itself.  A process loads one HIP
 * runtime, so every provider of major N conflicts with every other major:
 * a set that mixes 6 and 7 is refused, and explain.c says so.
 */
#include <string.h>

#include "core/dep.h"
#include "core/version.h"
#include "solver/solver.h"

bool cfa_is_hip_runtime(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	return plan->hip_runtime_name && strcmp(v->recipe->name, plan->hip_runtime_name) == 0;
}

/* The provide "amdhip64 = N" of v on this machine, or NULL. */
static const struct cfapkg_dep *runtime_provide(const struct cfapkg_plan *plan,
                                                const struct cfapkg_version *v)
{
	size_t i;

	for (i = 0; plan->hip_runtime_name && i < v->nprovides; i++) {
		const struct cfapkg_dep *d = &v->provides[i];
		/* Only a provide of one version ("= N") names a major; a
		 * provide without one says nothing about which runtime it
		 * is. */
		if (strcmp(d->name, plan->hip_runtime_name) == 0 && d->range->nclauses == 1 &&
		    cfa_dep_applies(&plan->facts, d))
			return d;
	}
	return NULL;
}

/* An installed part's "amdhip64 == N": it runs on the machine's major N. */
static const struct cfapkg_dep *runtime_need(const struct cfapkg_plan *plan,
                                             const struct cfapkg_version *v)
{
	size_t i;

	for (i = 0; v->recipe->kind == CFAPKG_KIND_SYSTEM && i < v->nrequires; i++) {
		const struct cfapkg_dep *d = &v->requires[i];
		if (plan->hip_runtime_name && strcmp(d->name, plan->hip_runtime_name) == 0 &&
		    d->range->nclauses == 1 && d->range->clauses[0].op == CFA_OP_EQ &&
		    cfa_dep_applies(&plan->facts, d))
			return d;
	}
	return NULL;
}

int cfa_hip_major(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	const struct cfapkg_dep *d;

	/* The fact's recipe is versioned by the runtime's major, so its first
	 * number is the answer. */
	if (cfa_is_hip_runtime(plan, v))
		return (int)v->parsed->rel[0];
	if (!(d = runtime_provide(plan, v)))
		d = runtime_need(plan, v);
	return d ? (int)d->range->clauses[0].ver.rel[0] : -1;
}

bool cfa_hip_fact_has(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	size_t i;

	for (i = 0; i < plan->facts.nhip_runtimes; i++)
		if (plan->facts.hip_runtimes[i] == v->parsed->rel[0])
			return true;
	return false;
}

/* No list means every OS or architecture. */
static bool runs_here(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	return (v->nos == 0 || cfa_in_list(plan->facts.os, v->os, v->nos)) &&
	       (v->narch == 0 || cfa_in_list(plan->facts.arch, v->arch, v->narch));
}

bool cfa_hip_packaged_provider(const struct cfapkg_plan *plan, const struct cfa_range *need)
{
	const struct cfapkg_ctx *ctx = plan->ctx;
	size_t i, j;

	for (i = 0; i < ctx->nrecipes; i++) {
		/* A system part is what the machine has; only a part cfapkg
		 * installs can bring the runtime instead. */
		if (ctx->recipes[i]->kind == CFAPKG_KIND_SYSTEM)
			continue;
		for (j = 0; j < ctx->recipes[i]->nversions; j++) {
			const struct cfapkg_version *v = &ctx->recipes[i]->versions[j];
			const struct cfapkg_dep *d = runtime_provide(plan, v);
			if (d && runs_here(plan, v) && cfa_range_match(need, &d->range->clauses[0].ver))
				return true;
		}
	}
	return false;
}
