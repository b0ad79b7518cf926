/*
 * test_alloc.c - every allocation failure during loading and planning ends
 * in CFAPKG_E_NOMEM (or success), never a crash or a leak; the sanitizer
 * build checks the leaks.  Bounded: it stops at the first run that needed
 * no failure injection, or after a fixed number of runs.
 */
#include <string.h>

#include "cfapkg.h"
#include "check.h"

#define MAX_RUNS 20000

static enum cfapkg_err plan_once(void)
{
	static const char *const specs[] = {"pytorch-cuda-stack"};
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_plan *plan = NULL;
	struct cfapkg_facts f;
	enum cfapkg_err e;

	if (!ctx)
		return CFAPKG_E_NOMEM;
	cfapkg_facts_init_host(&f);
	e = cfapkg_facts_set(ctx, &f, "os", "windows");
	if (!e)
		e = cfapkg_facts_set(ctx, &f, "gpu", "gfx1030");
	if (!e)
		e = cfapkg_facts_set(ctx, &f, "hip-sdk", "7.2.0");
	if (!e)
		e = cfapkg_plan_solve(ctx, &f, specs, 1, NULL, &plan);
	cfapkg_plan_free(plan);
	cfapkg_ctx_free(ctx);
	return e;
}

int main(void)
{
	unsigned long n;
	int nomem = 0;

	for (n = 1; n <= MAX_RUNS; n++) {
		enum cfapkg_err e;
		cfapkg_debug_fail_alloc(n);
		e = plan_once();
		cfapkg_debug_fail_alloc(0);
		if (e == CFAPKG_E_OK)
			break;
		CHECK(e == CFAPKG_E_NOMEM, "failing allocation %lu gave error %d, not NOMEM", n, e);
		nomem++;
	}
	CHECK(n <= MAX_RUNS, "a plan succeeded once allocations stopped failing");
	CHECK(nomem > 10, "failures were injected (%d)", nomem);
	return check_report();
}
