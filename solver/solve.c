/*
 * solve.c - requests to jobs, the preference policy, and the plan.
 *
 * Preference, strongest first (libsolv favours later FAVOR jobs more):
 * 1. installable versions validated on this GPU;
 * 2. installable candidates;
 *    within each, a download the recipe pins byte for byte before one
 *    whose pins come from a repository's signed index at install (the
 *    same bytes tomorrow, and offline, against whatever the index says
 *    then: Debian's pinned set before AMD's live repository);
 * 3. anything else, and last of all versions that cannot be installed
 *    (unknown hash, no download) - they can be planned but not fetched;
 * 4. strongest: system parts known to be installed (a ROCm, a HIP SDK, the
 *    driver's HIP runtime) over the packaged parts that stand in for them.
 * Experimental versions are never chosen unless allowed (a marker in the
 * pool, so a refusal explains itself).  Within a tier libsolv picks the
 * highest version.
 *
 * Installability is more than a preference: the first solve forbids every
 * package version that cannot be installed here (LOCK jobs), so while an
 * installable set fits none of them is chosen; only when that fails is
 * the request solved again with them allowed (and disfavoured), so that
 * the plan still shows the answer and what stands in its way.  The newer
 * versions left aside are the plan's "passed over" (passed.c).
 */
#include <stdlib.h>
#include <string.h>

#include <solv/policy.h>
#include <solv/solver.h>
#include <solv/transaction.h>

#include "core/mem.h"
#include "core/registry.h"
#include "core/recipe.h"
#include "solver/solver.h"

static enum cfapkg_err parse_specs(struct cfapkg_plan *plan, const char *const *in, size_t n,
                                   const char *what, struct cfa_range **out)
{
	struct cfa_range *r;
	size_t i;

	*out = NULL;
	if (n == 0)
		return CFAPKG_E_OK;
	r = cfa_arena_alloc(&plan->arena, n * sizeof(*r));
	if (!r)
		return cfa_nomem(plan->ctx);
	/* what names the list in the message ("request", "pin", "installed"),
	 * so that a bad spec is found where it was given; no reason means out
	 * of memory. */
	for (i = 0; i < n; i++) {
		const char *why = NULL;
		if (!cfa_range_parse(&plan->arena, in[i], &r[i], &why))
			return why ? cfa_fail(plan->ctx, CFAPKG_E_VERSION, "%s \"%s\": %s", what, in[i],
			                      why)
			           : cfa_nomem(plan->ctx);
	}
	*out = r;
	return CFAPKG_E_OK;
}


/* A pin forbids every version of its name outside its range: a LOCK on those
 * versions, not a job asking for the range, so that a pin binds a name only
 * when something wants it and never pulls it in. */
static void add_pin_jobs(struct cfapkg_plan *plan)
{
	Pool *pool = plan->pool;
	Queue q;
	size_t i;
	Id p;

	queue_init(&q);
	for (i = 0; i < plan->npins; i++) {
		Id name = pool_str2id(pool, plan->pins[i].name, 0);
		queue_empty(&q);
		for (p = plan->repo->start; p < plan->repo->end; p++)
		{
			const struct cfapkg_version *v = cfa_solvable_version(plan, p);
			if (pool->solvables[p].name == name && v &&
			    !cfa_range_match(&plan->pins[i], v->parsed))
				queue_push(&q, p);
		}
		if (q.count)
			queue_push2(&plan->job, SOLVER_LOCK | SOLVER_SOLVABLE_ONE_OF,
			            pool_queuetowhatprovides(pool, &q));
	}
	queue_free(&q);
}

/* What is installed stays unless the request needs it changed: the
 * strongest FAVOR (libsolv weighs later FAVOR jobs more). */
