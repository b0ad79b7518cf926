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
 * one.
 *
 * Where the link stands, 'current' is not written: it is made a second
 * name of N/number, which holds the same text and reached the disk with
 * generation N.  A file renamed over another while its text is still
 * unwritten is pushed to the disk by the rename on ext4 (its
 * auto_da_alloc), which made a rollback up to a fifth slower; a linked
 * file has nothing left to push, and nothing a power cut could empty.  A
 * generation without a whole N/number (made by an older cfapkg, or its
 * text overwritten through 'current') gets 'current' written, unflushed:
 * a power cut can leave that one empty, and it is then read through the
 * link, which names the old generation or the new one, both whole.  On a
 * file system without such links (FAT, Wine 8) there is no link, 'current'
 * is flushed on its own, and programs are given the numbered folder.
 */
#include <stdio.h>
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

/* "N\n", the text of 'current' and of N/number; false past the room. */
static bool number_text(char text[16], unsigned gen)
{
	return cfa_snprintf(text, 16, "%u\n", gen); /* at most 10 digits */
}

enum cfapkg_err cfa_env_write_number(struct cfapkg_ctx *ctx, const char *gendir, unsigned gen)
{
	char *path, text[16];
	enum cfapkg_err e;

	if (!number_text(text, gen))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "generation %u: too large", gen);
	if ((e = cfa_path(ctx, &path, "%s/%s", gendir, CFA_GEN_NUMBER)))
		return e;
	/* Unflushed: the generation's own flush, before its rename, takes it. */
	e = cfa_write_atomic_unflushed(ctx, path, text, strlen(text));
	cfa_free(path);
	return e;
}

/* Whether the file at path holds exactly text: a number file truncated or
 * rewritten through 'current' (its other name) must not be linked. */
static bool holds(const char *path, const char *text)
{
	char got[16];
	size_t len = strlen(text), n;
	FILE *f = cfa_plat_fopen(path, "rb");

	if (!f)
		return false;
	n = fread(got, 1, sizeof(got), f);
	fclose(f);
	return n == len && memcmp(got, text, len) == 0;
}

/* envdir/current made a second name of envdir/gen/number; false when that
 * file is missing or not whole, or the link or the rename failed (nothing
 * changed then). */
static bool link_current(const char *envdir, unsigned gen, const char *text)
{
	char *number = cfa_aprintf("%s/%u/%s", envdir, gen, CFA_GEN_NUMBER);
	char *tmp = cfa_aprintf("%s/current.link.tmp", envdir);
	char *path = cfa_aprintf("%s/current", envdir);
	bool done = false;

	/* A tmp name a kill left is gone: every writer's recovery removes
	 * ".tmp" names before it switches.  Should one stay, the link fails
	 * and 'current' is written instead. */
	if (number && tmp && path && holds(number, text) && cfa_plat_hardlink(number, tmp) == 0) {
		/* Killed here, 'current' is as it was and the name is recovery's. */
		cfa_crash_point();
		done = cfa_plat_rename(tmp, path) == 0;
		if (!done)
			cfa_plat_remove(tmp);
	}
	cfa_free(number);
	cfa_free(tmp);
	cfa_free(path);
	return done;
}

/* envdir/current says gen: linked or written unflushed where covered (the
 * folder's flush makes it durable), else written and flushed. */
static enum cfapkg_err write_current(struct cfapkg_ctx *ctx, const char *envdir, unsigned gen,
                                     bool covered)
{
	char *path, text[16];
	enum cfapkg_err e;

	if (!number_text(text, gen))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "generation %u: too large", gen);
	if (covered && link_current(envdir, gen, text))
		return CFAPKG_E_OK;
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
