/*
 * addfile.c - files the user supplies: a file joins the download cache
 * under its SHA-256 only when a recipe expects exactly that fingerprint (a
 * user file, or a package archive copied from elsewhere for an offline
 * install), so nothing unknown ever sits beside verified downloads.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "core/debindex.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

static bool same_hex(const char *a, const char *b)
{
	size_t i;

	/* A recipe's pin may be written in either case; | 0x20 folds hex
	 * letters and leaves digits as they are. */
	for (i = 0; i < 64; i++)
		if ((a[i] | 0x20) != (b[i] | 0x20))
			return false;
	return true;
}

/* An uncompressed index of all of Debian main is about 50 MB. */
/* The ceiling on the decompressed text, ten times that: more is not an index to
 * read. */
#define INDEX_MAX (512u * 1024u * 1024u)

static bool found_as(struct cfapkg_added_file *out, const struct cfapkg_version *v,
                     const char *fmt, ...) CFA_PRINTF(3, 4);

/* Records who expects the file; always true (a match), even when there
 * was no memory for what (the caller checks it). */
static bool found_as(struct cfapkg_added_file *out, const struct cfapkg_version *v,
                     const char *fmt, ...)
{
	va_list ap;

	out->recipe = v->recipe->name;
	out->version = v->version;
	va_start(ap, fmt);
	out->what = cfa_vaprintf(fmt, ap);
	va_end(ap);
	return true;
}

/* A user file, a source's archive, an archive of a set, or an APT index
 * that this version pins. */
static bool pinned_by(const struct cfapkg_version *v, const char *hex,
                      struct cfapkg_added_file *out)
{
	size_t i, k;

	for (i = 0; i < v->nuser_files; i++)
		if (same_hex(v->user_files[i].sha256, hex))
			return found_as(out, v, "user file %s", v->user_files[i].name);
	for (i = 0; i < v->nsources; i++) {
		const struct cfapkg_source *s = &v->sources[i];
		if (s->sha256 && same_hex(s->sha256, hex))
			return found_as(out, v, "the %s download", s->platform);
		for (k = 0; k < s->nartifacts; k++)
			if (same_hex(s->artifacts[k].sha256, hex))
				return found_as(out, v, "archive %lu of the %s set", (unsigned long)k + 1,
				                s->platform);
		if (s->apt && s->apt->index_sha256 && same_hex(s->apt->index_sha256, hex))
			return found_as(out, v, "the %s APT index", s->platform);
	}
	return false;
}

/* A .deb of an APT source whose pinned index is in the cache: the index
 * gives each wanted package's SHA-256. */
static bool deb_in_index(struct cfapkg_ctx *ctx, const struct cfapkg_version *v,
                         const struct cfapkg_source *s, const char *hex,
                         struct cfapkg_added_file *out)
{
	const struct cfapkg_apt_source *a = s->apt;
	struct cfa_arena arena;
	struct cfa_deb_want *want;
	struct cfa_deb_found *found;
	/* Only the index in the cache is read: adding a file never downloads. */
	char *file = cfa_cache_path(ctx, a->index_sha256), *text = NULL;
	size_t len, i;
	bool hit = false;

	cfa_arena_init(&arena);
	want = cfa_arena_alloc(&arena, a->npackages * sizeof(*want));
	found = cfa_arena_alloc(&arena, a->npackages * sizeof(*found));
	if (want && !cfa_deb_wants(&arena, a->packages, a->npackages, want))
		want = NULL; /* out of memory: nothing expected */
	/* cfa_cache_path names ROOT/downloads/SHA even when no such file is
	 * there. */
	if (file && want && found && cfa_plat_is_file(file) &&
	    !cfa_read_decompressed(ctx, file, file, INDEX_MAX, &text, &len) &&
	    !cfa_deb_index_find(ctx, file, text, len, a->arch, want, a->npackages, &arena, found))
		for (i = 0; i < a->npackages && !hit; i++)
			if (same_hex(found[i].sha256, hex))
				hit = found_as(out, v, "%s of the %s APT index", a->packages[i], s->platform);
	cfapkg_ctx_clear_error(ctx); /* an index that cannot be read expects nothing */
	cfa_free(text);
	cfa_free(file);
	cfa_arena_fini(&arena);
	return hit;
}

/* The recipe version that expects this hash, and as what. */
static bool expected(struct cfapkg_ctx *ctx, const char *hex, struct cfapkg_added_file *out)
{
	size_t i, j, k, n;
	const struct cfapkg_recipe *const *all = cfapkg_recipes(ctx, &n);

	/* Pins a version states outright first: an APT index is read and
	 * decompressed only when none of them matched. */
	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *r = all[i];
		for (j = 0; j < r->nversions; j++)
			if (pinned_by(&r->versions[j], hex, out))
				return true;
	}
	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *r = all[i];
		for (j = 0; j < r->nversions; j++)
			for (k = 0; k < r->versions[j].nsources; k++)
				if (r->versions[j].sources[k].apt && r->versions[j].sources[k].apt->index_sha256 &&
				    deb_in_index(ctx, &r->versions[j], &r->versions[j].sources[k], hex, out))
					return true;
	}
	return false;
}

