/*
 * explain.c - libsolv's problem rules to problem records.
 *
 * Every rule of every problem becomes one record of one type (struct
 * cfapkg_problem); markers become the machine fact they stand for.  Records
 * that differ only in the version of the blocked part are merged, so "HIP
 * SDK 6.4.2, 6.2.4 do not support gfx1150" is one record.  Sentences are
 * the front end's business.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <solv/policy.h>
#include <solv/problems.h>
#include <solv/solver.h>

#include "core/gpus.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "solver/solver.h"

/* One rule's record before it is merged; its strings are borrowed until
 * emit_to copies them into the plan's arena. */
struct rec {
	enum cfapkg_problem_kind kind;
	const struct cfapkg_version *v;   /* blocked version, or NULL */
	const char *package, *dep, *other, *fact, *have, *alternatives, *hint, *raw;
};

/* Into the plan's arena, so a record lives as long as the plan and needs no
 * freeing of its own. */
static const char *dup(struct cfapkg_plan *plan, const char *s)
{
	return s ? cfa_arena_strdup(&plan->arena, s) : NULL;
}

/* Two strings that are both NULL count as the same field. */
static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Whether a ", "-joined version list names ver whole: "6.4" is not in
 * "6.4.2, 6.2.4". */
static bool lists_version(const char *list, const char *ver)
{
	size_t n = strlen(ver);
	const char *at;

	for (at = list; (at = strstr(at, ver)) != NULL; at += n)
		if ((at == list || at[-1] == ' ') && (at[n] == '\0' || at[n] == ','))
			return true;
	return false;
}

/* Merges into an equal record of the same group, or appends: to the
 * problems, or with passed to the versions a solved plan passed over. */
static enum cfapkg_err emit_to(struct cfapkg_plan *plan, bool passed, unsigned group,
                               const struct rec *r)
{
	const char *ver = r->v ? r->v->version : NULL;
	struct cfapkg_problem **list = passed ? &plan->passed : &plan->problems;
	size_t *n = passed ? &plan->npassed : &plan->nproblems;
	size_t *cap = passed ? &plan->passed_cap : &plan->problems_cap;
	struct cfapkg_problem *p;
	size_t i;

	for (i = 0; i < *n; i++) {
		p = &(*list)[i];
		if (p->group != group || p->kind != r->kind || !same(p->package, r->package) ||
		    !same(p->dep, r->dep) || !same(p->other, r->other) || !same(p->fact, r->fact))
			continue;
		/* The blocked versions are kept in libsolv's order, joined by
		 * ", ".  When the joined text cannot be made, the record keeps
		 * the versions it had. */
		if (ver && p->versions && !lists_version(p->versions, ver)) {
			struct cfa_buf b;
			cfa_buf_init(&b, 65536);
			cfa_buf_printf(&b, "%s, %s", p->versions, ver);
			p->versions = b.failed ? p->versions : dup(plan, cfa_buf_str(&b));
			cfa_buf_fini(&b);
		}
		return CFAPKG_E_OK;
	}
	if (cfa_grow((void **)list, cap, *n + 1, sizeof(**list)) != 0)
		return cfa_nomem(plan->ctx);
	p = &(*list)[(*n)++];
	memset(p, 0, sizeof(*p));
	p->kind = r->kind;
	p->group = group;
	p->package = dup(plan, r->package);
	p->versions = dup(plan, ver);
	p->dep = dup(plan, r->dep);
	p->other = dup(plan, r->other);
	p->fact = dup(plan, r->fact);
	p->have = dup(plan, r->have);
	p->alternatives = dup(plan, r->alternatives);
	p->hint = dup(plan, r->hint);
	p->raw = dup(plan, r->raw);
	return CFAPKG_E_OK;
}

static enum cfapkg_err emit(struct cfapkg_plan *plan, unsigned group, const struct rec *r)
{
	return emit_to(plan, false, group, r);
}

/* Versions of a recipe that pass a test, newest first, comma-separated.
 * NULL when no version passes, so that the record has no alternatives rather
 * than an empty list. */
