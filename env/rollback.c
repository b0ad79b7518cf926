/*
 * rollback.c - which generation a rollback goes to.  The rule belongs to
 * the library so that every front end rolls back alike: the newest
 * earlier generation that was created (a switch made none), or with
 * known_good the newest earlier one marked known-good, by doctor's live
 * probe or by hand.  Passing the static checks does not make one.
 * cfapkg_env_rollback is the whole command: the choice and the switch,
 * with 'current' read and the generation folders listed once for both.
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

/* The target among gens (sorted), the folders below cur, newest first: a
 * rollback looks at one (or, for known_good, as many as it passes over),
 * however long the history; 0 when none fits. */
static enum cfapkg_err pick(struct cfapkg_ctx *ctx, const char *envdir, const unsigned *gens,
                            size_t n, unsigned cur, bool known_good, unsigned *target,
                            struct cfapkg_gen_mark **why)
{
	size_t i;
	bool good = !known_good;
	enum cfapkg_err e = CFAPKG_E_OK;

	for (i = n; i-- > 0 && !*target && !e;) {
		if (gens[i] >= cur)
			continue;
		if (known_good)
			e = is_known_good(ctx, envdir, gens[i], &good, why);
		if (!e && good)
			*target = gens[i];
	}
	return e;
}

/* Why there is no target: the detail says what to do. */
static enum cfapkg_err no_target(struct cfapkg_ctx *ctx, const char *env, unsigned cur,
                                 bool known_good)
{
	if (!cur)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has nothing installed "
		                "yet, so there is no generation to go back to: 'cfapkg install --env "
		                "%s NAME' makes its first", env, env);
	if (known_good)
		return none_known_good(ctx, env, cur);
	return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has no earlier generation than "
	                "%u ('cfapkg history --env %s')", env, cur, env);
}

/* Generations are folders and switches make none, so the candidates are
 * the folders below cur. */
static enum cfapkg_err target_in(struct cfapkg_ctx *ctx, const char *env, const char *envdir,
                                 const unsigned *gens, size_t n, unsigned cur, bool known_good,
                                 unsigned *target, struct cfapkg_gen_mark **why)
{
	enum cfapkg_err e;

	*target = 0;
	if (why)
		*why = NULL;
	if ((e = pick(ctx, envdir, gens, n, cur, known_good, target, why)))
		return e;
	return *target ? CFAPKG_E_OK : no_target(ctx, env, cur, known_good);
}

enum cfapkg_err cfapkg_env_rollback_target(struct cfapkg_ctx *ctx, const char *env, unsigned cur,
                                           bool known_good, unsigned *target,
                                           struct cfapkg_gen_mark **why)
{
	unsigned *gens = NULL;
	char *envdir = NULL;
	size_t n = 0;
	enum cfapkg_err e;

	*target = 0;
	if (why)
		*why = NULL;
	/* Each call lists the folders: a front end that also switches calls
	 * cfapkg_env_rollback, which lists them once for both. */
	if (!(e = cfa_env_dir(ctx, env, &envdir)) &&
	    !(e = cfa_env_generations(ctx, envdir, &gens, &n)))
		e = target_in(ctx, env, envdir, gens, n, cur, known_good, target, why);
	cfa_free(gens);
	cfa_free(envdir);
	return e;
}

/* The generation current under the lock; a 'current' that holds no number
 * reads as 0 when the target is given, as that is how it is set again. */
static enum cfapkg_err current_for(struct cfapkg_ctx *ctx, const char *env, unsigned to,
                                   unsigned *cur)
{
	enum cfapkg_err e = cfapkg_env_current(ctx, env, cur);

	if (e == CFAPKG_E_LOCKFILE && to) {
		cfapkg_ctx_clear_error(ctx);
		*cur = 0;
		e = CFAPKG_E_OK;
	}
	return e;
}

/* The environment's records are read once: 'current' and the list of
 * generation folders serve both the choice and the switch's history
 * line. */
enum cfapkg_err cfapkg_env_rollback(struct cfapkg_ctx *ctx, const char *env, unsigned to,
                                    bool known_good, struct cfapkg_rollback *out)
{
	unsigned *gens = NULL;
	char *envdir = NULL, command[64];
	size_t n = 0;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if ((e = current_for(ctx, env, to, &out->from)) || (e = cfa_env_dir(ctx, env, &envdir)) ||
	    (e = cfa_env_generations(ctx, envdir, &gens, &n)))
		goto out;
	out->to = to;
	if (!to && (e = target_in(ctx, env, envdir, gens, n, out->from, known_good, &out->to,
	                          known_good ? &out->why : NULL)))
		goto out;
	/* History names both ends, so that it shows where each switch came
	 * from; the text is short, so it always fits. */
	cfa_fit_text(command, sizeof(command), "rollback%s %u -> %u",
	             !to && known_good ? " --known-good" : "", out->from, out->to);
	e = cfa_env_switch_from(ctx, env, out->from, n ? gens[n - 1] : 0, out->to, command);
out:
	if (e) {
		cfa_free(out->why);
		out->why = NULL;
	}
	cfa_free(gens);
	cfa_free(envdir);
	return e;
}
