/*
 * unpack.c - an archive into the store, safely.
 *
 * States: ROOT/store/.staging-NAME (being written; removed on any
 * failure and by the next unpack of NAME) -> ROOT/store/NAME (complete:
 * every file written, hashed into .cfapkg/manifest.json, synced, then the
 * folder renamed in one step).  A NAME folder is therefore always whole.
 * A damaged NAME that is replaced (repair) stays where it is until its
 * replacement is whole; then the two swap names in one step, or where the
 * system cannot swap, NAME goes to .old-NAME and the new one takes its
 * name (recovery puts .old-NAME back when a kill came between the two).
 * Nothing is written outside the staging folder: every entry name goes
 * through cfa_safe_entry_path, device files are refused, and so are
 * duplicates and names that collide when case is ignored.  Links are made
 * last, after the whole tree is known and judged (tree.c), so nothing is
 * ever written through one.  Caps on total bytes and on the expansion
 * ratio stop bombs.
 *
 * The same archive may be read two ways: from the file, or front to back
 * while it downloads (stream.c).  Both must give the same tree.  A zip
 * read front to back sees only its local headers, which carry neither
 * permission bits nor the mark of a symbolic link; those live in the
 * central directory at the end.  So a streamed zip is settled against its
 * central directory at commit, once the whole verified file is there
 * (unpack_zip.c).
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/unpack_int.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* A block libarchive gives at offset: a sparse entry's hole before it is
 * written as zeros; an empty block may come with no data at all. */
static enum cfapkg_err put_block(struct unpacker *u, FILE *f, const char *name, const char *full,
                                 const void *data, size_t n, uint64_t offset, uint64_t *size)
{
	static const unsigned char zeros[4096];
	enum cfapkg_err e = CFAPKG_E_OK;

	/* Through cfa_unpack_put like the data, so that a hole counts toward
	 * the size cap too. */
	while (!e && offset > *size)
		e = cfa_unpack_put(u, f, name, full, zeros,
		                   offset - *size < sizeof(zeros) ? (size_t)(offset - *size)
		                                                  : sizeof(zeros),
		                   size);
	return e || !n ? e : cfa_unpack_put(u, f, name, full, data, n, size);
}

/* A regular file: the entry's data to disk; the hasher reads it back. */
static enum cfapkg_err write_file(struct unpacker *u, struct archive *a,
                                  struct cfa_tree_entry *te, const char *full, unsigned perm)
{
	uint64_t size = 0;
	enum cfapkg_err e;
	FILE *f;
	const void *data;
	size_t n;
	la_int64_t offset;
	int r;

	if ((e = cfa_unpack_make_parent(u, full)))
		return e;
	if (!(f = cfa_plat_fopen(full, "wb")))
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot create: %s", full,
		                cfa_plat_strerror(cfa_plat_write_errno()));
	while ((r = archive_read_data_block(a, &data, &n, &offset)) == ARCHIVE_OK)
		if ((e = put_block(u, f, te->path, full, data, n, (uint64_t)offset, &size)))
			break;
	if (!e && r != ARCHIVE_EOF) {
		char shown[200];
		cfa_unpack_shown(te->path, shown, sizeof(shown));
		e = cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: entry \"%s\": %s", u->label, shown,
		             archive_error_string(a));
	}
	if (fclose(f) != 0 && !e)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot write: %s", full,
		             cfa_plat_strerror(cfa_plat_write_errno()));
	if (e)
		return e;
	te->mode = cfa_unpack_mode(perm);
	te->size = size;
	/* After the close, as the manifest records them: the file is never
	 * writable in the store. */
	cfa_plat_set_mode(full, te->mode);
	/* Named once closed: the hasher reads it back on its own thread while
	 * its pages are still in memory. */
	if (!cfa_hasher_add_file(u->hasher, full, &te->hash))
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot hash (out of memory?)", full);
	return CFAPKG_E_OK;
}

/* A link is only noted here: links are made once the tree is whole. */
static enum cfapkg_err note_link(struct unpacker *u, const char *raw, const char *name,
                                 enum cfa_tree_kind kind, const char *target)
{
	struct cfa_tree_entry *te;
	int added = cfa_tree_add(&u->tree, name, kind, target, &te);

