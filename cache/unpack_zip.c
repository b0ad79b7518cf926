/*
 * unpack_zip.c - a zip read front to back, settled against its central
 * directory.  Read while it downloads, a zip shows only its local headers:
 * no permission bits, and a symbolic link looks like a small file holding
 * the link's text.  The central directory at the end of the file has
 * both.  Once the whole file is there and verified, it is read the way an
 * unpack from the file would read it, and the streamed tree is made to
 * agree: modes set, link texts turned into links, and any entry that the
 * two lists do not share (a zip made to show one thing to a streaming
 * reader and another to the rest) refuses the archive.
 */
#include <archive.h>
#include <archive_entry.h>
#include <string.h>

#include "cache/unpack_int.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

static enum cfapkg_err disagree(struct unpacker *u, const char *name)
{
	return cfa_unpack_refuse(u, name, "the zip's local headers and its central directory "
	                                  "disagree about it");
}

/* The text a streamed link was written as: the file's bytes, all of
 * them (text has room for one byte more: a longer file is not the same). */
static bool same_text(const char *full, const char *target, char *text)
{
	size_t len = strlen(target), n;
	FILE *f = cfa_plat_fopen(full, "rb");

	if (!f)
		return false;
	n = fread(text, 1, len + 1, f);
	fclose(f);
	return n == len && memcmp(text, target, len) == 0;
}

static enum cfapkg_err settle_link(struct unpacker *u, struct cfa_tree_entry *te,
                                   const char *full, const char *target)
{
	char *copy;
	bool same;

	if (!target || !*target)
		return cfa_unpack_refuse(u, te->path, "a symbolic link without a target");
	if (te->kind == CFA_TREE_SYMLINK)
		return strcmp(te->target, target) == 0 ? CFAPKG_E_OK : disagree(u, te->path);
	if (te->kind != CFA_TREE_FILE)
		return disagree(u, te->path);
	if (!(copy = cfa_malloc(strlen(target) + 1)))
		return cfa_nomem(u->ctx);
	same = same_text(full, target, copy);
	memcpy(copy, target, strlen(target) + 1); /* copy becomes the link's text */
	if (!same) {
		cfa_free(copy);
		return disagree(u, te->path);
	}
	if (cfa_plat_remove(full) != 0) {
		cfa_free(copy);
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot remove", full);
	}
	/* Its digest, if the hasher gave one, is simply no longer listed. */
	te->kind = CFA_TREE_SYMLINK;
	te->target = copy;
	te->hash = CFA_TREE_NO_HASH;
	te->size = 0;
	return CFAPKG_E_OK;
}

static enum cfapkg_err settle_dir(struct unpacker *u, struct cfa_tree_entry *te,
                                  const char *name, const char *full)
{
	int rc;

	if (te)
		return te->kind == CFA_TREE_DIR ? CFAPKG_E_OK : disagree(u, name);
	/* A folder the local headers only implied: harmless, made as listed. */
	if (cfa_tree_add(&u->tree, name, CFA_TREE_DIR, NULL, &te) < 0)
		return cfa_nomem(u->ctx);
	te->settled = true;
	if ((rc = cfa_plat_mkdir_p(full)) != 0)
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot create: %s", full,
		                cfa_plat_strerror(rc));
	return CFAPKG_E_OK;
}

static enum cfapkg_err settle_symlink(struct unpacker *u, struct archive_entry *en,
                                      struct cfa_tree_entry *te, const char *full)
{
	const char *target;
	char *owned;
	enum cfapkg_err e;

	if (!cfa_unpack_text(en, CFA_TEXT_SYMLINK, &target, &owned))
		return cfa_nomem(u->ctx);
	e = settle_link(u, te, full, target);
	cfa_free(owned);
	return e;
}

/* A file or link the stream wrote (te) against its central entry. */
static enum cfapkg_err settle_file(struct unpacker *u, struct archive_entry *en,
                                   struct cfa_tree_entry *te, const char *raw, const char *full)
{
	te->settled = true;
	switch (archive_entry_filetype(en)) {
	case AE_IFREG:
		if (te->kind != CFA_TREE_FILE ||
		    (archive_entry_size_is_set(en) && (uint64_t)archive_entry_size(en) != te->size))
			return disagree(u, raw);
		te->mode = cfa_unpack_mode((unsigned)archive_entry_perm(en));
		cfa_plat_set_mode(full, te->mode);
		return CFAPKG_E_OK;
	case AE_IFLNK:
		return settle_symlink(u, en, te, full);
	default:
		return cfa_unpack_refuse(u, raw, "a device file, pipe or socket");
	}
}

static enum cfapkg_err settle_entry(struct unpacker *u, struct archive_entry *en)
{
	struct cfa_entry_name n;
	struct cfa_tree_entry *te;
	char *full = NULL;
	enum cfapkg_err e = cfa_unpack_name(u, en, &n);

	if (e || !n.name[0]) /* "": one of the stripped leading folders */
		goto out;
	te = cfa_tree_find(&u->tree, n.name);
	if (te && (te->settled || strcmp(te->path, n.name) != 0))
		e = disagree(u, n.raw);
	else if (!(full = cfa_unpack_full(u, n.name)))
		e = CFAPKG_E_NOMEM;
	else if (archive_entry_filetype(en) == AE_IFDIR)
		e = settle_dir(u, te, n.name, full);
	else
		e = te ? settle_file(u, en, te, n.raw, full) : disagree(u, n.raw);
out:
	cfa_free(full);
	cfa_entry_name_fini(&n);
	return e;
}

/* Every file or link the stream wrote must have been listed. */
static enum cfapkg_err all_settled(struct unpacker *u)
{
	size_t i;

	for (i = 0; i < u->tree.n; i++)
		if (!u->tree.e[i].settled && u->tree.e[i].kind != CFA_TREE_DIR)
			return disagree(u, u->tree.e[i].path);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_settle_zip(struct unpacker *u, const char *file)
{
	struct archive *outer, *a;
	struct archive_entry *en;
	enum cfapkg_err e = CFAPKG_E_OK;
	void *locale;
	int r;

	if (!file)
		return cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: a streamed zip needs its whole file "
		                "to be settled", u->label);
	u->file = file;
	u->front_to_back = false; /* this time through the central directory */
	locale = cfa_plat_utf8_begin();
	if (!(a = cfa_unpack_reader(u, "zip", &outer))) {
		cfa_plat_utf8_end(locale);
		return CFAPKG_E_INTEGRITY; /* detail set by cfa_unpack_reader */
	}
	while (!e && ((r = archive_read_next_header(a, &en)) == ARCHIVE_OK || r == ARCHIVE_WARN))
		e = settle_entry(u, en);
	if (!e && r != ARCHIVE_EOF)
		e = cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: damaged archive: %s", u->label,
		             archive_error_string(a));
	archive_read_free(a);
	if (outer)
		archive_read_free(outer);
	cfa_plat_utf8_end(locale);
	return e ? e : all_settled(u);
}