static void add_prefer_job(struct cfapkg_plan *plan)
{
	Pool *pool = plan->pool;
	const char *why;
	Queue q;
	size_t i;
	Id p;

	queue_init(&q);
	for (p = plan->repo->start; p < plan->repo->end; p++) {
		const struct cfapkg_version *v = cfa_solvable_version(plan, p);
		if (!v || !cfa_installable(plan, v, &why))
			continue;
		for (i = 0; i < plan->nprefer; i++)
			if (strcmp(plan->prefer[i].name, v->recipe->name) == 0 &&
			    cfa_range_match(&plan->prefer[i], v->parsed)) {
				queue_push(&q, p);
				break;
			}
	}
	if (q.count)
		queue_push2(&plan->job, SOLVER_FAVOR | SOLVER_SOLVABLE_ONE_OF,
		            pool_queuetowhatprovides(pool, &q));
	queue_free(&q);
}

/* What the machine already has and is known to have (an installed ROCm or
 * HIP SDK, the driver's HIP runtime) beats a packaged stand-in for it. */
static bool known_present(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	if (v->recipe->kind != CFAPKG_KIND_SYSTEM)
		return false;
	/* Only a runtime or an SDK the facts know to be there counts: a fact
	 * not known is no reason to pass over a packaged part. */
	if (cfa_is_hip_runtime(plan, v))
		return plan->facts.hip_runtimes_known && cfa_hip_fact_has(plan, v);
	return strcmp(v->recipe->fact, "hip_sdk") == 0 && plan->facts.hip_sdks_known &&
	       cfa_system_present(plan, v);
}

static void add_system_job(struct cfapkg_plan *plan)
{
	Queue q;
	Id p;

	queue_init(&q);
	for (p = plan->repo->start; p < plan->repo->end; p++) {
		const struct cfapkg_version *v = cfa_solvable_version(plan, p);
		if (v && known_present(plan, v))
			queue_push(&q, p);
	}
	if (q.count)
		queue_push2(&plan->job, SOLVER_FAVOR | SOLVER_SOLVABLE_ONE_OF,
		            pool_queuetowhatprovides(plan->pool, &q));
	queue_free(&q);
}

/* Whether v's download here is pinned by the recipe itself, not taken at
 * install from an index a repository's key vouches for. */
static bool pinned_here(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	const struct cfapkg_source *s = cfapkg_version_source(v, plan->facts.os, plan->facts.arch);
	const struct cfapkg_apt_source *a = s ? s->apt : NULL;

	/* pinned, not pins: a plan reads the pins of the versions it picks. */
	return !a || a->pinned || (!a->key_fingerprint && !a->keyring);
}

/* Favour tiers, weakest first: a candidate taken at install, a pinned
 * candidate, a validated one taken at install, a pinned validated one. */
enum { TIERS = 4 };

static void add_favor_jobs(struct cfapkg_plan *plan)
{
	Pool *pool = plan->pool;
	Queue tier[TIERS], out;
	enum cfapkg_status own;
	const char *why;
	int t;
	Id p;

	queue_init(&out);
	for (t = 0; t < TIERS; t++)
		queue_init(&tier[t]);
	for (p = plan->repo->start; p < plan->repo->end; p++)
	{
		const struct cfapkg_version *v = cfa_solvable_version(plan, p);
		if (!v)
			continue;
		/* The recipe's own status orders the tiers: on a target that is
		 * experimental as a whole (allowed, or nothing is chosen there),
		 * a part the recipe calls a candidate still beats one it calls
		 * experimental (Debian's sid set before its experimental one). */
		own = cfa_version_own_status(v, plan->facts.gfx);
		if (!cfa_installable(plan, v, &why))
			queue_push(&out, p);
		else if (own == CFAPKG_STATUS_VALIDATED || own == CFAPKG_STATUS_CANDIDATE)
			queue_push(&tier[(own == CFAPKG_STATUS_VALIDATED ? 2 : 0) + pinned_here(plan, v)],
			           p);
	}
	if (out.count)
		queue_push2(&plan->job, SOLVER_DISFAVOR | SOLVER_SOLVABLE_ONE_OF,
		            pool_queuetowhatprovides(pool, &out));
	for (t = 0; t < TIERS; t++)
		if (tier[t].count)
			queue_push2(&plan->job, SOLVER_FAVOR | SOLVER_SOLVABLE_ONE_OF,
			            pool_queuetowhatprovides(pool, &tier[t]));
	for (t = 0; t < TIERS; t++)
		queue_free(&tier[t]);
	queue_free(&out);
	add_system_job(plan);
}

