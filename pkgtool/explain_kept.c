/*
 * explain_kept.c - why an install or update changed nothing, in words:
 * the library finds each reason (cfapkg_trans_kept), this file says it,
 * with the command that would change it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* One line per part, each with the command that would move it; a newer version
 * that is experimental here is only taken with consent, so its command says
 * so. */
static void say_one(const struct cfapkg_kept *k, const struct cfapkg_facts *f)
{
	const char *gfx = f->gfx[0] ? f->gfx : "this GPU";
	const char *consent = k->newest_status == CFAPKG_STATUS_EXPERIMENTAL ?
	                      " (with --allow-experimental)" : "";
	char buf[1024];

	switch (k->why) {
	case CFAPKG_KEPT_NEWEST:
		printf("  %s %s is the newest version\n", k->name, k->version);
		break;
	case CFAPKG_KEPT_PINNED:
		printf("  %s %s is kept: the pin %s holds it ('cfapkg unpin %s' lets it move)\n",
		       k->name, k->version, k->holder, k->name);
		break;
	case CFAPKG_KEPT_MISFIT:
		printf("  %s %s is kept: %s %s does not fit:\n", k->name, k->version, k->name,
		       k->newest);
		if (k->problem)
			printf("    %s\n", problem_text(k->problem, f, buf, sizeof(buf)));
		break;
	case CFAPKG_KEPT_REQUEST:
		printf("  %s %s is kept: the request %s holds it; 'cfapkg install %s' asks for the "
		       "newer one in its place%s\n", k->name, k->version, k->holder, k->want, consent);
		break;
	case CFAPKG_KEPT_STATUS:
		printf("  %s %s is kept: it is %s on %s, and the newer %s is %s there, so it is not "
		       "chosen by itself; 'cfapkg install %s' asks for it%s\n", k->name, k->version,
		       cfapkg_status_name(k->status), gfx, k->newest,
		       cfapkg_status_name(k->newest_status), k->want, consent);
		break;
	case CFAPKG_KEPT_INSTALLED:
		printf("  %s %s is kept: an install keeps what is installed where it still "
		       "fits; 'cfapkg update %s' moves it to %s\n", k->name, k->version, k->name,
		       k->newest);
		break;
	}
}

void explain_nothing_to_do(struct cfapkg_ctx *ctx, struct cfapkg_trans *t, const struct cli *cli)
{
	const struct cfapkg_lockfile *set = cfapkg_trans_new(t);
	struct cfapkg_kept_list *l = NULL;
	const struct cfapkg_kept *kept;
	size_t i, n;

	/* Only a note under "Nothing to do": what cannot be said is left out. */
	if (cfapkg_trans_kept(ctx, t, (const char *const *)cli->args, cli->nargs, &l)) {
		cfapkg_ctx_clear_error(ctx);
		return;
	}
	kept = cfapkg_kept_items(l, &n);
	for (i = 0; i < n; i++)
		say_one(&kept[i], &set->facts);
	cfapkg_kept_free(l);
}