	if (added < 0)
		return cfa_nomem(u->ctx);
	return added ? CFAPKG_E_OK
	             : cfa_unpack_refuse(u, raw, "a second entry of the same name (or the same "
	                                         "name in another case)");
}

static enum cfapkg_err hard_link(struct unpacker *u, struct archive_entry *en, const char *raw,
                                 const char *name)
{
	const char *why = NULL, *hl;
	char *owned, *target = NULL;
	enum cfapkg_err e;

	if (!cfa_unpack_text(en, CFA_TEXT_HARDLINK, &hl, &owned) ||
	    (hl && !cfa_unpack_safe(hl, u->strip, &target, &why) && !why))
		e = cfa_nomem(u->ctx);
	else if (!target || !target[0])
		e = cfa_unpack_refuse(u, raw, "a hard link pointing outside the archive");
	else
		e = note_link(u, raw, name, CFA_TREE_HARDLINK, target);
	cfa_free(owned);
	cfa_free(target);
	return e;
}

static enum cfapkg_err regular_file(struct unpacker *u, struct archive *a,
                                    struct archive_entry *en, const char *raw, const char *name)
{
	struct cfa_tree_entry *te;
	enum cfapkg_err e;
	char *full;
	int added;

	if (archive_entry_hardlink(en) || archive_entry_hardlink_w(en))
		return hard_link(u, en, raw, name);
	if (!archive_entry_filetype(en))
		return cfa_unpack_refuse(u, raw, "an entry of no known type");
	if ((added = cfa_tree_add(&u->tree, name, CFA_TREE_FILE, NULL, &te)) < 0)
		return cfa_nomem(u->ctx);
	if (!added)
		return cfa_unpack_refuse(u, raw, "a second entry of the same name (or the same "
		                                 "name in another case)");
	if (!(full = cfa_unpack_full(u, name)))
		return CFAPKG_E_NOMEM;
	e = write_file(u, a, te, full, (unsigned)archive_entry_perm(en));
	cfa_free(full);
	return e;
}

static enum cfapkg_err folder(struct unpacker *u, const char *raw, const char *name)
{
	struct cfa_tree_entry *te;
	int added = cfa_tree_add(&u->tree, name, CFA_TREE_DIR, NULL, &te);
	enum cfapkg_err e = CFAPKG_E_OK;
	char *full;
	int rc;

	if (added < 0)
		return cfa_nomem(u->ctx);
	/* A folder named twice is accepted; one over a file or a link is not. */
	if (!added && te->kind != CFA_TREE_DIR)
		return cfa_unpack_refuse(u, raw, "a folder of the same name as another entry");
	if (!(full = cfa_unpack_full(u, name)))
		return CFAPKG_E_NOMEM;
	if ((rc = cfa_plat_mkdir_p(full)) != 0)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot create: %s", full, cfa_plat_strerror(rc));
	cfa_free(full);
	return e;
}

static enum cfapkg_err symlink_entry(struct unpacker *u, struct archive_entry *en,
                                     const struct cfa_entry_name *n)
{
	const char *target;
	char *owned;
	enum cfapkg_err e;

	if (!cfa_unpack_text(en, CFA_TEXT_SYMLINK, &target, &owned))
		return cfa_nomem(u->ctx);
	if (!target || !*target)
		e = cfa_unpack_refuse(u, n->raw, "a symbolic link without a target");
	else
		e = note_link(u, n->raw, n->name, CFA_TREE_SYMLINK, target);
	cfa_free(owned);
	return e;
}

static enum cfapkg_err typed_entry(struct unpacker *u, struct archive *a,
                                   struct archive_entry *en, const struct cfa_entry_name *n)
{
	switch (archive_entry_filetype(en)) {
	case AE_IFDIR:
		return folder(u, n->raw, n->name);
	case AE_IFREG:
	case 0: /* a tar hard link entry carries no type of its own */
		return regular_file(u, a, en, n->raw, n->name);
	case AE_IFLNK:
		return symlink_entry(u, en, n);
	default:
		return cfa_unpack_refuse(u, n->raw, "a device file, pipe or socket");
	}
}

/* Every folder an entry's name goes through must not be something else
 * already ("def" a file, then "def/foo": a zip made on DOS marks a folder
 * only in its central directory, which a reader going front to back has
 * not seen). */
