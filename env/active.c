/*
 * active.c - an environment's stable path, ROOT/envs/ENV/active: a link to
 * the current generation's folder (a symbolic link to "N" on POSIX, a
 * junction on Windows), switched in one step after 'current' is.  Shells,
 * launchers and scripts are given paths through it, so one activated before
 * an update, repair or rollback sees the new generation's files.
 *
 * 'current' stays the record of which generation is current; the link
 * follows it.  A kill between the two leaves the link one generation
 * behind until the next writer's recovery puts it right, and gc keeps
 * the generation it names, so it never dangles into a removed one.  On a
 * file system without such links (FAT, Wine 8) there is no link, and
 * programs are given the numbered folder as before.
 */
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* envdir/active (cfa_free), or NULL when out of memory. */
static char *link_path(const char *envdir)
{
	return cfa_aprintf("%s/%s", envdir, CFA_ENV_ACTIVE);
}

void cfa_env_link_current(const char *envdir, unsigned gen)
{
	char *link = link_path(envdir), name[16];

	/* Not an error: 'current' is switched, and programs are then given
	 * the numbered folder (cfa_env_program_dir). */
	if (link && cfa_snprintf(name, sizeof(name), "%u", gen))
		cfa_plat_dir_link(link, name);
	cfa_free(link);
	/* One flush for both renames, 'current''s and the link's (a power
	 * cut before it may keep either; recovery relinks to 'current'). */
	cfa_plat_sync_dir(envdir);
}

/* The generation the link names, read back from the link itself.  Anything else
 * (no link, a target that is not a generation number) is 0, so that the caller
 * relinks rather than trusts it. */
unsigned cfa_env_linked(const char *envdir)
{
	char *link = link_path(envdir), *name = NULL;
	uint64_t gen = 0;

	if (link && cfa_plat_dir_link_read(link, &name) == 0 &&
	    !cfa_parse_u64(name, strlen(name), 1000000000u, &gen))
		gen = 0;
	free(name); /* the platform's allocation */
	cfa_free(link);
	return (unsigned)gen;
}

void cfa_env_relink(struct cfapkg_ctx *ctx, const char *env, const char *envdir)
{
	unsigned cur = 0;

	/* A current generation that cannot be read is left for the next run; an
	 * environment with none has nothing to link to, and a link that already
	 * agrees is left alone, so recovery writes nothing then. */
	if (cfapkg_env_current(ctx, env, &cur) != CFAPKG_E_OK)
		cfapkg_ctx_clear_error(ctx); /* recovery goes on with the next environment */
	else if (cur && cfa_env_linked(envdir) != cur)
		cfa_env_link_current(envdir, cur);
}

enum cfapkg_err cfa_env_program_dir(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                    char **out, bool *stable)
{
	char *envdir = NULL;
	unsigned cur = 0;
	enum cfapkg_err e;

	*out = NULL;
	*stable = false;
	if ((e = cfa_env_dir(ctx, env, &envdir)) || (e = cfapkg_env_current(ctx, env, &cur)))
		goto out;
	/* The stable path is given only for the current generation, and only
	 * when the link names it: given for another generation, a program would
	 * run the current one's files instead of gen's. */
	*stable = gen == cur && cfa_env_linked(envdir) == gen;
	if (*stable)
		e = cfa_path(ctx, out, "%s/%s", envdir, CFA_ENV_ACTIVE);
	else
		e = cfa_path(ctx, out, "%s/%u", envdir, gen);
out:
	cfa_free(envdir);
	return e;
}
