/*
 * envplan.c - the one solve for an environment, made by plan and by
 * install, update and remove alike: the environment's pins first, then
 * the command's; the versions its current generation holds kept where
 * they still fit, except those the command moves.  Being one function,
 * what `plan` shows is what `install` would take.
 */
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "env/env.h"
#include "trans/trans.h"

struct specs {
	char **v;
	size_t n, cap;
};

static bool moved(const struct cfa_env_plan_req *rq, const char *name)
{
	size_t i;

	if (rq->move_all)
		return true;
	for (i = 0; i < rq->nmoving; i++)
		if (cfapkg_spec_names(rq->moving[i], name))
			return true;
	return false;
}

/* The pins every solve of env honours: the environment's own, then the
 * command's (a later pin on a name narrows an earlier one: both bind). */
static enum cfapkg_err merge_pins(struct cfapkg_ctx *ctx, const char *env,
                                  const struct cfapkg_plan_opts *po, struct specs *out)
{
	char **own = NULL;
	size_t n = 0, i;
	enum cfapkg_err e = CFAPKG_E_OK;
	bool ok = true;

	/* Only an environment that exists has pins of its own; a plan for a new
	 * one starts from the command's. */
	if (cfapkg_env_exists(ctx, env) && (e = cfapkg_env_pins(ctx, env, &own, &n)))
		return e;
	for (i = 0; i < n && ok; i++)
		ok = cfa_strv_push(&out->v, &out->n, &out->cap, own[i]);
	for (i = 0; po && i < po->npins && ok; i++)
		ok = cfa_strv_push(&out->v, &out->n, &out->cap, po->pins[i]);
	cfapkg_free(own);
	return ok ? CFAPKG_E_OK : cfa_nomem(ctx);
}

/* "name==version" of each installed part the command does not move: the
 * solver keeps them where they fit, so nothing moves unasked. */
static enum cfapkg_err installed_specs(struct cfapkg_ctx *ctx, const struct cfa_env_plan_req *rq,
                                       struct specs *out)
{
	size_t i;

	for (i = 0; rq->installed && i < rq->installed->nparts; i++) {
		const struct cfapkg_lockfile_part *p = &rq->installed->parts[i];
		char *spec;
		bool ok;
		if (moved(rq, p->name))
			continue;
		spec = cfa_aprintf("%s==%s", p->name, p->version);
		ok = spec && cfa_strv_push(&out->v, &out->n, &out->cap, spec);
		cfa_free(spec);
		if (!ok)
			return cfa_nomem(ctx);
	}
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_env_plan(struct cfapkg_ctx *ctx, const struct cfa_env_plan_req *rq,
                             const char *const *specs, size_t nspecs, struct cfapkg_plan **out)
{
	struct cfapkg_plan_opts po = rq->opts ? *rq->opts : (struct cfapkg_plan_opts){0};
	struct specs pins = {0}, keep = {0};
	enum cfapkg_err e;

	*out = NULL;
	e = merge_pins(ctx, rq->env, rq->opts, &pins);
	if (!e)
		e = installed_specs(ctx, rq, &keep);
	if (!e) {
		po.pins = (const char *const *)pins.v;
		po.npins = pins.n;
		/* The installed versions are preferences, not pins: one that no
		 * longer fits gives way rather than failing the solve. */
		po.prefer = (const char *const *)keep.v;
		po.nprefer = keep.n;
		e = cfapkg_plan_solve(ctx, rq->facts, specs, nspecs, &po, out);
	}
	cfa_strv_free(pins.v, pins.n);
	cfa_strv_free(keep.v, keep.n);
	return e;
}

enum cfapkg_err cfapkg_env_plan(struct cfapkg_ctx *ctx, const char *env,
                                const struct cfapkg_facts *facts, const char *const *specs,
                                size_t nspecs, const struct cfapkg_plan_opts *opts,
                                struct cfapkg_plan **out)
{
	struct cfa_env_plan_req rq = {.env = env ? env : CFAPKG_DEFAULT_ENV, .facts = facts,
	                              .opts = opts};
	enum cfapkg_err e = CFAPKG_E_OK;

	*out = NULL;
	/* An environment not made yet, or with nothing installed, has nothing
	 * to keep: the plan is the one a first install would make. */
	if (cfapkg_env_exists(ctx, rq.env) &&
	    (e = cfapkg_env_lockfile(ctx, rq.env, 0, (struct cfapkg_lockfile **)&rq.installed)) ==
	        CFAPKG_E_NOTFOUND) {
		cfapkg_ctx_clear_error(ctx);
		e = CFAPKG_E_OK;
	}
	if (!e)
		e = cfa_env_plan(ctx, &rq, specs, nspecs, out);
	cfapkg_lockfile_free((struct cfapkg_lockfile *)rq.installed);
	return e;
}
