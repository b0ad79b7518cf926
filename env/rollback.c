/*
 * rollback.c - which generation a rollback goes to.  The rule belongs to
 * the library so that every front end rolls back alike: the newest
 * earlier generation that was created (a switch made none), or with
 * known_good the newest earlier one marked known-good, by doctor's live
 * probe or by hand.  Passing the static checks does not make one.
 */
#include <string.h>

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

enum cfapkg_err cfapkg_env_rollback_target(struct cfapkg_ctx *ctx, const char *env, unsigned cur,
                                           bool known_good, unsigned *target,
                                           struct cfapkg_gen_mark **why)
{
	struct cfapkg_history_entry *h = NULL;
	size_t i, n = 0, chosen = 0;
	enum cfapkg_err e;

	*target = 0;
	if (why)
		*why = NULL;
	if ((e = cfapkg_env_history(ctx, env, &h, &n)))
		return e;
	/* The history holds switches too: going back to where a rollback went
	 * would only undo the undo, so only created generations count. */
	for (i = 0; i < n; i++)
		if (!h[i].is_switch && h[i].generation < cur && h[i].generation > *target &&
		    (!known_good || h[i].good)) {
			*target = h[i].generation;
			chosen = i;
		}
	/* The mark that made the target known-good is handed back, so that the
	 * front end can say who vouched for it and when.  It is packed before
	 * the history it points into is freed. */
	if (*target && known_good && why && !(*why = cfa_marks_pack(&h[chosen].mark, 1)))
		e = cfa_nomem(ctx);
	cfapkg_history_free(h, n);
	if (e)
		return e;
	if (*target)
		return CFAPKG_E_OK;
	if (known_good)
		return none_known_good(ctx, env, cur);
	return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has no earlier generation than "
	                "%u ('cfapkg history --env %s')", env, cur, env);
}
