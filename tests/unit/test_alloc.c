/*
 * test_alloc.c - every allocation failure during loading and planning ends
 * in CFAPKG_E_NOMEM (or success), never a crash or a leak; the sanitizer
 * build checks the leaks.  Bounded: it stops at the first run that needed
 * no failure injection, or after a fixed number of runs.
 */
#include <string.h>

#include "cfapkg.h"
#include "check.h"
#include "platform/platform.h"

#define MAX_RUNS 20000

/* The root plans are made in: one of this test's own, which starts
 * without caches, so that the runs that make them fail too. */
#define PLAN_ROOT "alloc-root"

static enum cfapkg_err plan_once(void)
{
	static const char *const specs[] = {"pytorch-cuda-stack"};
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_plan *plan = NULL;
	struct cfapkg_facts f = {0};
	enum cfapkg_err e;

	if (!ctx)
		return CFAPKG_E_NOMEM;
	e = cfapkg_ctx_set_root(ctx, PLAN_ROOT);
	if (!e)
		e = cfapkg_facts_init_host(&f);
	if (!e)
		e = cfapkg_facts_set(ctx, &f, "os", "windows");
	if (!e)
		e = cfapkg_facts_set(ctx, &f, "gpu", "gfx1030");
	if (!e)
		e = cfapkg_facts_set(ctx, &f, "hip-sdk", "7.2.0");
	if (!e)
		e = cfapkg_plan_solve(ctx, &f, specs, 1, NULL, &plan);
	cfapkg_plan_free(plan);
	cfapkg_facts_clear(&f);
	cfapkg_ctx_free(ctx);
	return e;
}

/* Facts with more HIP SDKs and runtimes than the old fixed lists held,
 * and a driver longer than their field, set and copied; *n: the SDKs the
 * copy holds. */
static enum cfapkg_err facts_once(size_t *n)
{
	static const char driver[] = "0.1.0-2131798~24.04.abcdefghijklmnopqrstuvwxyz0123456789";
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_facts f = {0}, copy = {0};
	char sdk[16], major[16];
	enum cfapkg_err e;
	unsigned i;

	*n = 0;
	if (!ctx)
		return CFAPKG_E_NOMEM;
	e = cfapkg_facts_init_host(&f);
	for (i = 0; i < 12 && !e; i++) {
		CHECK(snprintf(sdk, sizeof(sdk), "6.%u.1", i) < (int)sizeof(sdk) &&
		          snprintf(major, sizeof(major), "%u", i + 1) < (int)sizeof(major),
		      "SDK %u", i);
		if (!(e = cfapkg_facts_set(ctx, &f, "hip-sdk", sdk)))
			e = cfapkg_facts_set(ctx, &f, "hip-runtime", major);
	}
	if (!e)
		e = cfapkg_facts_set(ctx, &f, "driver", driver);
	if (!e)
		e = cfapkg_facts_copy(&f, &copy);
	if (!e) {
		*n = copy.nhip_sdks;
		CHECK(copy.driver && strcmp(copy.driver, driver) == 0 && copy.nhip_runtimes == 12,
		      "the copy holds the driver and every runtime");
	}
	cfapkg_facts_clear(&copy);
	cfapkg_facts_clear(&f);
	cfapkg_facts_clear(&f); /* twice is safe */
	cfapkg_facts_clear(NULL);
	cfapkg_ctx_free(ctx);
	return e;
}

/* once run with each allocation failing in turn, until a run needs no
 * failure: each failed run must say CFAPKG_E_NOMEM.  How many failed;
 * *n as the whole run left it. */
static int fail_in_turn(const char *what, enum cfapkg_err (*once)(size_t *), size_t *n)
{
	unsigned long k;
	int nomem = 0;

	for (k = 1; k <= MAX_RUNS; k++) {
		enum cfapkg_err e;
		cfapkg_debug_fail_alloc(k);
		e = once(n);
		/* A run that never reached its failing allocation is the last. */
		if (cfapkg_debug_fail_alloc(0) != 0) {
			CHECK(e == CFAPKG_E_OK, "%s: a run without a failure gave error %d", what, e);
			break;
		}
		CHECK(e == CFAPKG_E_NOMEM || e == CFAPKG_E_OK,
		      "%s: failing allocation %lu gave error %d", what, k, e);
		nomem += e == CFAPKG_E_NOMEM;
	}
	return nomem;
}

static void facts_failures(void)
{
	size_t n = 0;
	int nomem = fail_in_turn("facts", facts_once, &n);

	CHECK(n == 12 && nomem > 20, "facts: %lu SDKs held, %d failures injected",
	      (unsigned long)n, nomem);
}

/* Mirror rules read from ROOT/mirrors.conf (the root: this folder) and
 * one URL expanded; *n: the URLs it gave. */
static enum cfapkg_err mirrors_once(size_t *n)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_mirrors *m = NULL;
	char **urls = NULL;
	size_t nrule = 0;
	enum cfapkg_err e;

	*n = 0;
	if (!ctx)
		return CFAPKG_E_NOMEM;
	e = cfapkg_ctx_set_root(ctx, ".");
	if (!e)
		e = cfapkg_mirrors_load(ctx, &m);
	if (!e)
		e = cfapkg_mirrors_expand(ctx, m, "https://github.com/v/z.zip", &urls, n, &nrule);
	cfapkg_free(urls);
	cfapkg_mirrors_free(m);
	cfapkg_ctx_free(ctx);
	return e;
}

static void mirror_failures(void)
{
	FILE *f = fopen("mirrors.conf", "w");
	size_t n = 0;
	int nomem;

	CHECK(f != NULL, "cannot write mirrors.conf here");
	if (!f)
		return;
	fputs("# lab\nhttps://github.com/ http://mirror.lab/gh/\n"
	      "https://github.com/ /srv/a mirror/gh/\n", f);
	fclose(f);
	nomem = fail_in_turn("mirrors", mirrors_once, &n);
	CHECK(n == 3 && nomem > 5, "mirror rules: %lu URLs, %d failures injected", (unsigned long)n,
	      nomem);
	remove("mirrors.conf");
}

int main(void)
{
	unsigned long n;
	int nomem = 0;

	mirror_failures();
	facts_failures();

	/* An existing root without caches: the first runs parse the recipes
	 * and write the caches (each failing at another allocation), the
	 * later ones read them. */
	cfa_plat_remove_tree(PLAN_ROOT);
	CHECK(cfa_plat_mkdir_p(PLAN_ROOT) == 0, "cannot make %s here", PLAN_ROOT);
	for (n = 1; n <= MAX_RUNS; n++) {
		enum cfapkg_err e;
		cfapkg_debug_fail_alloc(n);
		e = plan_once();
		/* Failing an allocation for a cache only leaves the cache
		 * unwritten, and the plan succeeds: the sweep goes on until a
		 * run no longer reaches its failing allocation. */
		if (cfapkg_debug_fail_alloc(0) != 0) {
			CHECK(e == CFAPKG_E_OK, "a plan without a failure gave error %d", e);
			break;
		}
		CHECK(e == CFAPKG_E_NOMEM || e == CFAPKG_E_OK,
		      "failing allocation %lu gave error %d, not NOMEM", n, e);
		nomem += e == CFAPKG_E_NOMEM;
	}
	CHECK(n <= MAX_RUNS, "a plan succeeded once allocations stopped failing");
	CHECK(nomem > 10, "failures were injected (%d)", nomem);
	cfa_plat_remove_tree(PLAN_ROOT);
	return check_report();
}
