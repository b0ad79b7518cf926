/*
 * unpack.c - an archive into the store, safely.
 *
 * States: ROOT/store/.staging-NAME-N (being written; removed on any
 * failure and by the next unpack of NAME) -> ROOT/store/NAME (complete:
 * every file written, hashed into .cfapkg/manifest.json, synced, then the
 * folder renamed in one step).  A NAME folder is therefore always whole.
 * Nothing is written outside the staging folder: every entry name goes
 * through cfa_safe_entry_path, links must resolve inside, device files are
 * refused, and so are duplicates and names that collide when case is
 * ignored.  Caps on total bytes and on the expansion ratio stop bombs.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define BLOCK (256u * 1024u)

struct link {
	char *path, *target;
	bool hard;
};

struct unpacker {
	struct cfapkg_ctx *ctx;
	const char *archive_path;  /* for messages; the stream's name when src is set */
	archive_read_callback *src; /* a stream being downloaded, or NULL: the file */
	void *src_arg;
	bool hash_checked;
	char staging[4096], store[4096], final[4300];
	uint64_t cap, total, files;
	struct cfa_buf manifest;
	struct cfa_hasher *hasher;
	size_t *hex_at;            /* where file k's digest goes in the manifest */
	size_t nhex_at, hex_at_cap;
	char **seen;               /* lower-cased names, a hash set */
	size_t seen_mask, nseen;
	struct link *links;
	size_t nlinks, links_cap;
};

static uint32_t hash_lower(const char *s, char *lower, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++) {
		char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
		lower[i] = c;
		h = (h ^ (unsigned char)c) * 16777619u;
	}
	lower[i] = '\0';
	return h;
}

/* Remembers a name; false when it (or a case variant) was there before. */
static int remember(struct unpacker *u, const char *name)
{
	char lower[4096];
	size_t i = hash_lower(name, lower, sizeof(lower)) & u->seen_mask;

	if (u->nseen * 2 >= u->seen_mask)
		return -1;
	for (; u->seen[i]; i = (i + 1) & u->seen_mask)
		if (strcmp(u->seen[i], lower) == 0)
			return 0;
	u->seen[i] = cfa_strdup(lower);
	if (!u->seen[i])
		return -1;
	u->nseen++;
	return 1;
}

static enum cfapkg_err refuse(struct unpacker *u, const char *entry, const char *why)
{
	return cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: entry \"%s\" refused: %s; nothing was "
	                "installed from this archive", u->archive_path, entry, why);
}

static enum cfapkg_err make_parent(struct unpacker *u, const char *full)
{
	char dir[4096];
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


static void manifest_add(struct unpacker *u, const char *name, uint64_t size, const char *hex,
                         const char *kind)
{
	cfa_buf_printf(&u->manifest, "%s\n  {\"path\": \"", u->files++ ? "," : "");
	for (; *name; name++) {
		if (*name == '"' || *name == '\\')
			cfa_buf_add(&u->manifest, "\\", 1);
		cfa_buf_add(&u->manifest, name, 1);
	}
	cfa_buf_printf(&u->manifest, "\", \"type\": \"%s\", \"size\": %llu, \"sha256\": \"%s\"}",
	               kind, (unsigned long long)size, hex);
}

/* Lists a file whose digest the hasher has yet to give: 64 placeholder
 * digits, overwritten once it has (fill_digests). */
static enum cfapkg_err record_file(struct unpacker *u, const char *name, const char *full,
                                   uint64_t size)
{
	static const char zeros[65] = "0000000000000000000000000000000000000000000000000000000000000000";

	if (!cfa_hasher_add_file(u->hasher, full) ||
	    cfa_grow((void **)&u->hex_at, &u->hex_at_cap, u->nhex_at + 1, sizeof(*u->hex_at)) != 0)
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot hash (out of memory?)", full);
	manifest_add(u, name, size, zeros, "file");
	u->hex_at[u->nhex_at++] = u->manifest.len - 66; /* the digits, then "}" */
	return CFAPKG_E_OK;
}

static enum cfapkg_err fill_digests(struct unpacker *u)
{
	size_t k;

	if (!cfa_hasher_finish(u->hasher))
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot read the unpacked files back to hash "
		                "them (out of memory?)", u->staging);
	for (k = 0; k < u->nhex_at && !u->manifest.failed; k++)
		memcpy(u->manifest.data + u->hex_at[k], cfa_hasher_hex(u->hasher, k), 64);
	return CFAPKG_E_OK;
}

