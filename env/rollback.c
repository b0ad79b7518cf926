/*
 * rollback.c - which generation a rollback goes to.  The rule belongs to
 * the library so that every front end rolls back alike: the newest
 * earlier generation that was created (a switch made none), or with
 * known_good the newest earlier one marked known-good, by doctor's live
 * probe or by hand.  Passing the static checks does not make one.
 */
#include <string.h>

#include "core/atomic_file.h"

#include "core/mem.h"
#include "env/env.h"

static enum cfapkg_err none_known_good(struct cfapkg_ctx *ctx, const char *env, unsigned cur)
{
	return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has no known-good generation "
	                "before %u: none has passed a live 'cfapkg doctor' probe here or been marked "
	                "with 'cfapkg mark-good N' (passing the static checks does not make one); "
	                "'cfapkg rollback' goes to the previous generation all the same, and "
	                "'cfapkg history --env %s' shows what each is", env, cur, env);
}

/* Whether generation g of envdir is known-good; *why its latest mark then
 * (packed, when why is not NULL). */
static enum cfapkg_err is_known_good(struct cfapkg_ctx *ctx, const char *envdir, unsigned g,
                                     bool *good, struct cfapkg_gen_mark **why)
{
	struct cfapkg_gen_mark *marks = NULL;
	enum cfapkg_gen_state state = CFAPKG_GEN_UNCHECKED;
	size_t n = 0;
	char *gendir;
	enum cfapkg_err e;

	*good = false;
	if ((e = cfa_path(ctx, &gendir, "%s/%u", envdir, g)))
		return e;
	if (!(e = cfa_marks_read(ctx, gendir, g, &marks, &n)) &&
	    !(e = cfa_gen_state_of(ctx, gendir, marks, n, &state)))
		*good = state == CFAPKG_GEN_KNOWN_GOOD;
	if (!e && *good && n && why && !(*why = cfa_marks_pack(&marks[n - 1], 1)))
		e = cfa_nomem(ctx);
	cfa_free(marks);
	cfa_free(gendir);
	return e;
}

/* Generations are folders and switches make none, so the candidates are
 * the folders below cur, newest first: a rollback looks at one (or, for
 * known_good, as many as it passes over), however long the history. */
enum cfapkg_err cfapkg_env_rollback_target(struct cfapkg_ctx *ctx, const char *env, unsigned cur,
                                           bool known_good, unsigned *target,
                                           struct cfapkg_gen_mark **why)
{
	unsigned *gens = NULL;
	char *envdir = NULL;
	size_t i, n = 0;
	bool good = !known_good;
	enum cfapkg_err e;

	*target = 0;
	if (why)
		*why = NULL;
	if ((e = cfa_env_dir(ctx, env, &envdir)) || (e = cfa_env_generations(ctx, envdir, &gens, &n))) {
		cfa_free(envdir);
		return e;
	}
	for (i = n; i-- > 0 && !*target && !e;) {
		if (gens[i] >= cur)
			continue;
		if (known_good)
			e = is_known_good(ctx, envdir, gens[i], &good, why);
		if (!e && good)
			*target = gens[i];
	}
	cfa_free(gens);
	cfa_free(envdir);
	if (e)
		return e;
	if (*target)
		return CFAPKG_E_OK;
	if (!cur)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has nothing installed "
		                "yet, so there is no generation to go back to: 'cfapkg install --env "
		                "%s NAME' makes its first", env, env);
	if (known_good)
		return none_known_good(ctx, env, cur);
	return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has no earlier generation than "
	                "%u ('cfapkg history --env %s')", env, cur, env);
}