static void note_unchecked(struct cfapkg_plan *plan, unsigned mask)
{
	static const char *const names[] = {"driver", "hip_runtime", "hip_sdk", "glibc"};
	unsigned i;

	plan->unchecked_bits |= mask;
	for (i = 0; i < 4; i++) {
		size_t k;
		if (!(mask & (1u << i)))
			continue;
		/* Compared by pointer: only these literals are ever stored. */
		for (k = 0; k < plan->nunchecked && plan->unchecked[k] != names[i]; k++)
			;
		if (k == plan->nunchecked)
			plan->unchecked[plan->nunchecked++] = names[i];
	}
}

static bool is_requested(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	size_t i, j;

	for (i = 0; i < plan->nspecs; i++) {
		if (strcmp(plan->specs[i].name, v->recipe->name) == 0)
			return true;
		/* A part asked for by a name it provides is requested too. */
		for (j = 0; j < v->nprovides; j++)
			if (strcmp(plan->specs[i].name, v->provides[j].name) == 0)
				return true;
	}
	return false;
}

/* System parts depend on no package, so putting them first keeps
 * dependencies first, and makes the order among independent parts not
 * hang on which other recipes happen to be loaded. */
static void system_parts_first(struct cfapkg_plan *plan)
{
	struct cfapkg_plan_item tmp;
	size_t i, j, front = 0;

	for (i = 0; i < plan->nitems; i++) {
		if (plan->items[i].version->recipe->kind != CFAPKG_KIND_SYSTEM)
			continue;
		tmp = plan->items[i];
		for (j = i; j > front; j--)
			plan->items[j] = plan->items[j - 1];
		plan->items[front++] = tmp;
	}
}

/* The picked versions read whole: the load read what it reached as
 * heads (recipe_details.c). */
static enum cfapkg_err read_picked(struct cfapkg_plan *plan)
{
	const struct cfapkg_version **v = cfa_calloc(plan->nitems + 1, sizeof(*v));
	enum cfapkg_err e;
	size_t i;

	if (!v)
		return cfa_nomem(plan->ctx);
	for (i = 0; i < plan->nitems; i++)
		v[i] = plan->items[i].version;
	e = cfa_versions_complete(plan->ctx, v, plan->nitems);
	cfa_free(v);
	return e;
}

/* What an item is beside its version and rank: asked for, its download,
 * whether it can be installed; then the picked versions read whole. */
static enum cfapkg_err finish_items(struct cfapkg_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->nitems; i++) {
		struct cfapkg_plan_item *it = &plan->items[i];
		const struct cfapkg_version *v = it->version;
		it->requested = is_requested(plan, v);
		if (v->recipe->kind == CFAPKG_KIND_PACKAGE)
			it->source = cfapkg_version_source(v, plan->facts.os, plan->facts.arch);
		it->installable = cfa_installable(plan, v, &it->why_not);
		if (it->installable)
			it->why_not = NULL;
	}
	return read_picked(plan);
}

/* The chosen parts, dependencies first. */
static enum cfapkg_err collect_items(struct cfapkg_plan *plan)
{
	Transaction *trans = solver_create_transaction(plan->solv);
	unsigned mask = 0;
	int i;

