/*
 * plan_phases.c - times the two halves of planning in one process: loading
 * the recipes (read, parse, check) and solving (pool, libsolv, plan).
 *
 * usage: plan_phases RECIPE_DIR GFX OS SPEC...
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cfapkg.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_plan *plan = NULL;
	struct cfapkg_facts f = {0};
	double t0, t1, t2;
	size_t nitems;

	if (argc < 5 || !ctx) {
		fprintf(stderr, "usage: plan_phases RECIPE_DIR GFX OS SPEC...\n");
		return 2;
	}
	if (cfapkg_facts_init_host(&f) || cfapkg_ctx_add_recipe_dir(ctx, argv[1])) {
		fprintf(stderr, "plan_phases: %s\n", cfapkg_ctx_error(ctx));
		return 1;
	}
	t0 = now();
	if (cfapkg_recipes_load(ctx)) {
		fprintf(stderr, "plan_phases: %s\n", cfapkg_ctx_error(ctx));
		return 1;
	}
	t1 = now();
	/* After the load: a GPU name is looked up in the loaded table. */
	if (cfapkg_facts_set(ctx, &f, "gpu", argv[2]) || cfapkg_facts_set(ctx, &f, "os", argv[3])) {
		fprintf(stderr, "plan_phases: %s\n", cfapkg_ctx_error(ctx));
		return 1;
	}
	if (cfapkg_plan_solve(ctx, &f, (const char *const *)argv + 4, (size_t)argc - 4, NULL,
	                      &plan)) {
		fprintf(stderr, "plan_phases: %s\n", cfapkg_ctx_error(ctx));
		return 1;
	}
	t2 = now();
	cfapkg_plan_items(plan, &nitems);
	printf("load %.3f s, solve %.3f s, %zu packages, %s\n", t1 - t0, t2 - t1, nitems,
	       cfapkg_plan_solved(plan) ? "solved" : "unsolvable");
	cfapkg_plan_free(plan);
	cfapkg_facts_clear(&f);
	cfapkg_ctx_free(ctx);
	return 0;
}
