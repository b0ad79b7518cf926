/*
 * active.c - switching which generation is current, in two records:
 * ROOT/envs/ENV/current, a small file holding its number, and
 * ROOT/envs/ENV/active, the environment's stable path, a link to its folder
 * (a symbolic link to "N" on POSIX, a junction on Windows); envs.c reads
 * them.  Shells, launchers and scripts are given paths through the link,
 * so one activated before an update, repair or rollback sees the new
 * generation's files.
 *
 * A switch writes 'current', then the link, then flushes the folder once:
 * one flush, not two, is what keeps rollback near the cost of starting a
 * process.  'current' stays the record of which generation is current and
 * the link follows it: a kill between the two leaves the link one
 * generation behind until the next writer's recovery puts it right, and
 * gc keeps the generation it names, so it never dangles into a removed
 * one.  A power cut can leave 'current' empty, since its text was not
 * flushed: it is then read through the link, which names the old
 * generation or the new one, both whole.  On a file system without such
 * links (FAT, Wine 8) there is no link, 'current' is flushed on its own,
 * and programs are given the numbered folder.
 */
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* Points the link at generation gen; false when no link could be made. */
static bool link_to(const char *envdir, unsigned gen)
{
	char *link = cfa_env_link_path(envdir), name[16];
	bool made = link && cfa_snprintf(name, sizeof(name), "%u", gen) &&
	            cfa_plat_dir_link(link, name) == 0;

	cfa_free(link);
	return made;
}

/* envdir/current says gen; flushed before its rename unless covered. */
static enum cfapkg_err write_current(struct cfapkg_ctx *ctx, const char *envdir, unsigned gen,
                                     bool covered)
{
	char *path, text[16]; /* a number of at most 10 digits */
	enum cfapkg_err e;

	if (!cfa_snprintf(text, sizeof(text), "%u\n", gen))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "generation %u: too large", gen);
	if ((e = cfa_path(ctx, &path, "%s/current", envdir)))
		return e;
	e = covered ? cfa_write_atomic_unflushed(ctx, path, text, strlen(text))
	            : cfa_write_atomic_in(ctx, path, text, strlen(text));
	cfa_free(path);
	return e;
}

enum cfapkg_err cfa_env_make_current(struct cfapkg_ctx *ctx, const char *envdir, unsigned gen)
{
	/* 'current' goes unflushed only where a link already stands here and
	 * the folder's flush below makes it durable with the renames. */
	bool covered = cfa_plat_sync_dir_covers_links() && cfa_env_linked(envdir) != 0;
	enum cfapkg_err e = write_current(ctx, envdir, gen, covered);

	if (e)
		return e;
	cfa_crash_point();
	/* A link that cannot be made now keeps the old target, so it no
	 * longer covers 'current': that is written again, flushed.  With no
	 * link at all, programs get the numbered folder (cfa_env_program_dir);
	 * not an error. */
	if (!link_to(envdir, gen) && covered)
		e = write_current(ctx, envdir, gen, false);
	cfa_plat_sync_dir(envdir);
	return e;
}

void cfa_env_relink(struct cfapkg_ctx *ctx, const char *envdir)
{
	unsigned cur = 0, linked;
	bool torn;

	/* A 'current' that cannot be read is left for the next run, which
	 * reports it; an environment with none has nothing to link to, and
	 * records that agree are left alone, so recovery writes nothing then. */
	if (cfa_env_read_current(ctx, envdir, &cur, &torn)) {
		cfapkg_ctx_clear_error(ctx); /* recovery goes on with the next environment */
		return;
	}
	/* One a power cut left empty is written again from the link, flushed:
	 * the link is the record that was made durable. */
	if (torn && (linked = cfa_env_linked_whole(envdir)) != 0) {
		if (write_current(ctx, envdir, linked, false))
			cfapkg_ctx_clear_error(ctx);
		else
			cfa_plat_sync_dir(envdir);
	} else if (cur && cfa_env_linked(envdir) != cur) {
		link_to(envdir, cur);
		cfa_plat_sync_dir(envdir);
	}
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
