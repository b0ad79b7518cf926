/*
 * passed.c - why a solved plan did not take the other candidates: for
 * each version that competed with what was chosen (another version of a
 * chosen part, or a part providing a name the set needs) the reason it
 * lost, as a record of the same type as a problem:
 *
 *   a fact rules it out     its marker (GPU, glibc, driver, HIP runtime,
 *                           not installed, experimental here)
 *   it cannot be installed  no hash or no download recorded, while the
 *                           chosen one can (only versions newer than the
 *                           chosen one of the same part and in its tier:
 *                           the others lose anyway)
 *   it lacks a needed name  on this GPU it does not provide what the
 *                           chosen version does and the set needs (sid's
 *                           rocBLAS stops at gfx1102)
 *   it is experimental      here, where the chosen one is not
 *
 * A version for another OS is no competitor and is left out, as is one
 * that only lost on being older.
 */
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "solver/solver.h"

/* The version of r the plan took, or NULL: a part appears once in a set. */
static const struct cfapkg_version *chosen_of(const struct cfapkg_plan *plan,
                                              const struct cfapkg_recipe *r)
{
	size_t i;

	for (i = 0; i < plan->nitems; i++)
		if (plan->items[i].version->recipe == r)
			return plan->items[i].version;
	return NULL;
}

/* Whether v offers name on the plan's machine (its own name, or a
 * provides that applies here). */
static bool offers(const struct cfapkg_plan *plan, const struct cfapkg_version *v,
                   const char *name)
{
	size_t i;

	if (strcmp(v->recipe->name, name) == 0)
		return true;
	for (i = 0; i < v->nprovides; i++)
		if (strcmp(v->provides[i].name, name) == 0 &&
		    cfa_dep_applies(&plan->facts, &v->provides[i]))
			return true;
	return false;
}

/* Whether the chosen set or the request asks for name. */
static bool needed(const struct cfapkg_plan *plan, const char *name)
{
	size_t i, j;

	/* The request counts as well as the set's own requirements: a name
	 * asked for is needed even when nothing chosen requires it. */
	for (i = 0; i < plan->nspecs; i++)
		if (strcmp(plan->specs[i].name, name) == 0)
			return true;
	for (i = 0; i < plan->nitems; i++) {
		const struct cfapkg_version *v = plan->items[i].version;
		for (j = 0; j < v->nrequires; j++)
			if (strcmp(v->requires[j].name, name) == 0 &&
			    cfa_dep_applies(&plan->facts, &v->requires[j]))
				return true;
	}
	return false;
}

/* Whether v offers anything the set needs. */
static bool competes(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	size_t i;

	if (needed(plan, v->recipe->name))
		return true;
	for (i = 0; i < v->nprovides; i++)
		if (cfa_dep_applies(&plan->facts, &v->provides[i]) &&
		    needed(plan, v->provides[i].name))
			return true;
	return false;
}

/* Which fact to name when several rule a version out: the one the user
 * can least change first (a system part that is not there at all before
 * the runtime it would need). */
