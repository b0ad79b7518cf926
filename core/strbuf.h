/*
 * strbuf.h - a growable string with a ceiling, and checked number parsing.
 * Every input that grows a buffer names its maximum up front.
 */
#ifndef CFA_STRBUF_H
#define CFA_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/compat.h"

struct cfa_buf {
	char *data;   /* always NUL-terminated once anything was added */
	size_t len;
	size_t cap;
	size_t max;   /* ceiling for len */
	bool failed;  /* sticky: out of memory or over the ceiling */
};

void cfa_buf_init(struct cfa_buf *b, size_t max);
void cfa_buf_fini(struct cfa_buf *b);
void cfa_buf_reset(struct cfa_buf *b);
/* Back to its first len bytes (no more than it holds), to build text after
 * a kept prefix again; a failure stays. */
void cfa_buf_cut(struct cfa_buf *b, size_t len);
bool cfa_buf_add(struct cfa_buf *b, const char *s, size_t n);
bool cfa_buf_adds(struct cfa_buf *b, const char *s);
bool cfa_buf_printf(struct cfa_buf *b, const char *fmt, ...)
	CFA_PRINTF(2, 3);
/* s as a JSON string, quoted and escaped; false once b has failed. */
bool cfa_buf_add_json_string(struct cfa_buf *b, const char *s);
/* The text so far ("" when empty); borrowed. */
const char *cfa_buf_str(const struct cfa_buf *b);

/* Decimal digits only, at most max; false on anything else. */
bool cfa_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);
/* Hex digits only (no 0x), at most max. */
bool cfa_parse_hex(const char *s, size_t len, uint64_t max, uint64_t *out);

/* Bounded formatted copy that always terminates; false when truncated.
 * The result must be checked: a cut path names the wrong file. */
bool cfa_snprintf(char *dst, size_t size, const char *fmt, ...)
	CFA_PRINTF(3, 4) CFA_MUST_USE;
/* The formatted text in a new allocation sized to fit (cfa_free), or NULL
 * when out of memory: for paths and names with no fixed ceiling. */
char *cfa_aprintf(const char *fmt, ...) CFA_PRINTF(1, 2) CFA_MUST_USE;
/* The same with a va_list (which it uses up, as vsnprintf does). */
char *cfa_vaprintf(const char *fmt, va_list ap) CFA_PRINTF(1, 0) CFA_MUST_USE;

/* Only for text shown to people (a product name, a warning) that must go
 * into a fixed field of a public struct: text too long for it ends in
 * "..." (cut at a character boundary), so the cut shows.  False when it
 * was cut.  Paths and values never go through here: they are checked
 * (cfa_snprintf) or allocated (cfa_aprintf). */
bool cfa_fit_text(char *dst, size_t size, const char *fmt, ...) CFA_PRINTF(3, 4);
bool cfa_vfit_text(char *dst, size_t size, const char *fmt, va_list ap) CFA_PRINTF(3, 0);

#endif