	transaction_order(trans, 0);
	plan->items = cfa_calloc((size_t)trans->steps.count + 1, sizeof(*plan->items));
	if (!plan->items) {
		transaction_free(trans);
		return cfa_nomem(plan->ctx);
	}
	for (i = 0; i < trans->steps.count; i++) {
		Id p = trans->steps.elements[i];
		const struct cfapkg_version *v = cfa_solvable_version(plan, p);
		if (!v || transaction_type(trans, p, SOLVER_TRANSACTION_SHOW_ALL) !=
		                  SOLVER_TRANSACTION_INSTALL)
			continue;
		mask |= plan->unchecked_mask[p];
		/* The machine's HIP runtime is a fact, never a part of the plan. */
		if (cfa_is_hip_runtime(plan, v))
			continue;
		plan->items[plan->nitems].version = v;
		plan->items[plan->nitems++].status = cfa_solvable_status(plan, p);
	}
	note_unchecked(plan, mask);
	transaction_free(trans);
	system_parts_first(plan);
	return finish_items(plan);
}

/* Every package version that cannot be installed here stays out. */
static void add_installable_job(struct cfapkg_plan *plan)
{
	const char *why;
	Queue q;
	Id p;

	queue_init(&q);
	for (p = plan->repo->start; p < plan->repo->end; p++) {
		const struct cfapkg_version *v = cfa_solvable_version(plan, p);
		/* Only packages: cfapkg never installs a system part, so
		 * whether one could be is not the question here. */
		if (v && v->recipe->kind == CFAPKG_KIND_PACKAGE && !cfa_installable(plan, v, &why))
			queue_push(&q, p);
	}
	if (q.count)
		queue_push2(&plan->job, SOLVER_LOCK | SOLVER_SOLVABLE_ONE_OF,
		            pool_queuetowhatprovides(plan->pool, &q));
	queue_free(&q);
}

/* One solve; true when it found a set.  only_installable: with the
 * versions that cannot be installed forbidden. */
static enum cfapkg_err try_solve(struct cfapkg_plan *plan, bool only_installable, bool *solved)
{
	size_t i;

	queue_empty(&plan->job);
	for (i = 0; i < plan->nspecs; i++)
		queue_push2(&plan->job, SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES,
		            cfa_range_id(plan, &plan->specs[i]));
	add_pin_jobs(plan);
	if (only_installable)
		add_installable_job(plan);
	/* The favour tiers are policy, not a tuning knob: a plan always
	 * prefers validated and pinned versions the same way, so no switch
	 * (environment or option) turns them off. */
	add_favor_jobs(plan);
	add_prefer_job(plan);
	/* A fresh solver for each try, as libsolv keeps what the last solve
	 * learnt. */
	if (plan->solv)
		solver_free(plan->solv);
	plan->solv = solver_create(plan->pool);
	if (!plan->solv)
		return cfa_nomem(plan->ctx);
	*solved = solver_solve(plan->solv, &plan->job) == 0;
	return CFAPKG_E_OK;
}

static enum cfapkg_err run_solver(struct cfapkg_plan *plan)
{
	enum cfapkg_err e;
	bool solved = false;

	queue_init(&plan->job);
	if ((e = try_solve(plan, true, &solved)) || (!solved && (e = try_solve(plan, false, &solved))))
		return e;
	if (!solved)
		return cfa_explain(plan);
	plan->solved = true;
	if ((e = collect_items(plan)))
		return e;
	return cfa_passed_over(plan);
}

static bool blocked_by_experimental(const struct cfapkg_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->nproblems; i++)
		if (plan->problems[i].kind == CFAPKG_PROBLEM_EXPERIMENTAL)
			return true;
	return false;
}

static const char *copy_str(struct cfapkg_plan *plan, const char *s)
{
	return s ? cfa_arena_strdup(&plan->arena, s) : NULL;
}

/* How a plan is solved: an unsolved one is explained beyond experimental
 * parts and gets a fix (the solves made to find those are not), and an
 * answer kept from an earlier solve may stand for it (plan_memo.c). */
enum { HOW_EXPLAIN = 1, HOW_MEMO = 2 };

static enum cfapkg_err solve_plan(struct cfapkg_ctx *ctx, const struct cfapkg_facts *facts,
                                  const char *const *specs, size_t nspecs,
                                  const struct cfapkg_plan_opts *opts, unsigned how,
                                  struct cfapkg_plan **out);

