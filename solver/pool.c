/*
 * pool.c - builds the libsolv pool for one plan (see solver.h for why facts
 * become markers and ranges become synthetic names).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <solv/poolarch.h>
#include <solv/repo.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "solver/solver.h"

/* One synthetic name: the versions of name that fall inside range provide
 * text, and a requirement on the range requires text. */
struct synth {
	Id name;                     /* the constrained name */
	Id text;                     /* the synthetic name: the range's text */
	const struct cfa_range *range;
};

struct builder {
	struct cfapkg_plan *plan;
	Pool *pool;
	struct synth *synths;
	size_t nsynths, cap;
	struct cfa_ver driver;       /* parsed facts.driver when known */
	bool driver_known;
	struct cfa_ver glibc;        /* parsed facts.glibc when known */
	bool glibc_known;
};

/* By name, then by text: the sort puts each name's ranges together for the
 * binary search in add_matching_synths, and equal texts side by side so that
 * they are merged once. */
static int synth_cmp(const void *a, const void *b)
{
	const struct synth *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->text < y->text ? -1 : x->text > y->text;
}

/* The fact that decides requirements on name, if any ("driver"). */
static const char *fact_of_name(const struct cfapkg_plan *plan, const char *name)
{
	if (plan->driver_name && strcmp(name, plan->driver_name) == 0)
		return "driver";
	if (plan->hip_runtime_name && strcmp(name, plan->hip_runtime_name) == 0)
		return "hip_runtime";
	if (plan->glibc_name && strcmp(name, plan->glibc_name) == 0)
		return "glibc";
	return NULL;
}

/* Finds the system recipes whose requirements facts decide.
 * The first system recipe for each fact wins; any later one with the same fact
 * is an ordinary system recipe. */
static void find_fact_names(struct cfapkg_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->ctx->nrecipes; i++) {
		const struct cfapkg_recipe *r = plan->ctx->recipes[i];
		if (r->kind != CFAPKG_KIND_SYSTEM)
			continue;
		if (strcmp(r->fact, "driver") == 0 && !plan->driver_name)
			plan->driver_name = r->name;
		else if (strcmp(r->fact, "hip_runtime") == 0 && !plan->hip_runtime_name)
			plan->hip_runtime_name = r->name;
		else if (strcmp(r->fact, "glibc") == 0 && !plan->glibc_name)
			plan->glibc_name = r->name;
	}
}

/* Ranges libsolv can match itself: one clause, no build label or Debian
 * revision, not "!=", in rpm order.  There a missing release matches any
 * ("== 2.3.0" takes 2.3.0+cu118, "== 5.2.3" takes 5.2.3-2), as ours does;
 * dpkg order ranks the spelling with a release higher instead, so with it
 * every range becomes a synthetic name. */
static bool native_range(const Pool *pool, const struct cfa_range *r)
{
	return pool->disttype != DISTTYPE_DEB && r->nclauses == 1 &&
	       r->clauses[0].op != CFA_OP_NE && !r->clauses[0].ver.labellen &&
	       !r->clauses[0].ver.revlen;
}

/* CFA_OP_NE never gets here: native_range keeps "!=" out of libsolv. */
static int rel_flags(enum cfa_op op)
{
	switch (op) {
	case CFA_OP_EQ:
		return REL_EQ;
	case CFA_OP_GE:
		return REL_GT | REL_EQ;
	case CFA_OP_LE:
		return REL_LT | REL_EQ;
	case CFA_OP_GT:
		return REL_GT;
	default:
		return REL_LT;
	}
}

static Id evr_id(Pool *pool, const struct cfa_ver *v);

/* Remembers how a relation was spelled, for explanations. */
static void note_rel_text(struct cfapkg_plan *plan, Id rel, const char *text)
{
	size_t idx = (size_t)GETRELID(rel), old = plan->rel_text_cap;

	if (idx >= old) {
		if (cfa_grow((void **)&plan->rel_text, &plan->rel_text_cap, idx + 1,
		             sizeof(*plan->rel_text)) != 0)
			return; /* explanations fall back to the canonical spelling */
		memset(plan->rel_text + old, 0, (plan->rel_text_cap - old) * sizeof(*plan->rel_text));
	}
	plan->rel_text[idx] = text;
}