static const char *versions_where(struct cfapkg_plan *plan, const struct cfapkg_recipe *r,
                                  bool (*ok)(const struct cfapkg_plan *,
                                             const struct cfapkg_version *))
{
	struct cfa_buf b;
	const char *out;
	size_t i;

	cfa_buf_init(&b, 65536);
	for (i = 0; r && i < r->nversions; i++)
		if (!ok || ok(plan, &r->versions[i]))
			cfa_buf_printf(&b, "%s%s", b.len ? ", " : "", r->versions[i].version);
	out = b.len && !b.failed ? dup(plan, cfa_buf_str(&b)) : NULL;
	cfa_buf_fini(&b);
	return out;
}

/* The test for versions_where: the versions that would run on the GPU. */
static bool fits_gpu(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	return cfapkg_version_supports_gfx(v, plan->facts.gfx);
}

/* The installed HIP SDKs for the record; "none" when there are none. */
static const char *list_sdks(struct cfapkg_plan *plan)
{
	struct cfa_buf b;
	const char *out;
	size_t i;

	/* No ceiling but memory: the facts hold every SDK, and so does this. */
	cfa_buf_init(&b, SIZE_MAX);
	for (i = 0; i < plan->facts.nhip_sdks; i++)
		cfa_buf_printf(&b, "%s%s", i ? ", " : "", plan->facts.hip_sdks[i]);
	if (plan->facts.nhip_runtimes == 0 && plan->facts.nhip_sdks == 0)
		cfa_buf_adds(&b, "none");
	out = b.failed ? NULL : dup(plan, b.len ? cfa_buf_str(&b) : "none");
	cfa_buf_fini(&b);
	return out;
}

/* The driver's HIP runtimes as the files that carry them ("amdhip64_6"). */
static const char *list_runtimes(struct cfapkg_plan *plan)
{
	struct cfa_buf b;
	const char *out;
	size_t i;

	cfa_buf_init(&b, SIZE_MAX);
	for (i = 0; i < plan->facts.nhip_runtimes; i++)
		cfa_buf_printf(&b, "%samdhip64_%u", i ? ", " : "", plan->facts.hip_runtimes[i]);
	out = b.failed ? NULL : dup(plan, b.len ? cfa_buf_str(&b) : "none");
	cfa_buf_fini(&b);
	return out;
}

/* The install hint of the system recipe behind a fact ("driver"). */
static const char *fact_hint(const struct cfapkg_plan *plan, const char *fact)
{
	size_t i;

	for (i = 0; i < plan->ctx->nrecipes; i++) {
		const struct cfapkg_recipe *r = plan->ctx->recipes[i];
		if (r->fact && strcmp(r->fact, fact) == 0 && r->install_hint)
			return r->install_hint;
	}
	return NULL;
}

/* The GPU's generation ("RDNA4") for the record; NULL for a target the GPU
 * table lacks. */
static const char *generation(const struct cfapkg_plan *plan)
{
	const struct cfapkg_gpu_target *t = cfa_gpus_target(plan->ctx, plan->facts.gfx);
	return t ? t->generation : NULL;
}

/* A marker back into the fact it stands for.  kinds[] is indexed by enum
 * cfa_marker_kind: the two lists must keep the same order. */
