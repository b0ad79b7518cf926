/*
 * rawread.c - a whole small file into memory, decompressed when it is
 * gzip, xz, bzip2, lzma or zstd (an APT index as repositories publish
 * it).  libarchive's raw format with the built-in filters only: no
 * external decompressor is ever started.
 */
#include <archive.h>
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

static enum cfapkg_err grow_read(struct cfapkg_ctx *ctx, struct archive *a, const char *label,
                                 size_t max, struct cfa_buf *out)
{
	char block[64 * 1024];
	la_ssize_t n;

	/* The buffer refuses alike past its ceiling and out of memory: its
	 * length tells which. */
	while ((n = archive_read_data(a, block, sizeof(block))) > 0)
		if (!cfa_buf_add(out, block, (size_t)n))
			return out->len + (size_t)n > max
			               ? cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: larger than %lu bytes "
			                          "once decompressed", label, (unsigned long)max)
			               : cfa_nomem(ctx);
	if (n < 0)
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: cannot be read: %s", label,
		                archive_error_string(a));
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_read_decompressed(struct cfapkg_ctx *ctx, const char *path, const char *label,
                                      size_t max, char **text, size_t *len)
{
	struct archive *a = archive_read_new();
	struct archive_entry *en;
	struct cfa_buf out;
	enum cfapkg_err e = CFAPKG_E_OK;
	FILE *f;
	int r;

	*text = NULL;
	*len = 0;
	if (!a)
		return cfa_nomem(ctx);
	cfa_buf_init(&out, max);
	/* Each filter by name, not _all: that one may hand formats libarchive
	 * has no code for (lzop, lrzip) to an outside program. */
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_zstd(a);
	/* raw gives the decompressed stream as one entry; empty lets a file of
	 * no bytes read as no entry rather than fail. */
	archive_read_support_format_raw(a);
	archive_read_support_format_empty(a);
	f = cfa_plat_fopen(path, "rb");
	if (!f)
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot open %s: %s", label, path,
		             cfa_plat_strerror(cfa_plat_write_errno()));
	/* The filters read their first block here: damaged compressed data
	 * fails at the open, and is not a file that cannot be opened. */
	else if (archive_read_open_FILE(a, f) != ARCHIVE_OK)
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: cannot be read: %s", label,
		             archive_error_string(a) ? archive_error_string(a) : "damaged");
	else if ((r = archive_read_next_header(a, &en)) == ARCHIVE_OK)
		e = grow_read(ctx, a, label, max, &out);
	/* Only a file of no bytes has no entry: a damaged compressed header
	 * must not read as an empty index. */
	else if (r != ARCHIVE_EOF)
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: cannot be read: %s", label,
		             archive_error_string(a) ? archive_error_string(a) : "damaged");
	archive_read_free(a);
	if (f)
		fclose(f);
	/* Adding nothing still allocates: the text is never NULL, even when
	 * empty. */
	if (!e && !cfa_buf_add(&out, "", 0))
		e = cfa_nomem(ctx);
	if (e) {
		cfa_buf_fini(&out);
		return e;
	}
	*text = out.data;
	*len = out.len;
	return CFAPKG_E_OK;
}
