/*
 * addfile.c - user-supplied artifacts: a file joins the download cache
 * under its SHA-256 only when a recipe expects exactly that fingerprint,
 * so nothing unknown ever sits beside verified downloads.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

static bool same_hex(const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if ((a[i] | 0x20) != (b[i] | 0x20))
			return false;
	return true;
}

/* The recipe and file name that expect this hash, if any. */
static bool expected(struct cfapkg_ctx *ctx, const char *hex, const char **recipe,
                     const char **file)
{
	size_t i, j, k;

	for (i = 0; i < cfapkg_recipe_count(ctx); i++) {
		const struct cfapkg_recipe *r = cfapkg_recipe_at(ctx, i);
		for (j = 0; j < r->nversions; j++)
			for (k = 0; k < r->versions[j].nuser_files; k++)
				if (same_hex(r->versions[j].user_files[k].sha256, hex)) {
					*recipe = r->name;
					*file = r->versions[j].user_files[k].name;
					return true;
				}
	}
	return false;
}

/* from copied to tmp, flushed, and renamed to dst. */
static enum cfapkg_err copy_file(struct cfapkg_ctx *ctx, const char *from, const char *dir,
                                 const char *tmp, const char *dst)
{
	static unsigned char buf[1 << 16];
	FILE *in, *out;
	size_t n;
	int rc = 0;

	in = cfa_plat_fopen(from, "rb");
	out = cfa_plat_fopen(tmp, "wb");
	if (!in || !out) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot copy into %s", from, dir);
	}
	while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = cfa_plat_write_errno();
	if (!rc && ferror(in))
		rc = EIO;
	fclose(in);
	if (!rc)
		rc = cfa_plat_fsync(out);
	if (fclose(out) != 0 && !rc)
		rc = cfa_plat_write_errno();
	if (!rc)
		rc = cfa_plat_rename(tmp, dst);
	if (rc) {
		cfa_plat_remove(tmp);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot copy into %s: %s", from, tmp,
		                cfa_plat_strerror(rc));
	}
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

enum cfapkg_err cfapkg_add_file(struct cfapkg_ctx *ctx, const char *path, char sha256[65],
                                const char **recipe, const char **file)
{
	char *dir;
	enum cfapkg_err e;
	int rc;

	if ((e = cfapkg_recipes_load(ctx)) || (e = cfapkg_sha256_file(ctx, path, sha256, NULL)))
		return e; /* detail set by the loader or the hasher */
	if (!expected(ctx, sha256, recipe, file))
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND,
		                "%s: no recipe expects a file with SHA-256 %s; it was not added "
		                "(cfapkg info NAME shows what a recipe expects)",
		                path, sha256);
	if (!(dir = cfa_root_path(ctx, CFA_DOWNLOADS, NULL)))
		return ctx->err_code;
	if ((rc = cfa_plat_mkdir_p(dir)) != 0)
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create: %s", dir, cfa_plat_strerror(rc));
	else
		e = copy_into(ctx, path, dir, sha256);
	cfa_free(dir);
	return e;
}
