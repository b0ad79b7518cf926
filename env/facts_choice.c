/*
 * facts_choice.c - which machine a plan is for.  This machine, detected,
 * unless another is described (a facts file or a named GPU); then the
 * facts file; then each fact the caller sets, in its order, so a fact set
 * by hand always wins over what was detected or read.  When nothing is
 * set and no AMD GPU is found here, the environment's active generation
 * serves with the facts it was planned with, so that a machine described
 * once need not be described again.
 */
#include <string.h>

#include "core/mem.h"
#include "env/env.h"

/* Whether the caller sets key by hand: such a fact is never dropped or replaced
 * by what was detected. */
static bool sets(const struct cfapkg_facts_request *req, const char *key)
{
	size_t i;

	for (i = 0; i < req->nkeys; i++)
		if (strcmp(req->keys[i], key) == 0)
			return true;
	return false;
}

/* The facts the environment's active generation was planned with, when
 * they may serve: nothing set by hand, and a GPU recorded.  What cannot
 * be read is not remembered: the plan detects, as it would otherwise;
 * but facts that could not be held are CFAPKG_E_NOMEM. */
static enum cfapkg_err remembered(struct cfapkg_ctx *ctx, const struct cfapkg_facts_request *req,
                                  struct cfapkg_facts_choice *c)
{
	unsigned gen = 0;
	enum cfapkg_err e;

	if (!req->env || req->nkeys || !cfapkg_env_exists(ctx, req->env))
		return CFAPKG_E_OK;
	if ((e = cfapkg_env_facts(ctx, req->env, &gen, &c->remembered)) == CFAPKG_E_NOMEM)
		return e; /* detail set by the reader */
	if (!e && c->remembered.gfx[0])
		c->remembered_gen = gen;
	else
		cfapkg_facts_clear(&c->remembered);
	cfapkg_ctx_clear_error(ctx);
	return CFAPKG_E_OK;
}

static enum cfapkg_err no_gpu(struct cfapkg_ctx *ctx)
{
	return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "no AMD GPU found on this machine ('cfapkg detect' "
	                "shows what was read); to plan for another machine, name its GPU by "
	                "target, name or PCI id, for example gfx1200 or \"RX 9060 XT\" ('cfapkg "
	                "gpus' lists them)");
}

/* This machine, or with no GPU here the remembered one. */
static enum cfapkg_err detect_here(struct cfapkg_ctx *ctx, const struct cfapkg_facts_request *req,
                                   struct cfapkg_facts_choice *c)
{
	enum cfapkg_err e;

	/* Read before detecting, so that the generation's facts are at hand
	 * whichever way detection goes. */
	if ((e = remembered(ctx, req, c)) || (e = cfapkg_detect(ctx, req->gpu_index, &c->machine)))
		return e;
	c->detected = true;
	/* A GPU found here wins over the remembered machine: the plan is for
	 * where it runs unless told otherwise. */
	if (c->machine.selected >= 0)
		return cfapkg_machine_facts(&c->machine, &c->facts) ? cfa_nomem(ctx) : CFAPKG_E_OK;
	if (!c->remembered_gen)
		return no_gpu(ctx);
	/* As if its facts were given again: this machine's notes do not apply. */
	c->from = CFAPKG_FACTS_REMEMBERED;
	c->detected = false;
	return cfapkg_facts_copy(&c->remembered, &c->facts) ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

/* Another OS named on a detected machine: the GPU is the one found here,
 * but the driver, HIP runtimes and SDKs found are this OS's, so they are
 * dropped (not known, so not checked) unless set by hand too. */
static void other_os(const struct cfapkg_facts_request *req, struct cfapkg_facts_choice *c)
{
	struct cfapkg_facts *f = &c->facts;
	bool driver = !sets(req, "driver") && f->driver;
	bool runtimes = !sets(req, "hip-runtime") && f->hip_runtimes_known;
	bool sdks = !sets(req, "hip-sdk") && f->hip_sdks_known;

	/* Nothing to do unless the machine was detected, another OS was named,
	 * and there is something detected left to drop. */
	if (!c->detected || strcmp(f->os, c->machine.os) == 0 || !(driver || runtimes || sdks))
		return;
	c->other_os = true;
	if (driver)
		cfa_facts_forget(f, "driver");
	if (runtimes)
		cfa_facts_forget(f, "hip-runtime");
	if (sdks)
		cfa_facts_forget(f, "hip-sdk");
}

void cfapkg_facts_choice_clear(struct cfapkg_facts_choice *c)
{
	if (!c)
		return;
	cfapkg_machine_clear(&c->machine);
	cfapkg_facts_clear(&c->facts);
	cfapkg_facts_clear(&c->remembered);
	memset(c, 0, sizeof(*c));
}

enum cfapkg_err cfapkg_facts_choose(struct cfapkg_ctx *ctx, const struct cfapkg_facts_request *req,
                                    struct cfapkg_facts_choice *c)
{
	enum cfapkg_err e;
	size_t i;

	cfapkg_facts_choice_clear(c);
	c->from = req->file || sets(req, "gpu") ? CFAPKG_FACTS_DESCRIBED : CFAPKG_FACTS_DETECTED;
	/* The facts start as this host's OS and architecture, so that a
	 * description that leaves them out is a machine of this kind. */
	if (cfapkg_facts_init_host(&c->facts))
		return cfa_nomem(ctx);
	if (c->from == CFAPKG_FACTS_DETECTED && (e = detect_here(ctx, req, c)))
		return e;
	if (req->file && (e = cfapkg_facts_load(ctx, &c->facts, req->file)))
		return e;
	/* In the caller's order, so that a fact set twice keeps its last
	 * value. */
	for (i = 0; i < req->nkeys; i++)
		if ((e = cfapkg_facts_set(ctx, &c->facts, req->keys[i], req->values[i])))
			return e;
	other_os(req, c);
	/* Told only when it changes the answer: this GPU is not the one the
	 * environment was made for. */
	if (c->from == CFAPKG_FACTS_DETECTED && c->remembered_gen &&
	    strcmp(c->remembered.gfx, c->facts.gfx) == 0)
		c->remembered_gen = 0;
	return CFAPKG_E_OK;
}
