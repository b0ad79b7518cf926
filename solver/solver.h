/*
 * solver.h - the solver room's internal interface: recipes and facts become
 * a libsolv pool, requests become jobs, and the outcome becomes a plan or a
 * list of problem records.
 *
 * Machine facts never enter libsolv as packages.  Each constraint that a
 * fact decides (GPU target, OS, driver floor, HIP runtime, installed system
 * parts, the experimental policy) is evaluated while the pool is built; a
 * version it rules out gets a requirement on a "marker" name that nothing
 * provides.  libsolv then reports the marker as the reason, and explain.c
 * turns the marker back into the fact that stood in the way.  Version
 * ranges likewise never reach libsolv's own comparison: each distinct range
 * becomes a synthetic name provided by exactly the versions inside it, so
 * the outcome does not depend on how libsolv was built.
 */
#ifndef CFA_SOLVER_H
#define CFA_SOLVER_H

#include <solv/pool.h>
#include <solv/queue.h>
#include <solv/repo.h>
#include <solv/solver.h>

#include "core/ctx.h"
#include "core/dep.h"

enum cfa_marker_kind {
	CFA_MK_GPU,          /* version does not support the GPU target */
	CFA_MK_OS,           /* not for this OS/arch, or no source for it */
	CFA_MK_SYSTEM,       /* system part version not installed */
	CFA_MK_DRIVER,       /* driver fact fails a floor */
	CFA_MK_HIP_RUNTIME,  /* no matching HIP runtime in the driver */
	CFA_MK_EXPERIMENTAL, /* experimental here and not allowed */
	CFA_MK_GLIBC         /* the machine's C library is older than a floor */
};

struct cfa_marker {
	enum cfa_marker_kind kind;
	const struct cfapkg_version *version;
	const struct cfapkg_dep *dep;      /* the requirement, for DRIVER/HIP_RUNTIME */
};

/* Facts a version's constraints needed but the plan did not know. */
enum { CFA_UNCHECKED_DRIVER = 1, CFA_UNCHECKED_HIP_RUNTIME = 2, CFA_UNCHECKED_HIP_SDK = 4,
       CFA_UNCHECKED_GLIBC = 8 };

struct cfapkg_plan {
	struct cfapkg_ctx *ctx;
	struct cfapkg_facts facts;
	bool allow_experimental;
	bool full_pool;                       /* every recipe, not just the closure */
	Pool *pool;
	Repo *repo;
	Solver *solv;
	Queue job;
	const struct cfapkg_version **vers;   /* by solvable id */
	unsigned char *unchecked_mask;        /* by solvable id */
	unsigned char *status;                /* by solvable id: enum cfapkg_status */
	const char **rel_text;                /* by relation index: how it was spelled */
	size_t rel_text_cap;
	const char *driver_name;              /* the recipe names decided by facts */
	const char *hip_runtime_name;
	const char *glibc_name;
	size_t nvers;
	struct cfa_marker *markers;
	size_t nmarkers, markers_cap;
	int *marker_of;                       /* by string Id: marker index + 1 */
	size_t marker_of_cap;
	struct cfa_range *specs, *pins, *prefer;
	size_t nspecs, npins, nprefer;
	struct cfa_arena arena;
	struct cfapkg_plan_item *items;
	size_t nitems;
	struct cfapkg_problem *problems;
	size_t nproblems, problems_cap;
	struct cfapkg_problem *passed;        /* a solved plan: versions not taken, and why */
	size_t npassed, passed_cap;
	const char *unchecked[4];
	size_t nunchecked;
	unsigned unchecked_bits;              /* the same, as CFA_UNCHECKED_* */
	bool solved;
	struct cfapkg_plan_fix fix;           /* fix.c: the way out when !solved */
};

/* What was asked, for solving it again with other facts or options. */
struct cfa_plan_request {
	const char *const *specs;
	size_t nspecs;
	const struct cfapkg_plan_opts *opts;
	/* One plain solve of the request for f with opts (no second
	 * explanation, no fix): solve.c's, handed to fix.c here so that the
	 * fix search, which solve.c runs, does not call back into it. */
	bool (*try_solve)(struct cfapkg_ctx *ctx, const struct cfapkg_facts *f,
	                  const struct cfa_plan_request *req, const struct cfapkg_plan_opts *opts);
};