/* The pool Id a range is required by: its name, a native relation, or its
 * synthetic name (the range's text).  Worked out each time rather than
 * remembered in the range: pool_str2id and pool_rel2id are hash lookups,
 * and a memo in the range, keyed by its pool, dirtied a page of every
 * recipe a plan read. */
Id cfa_range_id(struct cfapkg_plan *plan, const struct cfa_range *r)
{
	Pool *pool = plan->pool;
	Id id;

	if (r->nclauses == 0)
		return pool_str2id(pool, r->name, 1);
	if (!native_range(pool, r))
		return pool_str2id(pool, r->text, 1);
	id = pool_rel2id(pool, pool_str2id(pool, r->name, 1), evr_id(pool, &r->clauses[0].ver),
	                 rel_flags(r->clauses[0].op), 1);
	note_rel_text(plan, id, r->text);
	return id;
}

/* A relation as the recipe wrote it when it was noted, else libsolv's own
 * spelling.  The text is borrowed from the pool or the recipes. */
const char *cfa_dep_text(const struct cfapkg_plan *plan, Id dep)
{
	if (ISRELDEP(dep) && (size_t)GETRELID(dep) < plan->rel_text_cap &&
	    plan->rel_text[GETRELID(dep)])
		return plan->rel_text[GETRELID(dep)];
	return pool_dep2str(plan->pool, dep);
}

/* Plain names and native ranges need no synthetic name; neither do the
 * driver's and glibc's, which facts decide before libsolv sees them. */
static enum cfapkg_err add_synth(struct builder *b, const struct cfa_range *r)
{
	const char *fact = fact_of_name(b->plan, r->name);

	if (r->nclauses == 0 || native_range(b->pool, r) || (fact && strcmp(fact, "hip_runtime")))
		return CFAPKG_E_OK; /* the driver and glibc are facts, checked in add_requires */
	if (cfa_grow((void **)&b->synths, &b->cap, b->nsynths + 1, sizeof(*b->synths)) != 0)
		return cfa_nomem(b->plan->ctx);
	b->synths[b->nsynths].name = pool_str2id(b->pool, r->name, 1);
	b->synths[b->nsynths].text = cfa_range_id(b->plan, r);
	b->synths[b->nsynths].range = r;
	b->nsynths++;
	return CFAPKG_E_OK;
}

static enum cfapkg_err add_dep_synths(struct builder *b, const struct cfapkg_dep *deps, size_t n)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < n && !e; i++)
		if (cfa_dep_applies(&b->plan->facts, &deps[i]))
			e = add_synth(b, deps[i].range);
	return e;
}

/* Every distinct range anywhere in the recipes, requests and pins.
 * The array is grown once to the count of every range that could need one, so
 * the loops below grow nothing. */
static enum cfapkg_err collect_synths(struct builder *b)
{
	const struct cfapkg_ctx *ctx = b->plan->ctx;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, j, out, total = b->plan->nspecs;

	for (i = 0; i < ctx->nrecipes; i++)
		for (j = 0; j < ctx->recipes[i]->nversions; j++)
			total += ctx->recipes[i]->versions[j].nrequires +
			         ctx->recipes[i]->versions[j].nconflicts;
	if (cfa_grow((void **)&b->synths, &b->cap, total + 1, sizeof(*b->synths)) != 0)
		return cfa_nomem(b->plan->ctx);
	for (i = 0; i < ctx->nrecipes && !e; i++) {
		const struct cfapkg_recipe *r = ctx->recipes[i];
		for (j = 0; j < r->nversions && !e; j++) {
			const struct cfapkg_version *v = &r->versions[j];
			e = add_dep_synths(b, v->requires, v->nrequires);
			if (!e)
				e = add_dep_synths(b, v->conflicts, v->nconflicts);
		}
	}
	for (i = 0; i < b->plan->nspecs && !e; i++)
		e = add_synth(b, &b->plan->specs[i]);
	if (e)
		return e;
	qsort(b->synths, b->nsynths, sizeof(*b->synths), synth_cmp);
	/* Two deps spelled alike share one synthetic name: its providers are
	 * the same set. */
	for (i = 0, out = 0; i < b->nsynths; i++)
		if (out == 0 || b->synths[out - 1].text != b->synths[i].text)
			b->synths[out++] = b->synths[i];
	b->nsynths = out;
	return CFAPKG_E_OK;
}

