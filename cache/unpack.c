/*
 * unpack.c - an archive into the store, safely.
 *
 * States: ROOT/store/.staging-NAME (being written; removed on any
 * failure and by the next unpack of NAME) -> ROOT/store/NAME (complete:
 * every file written, hashed into .cfapkg/manifest.json, synced, then the
 * folder renamed in one step).  A NAME folder is therefore always whole.
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

#define BLOCK (256u * 1024u)

/* An entry name as a message may show it: control characters (a terminal
 * would act on them) as "?", and a very long name shortened in the middle
 * so that the reason after it is not cut off. */
static void shown_name(const char *name, char *out, size_t len)
{
	size_t n = strlen(name), head = n, i, o = 0;

	if (n > 120) {
		head = 60;
		while (head && ((unsigned char)name[head] & 0xC0) == 0x80)
			head--; /* not inside a UTF-8 sequence */
	}
	for (i = 0; i < n && o + 4 < len; i++) {
		if (i == head) {
			size_t tail = n - 40;
			while (tail < n && ((unsigned char)name[tail] & 0xC0) == 0x80)
				tail++;
			o += (size_t)snprintf(out + o, len - o, "...");
			i = tail - 1;
			continue;
		}
		out[o++] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
	}
	out[o] = '\0';
}

enum cfapkg_err cfa_unpack_refuse(struct unpacker *u, const char *entry, const char *why)
{
	char shown[200], length[48] = "";

	u->refused = true;
	shown_name(entry, shown, sizeof(shown));
	if (strlen(entry) > 120)
		cfa_snprintf(length, sizeof(length), " (a name of %lu bytes)",
		             (unsigned long)strlen(entry));
	return cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: entry \"%s\"%s refused: %s; nothing was "
	                "installed from this archive", u->label, shown, length, why);
}

static enum cfapkg_err make_parent(struct unpacker *u, const char *full)
{
	char dir[CFA_UNPACK_PATH];
	const char *slash = strrchr(full, '/');
	int rc;

	if (!slash || (size_t)(slash - full) >= sizeof(dir))
		return CFAPKG_E_OK;
	memcpy(dir, full, (size_t)(slash - full));
	dir[slash - full] = '\0';
	if (cfa_plat_is_dir(dir))
		return CFAPKG_E_OK;
	rc = cfa_plat_mkdir_p(dir);
	return rc ? cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot create: %s", dir,
	                     cfa_plat_strerror(rc))
	          : CFAPKG_E_OK;
}

/* Appends bytes to a file being unpacked, within the size cap. */
enum cfapkg_err cfa_unpack_put(struct unpacker *u, FILE *f, const char *name, const char *full,
                               const void *data, size_t n, uint64_t *size)
{
	u->total += n;
	if (u->total > u->cap)
		return cfa_unpack_refuse(u, name, "the archive expands past the size cap (a "
		                         "decompression bomb?)");
	if (fwrite(data, 1, n, f) != n)
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot write: %s", full,
		                cfa_plat_strerror(cfa_plat_write_errno()));
	/* Every 8 MiB: start the disk on it now rather than at the final sync. */
	if ((*size + n) >> 23 != *size >> 23)
		cfa_plat_start_writeback(f);
	*size += n;
	return CFAPKG_E_OK;
}

/* A block libarchive gives at offset: a sparse entry's hole before it is
 * written as zeros; an empty block may come with no data at all. */
static enum cfapkg_err put_block(struct unpacker *u, FILE *f, const char *name, const char *full,
                                 const void *data, size_t n, uint64_t offset, uint64_t *size)
{
	static const unsigned char zeros[4096];
	enum cfapkg_err e = CFAPKG_E_OK;

	while (!e && offset > *size)
		e = cfa_unpack_put(u, f, name, full, zeros,
		                   offset - *size < sizeof(zeros) ? (size_t)(offset - *size)
		                                                  : sizeof(zeros),
		                   size);
	return e || !n ? e : cfa_unpack_put(u, f, name, full, data, n, size);
}

/* The bits a stored file gets: the archive's, never set-id or sticky,
 * always owner-readable (the hasher and cfapkg verify read it back), and
 * never writable: a store file is shared by every view that links it, so
 * a program writing into "its" copy would change all of them.  Each file
 * gets them once it is written, before the folder is committed, and the
 * manifest records them as stored. */
