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
	unsigned long k;
	size_t n = 0;
	int nomem = 0;

	CHECK(f != NULL, "cannot write mirrors.conf here");
	if (!f)
		return;
	fputs("# lab\nhttps://github.com/ http://mirror.lab/gh/\n"
	      "https://github.com/ /srv/a mirror/gh/\n", f);
	fclose(f);
	for (k = 1; k <= MAX_RUNS; k++) {
		enum cfapkg_err e;
		cfapkg_debug_fail_alloc(k);
		e = mirrors_once(&n);
		cfapkg_debug_fail_alloc(0);
		if (e == CFAPKG_E_OK)
			break;
		CHECK(e == CFAPKG_E_NOMEM, "mirrors: failing allocation %lu gave error %d", k, e);
		nomem++;
	}
	CHECK(n == 3 && nomem > 5, "mirror rules: %lu URLs, %d failures injected", (unsigned long)n,
	      nomem);
	remove("mirrors.conf");
}

int main(void)
{
	unsigned long n;
	int nomem = 0;

	mirror_failures();

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