/* Adds the synthetic names that (name = ver) satisfies to *provides.
 * Binary search to the first synth of name, then every one of its ranges that
 * ver falls in. */
static Offset add_matching_synths(struct builder *b, Repo *repo, Offset provides, Id name,
                                  const struct cfa_ver *ver)
{
	size_t lo = 0, hi = b->nsynths;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->synths[mid].name < name)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < b->nsynths && b->synths[lo].name == name; lo++)
		if (cfa_range_match(b->synths[lo].range, ver))
			provides = repo_addid_dep(repo, provides, b->synths[lo].text, 0);
	return provides;
}

/* libsolv compares EVR strings itself only for native ranges; the string is
 * the version's canonical form, so equal versions share one Id. */
static Id evr_id(Pool *pool, const struct cfa_ver *v)
{
	char evr[CFA_VER_EVR_MAX];

	cfa_ver_evr(v, evr, sizeof(evr));
	return pool_str2id(pool, evr, 1);
}

/* Every version provides itself at its own version, each synthetic name whose
 * range it falls in, and its recipe's provides that apply here. */
static enum cfapkg_err add_provides(struct builder *b, Solvable *s,
                                    const struct cfapkg_version *v)
{
	Repo *repo = s->repo;
	Offset prov = 0;
	size_t i;

	prov = repo_addid_dep(repo, prov, pool_rel2id(b->pool, s->name, s->evr, REL_EQ, 1), 0);
	prov = add_matching_synths(b, repo, prov, s->name, v->parsed);
	for (i = 0; i < v->nprovides; i++) {
		const struct cfapkg_dep *d = &v->provides[i];
		Id name = pool_str2id(b->pool, d->name, 1);
		if (!cfa_dep_applies(&b->plan->facts, d))
			continue;
		/* A provide without a version meets any requirement on its
		 * name, as in lockcheck.c's meets(). */
		if (d->range->nclauses == 0) {
			prov = repo_addid_dep(repo, prov, name, 0);
			continue;
		}
		prov = repo_addid_dep(
			repo, prov,
			pool_rel2id(b->pool, name, evr_id(b->pool, &d->range->clauses[0].ver), REL_EQ, 1),
			0);
		prov = add_matching_synths(b, repo, prov, name, &d->range->clauses[0].ver);
	}
	s->provides = prov;
	return CFAPKG_E_OK;
}

/* The marker is a name nothing provides: requiring it makes libsolv rule the
 * version out and name the marker as the reason, which cfa_marker_of turns
 * back into the fact. */
