/*
 * explain_kept.c - why an install or update changed nothing: for each
 * package asked about (all requested ones for a bare update) whose recipe
 * has a newer version than the one kept, the reason, found by asking the
 * solver itself for that newer version: a pin holds it, the environment's
 * own request for it does ("zluda==6-preview.69", which an update keeps),
 * the newer one does not fit (the solver's own sentence), or it fits but
 * has a lower status on this GPU than the kept one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

static const char *pin_on(char **pins, size_t npins, const char *name)
{
	size_t i;

	for (i = 0; i < npins; i++)
		if (cfapkg_spec_names(pins[i], name))
			return pins[i];
	return NULL;
}

/* The request set with name's request replaced by name==version. */
static const char **specs_with(const struct cfapkg_lock *set, const char *name, const char *want,
                               size_t *n)
{
	const char **v = calloc(set->nrequests + 1, sizeof(*v));
	size_t i;

	*n = 0;
	for (i = 0; v && i < set->nrequests; i++)
		if (!cfapkg_spec_names(set->requests[i], name))
			v[(*n)++] = set->requests[i];
	if (v)
		v[(*n)++] = want;
	return v;
}

/* The first problem that is not the chain of requirements above it. */
static void print_misfit(const struct cfapkg_plan *plan, const struct cfapkg_facts *f)
{
	char buf[1024];
	size_t i;

	for (i = 0; i < cfapkg_plan_problem_count(plan); i++) {
		const struct cfapkg_problem *p = cfapkg_plan_problem(plan, i);
		if (p->kind == CFAPKG_PROBLEM_REQUIRES && i + 1 < cfapkg_plan_problem_count(plan))
			continue;
		printf("    %s\n", problem_text(p, f, buf, sizeof(buf)));
		return;
	}
}

/* The environment's request for name when it rules version out (the
 * request "zluda==6-preview.69" and the newer 7-preview.10), else NULL. */
static const char *request_against(struct cfapkg_ctx *ctx, const struct cfapkg_lock *set,
                                   const char *name, const char *version)
{
	size_t i, n;
	bool fits;

	for (i = 0; i < set->nrequests; i++) {
		const char *spec = set->requests[i];
		if (!cfapkg_spec_names(spec, name))
			continue;
		n = cfapkg_spec_name_len(spec);
		if (spec[n] && !cfapkg_version_matches(ctx, version, spec + n, &fits) && !fits)
			return spec;
		cfapkg_ctx_clear_error(ctx);
	}
	return NULL;
}

/* The status of the recipe version the kept part is, on gfx. */
static enum cfapkg_status kept_status(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                      const struct cfapkg_locked *kept, const char *gfx)
{
	size_t i;

	for (i = 0; i < r->nversions; i++)
		if (strcmp(r->versions[i].version, kept->version) == 0)
			return cfapkg_version_status(ctx, &r->versions[i], gfx);
	return CFAPKG_STATUS_EXPERIMENTAL; /* no longer in the recipe: nothing known */
}

/* Why newest, which fits, was not chosen: the request, a lower status
 * (the enum's order: validated first), or an install keeping what is. */
static void say_fits(struct cfapkg_ctx *ctx, const struct cfapkg_lock *set,
                     const struct cfapkg_recipe *r, const struct cfapkg_locked *kept,
                     const struct cfapkg_version *newest, const char *want)
{
	const char *gfx = set->facts.gfx[0] ? set->facts.gfx : "this GPU";
	const char *request = request_against(ctx, set, kept->name, newest->version);
	enum cfapkg_status s = cfapkg_version_status(ctx, newest, set->facts.gfx);
	enum cfapkg_status mine = kept_status(ctx, r, kept, set->facts.gfx);
	const char *consent = s == CFAPKG_STATUS_EXPERIMENTAL ? " (with --allow-experimental)" : "";

	if (request)
		printf("  %s %s is kept: the request %s holds it; 'cfapkg install %s' asks for the "
		       "newer one in its place%s\n", kept->name, kept->version, request, want, consent);
	else if (s > mine)
		printf("  %s %s is kept: it is %s on %s, and the newer %s is %s there, so it is not "
		       "chosen by itself; 'cfapkg install %s' asks for it%s\n", kept->name,
		       kept->version, cfapkg_status_name(mine), gfx, newest->version,
		       cfapkg_status_name(s), want, consent);
	else
		printf("  %s %s is kept: an install keeps what is installed where it still "
		       "fits; 'cfapkg update %s' moves it to %s\n", kept->name, kept->version,
		       kept->name, newest->version);
}

/* Asks the solver for newest in place of the kept version, and says what
 * it answers. */
static void try_newest(struct cfapkg_ctx *ctx, const struct cfapkg_lock *set,
                       const struct cfapkg_recipe *r, const struct cfapkg_locked *kept,
                       char **pins, size_t npins)
{
	const struct cfapkg_version *newest = &r->versions[0];
	struct cfapkg_plan_opts o = {.pins = (const char *const *)pins, .npins = npins};
	struct cfapkg_plan *plan = NULL;
	size_t len = strlen(kept->name) + strlen(newest->version) + 3, n;
	char *want = malloc(len);
	const char **specs;

	if (!want)
		return;
	/* len was measured for exactly this spec. */
	if (!cli_snprintf(want, len, "%s==%s", kept->name, newest->version)) {
		free(want);
		return;
	}
	specs = specs_with(set, kept->name, want, &n);
	if (specs && !cfapkg_plan_solve(ctx, &set->facts, specs, n, &o, &plan)) {
		if (!cfapkg_plan_solved(plan)) {
			printf("  %s %s is kept: %s %s does not fit:\n", kept->name, kept->version,
			       kept->name, newest->version);
			print_misfit(plan, &set->facts);
		} else {
			say_fits(ctx, set, r, kept, newest, want);
		}
	}
	cfapkg_ctx_clear_error(ctx);
	cfapkg_plan_free(plan);
	free(specs);
	free(want);
}

static void explain_one(struct cfapkg_ctx *ctx, const struct cfapkg_lock *set,
                        const struct cfapkg_locked *kept, char **pins, size_t npins)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(ctx, kept->name);
	const char *pin = pin_on(pins, npins, kept->name);

	if (!r || r->nversions == 0)
		return;
	if (strcmp(r->versions[0].version, kept->version) == 0)
		printf("  %s %s is the newest version\n", kept->name, kept->version);
	else if (pin)
		printf("  %s %s is kept: the pin %s holds it ('cfapkg unpin %s' lets it move)\n",
		       kept->name, kept->version, pin, kept->name);
	else
		try_newest(ctx, set, r, kept, pins, npins);
}

void explain_nothing_to_do(struct cfapkg_ctx *ctx, struct cfapkg_trans *t, const struct cli *cli)
{
	const struct cfapkg_lock *set = cfapkg_trans_new(t);
	const char *env = env_from_cli(cli);
	char **pins = NULL;
	size_t npins = 0, i, k;

	if (!set || cfapkg_env_pins(ctx, env, &pins, &npins)) {
		cfapkg_ctx_clear_error(ctx);
		return;
	}
	for (i = 0; i < set->nparts; i++) {
		const struct cfapkg_locked *p = &set->parts[i];
		bool asked = cli->nargs == 0 && p->requested;
		for (k = 0; k < cli->nargs && !asked; k++)
			asked = cfapkg_spec_names(cli->args[k], p->name);
		if (asked)
			explain_one(ctx, set, p, pins, npins);
	}
	cfapkg_free(pins);
}
