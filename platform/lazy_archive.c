/*
 * lazy_archive.c - libarchive's functions that cfapkg calls, bound on
 * first use (lazylib.h).  Each is defined with libarchive's own
 * declaration, so a mismatch with the headers fails the build.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "platform/lazylib.h"

#define A struct archive *a
#define E struct archive_entry *e
/* X(return type, name, parameters, arguments) */
#define ARCHIVE_FUNCS(X)                                                                   \
	X(struct archive *, archive_read_new, (void), ())                                    \
	X(int, archive_read_free, (A), (a))                                                  \
	X(int, archive_read_support_format_tar, (A), (a))                                    \
	X(int, archive_read_support_format_zip_streamable, (A), (a))                         \
	X(int, archive_read_support_format_zip_seekable, (A), (a))                           \
	X(int, archive_read_support_format_raw, (A), (a))                                    \
	X(int, archive_read_support_format_empty, (A), (a))                                  \
	X(int, archive_read_support_format_ar, (A), (a))                                     \
	X(int, archive_read_support_format_7zip, (A), (a))                                   \
	X(int, archive_read_support_filter_zstd, (A), (a))                                   \
	X(int, archive_read_support_filter_xz, (A), (a))                                     \
	X(int, archive_read_support_filter_lzma, (A), (a))                                   \
	X(int, archive_read_support_filter_gzip, (A), (a))                                   \
	X(int, archive_read_support_filter_bzip2, (A), (a))                                  \
	X(int, archive_read_set_format_option, (A, const char *m, const char *o,             \
	                                       const char *v), (a, m, o, v))                 \
	X(int, archive_read_open_filename, (A, const char *f, size_t block), (a, f, block))  \
	X(int, archive_read_open_FILE, (A, FILE *f), (a, f))                                 \
	X(int, archive_read_open, (A, void *data, archive_open_callback *o,                  \
	                          archive_read_callback *r, archive_close_callback *c),      \
	  (a, data, o, r, c))                                                                \
	X(int, archive_read_next_header, (A, struct archive_entry **e), (a, e))              \
	X(int, archive_read_has_encrypted_entries, (A), (a))                                 \
	X(int, archive_read_data_block, (A, const void **buf, size_t *size,                  \
	                                la_int64_t *offset), (a, buf, size, offset))         \
	X(la_ssize_t, archive_read_data, (A, void *buf, size_t size), (a, buf, size))        \
	X(int, archive_format, (A), (a))                                                     \
	X(int, archive_errno, (A), (a))                                                      \
	X(const char *, archive_error_string, (A), (a))                                      \
	X(const char *, archive_version_string, (void), ())                                  \
	X(__LA_MODE_T, archive_entry_filetype, (E), (e))                                     \
	X(__LA_MODE_T, archive_entry_perm, (E), (e))                                         \
	X(const char *, archive_entry_pathname, (E), (e))                                    \
	X(const wchar_t *, archive_entry_pathname_w, (E), (e))                               \
	X(const char *, archive_entry_pathname_utf8, (E), (e))                               \
	X(const char *, archive_entry_hardlink, (E), (e))                                    \
	X(const wchar_t *, archive_entry_hardlink_w, (E), (e))                               \
	X(const char *, archive_entry_hardlink_utf8, (E), (e))                               \
	X(const wchar_t *, archive_entry_symlink_w, (E), (e))                                \
	X(const char *, archive_entry_symlink_utf8, (E), (e))                                \
	X(int, archive_entry_size_is_set, (E), (e))                                          \
	X(la_int64_t, archive_entry_size, (E), (e))                                          \
	X(int, archive_entry_is_encrypted, (E), (e))

enum { ARCHIVE_FUNCS(CFA_LAZY_ID) F_archive_set_error, F_COUNT };
static const char *const names[] = {ARCHIVE_FUNCS(CFA_LAZY_NAME) "archive_set_error", NULL};

#ifndef CFA_SONAME_ARCHIVE
#define CFA_SONAME_ARCHIVE "libarchive.so.13"
#endif
CFA_LAZYLIB(CFA_SONAME_ARCHIVE, names, F_COUNT)

ARCHIVE_FUNCS(CFA_LAZY_DEFINE)

/* A format and its arguments cannot be passed on as they are: the text is
 * made here and handed over whole. */
void archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
	void (*fn)(struct archive *, int, const char *, ...) =
	    (void (*)(struct archive *, int, const char *, ...))lazy_fn(F_archive_set_error);
	char text[512];
	va_list ap;

	if (!fmt) { /* clears the error */
		fn(a, err, NULL);
		return;
	}
	va_start(ap, fmt);
	/* libarchive's message only: a cut one is marked, never passed as whole. */
	if (vsnprintf(text, sizeof(text), fmt, ap) >= (int)sizeof(text))
		memcpy(text + sizeof(text) - 4, "...", 4);
	va_end(ap);
	fn(a, err, "%s", text);
}