unsigned cfa_unpack_mode(unsigned archive_perm)
{
	return ((archive_perm & 0777) | 0400) & ~0222u;
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

	if ((e = make_parent(u, full)))
		return e;
	if (!(f = cfa_plat_fopen(full, "wb")))
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot create", full);
	while ((r = archive_read_data_block(a, &data, &n, &offset)) == ARCHIVE_OK)
		if ((e = put_block(u, f, te->path, full, data, n, (uint64_t)offset, &size)))
			break;
	if (!e && r != ARCHIVE_EOF)
		e = cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: entry \"%s\": %s", u->label, te->path,
		             archive_error_string(a));
	if (fclose(f) != 0 && !e)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot write: %s", full,
		             cfa_plat_strerror(cfa_plat_write_errno()));
	if (e)
		return e;
	te->mode = cfa_unpack_mode(perm);
	te->size = size;
	cfa_plat_set_mode(full, te->mode);
	if (!cfa_hasher_add_file(u->hasher, full))
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot hash (out of memory?)", full);
	te->hash = u->nhashed++;
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
	char target[CFA_UNPACK_NAME], text[CFA_UNPACK_PATH];
	const char *why = NULL, *hl = cfa_unpack_text(en, CFA_TEXT_HARDLINK, text, sizeof(text));

	if (!hl || !cfa_safe_entry_path(hl, u->strip, target, sizeof(target), &why) || !target[0])
		return cfa_unpack_refuse(u, raw, "a hard link pointing outside the archive");
	return note_link(u, raw, name, CFA_TREE_HARDLINK, target);
}

static enum cfapkg_err regular_file(struct unpacker *u, struct archive *a,
                                    struct archive_entry *en, const char *raw, const char *name)
{
	char full[CFA_UNPACK_PATH];
	struct cfa_tree_entry *te;
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
	cfa_snprintf(full, sizeof(full), "%s/%s", u->staging, name);
	return write_file(u, a, te, full, (unsigned)archive_entry_perm(en));
}

static enum cfapkg_err folder(struct unpacker *u, const char *raw, const char *name)
{
	char full[CFA_UNPACK_PATH];
	struct cfa_tree_entry *te;
	int added = cfa_tree_add(&u->tree, name, CFA_TREE_DIR, NULL, &te);

	if (added < 0)
		return cfa_nomem(u->ctx);
	if (!added && te->kind != CFA_TREE_DIR)
		return cfa_unpack_refuse(u, raw, "a folder of the same name as another entry");
	cfa_snprintf(full, sizeof(full), "%s/%s", u->staging, name);
	return cfa_plat_mkdir_p(full) ? cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot create", full)
	                              : CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_name(struct unpacker *u, struct archive_entry *en, char *text,
                                size_t len, char name[CFA_UNPACK_NAME], const char **raw)
{
	const char *why = NULL;

	*raw = cfa_unpack_text(en, CFA_TEXT_PATH, text, len);
	if (!*raw)
		*raw = archive_entry_pathname(en);
	if (!*raw || !cfa_safe_entry_path(*raw, u->strip, name, CFA_UNPACK_NAME, &why))
		return cfa_unpack_refuse(u, *raw ? *raw : "?", why ? why : "no name");
	if (archive_entry_is_encrypted(en))
		return cfa_unpack_refuse(u, *raw, "encrypted archives are not supported");
	return CFAPKG_E_OK;
}

static enum cfapkg_err entry(struct unpacker *u, struct archive *a, struct archive_entry *en)
{
	char name[CFA_UNPACK_NAME], text[CFA_UNPACK_PATH], link[CFA_UNPACK_PATH];
	const char *raw, *target;
	enum cfapkg_err e;

