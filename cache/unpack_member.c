/*
 * unpack_member.c - one archive of a set, unpacked beside the others.
 * Several threads unpack the archives of one set (the .debs of an APT
 * source) into the set's one staging folder at once.  Each keeps a tree of
 * its own, so that no thread waits on another for a lookup; the trees are
 * joined into the set's in the set's order once every archive is whole,
 * and the set is then judged as one tree, as if its archives had been
 * unpacked one after another: a path two of them hold is refused, links
 * are made only after that.  Two archives writing the same path at once
 * can only spoil a set that is refused anyway.
 */
#include <string.h>

#include "cache/unpack_int.h"
#include "core/ctx.h"
#include "core/mem.h"

enum cfapkg_err cfa_unpack_open_member(struct cfapkg_ctx *ctx, struct unpacker *set,
                                       const char *label, uint64_t archive_size,
                                       const struct cfapkg_unpack_opts *opts,
                                       struct unpacker **out)
{
	struct unpacker *u = cfa_calloc(1, sizeof(*u));

	*out = u;
	if (!u || !(u->label = cfa_strdup(label)) || !(u->staging = cfa_strdup(set->staging)))
		return cfa_nomem(ctx);
	u->ctx = ctx;
	u->set = set;
	u->hasher = set->hasher;
	u->hash_checked = opts && opts->hash_checked;
	u->cap = cfa_unpack_cap(archive_size, opts);
	return CFAPKG_E_OK;
}

/* One entry of a member into the set's tree.  Folders may be shared. */
static enum cfapkg_err join_entry(struct unpacker *set, const struct cfa_tree_entry *m)
{
	struct cfa_tree_entry *te;
	int added = cfa_tree_add(&set->tree, m->path, m->kind, m->target, &te);

	if (added < 0)
		return cfa_nomem(set->ctx);
	if (!added && (te->kind != CFA_TREE_DIR || m->kind != CFA_TREE_DIR))
		return cfa_unpack_refuse(set, m->path, "a second entry of the same name (or the same "
		                                       "name in another case)");
	if (added) {
		te->mode = m->mode;
		te->size = m->size;
		te->hash = m->hash;
	}
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_join(struct unpacker *member)
{
	struct unpacker *set = member->set;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < member->tree.n && !e; i++)
		e = join_entry(set, &member->tree.e[i]);
	if (e)
		return e;
	/* Each archive kept within its own cap; the set within its whole one. */
	set->total += member->total;
	if (set->total > set->cap)
		return cfa_fail(set->ctx, CFAPKG_E_INTEGRITY, "%s: the archives expand past the size "
		                "cap (a decompression bomb?); nothing was installed from them",
		                set->label);
	return CFAPKG_E_OK;
}
