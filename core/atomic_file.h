/*
 * atomic_file.h - paths as heap strings and files replaced whole
 * (write, flush, rename): what every writer of the root's state uses.
 */
#ifndef CFA_ATOMIC_FILE_H
#define CFA_ATOMIC_FILE_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stddef.h>

#include "core/compat.h"
#include "core/ctx.h"

/* Paths are heap strings, never fixed buffers: a path cut to fit names
 * another file.  *out is the formatted text (cfa_free) or NULL, with
 * CFAPKG_E_NOMEM returned; so a chain of steps reads
 * "if ((e = a) || (e = cfa_path(ctx, &p, ...)))". */
enum cfapkg_err cfa_path(struct cfapkg_ctx *ctx, char **out, const char *fmt, ...)
	CFA_PRINTF(3, 4);
enum cfapkg_err cfa_vpath(struct cfapkg_ctx *ctx, char **out, const char *fmt, va_list ap)
	CFA_PRINTF(3, 0);
/* Writes path.tmp, flushes it to the disk and renames it over path. */
enum cfapkg_err cfa_write_atomic(struct cfapkg_ctx *ctx, const char *path, const char *data,
                                 size_t len);
/* The same, the folder left to the caller to flush: one that renames
 * more in the same folder flushes it once, after the last. */
enum cfapkg_err cfa_write_atomic_in(struct cfapkg_ctx *ctx, const char *path, const char *data,
                                    size_t len);
/* The same, nothing flushed: a reader sees the old file or the new one,
 * but after a power cut the new one may be empty.  Only for a file whose
 * loss another record, flushed after it, makes good. */
enum cfapkg_err cfa_write_atomic_unflushed(struct cfapkg_ctx *ctx, const char *path,
                                           const char *data, size_t len);
/* The same for a JSON document (consumed); a NULL doc, whose build ran
 * out of memory, writes nothing and is CFAPKG_E_NOMEM. */
enum cfapkg_err cfa_write_json(struct cfapkg_ctx *ctx, const char *path, cJSON *doc);

#endif
