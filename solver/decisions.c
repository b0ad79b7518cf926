/*
 * decisions.c - what the solver decided, in words (cfapkg --verbose): for
 * each part of a solved plan, why it is in the plan (the request, or the
 * part whose requirement it meets, as libsolv recorded the decision), how
 * the policy ranked it (solve.c: installed, validated, candidate), and why
 * each other version of its recipe was passed over (a fact rules it out,
 * it is experimental, a pin, it cannot be fetched, or it ranks lower).
 */
#include <string.h>

#include <solv/solver.h>

#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "solver/solver.h"

#define PASSED_MAX 6 /* other versions named per part; the rest are counted */

/* The solvable a version became; 0 when the version is not in the pool (a
 * recipe outside the requests' closure). */
static Id solvable_of(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	Id p;

	/* A walk of the pool for each part: decisions are asked for only with
	 * --verbose, so no other run pays for it. */
	for (p = plan->repo->start; p < plan->repo->end; p++)
		if (cfa_solvable_version(plan, p) == v)
			return p;
	return 0;
}

/* Why libsolv put p in: "your request zluda", "libtorch-cuda 2.3.0+cu118
 * requires cublas". */
static void reason_text(const struct cfapkg_plan *plan, Id p, struct cfa_buf *b)
{
	Id info = 0, from = 0, to = 0, dep = 0;
	int reason = solver_describe_decision(plan->solv, p, &info);
	SolverRuleinfo type = info ? solver_ruleinfo(plan->solv, info, &from, &to, &dep) : 0;
	const struct cfapkg_version *by = cfa_solvable_version(plan, from);

	/* A job's rule is the user's request; a requires rule names the part
	 * that pulled p in.  Anything else (a weak choice among equals) has no
	 * rule worth naming. */
	if (reason == SOLVER_REASON_RESOLVE_JOB || type == SOLVER_RULE_JOB)
		cfa_buf_printf(b, "your request %s", dep ? cfa_dep_text(plan, dep) : "");
	else if (type == SOLVER_RULE_PKG_REQUIRES && by)
		cfa_buf_printf(b, "%s %s requires %s", by->recipe->name, by->version,
		               cfa_dep_text(plan, dep));
	else
		cfa_buf_printf(b, "the solver's choice");
}

/* Whether v is one of the versions the environment already has: the plan
 * prefers those, so that an install does not move what it need not. */
static bool preferred(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	size_t i;

	for (i = 0; i < plan->nprefer; i++)
		if (strcmp(plan->prefer[i].name, v->recipe->name) == 0 &&
		    cfa_range_match(&plan->prefer[i], v->parsed))
			return true;
	return false;
}

/* Its rank in the policy (solve.c's tiers). */
static void rank_text(const struct cfapkg_plan *plan, Id p, const struct cfapkg_version *v,
                      struct cfa_buf *b)
{
	enum cfapkg_status st = cfa_solvable_status(plan, p);

	if (v->recipe->kind == CFAPKG_KIND_SYSTEM && cfa_system_present(plan, v))
		cfa_buf_printf(b, "; installed on this machine");
	if (preferred(plan, v))
		cfa_buf_printf(b, "; installed in the environment, kept");
	cfa_buf_printf(b, "; %s on %s", cfapkg_status_name(st), plan->facts.gfx);
}

/* The fact a marker requirement of q stands for, or NULL.
 * The first marker among q's requirements: the fact that ruled q out before
 * libsolv ever compared it. */
static const struct cfa_marker *marker(const struct cfapkg_plan *plan, Id q)
{
	const Solvable *s = plan->pool->solvables + q;
	const Id *dp;

	if (!s->requires)
		return NULL;
	for (dp = s->repo->idarraydata + s->requires; *dp; dp++)
		if (cfa_marker_of(plan, *dp))
			return cfa_marker_of(plan, *dp);
	return NULL;
}

static void marker_text(const struct cfapkg_plan *plan, const struct cfa_marker *m,
                        struct cfa_buf *b)
{
	const struct cfapkg_facts *f = &plan->facts;

	switch (m->kind) {
	case CFA_MK_GPU:
		cfa_buf_printf(b, "does not support %s", f->gfx);
		break;
	case CFA_MK_OS:
		cfa_buf_printf(b, "not available for %s-%s", f->os, f->arch ? f->arch : "unknown");
		break;
	case CFA_MK_SYSTEM:
		cfa_buf_printf(b, "not installed on this machine");
		break;
	case CFA_MK_DRIVER:
		cfa_buf_printf(b, "needs %s (driver %s)", m->dep ? m->dep->text : "a newer driver",
		               f->driver ? f->driver : "unknown");
		break;
	case CFA_MK_HIP_RUNTIME:
		cfa_buf_printf(b, "needs the HIP runtime %s", m->dep ? m->dep->text : "");
		break;
	case CFA_MK_EXPERIMENTAL:
		cfa_buf_printf(b, "experimental on %s (--allow-experimental)", f->gfx);
		break;
	case CFA_MK_GLIBC:
		cfa_buf_printf(b, "needs %s (glibc %s)", m->dep ? m->dep->text : "a newer C library",
		               f->glibc ? f->glibc : "unknown");
		break;
	}
}