static enum cfapkg_err inside_folders(struct unpacker *u, const struct cfa_entry_name *n)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	char *path = cfa_strdup(n->name), *slash;
	struct cfa_tree_entry *te;

	if (!path)
		return cfa_nomem(u->ctx);
	for (slash = strchr(path, '/'); slash && !e; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if ((te = cfa_tree_find(&u->tree, path)) && te->kind != CFA_TREE_DIR)
			e = cfa_unpack_refuse(u, n->raw, te->kind == CFA_TREE_FILE
			                      ? "it lies inside an entry the archive gave as a file (a "
			                        "folder marked only in a zip's central directory?)"
			                      : "it lies inside a link");
		*slash = '/';
	}
	cfa_free(path);
	return e;
}

static enum cfapkg_err entry(struct unpacker *u, struct archive *a, struct archive_entry *en)
{
	struct cfa_entry_name n;
	enum cfapkg_err e = cfa_unpack_name(u, en, &n);

	if (!e && n.name[0]) /* "": one of the stripped leading folders */
		e = inside_folders(u, &n);
	if (!e && n.name[0])
		e = typed_entry(u, a, en, &n);
	cfa_entry_name_fini(&n);
	return e;
}

/* libarchive says ARCHIVE_WARN for a header it read but could not put in
 * the current locale's characters; the UTF-8 name is still there. */
static bool header_read(struct archive *a, struct archive_entry **en, int *r)
{
	*r = archive_read_next_header(a, en);
	return *r == ARCHIVE_OK || *r == ARCHIVE_WARN;
}

static enum cfapkg_err extract_all(struct unpacker *u)
{
	struct archive *outer, *a = cfa_unpack_reader(u, u->format, &outer);
	struct archive_entry *en;
	enum cfapkg_err e = CFAPKG_E_OK;
	int r = ARCHIVE_OK;

	if (!a)
		return CFAPKG_E_INTEGRITY; /* detail set by cfa_unpack_reader */
	while (!e && header_read(a, &en, &r))
		e = entry(u, a, en);
	if (!e && r != ARCHIVE_EOF) {
		/* An encrypted entry stops the read as damage would: saying
		 * what it is helps more. */
		if (archive_read_has_encrypted_entries(a) > 0)
			e = cfa_unpack_unreadable(u, a, u->format);
		else
			e = cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: damaged archive: %s", u->label,
			             archive_error_string(a));
	}
	archive_read_free(a);
	if (outer)
		archive_read_free(outer);
	return e;
}

static const char *digest_of(void *arg, size_t k)
{
	return cfa_hasher_hex(arg, k);
}

bool cfa_unpack_streamable(const char *format)
{
	/* Formats read front to back without a seek; 7z keeps its header at the
	 * end. */
	return strncmp(format, "tar", 3) == 0 || strcmp(format, "zip") == 0 ||
	       strcmp(format, "deb") == 0;
}

uint64_t cfa_unpack_cap(uint64_t archive_size, const struct cfapkg_unpack_opts *opts)
{
	uint64_t max_bytes = opts && opts->max_bytes ? opts->max_bytes : 64ull << 30;
	unsigned ratio = opts && opts->max_ratio ? opts->max_ratio : 1000;

	/* The lower of 1000 times the archive and 64 GiB in all, unless the
	 * caller sets either. */
	return archive_size * ratio < max_bytes ? archive_size * ratio : max_bytes;
}

static enum cfapkg_err unpacker_new(struct cfapkg_ctx *ctx, const char *name, const char *label,
                                    const struct cfapkg_unpack_opts *opts, struct unpacker **out)
{
	struct unpacker *u = cfa_calloc(1, sizeof(*u));

	/* Given out even on failure: the caller's cfa_unpack_close frees
	 * whatever was made. */
	*out = u;
	if (!u || !(u->label = cfa_strdup(label)))
		return cfa_nomem(ctx);
	u->ctx = ctx;
	u->hash_checked = opts && opts->hash_checked;
	if (!(u->store = cfa_root_path(ctx, CFA_STORE, NULL)))
		return ctx->err_code;
	if (!(u->final = cfa_aprintf("%s/%s", u->store, name)) ||
	    !(u->staging = cfa_aprintf("%s/.staging-%s", u->store, name)))
		return cfa_nomem(ctx);
	return CFAPKG_E_OK;
}

