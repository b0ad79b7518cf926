/*
 * frontend.c - a second front end, in a few dozen lines, through the
 * public header alone: the machine to plan for, plan, install, update,
 * doctor's verdict, a rollback to the known-good generation, and why an
 * install after it changes nothing.  It shows that every decision
 * is the library's: nothing here chooses a version, a verdict or a
 * target.  usage: frontend ROOT RECIPES GPU (a served test channel):
 * pytorch-cuda-stack with ZLUDA 6 (a pin for this command only), ZLUDA
 * updated, generation 1 judged usable, then rolled back to; an install
 * of the stack there changes nothing, and the library says why.
 */
#include <stdio.h>
#include <string.h>

#include "cfapkg.h"

static int fail(struct cfapkg_ctx *ctx, const char *what)
{
	fprintf(stderr, "frontend: %s: %s\n", what, cfapkg_ctx_error(ctx));
	return 1;
}

static const char *version_of(const struct cfapkg_plan *plan, const char *name)
{
	size_t i, n;
	const struct cfapkg_plan_item *items = cfapkg_plan_items(plan, &n);

	for (i = 0; i < n; i++)
		if (strcmp(items[i].version->recipe->name, name) == 0)
			return items[i].version->version;
	return "";
}

/* One transaction, start to end; *zluda: the version it took. */
static int change(struct cfapkg_ctx *ctx, struct cfapkg_trans_opts *o, char *zluda, size_t len)
{
	struct cfapkg_trans_result r = {0};
	struct cfapkg_trans *t = NULL;
	enum cfapkg_err e = cfapkg_trans_begin(ctx, o, &t);

	if (!e && !(e = cfapkg_trans_prepare(t)) &&
	    (size_t)snprintf(zluda, len, "%s", version_of(cfapkg_trans_plan(t), "zluda")) >= len)
		e = CFAPKG_E_USAGE;
	if (!e)
		e = cfapkg_trans_commit(t, &r);
	cfapkg_trans_free(t);
	return e ? fail(ctx, "install") : 0;
}

/* doctor's verdict on probe results a machine with the stack gives. */
static int judge_good(struct cfapkg_ctx *ctx, unsigned gen)
{
	static const char *const ok[] = {"cuda", "cublas", "cublaslt"};
	struct cfapkg_verdict *v = cfapkg_verdict_new();
	struct cfapkg_probe_result r = {.status = CFAPKG_PROBE_OK};
	enum cfapkg_gen_state state;
	bool needed = false;
	size_t i;
	int rc = 1;

	for (i = 0; v && i < 3; i++) {
		r.library = ok[i];
		cfapkg_verdict_add_probe(ctx, v, &r);
	}
	r.library = "cufft";
	r.status = CFAPKG_PROBE_MISSING;
	if (v && !cfapkg_verdict_add_probe(ctx, v, &r) && cfapkg_verdict_usable(v) &&
	    !cfapkg_verdict_needs_mark(ctx, v, "default", gen, &state, &needed) && needed &&
	    !cfapkg_verdict_mark(ctx, v, "default", gen, "frontend", NULL, 0, &state) &&
	    state == CFAPKG_GEN_KNOWN_GOOD)
		rc = 0;
	cfapkg_verdict_free(v);
	return rc ? fail(ctx, "doctor's verdict") : 0;
}

/* The stack installed again on the rolled-back generation: nothing to
 * do, and the library's reasons for the stack and for ZLUDA (numbers a
 * front end would put in words). */