/* Appends bytes to a file being unpacked, within the size cap. */
static enum cfapkg_err put_bytes(struct unpacker *u, FILE *f, const char *name, const char *full,
                                 const void *data, size_t n, uint64_t *size)
{
	u->total += n;
	if (u->total > u->cap)
		return refuse(u, name, "the archive expands past the size cap (a decompression bomb?)");
	if (fwrite(data, 1, n, f) != n)
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: write failed (disk full?)", full);
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
		e = put_bytes(u, f, name, full, zeros,
		              offset - *size < sizeof(zeros) ? (size_t)(offset - *size) : sizeof(zeros),
		              size);
	return e || !n ? e : put_bytes(u, f, name, full, data, n, size);
}

/* A regular file: the entry's data to disk; the hasher reads it back. */
static enum cfapkg_err write_file(struct unpacker *u, struct archive *a, const char *name,
                                  const char *full, unsigned mode)
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
		if ((e = put_block(u, f, name, full, data, n, (uint64_t)offset, &size)))
			break;
	if (!e && r != ARCHIVE_EOF)
		e = cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: entry \"%s\": %s", u->archive_path, name,
		             archive_error_string(a));
	if (fclose(f) != 0 && !e)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: write failed (disk full?)", full);
	if (e)
		return e;
	/* Owner-readable always: the hasher and cfapkg verify read it back. */
	cfa_plat_set_mode(full, mode | 0400);
	return record_file(u, name, full, size);
}

static enum cfapkg_err defer_link(struct unpacker *u, const char *name, const char *target,
                                  bool hard)
{
	if (cfa_grow((void **)&u->links, &u->links_cap, u->nlinks + 1, sizeof(*u->links)) != 0)
		return cfa_nomem(u->ctx);
	u->links[u->nlinks].path = cfa_strdup(name);
	u->links[u->nlinks].target = cfa_strdup(target);
	u->links[u->nlinks].hard = hard;
	if (!u->links[u->nlinks].path || !u->links[u->nlinks].target)
		return cfa_nomem(u->ctx);
	u->nlinks++;
	return CFAPKG_E_OK;
}

static enum cfapkg_err entry(struct unpacker *u, struct archive *a, struct archive_entry *en,
                             unsigned strip)
{
	const char *raw = archive_entry_pathname_utf8(en), *why = NULL, *hl;
	char name[2048], full[4096 + 2048];
	int fresh;

	if (!raw)
		raw = archive_entry_pathname(en);
	if (!raw || !cfa_safe_entry_path(raw, strip, name, sizeof(name), &why))
		return refuse(u, raw ? raw : "?", why ? why : "no name");
	if (!name[0])
		return CFAPKG_E_OK; /* one of the stripped leading folders */
	fresh = remember(u, name);
	if (fresh < 0)
		return cfa_nomem(u->ctx);
	cfa_snprintf(full, sizeof(full), "%s/%s", u->staging, name);
	switch (archive_entry_filetype(en)) {
	case AE_IFDIR:
		return cfa_plat_mkdir_p(full) ? cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot create", full)
		                              : CFAPKG_E_OK;
	case AE_IFREG:
	case 0: /* a tar hard link entry carries no type of its own */
		if (!fresh)
			return refuse(u, raw, "a second entry of the same name (or the same name in "
			                      "another case)");
		hl = archive_entry_hardlink_utf8(en);
		if (hl) {
			char target[2048];
			if (!cfa_safe_entry_path(hl, strip, target, sizeof(target), &why) || !target[0])
				return refuse(u, raw, "a hard link pointing outside the archive");
			return defer_link(u, name, target, true);
		}
		if (!archive_entry_filetype(en))
			return refuse(u, raw, "an entry of no known type");
		return write_file(u, a, name, full, (unsigned)archive_entry_perm(en));
	case AE_IFLNK:
		if (!fresh)
			return refuse(u, raw, "a second entry of the same name");
		if (!archive_entry_symlink_utf8(en) ||
		    !cfa_link_stays_inside(name, archive_entry_symlink_utf8(en)))
			return refuse(u, raw, "a symbolic link pointing outside the archive");
		return defer_link(u, name, archive_entry_symlink_utf8(en), false);
	default:
		return refuse(u, raw, "a device file, pipe or socket");
	}
}

/* Copies a staged file (for hard links, and for symbolic links where the
 * system cannot make them); the copies count against the size cap. */
static enum cfapkg_err copy_staged(struct unpacker *u, const char *name, const char *from_full)
{
	char full[4096 + 2048];
	unsigned char *block = cfa_malloc(BLOCK);
	FILE *in = cfa_plat_fopen(from_full, "rb"), *out = NULL;
	enum cfapkg_err e = CFAPKG_E_OK;
	uint64_t size = 0;
	size_t n;