/* A pin rules out the versions of its name outside its range. */
static bool pinned_out(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	size_t i;

	for (i = 0; i < plan->npins; i++)
		if (strcmp(plan->pins[i].name, v->recipe->name) == 0 &&
		    !cfa_range_match(&plan->pins[i], v->parsed))
			return true;
	return false;
}

/* Why version q lost to the chosen p.
 * The reasons are tried from the hardest to the softest: a fact, a pin, no way
 * to install it, a lower status, then only being older. */
static void passed_text(const struct cfapkg_plan *plan, Id q, Id p, struct cfa_buf *b)
{
	const struct cfapkg_version *v = cfa_solvable_version(plan, q);
	const struct cfapkg_version *won = cfa_solvable_version(plan, p);
	const struct cfa_marker *m = marker(plan, q);
	const char *why = NULL;

	cfa_buf_printf(b, "%s ", v->version);
	if (m)
		marker_text(plan, m, b);
	else if (pinned_out(plan, v))
		cfa_buf_printf(b, "ruled out by a pin");
	else if (!cfa_installable(plan, v, &why))
		cfa_buf_printf(b, "cannot be installed: %s", why ? why : "?");
	else if (cfa_solvable_status(plan, q) != cfa_solvable_status(plan, p))
		cfa_buf_printf(b, "%s here, ranked below %s", cfapkg_status_name(
		               cfa_solvable_status(plan, q)), cfapkg_status_name(
		               cfa_solvable_status(plan, p)));
	else if (cfa_ver_cmp(v->parsed, won->parsed) < 0)
		cfa_buf_printf(b, "older");
	else
		cfa_buf_printf(b, "does not fit with the rest of the plan");
}

/* The other versions of p's recipe, at most PASSED_MAX named; the rest are
 * only counted, so one line stays readable. */
static void passed_over(const struct cfapkg_plan *plan, Id p, struct cfa_buf *b)
{
	const struct cfapkg_version *v = cfa_solvable_version(plan, p);
	size_t shown = 0, more = 0;
	Id q;

	for (q = plan->repo->start; q < plan->repo->end; q++) {
		const struct cfapkg_version *o = cfa_solvable_version(plan, q);
		if (q == p || !o || o->recipe != v->recipe)
			continue;
		if (shown == PASSED_MAX) {
			more++;
			continue;
		}
		cfa_buf_printf(b, "%s", shown++ ? "; " : "; passed over: ");
		passed_text(plan, q, p, b);
	}
	if (more)
		cfa_buf_printf(b, "; and %lu more", (unsigned long)more);
}

enum cfapkg_err cfapkg_plan_decisions(const struct cfapkg_plan *plan,
                                      void (*line)(void *arg, const char *text), void *arg)
{
	struct cfa_buf b;
	size_t i;

	struct cfapkg_plan *again = NULL;
	enum cfapkg_err e;

	/* An unsolved plan has problems, not decisions: nothing to say
	 * here. */
	if (!plan->solved)
		return CFAPKG_E_OK;
	/* An answer recalled from an earlier solve (plan_memo.c) has no
	 * solver to ask: the same problem is solved once more for it. */
	if (!plan->solv) {
		e = cfa_plan_solve_again(plan, &again);
		if (!e && again->solv)
			e = cfapkg_plan_decisions(again, line, arg);
		cfapkg_plan_free(again);
		return e;
	}
	for (i = 0; i < plan->nitems; i++) {
		const struct cfapkg_version *v = plan->items[i].version;
		Id p = solvable_of(plan, v);
		if (!p)
			continue;
		/* One line per part, handed to the caller as it is made. */
		cfa_buf_init(&b, 8192);
		cfa_buf_printf(&b, "%s %s: ", v->recipe->name, v->version);
		reason_text(plan, p, &b);
		rank_text(plan, p, v, &b);
		passed_over(plan, p, &b);
		if (b.failed) {
			cfa_buf_fini(&b);
			return cfa_nomem(plan->ctx);
		}
		line(arg, cfa_buf_str(&b));
		cfa_buf_fini(&b);
	}
	return CFAPKG_E_OK;
}