static int why_kept(struct cfapkg_ctx *ctx, struct cfapkg_facts *f)
{
	const char *args[] = {"pytorch-cuda-stack"}, *names[] = {"pytorch-cuda-stack", "zluda"};
	struct cfapkg_trans_opts o = {.kind = CFAPKG_TRANS_INSTALL, .args = args, .nargs = 1,
	                              .facts = f, .command = "frontend install"};
	struct cfapkg_kept_list *l = NULL;
	struct cfapkg_trans *t = NULL;
	const struct cfapkg_kept *k;
	size_t i, n;
	int rc = 1;

	if (!cfapkg_trans_begin(ctx, &o, &t) && !cfapkg_trans_prepare(t) &&
	    cfapkg_trans_nothing_to_do(t) && !cfapkg_trans_kept(ctx, t, names, 2, &l)) {
		k = cfapkg_kept_items(l, &n);
		for (i = 0; i < n; i++)
			printf("kept %s %s (newest %s): reason %d\n", k[i].name, k[i].version,
			       k[i].newest, (int)k[i].why);
		rc = 0;
	}
	cfapkg_kept_free(l);
	cfapkg_trans_free(t);
	return rc ? fail(ctx, "why nothing changed") : 0;
}

int main(int argc, char **argv)
{
	const char *specs[] = {"pytorch-cuda-stack"}, *pins[] = {"zluda==6-preview.69"};
	const char *up[] = {"zluda"};
	struct cfapkg_plan_opts po = {.pins = pins, .npins = 1};
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	const char *keys[] = {"gpu"}, *values[] = {argc > 3 ? argv[3] : ""};
	struct cfapkg_facts_request req = {.env = "default", .gpu_index = -1, .keys = keys,
	                                   .values = values, .nkeys = 1};
	struct cfapkg_facts_choice machine = {0};
	bool chosen;
	struct cfapkg_facts f = {0};
	struct cfapkg_plan *plan = NULL;
	struct cfapkg_writer_lock *lock = NULL;
	struct cfapkg_trans_opts o = {.kind = CFAPKG_TRANS_INSTALL, .args = specs, .nargs = 1,
	                              .facts = &f, .pins = pins, .npins = 1,
	                              .command = "frontend install"};
	struct cfapkg_rollback rb;
	char planned[64] = "", first[64] = "", second[64] = "";
	unsigned cur = 0;

	if (argc != 4 || !ctx)
		return 2;
	if (cfapkg_ctx_set_root(ctx, argv[1]) || cfapkg_ctx_add_recipe_dir(ctx, argv[2]))
		return fail(ctx, "setup");
	/* Only the choice's facts are planned with, copied: the choice and
	 * its machine go at once. */
	chosen = cfapkg_facts_choose(ctx, &req, &machine) == CFAPKG_E_OK &&
	         machine.from == CFAPKG_FACTS_DESCRIBED &&
	         cfapkg_facts_copy(&machine.facts, &f) == CFAPKG_E_OK;
	cfapkg_facts_choice_clear(&machine);
	if (!chosen || (!cfapkg_env_exists(ctx, "default") && cfapkg_env_create(ctx, "default")))
		return fail(ctx, "setup");
	if (cfapkg_env_plan(ctx, "default", &f, specs, 1, &po, &plan) || !cfapkg_plan_solved(plan))
		return fail(ctx, "plan");
	if ((size_t)snprintf(planned, sizeof(planned), "%s", version_of(plan, "zluda")) >=
	    sizeof(planned))
		return 1;
	cfapkg_plan_free(plan);
	if (change(ctx, &o, first, sizeof(first)) || judge_good(ctx, 1))
		return 1;
	o = (struct cfapkg_trans_opts){.kind = CFAPKG_TRANS_UPDATE, .args = up, .nargs = 1,
	                               .facts = &f, .command = "frontend update"};
	if (change(ctx, &o, second, sizeof(second)))
		return 1;
	if (cfapkg_writer_lock(ctx, 0, &lock) ||
	    cfapkg_env_rollback(ctx, "default", 0, true, &rb) || !rb.why ||
	    cfapkg_env_current(ctx, "default", &cur))
		return fail(ctx, "rollback");
	cfapkg_writer_unlock(lock);
	if (why_kept(ctx, &f))
		return 1;
	printf("planned %s installed %s updated %s rolled back to %u (%s)\n", planned, first,
	       second, cur, rb.why->reason);
	cfapkg_free(rb.why);
	cfapkg_facts_clear(&f);
	cfapkg_ctx_free(ctx);
	return 0;
}