static enum cfapkg_err add_marker(struct builder *b, Solvable *s, enum cfa_marker_kind kind,
                                  const struct cfapkg_version *v, const struct cfapkg_dep *d)
{
	struct cfapkg_plan *plan = b->plan;
	/* The whole text names the marker: two cut to the same length would
	 * share one and blame the wrong dependency. */
	char *text = cfa_aprintf("!%d:%s=%s:%s", (int)kind, v->recipe->name, v->version,
	                         d ? d->text : "");
	Id id;

	if (!text)
		return cfa_nomem(plan->ctx);
	id = pool_str2id(b->pool, text, 1);
	cfa_free(text);
	if ((size_t)id >= plan->marker_of_cap) {
		size_t old = plan->marker_of_cap;
		if (cfa_grow((void **)&plan->marker_of, &plan->marker_of_cap, (size_t)id + 1,
		             sizeof(int)) != 0)
			return cfa_nomem(plan->ctx);
		memset(plan->marker_of + old, 0, (plan->marker_of_cap - old) * sizeof(int));
	}
	/* One marker record per distinct text, however many solvables require
	 * it. */
	if (!plan->marker_of[id]) {
		if (cfa_grow((void **)&plan->markers, &plan->markers_cap, plan->nmarkers + 1,
		             sizeof(*plan->markers)) != 0)
			return cfa_nomem(plan->ctx);
		plan->markers[plan->nmarkers] = (struct cfa_marker){kind, v, d};
		plan->marker_of[id] = (int)++plan->nmarkers;
	}
	s->requires = repo_addid_dep(s->repo, s->requires, id, 0);
	return CFAPKG_E_OK;
}

/* A requirement on a fact-backed name: true when the fact satisfies it,
 * with *unchecked set when the fact is not known. */
static bool fact_satisfies(struct builder *b, const char *fact, const struct cfa_range *r,
                           unsigned char *unchecked)
{
	const struct cfapkg_facts *f = &b->plan->facts;
	size_t i;

	if (strcmp(fact, "driver") == 0) {
		if (!b->driver_known) {
			*unchecked |= CFA_UNCHECKED_DRIVER;
			return true;
		}
		return cfa_range_match(r, &b->driver);
	}
	if (strcmp(fact, "glibc") == 0) {
		/* Only Linux has one: a Windows plan never meets a glibc floor. */
		if (!b->glibc_known) {
			*unchecked |= CFA_UNCHECKED_GLIBC;
			return true;
		}
		return cfa_range_match(r, &b->glibc);
	}
	if (!f->hip_runtimes_known) {
		*unchecked |= CFA_UNCHECKED_HIP_RUNTIME;
		return true;
	}
	for (i = 0; i < f->nhip_runtimes; i++) {
		struct cfa_ver v = {.rel = {f->hip_runtimes[i]}, .nrel = 1, .rank = CFA_RANK_FINAL};
		if (cfa_range_match(r, &v))
			return true;
	}
	return false;
}

/* A HIP runtime requirement goes to libsolv when the machine's runtime or a
 * packaged one can meet it; otherwise it is
 * the fact that blocks, and the marker says so.  Whether the machine's
 * runtime was known is noted on the runtime's solvables, not here. */
static bool hip_runtime_reachable(struct builder *b, const struct cfa_range *r)
{
	unsigned char ignored = 0;

	return fact_satisfies(b, "hip_runtime", r, &ignored) ||
	       cfa_hip_packaged_provider(b->plan, r);
}

/* Requirements the driver or glibc decide never reach libsolv: a fact that
 * fails them becomes a marker, one it meets drops them. */
static enum cfapkg_err add_requires(struct builder *b, Solvable *s,
                                    const struct cfapkg_version *v, unsigned char *unchecked)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < v->nrequires && !e; i++) {
		const struct cfapkg_dep *d = &v->requires[i];
		const char *fact = fact_of_name(b->plan, d->name);
		if (!cfa_dep_applies(&b->plan->facts, d))
			continue;
		if (fact && strcmp(fact, "hip_runtime") != 0) {
			if (!fact_satisfies(b, fact, d->range, unchecked))
				e = add_marker(b, s, strcmp(fact, "driver") == 0 ? CFA_MK_DRIVER
				                                                 : CFA_MK_GLIBC, v, d);
			continue;
		}
		/* An installed part uses the machine's runtime: the fact decides, and
		 * its major enters the one-major rule through add_one_major. */
		if (fact && v->recipe->kind == CFAPKG_KIND_SYSTEM) {
			if (!fact_satisfies(b, fact, d->range, unchecked))
				e = add_marker(b, s, CFA_MK_HIP_RUNTIME, v, d);
			continue;
		}
		if (fact && !hip_runtime_reachable(b, d->range)) {
			e = add_marker(b, s, CFA_MK_HIP_RUNTIME, v, d);
			continue;
		}
		s->requires = repo_addid_dep(s->repo, s->requires, cfa_range_id(b->plan, d->range), 0);
	}
	return e;
}