	if ((e = cfa_unpack_name(u, en, text, sizeof(text), name, &raw)))
		return e;
	if (!name[0])
		return CFAPKG_E_OK; /* one of the stripped leading folders */
	switch (archive_entry_filetype(en)) {
	case AE_IFDIR:
		return folder(u, raw, name);
	case AE_IFREG:
	case 0: /* a tar hard link entry carries no type of its own */
		return regular_file(u, a, en, raw, name);
	case AE_IFLNK:
		target = cfa_unpack_text(en, CFA_TEXT_SYMLINK, link, sizeof(link));
		if (!target || !*target)
			return cfa_unpack_refuse(u, raw, "a symbolic link without a target");
		return note_link(u, raw, name, CFA_TREE_SYMLINK, target);
	default:
		return cfa_unpack_refuse(u, raw, "a device file, pipe or socket");
	}
}

/* A .deb's payload is its data.tar.* member: read it straight out of the
 * outer ar archive. */
static la_ssize_t read_member(struct archive *inner, void *outer, const void **buf)
{
	static char block[65536];
	la_ssize_t n = archive_read_data(outer, block, sizeof(block));

	(void)inner;
	*buf = block;
	return n;
}

/* Why an archive cannot be read, in the user's terms where libarchive's
 * words would mislead.  Whether entries are encrypted can only be asked
 * once a format was chosen (libarchive crashes before). */
static enum cfapkg_err unreadable(struct unpacker *u, struct archive *a, const char *format)
{
	if (a && archive_format(a) && archive_read_has_encrypted_entries(a) > 0)
		return cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: encrypted archives are not "
		                "supported; nothing was installed from this archive", u->label);
	return cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: not a readable %s archive: %s", u->label,
	                format, a && archive_error_string(a) ? archive_error_string(a)
	                                                    : "out of memory");
}

static struct archive *open_deb(struct unpacker *u, struct archive *a, struct archive **outer)
{
	struct archive_entry *en;

	if (!(*outer = archive_read_new()))
		return NULL;
	archive_read_support_format_ar(*outer);
	if (archive_read_open_filename(*outer, u->file, BLOCK) != ARCHIVE_OK) {
		unreadable(u, *outer, "deb");
		return NULL;
	}
	while (archive_read_next_header(*outer, &en) == ARCHIVE_OK)
		if (strncmp(archive_entry_pathname(en), "data.tar", 8) == 0) {
			archive_read_support_format_tar(a);
			if (archive_read_open(a, *outer, NULL, read_member, NULL) == ARCHIVE_OK)
				return a;
			unreadable(u, a, "deb");
			return NULL;
		}
	cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: a .deb without data.tar", u->label);
	return NULL;
}

struct archive *cfa_unpack_reader(struct unpacker *u, const char *format, struct archive **outer)
{
	struct archive *a = archive_read_new();

	*outer = NULL;
	if (!a) {
		cfa_nomem(u->ctx);
		return NULL;
	}
	/* Only the compressions cfapkg's formats name, all built into
	 * libarchive: "all" would also start external programs (lzop, lrzip,
	 * grzip) found on PATH for the filters it lacks. */
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_zstd(a);
	/* A verified archive's zip CRC-32s repeat what its SHA-256 proved. */
	if (u->hash_checked)
		archive_read_set_format_option(a, "zip", "ignorecrc32", "1");
	if (strcmp(format, "deb") == 0) {
		if (open_deb(u, a, outer))
			return a;
	} else if (!u->file || u->front_to_back) {
		/* Only what can be read front to back: zip through its local
		 * headers (the bytes are the pinned ones: hashed as they arrive). */
		archive_read_support_format_zip_streamable(a);
		archive_read_support_format_tar(a);
		if ((u->file ? archive_read_open_filename(a, u->file, BLOCK)
		             : archive_read_open(a, u->src_arg, NULL, u->src, NULL)) == ARCHIVE_OK)
			return a;
		unreadable(u, a, format);
	} else {
		/* As bsdtar: the central directory when there is one, the local
		 * headers of a zip whose end cannot be found (padding, a stub). */
		archive_read_support_format_zip_seekable(a);
		archive_read_support_format_zip_streamable(a);
		archive_read_support_format_7zip(a);
		archive_read_support_format_tar(a);
		if (archive_read_open_filename(a, u->file, BLOCK) == ARCHIVE_OK)
			return a;
		unreadable(u, a, format);
	}
	archive_read_free(a);
	if (*outer)
		archive_read_free(*outer);
	*outer = NULL;
	return NULL;
}

const char *cfa_unpack_text(struct archive_entry *en, enum cfa_entry_text which, char *buf,
                            size_t len)
{
	const char *s;

	switch (which) {
	case CFA_TEXT_SYMLINK:
		s = archive_entry_symlink_utf8(en);
		return s ? s : cfa_wide_to_utf8(archive_entry_symlink_w(en), buf, len);
	case CFA_TEXT_HARDLINK:
		s = archive_entry_hardlink_utf8(en);
		return s ? s : cfa_wide_to_utf8(archive_entry_hardlink_w(en), buf, len);
	default:
		s = archive_entry_pathname_utf8(en);
		return s ? s : cfa_wide_to_utf8(archive_entry_pathname_w(en), buf, len);
	}
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
		if (archive_read_has_encrypted_entries(a) > 0)
			e = unreadable(u, a, u->format);
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
	return strncmp(format, "tar", 3) == 0 || strcmp(format, "zip") == 0;
}