static int weight(enum cfa_marker_kind k)
{
	static const enum cfa_marker_kind order[] = {CFA_MK_SYSTEM, CFA_MK_GPU, CFA_MK_GLIBC,
	                                             CFA_MK_DRIVER, CFA_MK_HIP_RUNTIME,
	                                             CFA_MK_EXPERIMENTAL};
	int i;

	for (i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
		if (order[i] == k)
			return i;
	/* A kind not in the list weighs least, so that a known one is named
	 * first. */
	return i;
}

/* The fact that rules v out, if any; *other_os when it is for another
 * platform (then it did not compete at all). */
static const struct cfa_marker *ruled_out(const struct cfapkg_plan *plan,
                                          const struct cfapkg_version *v, bool *other_os)
{
	const struct cfa_marker *best = NULL;
	size_t i;

	*other_os = false;
	for (i = 0; i < plan->nmarkers; i++) {
		const struct cfa_marker *m = &plan->markers[i];
		if (m->version != v)
			continue;
		if (m->kind == CFA_MK_OS)
			*other_os = true;
		else if (!best || weight(m->kind) < weight(best->kind))
			best = m;
	}
	return best;
}

/* The GPU targets v provides name on ("gfx803, ..., gfx1102"), or NULL. */
static const char *targets_of(struct cfapkg_plan *plan, const struct cfapkg_version *v,
                              const char *name)
{
	struct cfa_buf b;
	const char *out = NULL;
	size_t i, k;

	cfa_buf_init(&b, 4096);
	/* The first provide of the name that lists targets is the one shown. */
	for (i = 0; i < v->nprovides && !b.len; i++)
		if (strcmp(v->provides[i].name, name) == 0)
			for (k = 0; k < v->provides[i].ngfx; k++)
				cfa_buf_printf(&b, "%s%s", k ? ", " : "", v->provides[i].gfx[k]);
	if (b.len && !b.failed)
		out = cfa_arena_strdup(&plan->arena, cfa_buf_str(&b));
	cfa_buf_fini(&b);
	return out;
}

/* Whether c names provides[i]'s name earlier too (once per GPU list, say):
 * each name is listed once.  Whole names: "sparse" is not "rocsparse". */
static bool provided_before(const struct cfapkg_version *c, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (strcmp(c->provides[j].name, c->provides[i].name) == 0)
			return true;
	return false;
}

/* What the chosen version c provides here, the set needs, and v lacks
 * here: "rocblas, rocsparse" (NULL when nothing); *first the first. */
static const char *lacking(struct cfapkg_plan *plan, const struct cfapkg_version *c,
                           const struct cfapkg_version *v, const char **first)
{
	struct cfa_buf b;
	const char *out = NULL;
	size_t i;

	*first = NULL;
	cfa_buf_init(&b, 4096);
	for (i = 0; i < c->nprovides; i++) {
		const char *name = c->provides[i].name;
		if (!offers(plan, c, name) || offers(plan, v, name) || !needed(plan, name) ||
		    provided_before(c, i))
			continue;
		cfa_buf_printf(&b, "%s%s", b.len ? ", " : "", name);
		if (!*first)
			*first = name;
	}
	if (b.len && !b.failed)
		out = cfa_arena_strdup(&plan->arena, cfa_buf_str(&b));
	cfa_buf_fini(&b);
	return out;
}

static enum cfapkg_err judge(struct cfapkg_plan *plan, Id p, const struct cfapkg_version *v)
{
	const struct cfapkg_version *c = chosen_of(plan, v->recipe);
	const struct cfa_marker *m;
	const char *why = NULL, *names, *first;
	bool other_os;

	/* The chosen version lost nothing, and a meta part stands for the parts
	 * it gathers, which are judged themselves; a version of a part not
	 * chosen is a rival only when it offers a name the set needs. */
	if (c == v || v->recipe->kind == CFAPKG_KIND_META || (!c && !competes(plan, v)))
		return CFAPKG_E_OK;
	m = ruled_out(plan, v, &other_os);
	if (other_os)
		return CFAPKG_E_OK;
	if (m)
		return cfa_passed_marker(plan, m);
	if (!cfa_installable(plan, v, &why)) {
		/* Older, or in a lower tier than the chosen one: it lost on that
		 * alone, pinned or not. */
		if (c && (cfa_ver_cmp(v->parsed, c->parsed) < 0 ||
		          cfapkg_version_status(plan->ctx, v, plan->facts.gfx) >
		                  cfapkg_version_status(plan->ctx, c, plan->facts.gfx)))
			return CFAPKG_E_OK;
		return cfa_passed_record(plan, CFAPKG_PROBLEM_NOT_INSTALLABLE, v, NULL, NULL, why);
	}
	if (c && (names = lacking(plan, c, v, &first)) != NULL)
		return cfa_passed_record(plan, CFAPKG_PROBLEM_NOT_HERE, v, names,
		                         targets_of(plan, v, first), NULL);
	if (cfa_solvable_status(plan, p) == CFAPKG_STATUS_EXPERIMENTAL)
		return cfa_passed_record(plan, CFAPKG_PROBLEM_EXPERIMENTAL, v, NULL, NULL, NULL);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_passed_over(struct cfapkg_plan *plan)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	Id p;

	for (p = plan->repo->start; p < plan->repo->end && !e; p++) {
		const struct cfapkg_version *v = cfa_solvable_version(plan, p);
		/* The machine's HIP runtime is a fact, never a part that could
		 * be passed over. */
		if (v && !cfa_is_hip_runtime(plan, v))
			e = judge(plan, p, v);
	}
	return e;
}

const struct cfapkg_problem *cfapkg_plan_passed(const struct cfapkg_plan *plan, size_t *n)
{
	*n = plan->npassed;
	return plan->passed;
}
