/*
 * atomic_file.c - paths as heap strings, and a file replaced whole:
 * written beside it, flushed to the disk, renamed over it, so a reader
 * sees the old file or the new one and never half of one.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

enum cfapkg_err cfa_vpath(struct cfapkg_ctx *ctx, char **out, const char *fmt, va_list ap)
{
	*out = cfa_vaprintf(fmt, ap);
	return *out ? CFAPKG_E_OK : cfa_nomem(ctx);
}

enum cfapkg_err cfa_path(struct cfapkg_ctx *ctx, char **out, const char *fmt, ...)
{
	va_list ap;
	enum cfapkg_err e;

	va_start(ap, fmt);
	e = cfa_vpath(ctx, out, fmt, ap);
	va_end(ap);
	return e;
}

/* How much of a replacement is flushed to the disk before the call returns. */
enum flush { FLUSH_NONE, FLUSH_FILE, FLUSH_FILE_AND_FOLDER };

/* The file replaced, flushed as far as how says. */
static enum cfapkg_err replace(struct cfapkg_ctx *ctx, const char *path, const char *data,
                               size_t len, enum flush how)
{
	char *tmp, *slash;
	FILE *f;
	int rc = 0;

	/* Beside the target, so on the same file system: the rename is then
	 * the one step that replaces it. */
	if (cfa_path(ctx, &tmp, "%s.tmp", path))
		return ctx->err_code;
	if (!(f = cfa_plat_fopen(tmp, "wb"))) {
		rc = cfa_plat_write_errno();
		cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot write: %s", tmp, cfa_plat_strerror(rc));
		cfa_free(tmp);
		return CFAPKG_E_IO;
	}
	if (fwrite(data, 1, len, f) != len)
		rc = cfa_plat_write_errno();
	if (!rc && how != FLUSH_NONE)
		rc = cfa_plat_fsync(f);
	if (fclose(f) != 0 && !rc)
		rc = cfa_plat_write_errno();
	/* A crash test may stop here: the new text is written under .tmp and
	 * the old file is still whole. */
	cfa_crash_point();
	if (!rc)
		rc = cfa_plat_rename(tmp, path);
	/* A failed write leaves no .tmp behind, so that nothing half-written is
	 * ever taken for the new file. */
	if (rc)
		cfa_plat_remove(tmp);
	/* tmp's room is reused for the folder: path's own, shorter by ".tmp". */
	memcpy(tmp, path, strlen(path) + 1);
	/* The folder is flushed too: until it is, the rename itself may not
	 * survive a power cut. */
	if (!rc && how == FLUSH_FILE_AND_FOLDER && (slash = strrchr(tmp, '/')) != NULL) {
		*slash = '\0';
		cfa_plat_sync_dir(tmp);
	}
	cfa_free(tmp);
	return rc ? cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot write: %s", path, cfa_plat_strerror(rc))
	          : CFAPKG_E_OK;
}

enum cfapkg_err cfa_write_atomic(struct cfapkg_ctx *ctx, const char *path, const char *data,
                                 size_t len)
{
	return replace(ctx, path, data, len, FLUSH_FILE_AND_FOLDER);
}

enum cfapkg_err cfa_write_atomic_in(struct cfapkg_ctx *ctx, const char *path, const char *data,
                                    size_t len)
{
	return replace(ctx, path, data, len, FLUSH_FILE);
}

enum cfapkg_err cfa_write_atomic_unflushed(struct cfapkg_ctx *ctx, const char *path,
                                           const char *data, size_t len)
{
	return replace(ctx, path, data, len, FLUSH_NONE);
}

enum cfapkg_err cfa_write_json(struct cfapkg_ctx *ctx, const char *path, cJSON *doc)
{
	char *text = doc ? cJSON_Print(doc) : NULL;
	enum cfapkg_err e;

	/* doc is consumed either way, so that a caller may pass a builder's
	 * result (NULL when it ran out of memory) straight in. */
	cJSON_Delete(doc);
	if (!text)
		return cfa_nomem(ctx);
	e = cfa_write_atomic(ctx, path, text, strlen(text));
	cJSON_free(text);
	return e;
}