/* Copies in to out, hashing what is written; 0 or an errno. */
static int copy_hashed(FILE *in, FILE *out, char hex[65])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char *buf = cfa_malloc(1 << 16), digest[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	size_t n;
	int rc = md && buf && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 ? 0 : ENOMEM;

	while (!rc && (n = fread(buf, 1, 1 << 16, in)) > 0) {
		if (fwrite(buf, 1, n, out) != n)
			rc = cfa_plat_write_errno();
		else if (EVP_DigestUpdate(md, buf, n) != 1)
			rc = ENOMEM;
	}
	if (!rc && ferror(in))
		rc = EIO;
	if (!rc && (EVP_DigestFinal_ex(md, digest, &len) != 1 || len != 32))
		rc = ENOMEM;
	if (!rc)
		cfa_sha256_hex(digest, hex);
	EVP_MD_CTX_free(md);
	cfa_free(buf);
	return rc;
}

/* from copied to tmp, flushed, and renamed to dst.  The copy is hashed as
 * it is written: the file the recipes were asked about was hashed before,
 * and a file changed in between must not land under the old hash. */
static enum cfapkg_err copy_file(struct cfapkg_ctx *ctx, const char *from, const char *dir,
                                 const char *tmp, const char *dst)
{
	const char *want = dst + strlen(dir) + 1;
	char got[65] = "";
	FILE *in, *out;
	int rc = 0;

	in = cfa_plat_fopen(from, "rb");
	/* A temporary name in the cache folder itself: the rename stays within
	 * one file system.  A copy left by a crash is overwritten by the next
	 * add. */
	out = cfa_plat_fopen(tmp, "wb");
	if (!in || !out) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot copy into %s", from, dir);
	}
	rc = copy_hashed(in, out, got);
	fclose(in);
	/* Flushed before the rename: a file under a SHA name must hold those
	 * bytes after a crash too. */
	if (!rc)
		rc = cfa_plat_fsync(out);
	if (fclose(out) != 0 && !rc)
		rc = cfa_plat_write_errno();
	if (!rc && !same_hex(got, want)) {
		cfa_plat_remove(tmp);
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: changed while it was added (SHA-256 %s, "
		                "then %s); nothing was added: run add-file again once it is complete",
		                from, want, got);
	}
	if (!rc)
		rc = cfa_plat_rename(tmp, dst);
	if (rc) {
		cfa_plat_remove(tmp);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot copy into %s: %s", from, tmp,
		                cfa_plat_strerror(rc));
	}
	/* The new name must last as well as the bytes. */
	cfa_plat_sync_dir(dir);
	return CFAPKG_E_OK;
}

static enum cfapkg_err copy_into(struct cfapkg_ctx *ctx, const char *from, const char *dir,
                                 const char *hex)
{
	char *dst = cfa_aprintf("%s/%s", dir, hex), *tmp = cfa_aprintf("%s/%s.add", dir, hex);
	enum cfapkg_err e = CFAPKG_E_OK;

	if (!dst || !tmp)
		e = cfa_nomem(ctx);
	else if (cfa_plat_file_size(dst) < 0) /* not there yet */
		e = copy_file(ctx, from, dir, tmp, dst);
	cfa_free(dst);
	cfa_free(tmp);
	return e;
}

void cfapkg_added_file_clear(struct cfapkg_added_file *a)
{
	if (a) {
		cfa_free(a->what);
		a->what = NULL;
	}
}

enum cfapkg_err cfapkg_add_file(struct cfapkg_ctx *ctx, const char *path,
                                struct cfapkg_added_file *out)
{
	char *dir, *sha256 = out->sha256;
	enum cfapkg_err e;
	int rc;

	memset(out, 0, sizeof(*out));
	/* The hash is the file's own, computed here: nothing the user says
	 * about the file is trusted. */
	if ((e = cfapkg_recipes_load(ctx)) || (e = cfapkg_sha256_file(ctx, path, sha256, NULL)))
		return e; /* detail set by the loader or the hasher */
	if (expected(ctx, sha256, out) && !out->what)
		return cfa_nomem(ctx);
	if (!out->what)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND,
		                "%s: no recipe expects a file with SHA-256 %s (as a user file, a "
		                "download, or a .deb of an APT index in the cache); it was not added "
		                "(cfapkg info NAME shows what a recipe expects)",
		                path, sha256);
	if (!(dir = cfa_root_path(ctx, CFA_DOWNLOADS, NULL)))
		e = ctx->err_code;
	else if ((rc = cfa_plat_mkdir_p(dir)) != 0)
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create: %s", dir, cfa_plat_strerror(rc));
	else
		e = copy_into(ctx, path, dir, sha256);
	cfa_free(dir);
	/* A file that was not added has nothing for the caller to free. */
	if (e)
		cfapkg_added_file_clear(out);
	return e;
}