static void marker_rec(struct cfapkg_plan *plan, const struct cfa_marker *m, struct rec *r)
{
	static const enum cfapkg_problem_kind kinds[] = {
		CFAPKG_PROBLEM_GPU_UNSUPPORTED, CFAPKG_PROBLEM_OS_UNSUPPORTED,
		CFAPKG_PROBLEM_SYSTEM_MISSING, CFAPKG_PROBLEM_DRIVER_TOO_OLD,
		CFAPKG_PROBLEM_HIP_RUNTIME, CFAPKG_PROBLEM_EXPERIMENTAL,
		CFAPKG_PROBLEM_GLIBC_TOO_OLD};
	const struct cfapkg_recipe *recipe = m->version->recipe;

	r->kind = kinds[m->kind];
	r->v = m->version;
	r->package = recipe->name;
	r->dep = m->dep ? m->dep->text : NULL;
	switch (m->kind) {
	/* The versions that would run on this GPU are the way out, so they are
	 * named. */
	case CFA_MK_GPU:
		r->fact = plan->facts.gfx;
		r->have = generation(plan);
		r->alternatives = versions_where(plan, recipe, fits_gpu);
		break;
	case CFA_MK_OS:
		r->fact = plan->facts.os;
		r->have = plan->facts.arch;
		break;
	case CFA_MK_SYSTEM:
		r->have = list_sdks(plan);
		r->hint = recipe->install_hint;
		break;
	case CFA_MK_DRIVER:
		r->fact = "driver";
		r->have = plan->facts.driver;
		r->hint = fact_hint(plan, "driver");
		break;
	case CFA_MK_HIP_RUNTIME:
		r->fact = "hip_runtime";
		r->have = list_runtimes(plan);
		r->hint = fact_hint(plan, "hip_runtime");
		break;
	case CFA_MK_EXPERIMENTAL:
		r->fact = plan->facts.gfx;
		r->have = generation(plan);
		break;
	case CFA_MK_GLIBC:
		r->fact = "glibc";
		r->have = plan->facts.glibc;
		r->hint = fact_hint(plan, "glibc");
		break;
	}
}

/* The same record for a version a solved plan passed over: it goes to
 * the plan's passed list, all in group 0. */
enum cfapkg_err cfa_passed_marker(struct cfapkg_plan *plan, const struct cfa_marker *m)
{
	struct rec r;

	memset(&r, 0, sizeof(r));
	marker_rec(plan, m, &r);
	return emit_to(plan, true, 0, &r);
}

enum cfapkg_err cfa_passed_record(struct cfapkg_plan *plan, enum cfapkg_problem_kind kind,
                                  const struct cfapkg_version *v, const char *dep,
                                  const char *alternatives, const char *hint)
{
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.v = v;
	r.package = v->recipe->name;
	r.dep = dep;
	r.fact = plan->facts.gfx;
	r.have = generation(plan);
	r.alternatives = alternatives;
	r.hint = hint;
	return emit_to(plan, true, 0, &r);
}

/* recipe's note about name that applies on the planned OS, or NULL. */
static const char *recipe_note(const struct cfapkg_plan *plan, const struct cfapkg_recipe *r,
                               const char *name)
{
	size_t j, k;

	for (j = 0; j < r->nnotes; j++) {
		const struct cfapkg_note *n = &r->notes[j];
		bool os_ok = n->nos == 0;
		for (k = 0; k < n->nos; k++)
			os_ok |= strcmp(n->os[k], plan->facts.os) == 0;
		if (os_ok && strcmp(n->name, name) == 0)
			return n->text;
	}
	return NULL;
}

/* The first recipe (in load order) with a note on name wins. */
static const char *note_for(const struct cfapkg_plan *plan, const char *name)
{
	const char *text = NULL;
	size_t i;

	for (i = 0; i < plan->ctx->nrecipes && !text; i++)
		text = recipe_note(plan, plan->ctx->recipes[i], name);
	return text;
}

/* Why a version needs name: its own recipe's note says it best (an
 * overlay built for one SDK), else any recipe's note about the name. */
static const char *requirement_note(const struct cfapkg_plan *plan,
                                    const struct cfapkg_version *v, const char *name)
{
	const char *own = v ? recipe_note(plan, v->recipe, name) : NULL;

	return own ? own : note_for(plan, name);
}

/* The name part of a dependency string ("libtorch-cuda>=2.3" -> name).
 * Cut at the first operator character: recipe names hold none. */
static const char *dep_name(struct cfapkg_plan *plan, const char *dep)
{
	size_t n = strcspn(dep, "<>=!");
	return cfa_arena_strndup(&plan->arena, dep, n);
}