/* When experimental parts block a request, solve again with them allowed:
 * if that fails too, its reasons are added, so that a user learns at once
 * that --allow-experimental alone would not help. */
static enum cfapkg_err explain_beyond_experimental(struct cfapkg_plan *plan,
                                                   const char *const *specs, size_t nspecs,
                                                   const struct cfapkg_plan_opts *opts)
{
	struct cfapkg_plan_opts again = {.allow_experimental = true};
	struct cfapkg_plan *other = NULL;
	unsigned base = 0;
	enum cfapkg_err e;
	size_t i;

	/* The same pins and installed versions, so that only the rule on
	 * experimental parts changes. */
	if (opts) {
		again.pins = opts->pins;
		again.npins = opts->npins;
		again.prefer = opts->prefer;
		again.nprefer = opts->nprefer;
	}
	e = solve_plan(plan->ctx, &plan->facts, specs, nspecs, &again, 0, &other);
	if (e || other->solved) {
		cfapkg_plan_free(other);
		return e;
	}
	/* The other plan's groups are numbered after this one's, so that the
	 * two sets of reasons stay apart. */
	for (i = 0; i < plan->nproblems; i++)
		base = plan->problems[i].group > base ? plan->problems[i].group : base;
	for (i = 0; i < other->nproblems && !e; i++) {
		struct cfapkg_problem p = other->problems[i];
		p.group += base;
		p.beyond_experimental = true;
		p.package = copy_str(plan, p.package);
		p.versions = copy_str(plan, p.versions);
		p.dep = copy_str(plan, p.dep);
		p.other = copy_str(plan, p.other);
		p.fact = copy_str(plan, p.fact);
		p.have = copy_str(plan, p.have);
		p.alternatives = copy_str(plan, p.alternatives);
		p.hint = copy_str(plan, p.hint);
		p.raw = copy_str(plan, p.raw);
		if (cfa_grow((void **)&plan->problems, &plan->problems_cap, plan->nproblems + 1,
		             sizeof(p)) != 0)
			e = cfa_nomem(plan->ctx);
		else
			plan->problems[plan->nproblems++] = p;
	}
	cfapkg_plan_free(other);
	return e;
}

/* A misspelt name or a version that does not exist is fixed by asking
 * again, not by changing the machine. */
static bool fixable(const struct cfapkg_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->nproblems; i++)
		if (plan->problems[i].kind == CFAPKG_PROBLEM_UNKNOWN_NAME ||
		    plan->problems[i].kind == CFAPKG_PROBLEM_NO_VERSION)
			return false;
	return true;
}

/* Whether the request solves for f with opts: the fix search's trial. */
static bool plan_try(struct cfapkg_ctx *ctx, const struct cfapkg_facts *f,
                     const struct cfa_plan_request *req, const struct cfapkg_plan_opts *opts)
{
	struct cfapkg_plan *p = NULL;
	/* A trial wants only yes or no: it explains nothing and looks for no
	 * fix of its own, which would search again inside the search. */
	bool solved = solve_plan(ctx, f, req->specs, req->nspecs, opts, 0, &p) == CFAPKG_E_OK &&
	              p->solved;

	cfapkg_plan_free(p);
	return solved;
}

enum cfapkg_err cfapkg_plan_solve(struct cfapkg_ctx *ctx, const struct cfapkg_facts *facts,
                                  const char *const *specs, size_t nspecs,
                                  const struct cfapkg_plan_opts *opts, struct cfapkg_plan **out)
{
	return solve_plan(ctx, facts, specs, nspecs, opts, HOW_EXPLAIN | HOW_MEMO, out);
}

/* The recipes the request, its pins and what is installed can reach; all of
 * them for a testcase, which must hold the whole problem. */