	cfa_snprintf(full, sizeof(full), "%s/%s", u->staging, name);
	if (!block)
		e = cfa_nomem(u->ctx);
	else if (!in || (e = make_parent(u, full)) || !(out = cfa_plat_fopen(full, "wb"))) {
		if (!e)
			e = refuse(u, name, "a link whose target is not a file of the archive");
	}
	while (!e && (n = fread(block, 1, BLOCK, in)) > 0)
		e = put_bytes(u, out, name, full, block, n, &size);
	if (in)
		fclose(in);
	if (out && fclose(out) != 0 && !e)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: write failed (disk full?)", full);
	cfa_free(block);
	return e ? e : record_file(u, name, full, size);
}

static enum cfapkg_err make_links(struct unpacker *u)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	char full[4096 + 2048], from[4096 + 2048];
	size_t i;

	for (i = 0; i < u->nlinks && !e; i++) {
		struct link *l = &u->links[i];
		cfa_snprintf(full, sizeof(full), "%s/%s", u->staging, l->path);
		if (l->hard) {
			cfa_snprintf(from, sizeof(from), "%s/%s", u->staging, l->target);
			e = copy_staged(u, l->path, from);
			continue;
		}
		if ((e = make_parent(u, full)))
			break;
		if (cfa_plat_symlink(l->target, full) == 0) {
			manifest_add(u, l->path, 0, "", "link");
			continue;
		}
		/* No links here (Windows without the privilege): a copy. */
		cfa_snprintf(from, sizeof(from), "%s/%.*s%s", u->staging,
		         (int)(strrchr(l->path, '/') ? strrchr(l->path, '/') - l->path + 1 : 0), l->path,
		         l->target);
		e = copy_staged(u, l->path, from);
	}
	return e;
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

/* A verified archive's zip CRC-32s repeat what its SHA-256 proved. */
static void skip_crc(struct unpacker *u, struct archive *a)
{
	if (u->hash_checked)
		archive_read_set_format_option(a, "zip", "ignorecrc32", "1");
}

static struct archive *open_reader(struct unpacker *u, const char *format, struct archive **outer)
{
	struct archive *a = archive_read_new();
	struct archive_entry *en;

	*outer = NULL;
	if (!a)
		return NULL;
	archive_read_support_filter_all(a);
	if (strcmp(format, "deb") == 0) {
		*outer = archive_read_new();
		if (!*outer)
			goto fail;
		archive_read_support_format_ar(*outer);
		if (archive_read_open_filename(*outer, u->archive_path, BLOCK) != ARCHIVE_OK)
			goto fail;
		while (archive_read_next_header(*outer, &en) == ARCHIVE_OK)
			if (strncmp(archive_entry_pathname(en), "data.tar", 8) == 0) {
				archive_read_support_format_tar(a);
				if (archive_read_open(a, *outer, NULL, read_member, NULL) == ARCHIVE_OK)
					return a;
				goto fail;
			}
		cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: a .deb without data.tar", u->archive_path);
		goto fail;
	}
	if (u->src) {
		/* Only what can be read front to back: zip through its local
		 * headers (the bytes are the pinned ones: hashed as they arrive). */
		archive_read_support_format_zip_streamable(a);
		archive_read_support_format_tar(a);
		skip_crc(u, a);
		if (archive_read_open(a, u->src_arg, NULL, u->src, NULL) == ARCHIVE_OK)
			return a;
		goto fail;
	}
	archive_read_support_format_zip_seekable(a);
	archive_read_support_format_7zip(a);
	archive_read_support_format_tar(a);
	skip_crc(u, a);
	if (archive_read_open_filename(a, u->archive_path, BLOCK) == ARCHIVE_OK)
		return a;
fail:
	cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: not a readable %s archive: %s", u->archive_path,
	         format, archive_error_string(*outer ? *outer : a));
	archive_read_free(a);
	if (*outer)
		archive_read_free(*outer);
	*outer = NULL;
	return NULL;
}

static enum cfapkg_err extract_all(struct unpacker *u, const char *format, unsigned strip)
{
	struct archive *outer, *a = open_reader(u, format, &outer);
	struct archive_entry *en;
	enum cfapkg_err e = CFAPKG_E_OK;
	int r;

	if (!a)
		return CFAPKG_E_INTEGRITY; /* detail set by open_reader */
	while (!e && (r = archive_read_next_header(a, &en)) == ARCHIVE_OK)
		e = entry(u, a, en, strip);
	if (!e && r != ARCHIVE_EOF)
		e = cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: damaged archive: %s", u->archive_path,
		             archive_error_string(a));
	if (!e)
		e = make_links(u);
	archive_read_free(a);
	if (outer)
		archive_read_free(outer);
	return e;
}

static enum cfapkg_err write_manifest(struct unpacker *u)
{
	char dir[4200], path[4300];
	FILE *f;
	int rc;