static void request_rec(struct cfapkg_plan *plan, Id dep, struct rec *r)
{
	/* pool_dep2str's buffer is reused by the next call: copy at once. */
	const char *text = dup(plan, cfa_dep_text(plan, dep));
	const char *name = dep_name(plan, text);
	const struct cfapkg_recipe *recipe = cfapkg_recipe_find(plan->ctx, name);
	char *like;

	r->dep = text;
	r->package = name;
	if (recipe) {
		r->kind = CFAPKG_PROBLEM_NO_VERSION;
		r->alternatives = versions_where(plan, recipe, NULL);
		return;
	}
	/* A name no recipe has is a typo or a missing channel: the notes may
	 * say where it comes from, and the suggestions what was meant. */
	r->kind = CFAPKG_PROBLEM_UNKNOWN_NAME;
	r->hint = note_for(plan, name);
	/* The library's one "did you mean", shared with info and pin. */
	like = cfapkg_recipe_suggest(plan->ctx, name);
	r->alternatives = dup(plan, like);
	cfa_free(like);
}

/* Job rules: pins explain themselves; an install job is the request. */
static bool job_rec(struct cfapkg_plan *plan, Id how, Id what, struct rec *r)
{
	size_t i;

	if ((how & SOLVER_JOBMASK) == SOLVER_LOCK) {
		/* A pin's lock names its versions through a whatprovides offset. */
		Id p = plan->pool->whatprovidesdata[what];
		const struct cfapkg_version *v = cfa_solvable_version(plan, p);
		r->kind = CFAPKG_PROBLEM_PINNED;
		r->package = v ? v->recipe->name : NULL;
		for (i = 0; v && i < plan->npins; i++)
			if (strcmp(plan->pins[i].name, v->recipe->name) == 0)
				r->dep = plan->pins[i].text;
		return true;
	}
	/* Only pins (locks) and install jobs are explained: a rule from
	 * any other job adds no record. */
	if ((how & SOLVER_JOBMASK) != SOLVER_INSTALL)
		return false;
	r->kind = CFAPKG_PROBLEM_REQUIRES;
	/* The request has no package of its own: the front end names it so. */
	r->package = "your request";
	r->dep = dup(plan, cfa_dep_text(plan, what));
	return true;
}

/* Two parts of different HIP runtime majors: a conflict whose fact is the
 * HIP runtime, naming both parts and both majors. */
static bool runtime_clash(struct cfapkg_plan *plan, const struct cfapkg_version *v,
                          const struct cfapkg_version *o, struct rec *r)
{
	int a = cfa_hip_major(plan, v), b = cfa_hip_major(plan, o);
	char *other, *have;

	if (a < 0 || b < 0 || a == b)
		return false;
	other = cfa_aprintf("%s %s", o->recipe->name, o->version);
	have = cfa_aprintf("%d and %d", a, b);
	r->kind = CFAPKG_PROBLEM_CONFLICT;
	r->fact = "hip_runtime";
	r->other = other ? dup(plan, other) : o->recipe->name;
	r->have = have ? dup(plan, have) : NULL;
	r->dep = plan->hip_runtime_name;
	r->hint = "one process loads one HIP runtime, so an environment keeps to one major: "
	          "choose parts built for the same one";
	cfa_free(other);
	cfa_free(have);
	return true;
}

/* One libsolv rule to one record.  source, target and dep mean what
 * solver_ruleinfo makes them mean for each rule type. */