static enum cfapkg_err load_recipes(struct cfapkg_plan *plan)
{
	size_t i, n = 0, total = plan->nspecs + plan->npins + plan->nprefer;
	const char **names;
	enum cfapkg_err e;

	if (plan->full_pool)
		return cfapkg_recipes_load(plan->ctx);
	if (!(names = cfa_calloc(total + 1, sizeof(*names))))
		return cfa_nomem(plan->ctx);
	for (i = 0; i < plan->nspecs; i++)
		names[n++] = plan->specs[i].name;
	for (i = 0; i < plan->npins; i++)
		names[n++] = plan->pins[i].name;
	for (i = 0; i < plan->nprefer; i++)
		names[n++] = plan->prefer[i].name;
	e = cfa_recipes_load_reaching(plan->ctx, names, n, plan->facts.os,
	                              plan->facts.arch);
	cfa_free(names);
	return e;
}

/* The answer kept for this plan's key, when there is one; else solved,
 * and a solved answer kept. */
static enum cfapkg_err solve_or_recall(struct cfapkg_plan *plan, unsigned how)
{
	char key[65];
	unsigned unchecked = 0;
	bool keyed = (how & HOW_MEMO) && cfa_plan_memo_key(plan, key), found = false;
	enum cfapkg_err e = keyed ? cfa_plan_memo_find(plan, key, &unchecked, &found) : CFAPKG_E_OK;

	if (!e && found) {
		plan->solved = true;
		note_unchecked(plan, unchecked);
		return finish_items(plan);
	}
	if (!e)
		e = cfa_pool_build(plan);
	if (!e)
		e = run_solver(plan);
	if (!e && keyed && plan->solved)
		e = cfa_plan_memo_keep(plan, key);
	return e;
}

static enum cfapkg_err solve_loaded(struct cfapkg_ctx *ctx, const struct cfapkg_facts *facts,
                                    const char *const *specs, size_t nspecs,
                                    const struct cfapkg_plan_opts *opts, unsigned how,
                                    struct cfapkg_plan **out)
{
	struct cfa_plan_request req = {specs, nspecs, opts, plan_try};
	struct cfapkg_plan *plan;
	enum cfapkg_err e;

	if (nspecs == 0)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "nothing to plan: name a package "
		                "(cfapkg search lists them)");
	if (!facts->gfx[0])
		return cfa_fail(ctx, CFAPKG_E_FACTS, "no GPU target to plan for: pass --gpu "
		                "gfxNNNN (for example --gpu gfx1200) or --facts FILE");
	plan = cfa_calloc(1, sizeof(*plan));
	if (!plan)
		return cfa_nomem(ctx);
	plan->ctx = ctx;
	plan->allow_experimental = opts && opts->allow_experimental;
	plan->full_pool = opts && opts->full_pool;
	/* The job queue is made by run_solver: an answer recalled from an
	 * earlier solve calls nothing of libsolv's, so it is never loaded. */
	cfa_arena_init(&plan->arena);
	plan->nspecs = nspecs;
	/* The plan's own copy: the caller's facts may go before the plan. */
	e = cfapkg_facts_copy(facts, &plan->facts) ? cfa_nomem(ctx) : CFAPKG_E_OK;
	if (!e)
		e = parse_specs(plan, specs, nspecs, "request", &plan->specs);
	if (!e && opts) {
		plan->npins = opts->npins;
		e = parse_specs(plan, opts->pins, opts->npins, "pin", &plan->pins);
	}
	if (!e && opts && opts->nprefer) {
		plan->nprefer = opts->nprefer;
		e = parse_specs(plan, opts->prefer, opts->nprefer, "installed", &plan->prefer);
	}
	if (!e)
		e = load_recipes(plan);
	if (!e)
		e = solve_or_recall(plan, how);
	if (!e && !plan->solved && ctx->narrowed) {
		/* Solved on the recipes for this platform, it failed: once more
		 * on all of them, so that its reasons also name the parts ruled
		 * out here, as a plan on the whole set does. */
		cfapkg_plan_free(plan);
		if ((e = cfapkg_recipes_load(ctx)))
			return e;
		return solve_loaded(ctx, facts, specs, nspecs, opts, how, out);
	}
	if (!e && (how & HOW_EXPLAIN) && !plan->solved && !plan->allow_experimental &&
	    blocked_by_experimental(plan))
		e = explain_beyond_experimental(plan, specs, nspecs, opts);
	if (!e && (how & HOW_EXPLAIN) && !plan->solved && fixable(plan))
		e = cfa_plan_find_fix(plan, &req);
	if (e) {
		cfapkg_plan_free(plan);
		return e; /* detail set by the step that failed */
	}
	*out = plan;
	return CFAPKG_E_OK;
}