/* The store folder's path into the result, as long as it is. */
static enum cfapkg_err result_path(struct unpacker *u, struct cfapkg_unpack_result *out)
{
	cfa_free(out->path);
	out->path = cfa_strdup(u->final);
	return out->path ? CFAPKG_E_OK : cfa_nomem(u->ctx);
}

void cfapkg_unpack_result_clear(struct cfapkg_unpack_result *r)
{
	if (!r)
		return;
	cfa_free(r->path);
	memset(r, 0, sizeof(*r));
}

/* Whether the folder at u->final is whole: only one that lacks its
 * manifest (a kill cannot leave one, a hand or a disk can) is not, and is
 * then replaced as a damaged one is, never taken as it stands. */
static enum cfapkg_err has_manifest(struct unpacker *u, bool *whole)
{
	char *manifest = cfa_aprintf("%s/.cfapkg/manifest.json", u->final);

	if (!manifest)
		return cfa_nomem(u->ctx);
	*whole = cfa_plat_is_file(manifest);
	cfa_free(manifest);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_open(struct cfapkg_ctx *ctx, const char *name, const char *label,
                                uint64_t archive_size, const struct cfapkg_unpack_opts *opts,
                                struct unpacker **out, bool *existed)
{
	struct unpacker *u;
	enum cfapkg_err e;
	int rc;

	*existed = false;
	if ((e = unpacker_new(ctx, name, label, opts, out)))
		return e;
	u = *out;
	if ((rc = cfa_plat_mkdir_p(u->store)))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create: %s", u->store,
		                cfa_plat_strerror(rc));
	/* A folder at NAME is only ever replaced by swap_in, which keeps NAME
	 * whole throughout. */
	u->replace = cfa_plat_is_dir(u->final);
	if (u->replace && !(opts && opts->replace) && (e = has_manifest(u, existed)))
		return e;
	if (*existed) { /* a store folder is only ever complete */
		/* No staging name: closing then removes nothing, since that
		 * name may be another unpack's. */
		CFA_FREE(u->staging);
		return CFAPKG_E_OK;
	}
	u->cap = cfa_unpack_cap(archive_size, opts);
	if (!(u->hasher = cfa_hasher_new()))
		return cfa_nomem(ctx);
	cfa_plat_remove_tree(u->staging); /* left by an interrupted unpack */
	if ((rc = cfa_plat_mkdir_p(u->staging)))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create: %s", u->staging,
		                cfa_plat_strerror(rc));
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_extract(struct unpacker *u, archive_read_callback *src, void *src_arg,
                                   const char *file, const char *format, unsigned strip)
{
	void *locale;
	enum cfapkg_err e;

	u->src = src;
	u->src_arg = src_arg;
	u->file = src ? NULL : file;
	/* Read front to back: a zip is then settled against its central
	 * directory at the seal. */
	u->streamed = src != NULL || u->front_to_back;
	u->strip = strip;
	/* Every format's name fits; a longer one is none of them. */
	if (!cfa_snprintf(u->format, sizeof(u->format), "%s", format))
		return cfa_fail(u->ctx, CFAPKG_E_UNSUPPORTED, "%s: unknown format %s", u->label,
		                format);
	/* Names are converted through the locale: a UTF-8 one for this thread
	 * only (other unpacks run in other threads). */
	locale = cfa_plat_utf8_begin();
	e = extract_all(u);
	cfa_plat_utf8_end(locale);
	return e;
}

/* Whichever way a zip was read, its two lists of entries must be one
 * (zipdir.c): else other tools would see other files than cfapkg put in
 * place. */
static enum cfapkg_err zip_lists_agree(struct unpacker *u, const char *file)
{
	char *entry = NULL;
	const char *why = file ? cfa_zip_lists_agree(file, &entry) : NULL;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (why && entry)
		e = cfa_unpack_refuse(u, entry, why);
	else if (why)
		e = cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: refused: %s; nothing was installed "
		             "from this archive", u->label, why);
	cfa_free(entry);
	return e;
}

/* A test seam: CFAPKG_TEST_NO_EXCHANGE=1 takes the path of a system that
 * cannot swap two names (Windows), so that a kill sweep on Linux covers it. */
static bool may_exchange(void)
{
	char buf[4];
	const char *v = cfa_plat_getenv("CFAPKG_TEST_NO_EXCHANGE", buf, sizeof(buf));

	return !v || strcmp(v, "1") != 0;
}