static enum cfapkg_err rule_rec(struct cfapkg_plan *plan, unsigned group, Id rid)
{
	Id source = 0, target = 0, dep = 0;
	SolverRuleinfo type = solver_ruleinfo(plan->solv, rid, &source, &target, &dep);
	const struct cfa_marker *m;
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.v = cfa_solvable_version(plan, source);
	r.package = r.v ? r.v->recipe->name : NULL;
	switch (type) {
	case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
		if ((m = cfa_marker_of(plan, dep)) != NULL) {
			marker_rec(plan, m, &r);
			break;
		}
		r.kind = CFAPKG_PROBLEM_MISSING_DEP;
		r.dep = dup(plan, cfa_dep_text(plan, dep));
		r.hint = note_for(plan, dep_name(plan, r.dep));
		break;
	case SOLVER_RULE_PKG_REQUIRES:
		r.kind = CFAPKG_PROBLEM_REQUIRES;
		r.dep = dup(plan, cfa_dep_text(plan, dep));
		r.hint = requirement_note(plan, r.v, dep_name(plan, r.dep));
		break;
	/* A conflict between HIP runtime majors is said as such; any other is
	 * a plain conflict (or two versions of one name). */
	case SOLVER_RULE_PKG_CONFLICTS:
	case SOLVER_RULE_PKG_SAME_NAME: {
		const struct cfapkg_version *o = cfa_solvable_version(plan, target);
		if (r.v && o && runtime_clash(plan, r.v, o, &r))
			break;
		r.kind = type == SOLVER_RULE_PKG_SAME_NAME ? CFAPKG_PROBLEM_SAME_NAME
		                                           : CFAPKG_PROBLEM_CONFLICT;
		r.dep = type == SOLVER_RULE_PKG_CONFLICTS ? dup(plan, cfa_dep_text(plan, dep))
		                                          : NULL;
		r.other = o ? o->version : NULL;
		if (type == SOLVER_RULE_PKG_CONFLICTS && o)
			r.other = o->recipe->name;
		break;
	}
	case SOLVER_RULE_JOB_NOTHING_PROVIDES_DEP:
	case SOLVER_RULE_JOB_UNKNOWN_PACKAGE:
		r.v = NULL;
		request_rec(plan, dep, &r);
		break;
	case SOLVER_RULE_JOB:
		r.v = NULL;
		/* For job rules libsolv reports the job's flags and its target. */
		if (!job_rec(plan, target, dep, &r))
			return CFAPKG_E_OK;
		break;
	/* A rule type not handled above keeps libsolv's own sentence, so
	 * nothing is silently dropped. */
	default:
		r.kind = CFAPKG_PROBLEM_OTHER;
		r.raw = dup(plan, solver_problemruleinfo2str(plan->solv, type, source, target, dep));
		break;
	}
	return emit(plan, group, &r);
}

/* Causes before context: what blocks, then the chain that led there. */
static int order(const void *a, const void *b)
{
	const struct cfapkg_problem *x = a, *y = b;
	int cx = x->kind == CFAPKG_PROBLEM_REQUIRES, cy = y->kind == CFAPKG_PROBLEM_REQUIRES;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (cx != cy)
		return cx - cy;
	return (int)x->kind - (int)y->kind;
}

/* A stable sort (insertion: a plan has a few dozen records): records of
 * one group and kind keep the order libsolv reported them in.  qsort is
 * not stable on every C library (msvcrt's is not), and the explanation
 * must read the same whichever system runs cfapkg. */
static void sort_problems(struct cfapkg_problem *p, size_t n)
{
	size_t i, k;

	for (i = 1; i < n; i++) {
		struct cfapkg_problem x = p[i];
		for (k = i; k > 0 && order(&p[k - 1], &x) > 0; k--)
			p[k] = p[k - 1];
		p[k] = x;
	}
}

/* libsolv numbers its problems from 1; each problem's rules form one
 * group of records, in that order. */
enum cfapkg_err cfa_explain(struct cfapkg_plan *plan)
{
	Solver *solv = plan->solv;
	Id problem, count = solver_problem_count(solv);
	enum cfapkg_err e = CFAPKG_E_OK;
	Queue rules;
	int i;

	queue_init(&rules);
	for (problem = 1; problem <= count && !e; problem++) {
		queue_empty(&rules);
		solver_findallproblemrules(solv, problem, &rules);
		for (i = 0; i < rules.count && !e; i++)
			e = rule_rec(plan, (unsigned)problem, rules.elements[i]);
	}
	queue_free(&rules);
	if (!e)
		sort_problems(plan->problems, plan->nproblems);
	return e;
}