/* Whether an installed HIP SDK has v's version: each component the SDK names
 * must match, so a shorter SDK version covers every longer one. */
bool cfa_system_present(const struct cfapkg_plan *plan, const struct cfapkg_version *v)
{
	const struct cfapkg_facts *f = &plan->facts;
	size_t i;
	int k;

	for (i = 0; i < f->nhip_sdks; i++) {
		struct cfa_ver have;
		if (!cfa_ver_parse(f->hip_sdks[i], strlen(f->hip_sdks[i]), &have, NULL))
			continue;
		/* "6.4" (a Windows SDK folder name) stands for any 6.4.x. */
		for (k = 0; k < have.nrel && have.rel[k] == v->parsed->rel[k]; k++)
			;
		if (k == have.nrel)
			return true;
	}
	return false;
}

/* Markers for machine facts that rule this version out.
 * A package with no download for this OS and architecture is ruled out like
 * one for another OS: it could not be installed here. */
static enum cfapkg_err add_fact_markers(struct builder *b, Solvable *s,
                                        const struct cfapkg_version *v, unsigned char *unchecked)
{
	const struct cfapkg_plan *plan = b->plan;
	const struct cfapkg_recipe *r = v->recipe;
	enum cfapkg_err e = CFAPKG_E_OK;
	bool os_ok = (v->nos == 0 || cfa_in_list(plan->facts.os, v->os, v->nos)) &&
	             (v->narch == 0 || cfa_in_list(plan->facts.arch, v->arch, v->narch));

	if (r->kind == CFAPKG_KIND_PACKAGE &&
	    !cfapkg_version_source(v, plan->facts.os, plan->facts.arch))
		os_ok = false;
	if (!os_ok)
		e = add_marker(b, s, CFA_MK_OS, v, NULL);
	if (!e && !cfapkg_version_supports_gfx(v, plan->facts.gfx))
		e = add_marker(b, s, CFA_MK_GPU, v, NULL);
	if (!e && cfa_is_hip_runtime(plan, v)) {
		if (!plan->facts.hip_runtimes_known)
			*unchecked |= CFA_UNCHECKED_HIP_RUNTIME;
		else if (!cfa_hip_fact_has(plan, v))
			e = add_marker(b, s, CFA_MK_HIP_RUNTIME, v, NULL);
	}
	if (!e && r->kind == CFAPKG_KIND_SYSTEM && strcmp(r->fact, "hip_sdk") == 0) {
		if (!plan->facts.hip_sdks_known)
			*unchecked |= CFA_UNCHECKED_HIP_SDK;
		else if (!cfa_system_present(plan, v))
			e = add_marker(b, s, CFA_MK_SYSTEM, v, NULL);
	}
	/* The experimental policy is a marker too, so that a plan blocked only
	 * by it can say that --allow-experimental would solve it. */
	if (!e && !plan->allow_experimental &&
	    plan->status[s - b->pool->solvables] == CFAPKG_STATUS_EXPERIMENTAL)
		e = add_marker(b, s, CFA_MK_EXPERIMENTAL, v, NULL);
	return e;
}

/* One HIP runtime per process: a provider of major N rules out the others.
 * Conflicting with "< N" and "> N" of the runtime's name leaves only major N
 * installable beside this version. */
static void add_one_major(struct builder *b, Solvable *s, const struct cfapkg_version *v)
{
	int major = cfa_hip_major(b->plan, v);
	struct cfa_ver n = {.nrel = 1, .rank = CFA_RANK_FINAL};
	Id name, evr;

	if (major < 0)
		return;
	n.rel[0] = (uint32_t)major;
	name = pool_str2id(b->pool, b->plan->hip_runtime_name, 1);
	evr = evr_id(b->pool, &n);
	s->conflicts = repo_addid_dep(s->repo, s->conflicts,
	                              pool_rel2id(b->pool, name, evr, REL_LT, 1), 0);
	s->conflicts = repo_addid_dep(s->repo, s->conflicts,
	                              pool_rel2id(b->pool, name, evr, REL_GT, 1), 0);
}