/* pool.c */
enum cfapkg_err cfa_pool_build(struct cfapkg_plan *plan);
const struct cfa_marker *cfa_marker_of(const struct cfapkg_plan *plan, Id dep);
/* The part of a solvable ("zluda 6-preview.69"), or NULL. */
const struct cfapkg_version *cfa_solvable_version(const struct cfapkg_plan *plan, Id p);
/* Whether a version can be installed as planned, and if not, why. */
bool cfa_installable(const struct cfapkg_plan *plan, const struct cfapkg_version *v,
                     const char **why);
/* Whether a system version is among the installed ones (fact known). */
bool cfa_system_present(const struct cfapkg_plan *plan, const struct cfapkg_version *v);

/* pool_hash.c: libsolv's string hash made for about nversions more
 * versions (before the first lookup), and whatprovides made without
 * dropping it. */
void cfa_pool_size_hashes(Pool *pool, size_t nversions);
void cfa_pool_index_providers(Pool *pool);

/* The Id a range is required by (a name, a relation or a synthetic name). */
Id cfa_range_id(struct cfapkg_plan *plan, const struct cfa_range *r);
/* A dependency as the recipe spelled it. */
const char *cfa_dep_text(const struct cfapkg_plan *plan, Id dep);
/* The status of a solvable's version on the plan's GPU (computed once). */
enum cfapkg_status cfa_solvable_status(const struct cfapkg_plan *plan, Id p);

/* closure.c: *out[i] is 1 for each recipe (ctx order) the request can
 * reach; the caller frees it. */
enum cfapkg_err cfa_closure(struct cfapkg_plan *plan, unsigned char **out);

/* hip_runtime.c: the HIP runtime major a version is (the fact's recipe)
 * or provides ("amdhip64 = 7"), else -1. */
bool cfa_is_hip_runtime(const struct cfapkg_plan *plan, const struct cfapkg_version *v);
int cfa_hip_major(const struct cfapkg_plan *plan, const struct cfapkg_version *v);
/* Whether the machine's fact lists this major of the fact's recipe. */
bool cfa_hip_fact_has(const struct cfapkg_plan *plan, const struct cfapkg_version *v);
/* Whether a part cfapkg installs, for this OS, provides a runtime in need. */
bool cfa_hip_packaged_provider(const struct cfapkg_plan *plan, const struct cfa_range *need);

/* explain.c */
enum cfapkg_err cfa_explain(struct cfapkg_plan *plan);
/* A passed-over version's record: from the marker that ruled it out, or
 * of kind with its dependency text, alternatives and hint (copied). */
enum cfapkg_err cfa_passed_marker(struct cfapkg_plan *plan, const struct cfa_marker *m);
enum cfapkg_err cfa_passed_record(struct cfapkg_plan *plan, enum cfapkg_problem_kind kind,
                                  const struct cfapkg_version *v, const char *dep,
                                  const char *alternatives, const char *hint);

/* passed.c: after a solve, the versions that competed with the chosen
 * ones (of the same recipes, or providing what the set needs) and why
 * each was not taken. */
enum cfapkg_err cfa_passed_over(struct cfapkg_plan *plan);

/* solve.c: the plan's request solved once more, never recalled. */
enum cfapkg_err cfa_plan_solve_again(const struct cfapkg_plan *plan, struct cfapkg_plan **out);

/* plan_memo.c: the key of what plan is solved on, false when it has none
 * (its recipes were not loaded through the reach record); the answer kept
 * for key laid into plan (items with version and rank, passed-over
 * versions) and the facts it could not check (CFA_UNCHECKED_* bits),
 * *found false when there is none that reads whole against the loaded
 * recipes; and a solved plan's answer kept. */
bool cfa_plan_memo_key(const struct cfapkg_plan *plan, char key[65]);
enum cfapkg_err cfa_plan_memo_find(struct cfapkg_plan *plan, const char key[65],
                                   unsigned *unchecked, bool *found);
enum cfapkg_err cfa_plan_memo_keep(struct cfapkg_plan *plan, const char key[65]);

/* fix.c: plan->fix for an unsolved plan. */
enum cfapkg_err cfa_plan_find_fix(struct cfapkg_plan *plan, const struct cfa_plan_request *req);

#endif
