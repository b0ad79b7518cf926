/*
 * unpack_links.c - an unpack's links, made last.  Every entry is on disk
 * by now and none of them is a link, so nothing was written through one.
 * The tree is judged as a whole first (tree.c): a link that leads out,
 * alone or through other links, refuses the archive.  Hard links become
 * copies (the store is linked into views; a second name for a file adds
 * nothing there), symbolic links are made as links, or as copies of what
 * they lead to where the system cannot make links (Windows without the
 * privilege).  A copy has the same bytes, so it takes its source's digest.
 */
#include <errno.h>
#include <string.h>

#include "cache/unpack_int.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* One block per copy, from the heap: unpacks run in several threads. */
#define BLOCK (256u * 1024u)

static enum cfapkg_err copy_bytes(struct unpacker *u, const char *name, const char *from,
                                  const char *to)
{
	unsigned char *block = cfa_malloc(BLOCK);
	FILE *in = cfa_plat_fopen(from, "rb"), *out = NULL;
	enum cfapkg_err e = CFAPKG_E_OK;
	uint64_t size = 0;
	size_t n;

	if (!block)
		e = cfa_nomem(u->ctx);
	else if (!in || !(out = cfa_plat_fopen(to, "wb")))
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot copy %s to it", to, from);
	/* The copies count against the size cap: a bomb of links is a bomb. */
	while (!e && (n = fread(block, 1, BLOCK, in)) > 0)
		e = cfa_unpack_put(u, out, name, to, block, n, &size);
	/* A read error ends the loop as the end of the file does: without this
	 * check the copy would be a silently short file. */
	if (!e && in && ferror(in))
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot read it to copy it to %s", from, to);
	if (in)
		fclose(in);
	if (out && fclose(out) != 0 && !e)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot write: %s", to,
		             cfa_plat_strerror(cfa_plat_write_errno()));
	cfa_free(block);
	return e;
}

/* Turns entry e into a copy of the file entry src. */
static enum cfapkg_err copy_entry(struct unpacker *u, struct cfa_tree_entry *e,
                                  const struct cfa_tree_entry *src)
{
	char *from = cfa_unpack_full(u, src->path), *to = from ? cfa_unpack_full(u, e->path) : NULL;
	enum cfapkg_err err;

	if (!to)
		err = CFAPKG_E_NOMEM; /* cfa_unpack_full said so */
	else if (!(err = cfa_unpack_make_parent(u, to)) && !(err = copy_bytes(u, e->path, from, to))) {
		/* The copy is its source in all but name: bits, size and
		 * digest, and it is no link any more. */
		cfa_plat_set_mode(to, src->mode);
		e->kind = CFA_TREE_FILE;
		e->mode = src->mode;
		e->size = src->size;
		e->hash = src->hash;
	}
	cfa_free(from);
	cfa_free(to);
	return err;
}

/* Where links cannot be made: a copy of the file the link leads to. */
static enum cfapkg_err copy_link(struct unpacker *u, struct cfa_tree_entry *e)
{
	struct cfa_buf at;
	const struct cfa_tree_entry *src;
	const char *why;

	cfa_buf_init(&at, 1u << 20);
	why = cfa_tree_resolve(&u->tree, e, &at);
	src = why ? NULL : cfa_tree_find(&u->tree, cfa_buf_str(&at));
	cfa_buf_fini(&at);
	if (!src || src->kind != CFA_TREE_FILE)
		return cfa_unpack_refuse(u, e->path, "a symbolic link to something other than a file, "
		                         "and this system cannot make symbolic links");
	return copy_entry(u, e, src);
}

/* Whether a failed symlink() says the system or its file system makes no
 * links at all (Windows without the privilege, FAT), rather than that
 * this one failed. */
static bool no_links_here(int rc)
{
	/* ENOTSUP and EOPNOTSUPP are one value on Linux and two on some
	 * systems: both are listed. */
	return rc == ENOSYS || rc == EPERM || rc == ENOTSUP || rc == EOPNOTSUPP;
}

static enum cfapkg_err make_symlink(struct unpacker *u, struct cfa_tree_entry *e)
{
	char *full = cfa_unpack_full(u, e->path);
	enum cfapkg_err err;
	int rc = 0;

	if (!full)
		return CFAPKG_E_NOMEM;
	/* The text is written as the archive gave it: cfa_tree_check has
	 * already followed it and found it inside. */
	if (!(err = cfa_unpack_make_parent(u, full)) && (rc = cfa_plat_symlink(e->target, full)))
		err = no_links_here(rc) ? copy_link(u, e)
		                        : cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot make the symbolic "
		                                   "link: %s", full, cfa_plat_strerror(rc));
	cfa_free(full);
	return err;
}

/* One rule on every system, as for names: no link text longer than the
 * longest Linux makes (a longer one would be a link here, a copy there). */
static enum cfapkg_err check_targets(struct unpacker *u)
{
	size_t i;

	for (i = 0; i < u->tree.n; i++)
		if (u->tree.e[i].kind == CFA_TREE_SYMLINK &&
		    strlen(u->tree.e[i].target) > CFA_ENTRY_NAME_MAX)
			return cfa_unpack_refuse(u, u->tree.e[i].path, "a symbolic link whose target is "
			                         "too long (more than " CFA_STR(CFA_ENTRY_NAME_MAX)
			                         " bytes)");
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_links(struct unpacker *u)
{
	const struct cfa_tree_entry *bad = NULL;
	const char *why = cfa_tree_check(&u->tree, &bad);
	enum cfapkg_err e = check_targets(u);
	size_t i;

	if (e)
		return e;
	if (why)
		return cfa_unpack_refuse(u, bad->path, why);
	/* Hard links first: their sources are plain files, no link made yet. */
	for (i = 0; i < u->tree.n && !e; i++)
		if (u->tree.e[i].kind == CFA_TREE_HARDLINK)
			e = copy_entry(u, &u->tree.e[i], cfa_tree_find(&u->tree, u->tree.e[i].target));
	/* A symbolic link that must be a copy resolves to a file, never to a
	 * hard link: those are files by now. */
	for (i = 0; i < u->tree.n && !e; i++)
		if (u->tree.e[i].kind == CFA_TREE_SYMLINK)
			e = make_symlink(u, &u->tree.e[i]);
	return e;
}