static enum cfapkg_err add_conflicts(struct builder *b, Solvable *s,
                                     const struct cfapkg_version *v)
{
	size_t i;

	add_one_major(b, s, v);
	for (i = 0; i < v->nconflicts; i++) {
		const struct cfapkg_dep *d = &v->conflicts[i];
		if (cfa_dep_applies(&b->plan->facts, d))
			s->conflicts = repo_addid_dep(s->repo, s->conflicts,
			                              cfa_range_id(b->plan, d->range), 0);
	}
	return CFAPKG_E_OK;
}

/* One solvable per recipe version; its status and unchecked facts are kept in
 * arrays indexed by the solvable's Id. */
static enum cfapkg_err add_version(struct builder *b, const struct cfapkg_version *v)
{
	struct cfapkg_plan *plan = b->plan;
	Id p = repo_add_solvable(plan->repo);
	Solvable *s = pool_id2solvable(b->pool, p);
	unsigned char unchecked = 0;
	enum cfapkg_err e;

	s->name = pool_str2id(b->pool, v->recipe->name, 1);
	s->evr = evr_id(b->pool, v->parsed);
	s->arch = ARCH_NOARCH;
	plan->status[p] = (unsigned char)cfapkg_version_status(plan->ctx, v, plan->facts.gfx);
	/* Provides, requires and conflicts each stay contiguous in the repo's
	 * id array only when added in this order, one solvable at a time. */
	if ((e = add_provides(b, s, v)) || (e = add_requires(b, s, v, &unchecked)) ||
	    (e = add_fact_markers(b, s, v, &unchecked)) || (e = add_conflicts(b, s, v)))
		return e;
	/* cfa_pool_build sized both arrays for every version. */
	plan->vers[p] = v;
	plan->unchecked_mask[p] = unchecked;
	return CFAPKG_E_OK;
}

/* The most solvables the pool can get, for sizing the per-Id arrays. */
static size_t count_versions(const struct cfapkg_ctx *ctx)
{
	size_t i, n = 0;
	for (i = 0; i < ctx->nrecipes; i++)
		n += ctx->recipes[i]->nversions;
	return n;
}

/* The versions that go into the pool: those of the recipes reached (all
 * when reach is NULL). */
static size_t count_reached(const struct cfapkg_ctx *ctx, const unsigned char *reach)
{
	size_t i, n = 0;

	for (i = 0; i < ctx->nrecipes; i++)
		if (!reach || reach[i])
			n += ctx->recipes[i]->nversions;
	return n;
}

enum cfapkg_err cfa_pool_build(struct cfapkg_plan *plan)
{
	const struct cfapkg_ctx *ctx = plan->ctx;
	struct builder b = {.plan = plan};
	enum cfapkg_err e = CFAPKG_E_OK;
	/* Two more than the versions: libsolv's solvables 0 and 1 are its own
	 * (the null solvable and the system solvable). */
	size_t i, j, total = count_versions(ctx) + 2;
	unsigned char *reach = NULL;