static enum cfapkg_err solve_plan(struct cfapkg_ctx *ctx, const struct cfapkg_facts *facts,
                                  const char *const *specs, size_t nspecs,
                                  const struct cfapkg_plan_opts *opts, unsigned how,
                                  struct cfapkg_plan **out)
{
	enum cfapkg_err e = solve_loaded(ctx, facts, specs, nspecs, opts, how, out);

	/* The load kept its images open for the details of what was picked. */
	cfa_recipe_images_close(ctx);
	return e;
}

/* The texts of n ranges, for a request asked again. */
static const char **range_texts(const struct cfa_range *r, size_t n)
{
	const char **t = cfa_calloc(n + 1, sizeof(*t));
	size_t i;

	for (i = 0; t && i < n; i++)
		t[i] = r[i].text;
	return t;
}

enum cfapkg_err cfa_plan_solve_again(const struct cfapkg_plan *plan, struct cfapkg_plan **out)
{
	const char **specs = range_texts(plan->specs, plan->nspecs);
	const char **pins = range_texts(plan->pins, plan->npins);
	const char **prefer = range_texts(plan->prefer, plan->nprefer);
	struct cfapkg_plan_opts o = {.allow_experimental = plan->allow_experimental,
	                             .pins = pins, .npins = plan->npins,
	                             .prefer = prefer, .nprefer = plan->nprefer};
	enum cfapkg_err e = specs && pins && prefer
	                            ? solve_plan(plan->ctx, &plan->facts, specs, plan->nspecs, &o,
	                                         HOW_EXPLAIN, out)
	                            : cfa_nomem(plan->ctx);

	cfa_free(specs);
	cfa_free(pins);
	cfa_free(prefer);
	return e;
}

void cfapkg_plan_free(struct cfapkg_plan *plan)
{
	if (!plan)
		return;
	if (plan->solv)
		solver_free(plan->solv);
	if (plan->job.alloc)
		queue_free(&plan->job);
	if (plan->pool)
		pool_free(plan->pool);
	cfa_free(plan->vers);
	cfa_free(plan->unchecked_mask);
	cfa_free(plan->status);
	cfa_free(plan->rel_text);
	cfa_free(plan->markers);
	cfa_free(plan->marker_of);
	cfa_free(plan->items);
	cfa_free(plan->problems);
	cfa_free(plan->passed);
	cfapkg_facts_clear(&plan->facts);
	cfa_arena_fini(&plan->arena);
	cfa_free(plan);
}

bool cfapkg_plan_solved(const struct cfapkg_plan *plan)
{
	return plan->solved;
}

const struct cfapkg_plan_item *cfapkg_plan_items(const struct cfapkg_plan *plan, size_t *n)
{
	*n = plan->nitems;
	return plan->items;
}

const struct cfapkg_problem *cfapkg_plan_problems(const struct cfapkg_plan *plan, size_t *n)
{
	*n = plan->nproblems;
	return plan->problems;
}

const char *const *cfapkg_plan_unchecked(const struct cfapkg_plan *plan, size_t *n)
{
	*n = plan->nunchecked;
	return plan->unchecked;
}

const struct cfapkg_facts *cfapkg_plan_facts(const struct cfapkg_plan *plan)
{
	return &plan->facts;
}