	cfa_buf_adds(&u->manifest, "\n]}\n");
	cfa_snprintf(dir, sizeof(dir), "%s/.cfapkg", u->staging);
	cfa_snprintf(path, sizeof(path), "%s/manifest.json", dir);
	if ((rc = cfa_plat_mkdir_p(dir)) || u->manifest.failed || !(f = cfa_plat_fopen(path, "wb")))
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot write the manifest", path);
	rc = fwrite(u->manifest.data, 1, u->manifest.len, f) != u->manifest.len;
	rc |= cfa_plat_fsync(f) != 0;
	rc |= fclose(f) != 0;
	return rc ? cfa_fail(u->ctx, CFAPKG_E_IO, "%s: write failed (disk full?)", path)
	          : CFAPKG_E_OK;
}

static void unpacker_fini(struct unpacker *u)
{
	size_t i;

	for (i = 0; u->seen && i <= u->seen_mask; i++)
		cfa_free(u->seen[i]);
	cfa_free(u->seen);
	for (i = 0; i < u->nlinks; i++) {
		cfa_free(u->links[i].path);
		cfa_free(u->links[i].target);
	}
	cfa_free(u->links);
	cfa_hasher_free(u->hasher);
	cfa_free(u->hex_at);
	cfa_buf_fini(&u->manifest);
}

bool cfa_unpack_streamable(const char *format)
{
	return strncmp(format, "tar", 3) == 0 || strcmp(format, "zip") == 0;
}

enum cfapkg_err cfa_unpack_open(struct cfapkg_ctx *ctx, const char *name, const char *what,
                                uint64_t archive_size, const struct cfapkg_unpack_opts *opts,
                                struct unpacker **out, bool *existed)
{
	uint64_t max_bytes = opts && opts->max_bytes ? opts->max_bytes : 64ull << 30;
	unsigned ratio = opts && opts->max_ratio ? opts->max_ratio : 1000;
	struct unpacker *u;
	int rc;

	*out = NULL;
	*existed = false;
	if (!(u = cfa_calloc(1, sizeof(*u))))
		return cfa_nomem(ctx);
	u->ctx = ctx;
	u->hash_checked = opts && opts->hash_checked;
	u->archive_path = what;
	if (!cfa_snprintf(u->store, sizeof(u->store), "%s/store", ctx->root ? ctx->root : ".") ||
	    (rc = cfa_plat_mkdir_p(u->store))) {
		cfa_free(u);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s/store: cannot create", ctx->root);
	}
	cfa_snprintf(u->final, sizeof(u->final), "%s/%s", u->store, name);
	if (cfa_plat_is_dir(u->final)) {
		*existed = true; /* a store folder is only ever complete */
		cfa_free(u);
		return CFAPKG_E_OK;
	}
	u->cap = archive_size * ratio < max_bytes ? archive_size * ratio : max_bytes;
	u->seen_mask = (1u << 16) - 1;
	u->seen = cfa_calloc(u->seen_mask + 1, sizeof(*u->seen));
	u->hasher = cfa_hasher_new();
	cfa_buf_init(&u->manifest, 1u << 30);
	cfa_buf_printf(&u->manifest, "{\"format\": 1, \"files\": [");
	cfa_snprintf(u->staging, sizeof(u->staging), "%s/.staging-%s", u->store, name);
	cfa_plat_remove_tree(u->staging); /* left by an interrupted unpack */
	*out = u;
	if (!u->seen || !u->hasher)
		return cfa_nomem(ctx);
	if ((rc = cfa_plat_mkdir_p(u->staging)))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create: %s", u->staging,
		                cfa_plat_strerror(rc));
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_unpack_extract(struct unpacker *u, archive_read_callback *src, void *src_arg,
                                   const char *format, unsigned strip)
{
	enum cfapkg_err e;

	u->src = src;
	u->src_arg = src_arg;
	e = extract_all(u, format, strip);
	if (!e)
		e = fill_digests(u);
	return e ? e : write_manifest(u);
}

enum cfapkg_err cfa_unpack_commit(struct unpacker *u, struct cfapkg_unpack_result *out)
{
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
	unpacker_fini(u);
	cfa_free(u);
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
	e = cfa_unpack_open(ctx, name, archive, (uint64_t)asize, opts, &u, &existed);
	if (!e && existed) {
		cfa_snprintf(out->path, sizeof(out->path), "%s/store/%s", ctx->root ? ctx->root : ".",
		             name);
		out->existed = true;
		return CFAPKG_E_OK;
	}
	if (!e)
		e = cfa_unpack_extract(u, NULL, NULL, format, opts ? opts->strip : 0);
	if (!e)
		e = cfa_unpack_commit(u, out);
	if (e && u) {
		out->files = u->files;
		out->bytes = u->total;
	}
	cfa_unpack_close(u);
	return e;
}