static enum cfapkg_err unpacker_new(struct cfapkg_ctx *ctx, const char *name, const char *label,
                                    const struct cfapkg_unpack_opts *opts, struct unpacker **out)
{
	struct unpacker *u = cfa_calloc(1, sizeof(*u));

	*out = u;
	if (!u || !(u->label = cfa_strdup(label)))
		return cfa_nomem(ctx);
	u->ctx = ctx;
	u->hash_checked = opts && opts->hash_checked;
	if (cfa_root_path_buf(ctx, CFA_STORE, NULL, u->store, sizeof(u->store)))
		return ctx->err_code;
	if (!cfa_snprintf(u->final, sizeof(u->final), "%s/%s", u->store, name) ||
	    !cfa_snprintf(u->staging, sizeof(u->staging), "%s/.staging-%s", u->store, name))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s/%s: path too long", u->store, name);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_open(struct cfapkg_ctx *ctx, const char *name, const char *label,
                                uint64_t archive_size, const struct cfapkg_unpack_opts *opts,
                                struct unpacker **out, bool *existed)
{
	uint64_t max_bytes = opts && opts->max_bytes ? opts->max_bytes : 64ull << 30;
	unsigned ratio = opts && opts->max_ratio ? opts->max_ratio : 1000;
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
	if (cfa_plat_is_dir(u->final)) {
		*existed = true; /* a store folder is only ever complete */
		u->staging[0] = '\0';
		return CFAPKG_E_OK;
	}
	u->cap = archive_size * ratio < max_bytes ? archive_size * ratio : max_bytes;
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
	u->streamed = src != NULL || u->front_to_back;
	u->strip = strip;
	if (!cfa_snprintf(u->format, sizeof(u->format), "%s", format))
		return cfa_fail(u->ctx, CFAPKG_E_UNSUPPORTED, "%s: unknown format %s", u->label,
		                format);
	locale = cfa_plat_utf8_begin();
	e = extract_all(u);
	cfa_plat_utf8_end(locale);
	return e;
}

enum cfapkg_err cfa_unpack_commit(struct unpacker *u, const char *file,
                                  struct cfapkg_unpack_result *out)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	if (!cfa_hasher_finish(u->hasher))
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot read the unpacked files back to hash "
		                "them (out of memory?)", u->staging);
	if (u->streamed && strcmp(u->format, "zip") == 0)
		e = cfa_unpack_settle_zip(u, file);
	if (!e)
		e = cfa_unpack_links(u);
	if (!e)
		e = cfa_tree_write_manifest(u->ctx, &u->tree, u->staging, digest_of, u->hasher);
	if (e)
		return e;
	for (i = 0; i < u->tree.n; i++)
		u->files += u->tree.e[i].kind != CFA_TREE_DIR;
	cfa_plat_sync_fs(u->staging);
	cfa_crash_point();
	if (cfa_plat_rename(u->staging, u->final) != 0)
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot move into the store", u->final);
	cfa_plat_sync_dir(u->store);
	u->staging[0] = '\0';
	cfa_snprintf(out->path, sizeof(out->path), "%s", u->final);
	out->files = u->files;
	out->bytes = u->total;
	return CFAPKG_E_OK;
}

void cfa_unpack_close(struct unpacker *u)
{
	if (!u)
		return;
	cfa_hasher_finish(u->hasher); /* its files are closed (Windows keeps open files) */
	if (u->staging[0])
		cfa_plat_remove_tree(u->staging);
	cfa_tree_fini(&u->tree);
	cfa_hasher_free(u->hasher);
	cfa_free(u->label);
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
		cfa_snprintf(out->path, sizeof(out->path), "%s", u->final);
		out->existed = true;
	} else if (!e) {
		e = extract_file(ctx, &u, archive, format, opts);
		if (!e)
			e = cfa_unpack_commit(u, archive, out);
	}
	if (e && u) {
		out->files = u->files;
		out->bytes = u->total;
	}
	cfa_unpack_close(u);
	return e;
}