	plan->pool = b.pool = pool_create();
	plan->repo = repo_create(b.pool, "cfapkg");
	plan->vers = cfa_calloc(total, sizeof(*plan->vers));
	plan->unchecked_mask = cfa_calloc(total, 1);
	plan->status = cfa_calloc(total, 1);
	if (!plan->vers || !plan->unchecked_mask || !plan->status)
		return cfa_nomem(plan->ctx);
	plan->nvers = total;
	find_fact_names(plan);
	/* Only the recipes the requests can reach go into the pool, unless a
	 * testcase is written (it must hold the whole problem). */
	if (!plan->full_pool && (e = cfa_closure(plan, &reach)))
		return e; /* detail set by cfa_closure */
	cfa_pool_size_hashes(b.pool, count_reached(ctx, reach));
	if (plan->facts.driver)
		b.driver_known = cfa_ver_parse(plan->facts.driver, strlen(plan->facts.driver),
		                               &b.driver, NULL);
	if (plan->facts.glibc)
		b.glibc_known = cfa_ver_parse(plan->facts.glibc, strlen(plan->facts.glibc),
		                              &b.glibc, NULL);
	e = collect_synths(&b);
	for (i = 0; i < ctx->nrecipes && !e; i++) {
		/* The driver is a fact, checked in add_requires; the HIP runtime's
		 * versions are solvables that the fact allows or blocks. */
		const char *fact = fact_of_name(plan, ctx->recipes[i]->name);
		if (fact || (reach && !reach[i]))
			continue;
		for (j = 0; j < ctx->recipes[i]->nversions && !e; j++)
			e = add_version(&b, &ctx->recipes[i]->versions[j]);
	}
	/* Last, so that the other parts keep their ids (and so their order
	 * among equals in a plan) whether or not the runtime is in the pool. */
	for (i = 0; i < ctx->nrecipes && !e; i++) {
		const char *fact = fact_of_name(plan, ctx->recipes[i]->name);
		if (!fact || strcmp(fact, "hip_runtime") != 0 || (reach && !reach[i]))
			continue;
		for (j = 0; j < ctx->recipes[i]->nversions && !e; j++)
			e = add_version(&b, &ctx->recipes[i]->versions[j]);
	}
	cfa_free(b.synths);
	cfa_free(reach);
	if (e)
		return e; /* detail set above */
	/* whatprovides is only valid once the repo is internalized: the solver
	 * reads it for every requirement. */
	repo_internalize(plan->repo);
	cfa_pool_index_providers(b.pool);
	return CFAPKG_E_OK;
}

/* NULL for any Id that is not a marker, so callers may ask about every
 * dependency libsolv reports. */
const struct cfa_marker *cfa_marker_of(const struct cfapkg_plan *plan, Id dep)
{
	if (dep <= 0 || (size_t)dep >= plan->marker_of_cap || !plan->marker_of[dep])
		return NULL;
	return &plan->markers[plan->marker_of[dep] - 1];
}

enum cfapkg_status cfa_solvable_status(const struct cfapkg_plan *plan, Id p)
{
	return (enum cfapkg_status)plan->status[p];
}

const struct cfapkg_version *cfa_solvable_version(const struct cfapkg_plan *plan, Id p)
{
	return p > 0 && (size_t)p < plan->nvers ? plan->vers[p] : NULL;
}

/* Solving and installing are separate: a version may solve and still not be
 * installable here (no download for this platform, a HIP SDK not present), and
 * *why says so for the plan. */
bool cfa_installable(const struct cfapkg_plan *plan, const struct cfapkg_version *v,
                     const char **why)
{
	const struct cfapkg_source *src;

	switch (v->recipe->kind) {
	case CFAPKG_KIND_META:
		return true;
	case CFAPKG_KIND_SYSTEM:
		if (strcmp(v->recipe->fact, "hip_sdk") == 0 && !cfa_system_present(plan, v)) {
			*why = plan->facts.hip_sdks_known ? "not installed on this machine"
			                                  : "system part: not known to be installed";
			return !plan->facts.hip_sdks_known;
		}
		return true;
	case CFAPKG_KIND_USER:
		*why = "user-supplied files: add them with cfapkg add-file";
		return true;
	case CFAPKG_KIND_PACKAGE:
		break;
	}
	src = cfapkg_version_source(v, plan->facts.os, plan->facts.arch);
	if (!src) {
		*why = "no download for this OS and architecture";
		return false;
	}
	if (src->unavailable) {
		*why = src->unavailable;
		return false;
	}
	return true;
}