/* The whole new folder takes the damaged one's name.  Swapped, the old one
 * sits at the staging name (recovery removes what a kill leaves there);
 * renamed, it is set aside first and put back if the new one cannot
 * follow.  Either way NAME is whole at every step that can fail. */
static enum cfapkg_err swap_in(struct unpacker *u)
{
	char *old;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (may_exchange() && cfa_plat_exchange(u->staging, u->final) == 0) {
		/* The swap made durable before the old tree goes; a kill after
		 * it leaves the old one at the staging name, which recovery
		 * removes. */
		cfa_plat_sync_dir(u->store);
		cfa_crash_point();
		cfa_plat_remove_tree(u->staging);
		return CFAPKG_E_OK;
	}
	if (!(old = cfa_aprintf("%s/%s%s", u->store, CFA_STORE_OLD, strrchr(u->final, '/') + 1)))
		return cfa_nomem(u->ctx);
	cfa_plat_remove_tree(old); /* a copy of a replaced folder, whose name stands */
	if (cfa_plat_rename(u->final, old) != 0)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot move the damaged folder aside to "
		             "replace it (is a program using it?); it is left as it was", u->final);
	cfa_plat_sync_dir(u->store);
	cfa_crash_point();
	if (!e && cfa_plat_rename(u->staging, u->final) != 0) {
		/* Put back: NAME is the damaged but whole folder it was. */
		cfa_plat_rename(old, u->final);
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot move into the store; the damaged "
		             "folder is left as it was", u->final);
	}
	cfa_plat_sync_dir(u->store);
	cfa_crash_point();
	if (!e)
		cfa_plat_remove_tree(old);
	cfa_free(old);
	return e;
}

enum cfapkg_err cfa_unpack_seal(struct unpacker *u, const char *file)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	/* The manifest needs every digest: the hasher's thread is joined first. */
	if (!cfa_hasher_finish(u->hasher))
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot read the unpacked files back to hash "
		                "them (out of memory?)", u->staging);
	if (strcmp(u->format, "zip") == 0)
		e = zip_lists_agree(u, file);
	if (!e && u->streamed && strcmp(u->format, "zip") == 0)
		e = cfa_unpack_settle_zip(u, file);
	if (!e)
		e = cfa_unpack_links(u);
	if (!e)
		e = cfa_tree_write_manifest(u->ctx, &u->tree, u->staging, digest_of, u->hasher);
	if (e)
		return e;
	for (i = 0; i < u->tree.n; i++)
		u->files += u->tree.e[i].kind != CFA_TREE_DIR;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_move(struct unpacker *u, struct cfapkg_unpack_result *out)
{
	enum cfapkg_err e = CFAPKG_E_OK;

	/* Every file on the disk before the rename that makes NAME, so that a
	 * NAME folder is whole after a crash too. */
	cfa_plat_sync_fs(u->staging);
	cfa_crash_point();
	if (u->replace)
		e = swap_in(u);
	else if (cfa_plat_rename(u->staging, u->final) != 0)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot move into the store", u->final);
	if (e)
		return e;
	cfa_plat_sync_dir(u->store);
	CFA_FREE(u->staging);
	out->files = u->files;
	out->bytes = u->total;
	return result_path(u, out);
}

enum cfapkg_err cfa_unpack_commit(struct unpacker *u, const char *file, bool drop,
                                  struct cfapkg_unpack_result *out)
{
	enum cfapkg_err e = cfa_unpack_seal(u, file);

	if (e)
		return e;
	/* An archive that is not kept goes before the sync: the file system
	 * then drops its pages instead of writing them. */
	if (drop && file)
		cfa_plat_remove(file);
	return cfa_unpack_move(u, out);
}

void cfa_unpack_close(struct unpacker *u)
{
	if (!u)
		return;
	/* A member's folder and hasher are its set's, closed with the set. */
	if (!u->set) {
		cfa_hasher_finish(u->hasher); /* its files are closed (Windows keeps open files) */
		if (u->staging)
			cfa_plat_remove_tree(u->staging);
		cfa_hasher_free(u->hasher);
	}
	cfa_tree_fini(&u->tree);
	cfa_free(u->label);
	cfa_free(u->store);
	cfa_free(u->final);
	cfa_free(u->staging);
	cfa_free(u);
}

/* A zip file is read as a download reads it, front to back and then
 * settled against its central directory, so that both ways of unpacking
 * are one and the same and cannot disagree.  Only a zip that cannot be
 * read that way (stored entries with data descriptors, a self-extractor
 * stub) is read through its central directory instead; a refusal stands. */
static enum cfapkg_err extract_file(struct cfapkg_ctx *ctx, struct unpacker **u,
                                    const char *archive, const char *format,
                                    const struct cfapkg_unpack_opts *opts)
{
	unsigned strip = opts ? opts->strip : 0;
	enum cfapkg_err e;
	char *name;
	bool existed;

	if (strcmp(format, "zip") != 0)
		return cfa_unpack_extract(*u, NULL, NULL, archive, format, strip);
	(*u)->front_to_back = true;
	e = cfa_unpack_extract(*u, NULL, NULL, archive, format, strip);
	if (e != CFAPKG_E_INTEGRITY || (*u)->refused)
		return e;
	/* Start over with the other reader, in a fresh staging folder. */
	name = cfa_strdup(strrchr((*u)->final, '/') + 1);
	if (!name)
		return cfa_nomem(ctx);
	cfapkg_ctx_clear_error(ctx);
	cfa_unpack_close(*u);
	*u = NULL;
	e = cfa_unpack_open(ctx, name, opts && opts->label ? opts->label : archive,
	                    (uint64_t)cfa_plat_file_size(archive), opts, u, &existed);
	cfa_free(name);
	return e ? e : cfa_unpack_extract(*u, NULL, NULL, archive, format, strip);
}

enum cfapkg_err cfapkg_unpack(struct cfapkg_ctx *ctx, const char *archive, const char *format,
                              const char *name, const struct cfapkg_unpack_opts *opts,
                              struct cfapkg_unpack_result *out)
{
	long long asize = cfa_plat_file_size(archive);
	struct unpacker *u = NULL;
	bool existed;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if (asize < 0)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: no such archive", archive);
	e = cfa_unpack_open(ctx, name, opts && opts->label ? opts->label : archive,
	                    (uint64_t)asize, opts, &u, &existed);
	if (!e && existed) {
		e = result_path(u, out);
		out->existed = true;
	} else if (!e) {
		e = extract_file(ctx, &u, archive, format, opts);
		if (!e)
			e = cfa_unpack_commit(u, archive, false, out);
	}
	if (e && u) {
		out->files = u->files;
		out->bytes = u->total;
	}
	cfa_unpack_close(u);
	return e;
}

/* A set: each archive into the same staging folder, then one commit.  The
 * tree sees every entry of every archive, so a path two archives both hold
 * is refused like a duplicate inside one.  No zip here: its read needs the
 * central-directory check per archive, and no set needs zips. */
enum cfapkg_err cfapkg_unpack_set(struct cfapkg_ctx *ctx, const char *const *archives,
                                  const struct cfapkg_artifact *arts, size_t n, const char *name,
                                  const struct cfapkg_unpack_opts *opts,
                                  struct cfapkg_unpack_result *out)
{
	struct unpacker *u = NULL;
	uint64_t total = 0;
	enum cfapkg_err e;
	bool existed;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		long long size = cfa_plat_file_size(archives[i]);
		if (size < 0)
			return cfa_fail(ctx, CFAPKG_E_IO, "%s: no such archive", archives[i]);
		if (strcmp(arts[i].format, "zip") == 0 || strcmp(arts[i].format, "7z") == 0)
			return cfa_fail(ctx, CFAPKG_E_UNSUPPORTED, "%s: a set of archives holds tar "
			                "and deb archives, not %s", archives[i], arts[i].format);
		total += (uint64_t)size;
	}
	e = cfa_unpack_open(ctx, name, opts && opts->label ? opts->label : name, total, opts, &u,
	                    &existed);
	if (!e && existed) {
		e = result_path(u, out);
		out->existed = true;
	}
	for (i = 0; !e && !existed && i < n; i++)
		e = cfa_unpack_extract(u, NULL, NULL, archives[i], arts[i].format, arts[i].strip);
	if (!e && !existed)
		e = cfa_unpack_commit(u, NULL, false, out);
	cfa_unpack_close(u);
	return e;
}
