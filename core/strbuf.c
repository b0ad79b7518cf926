/*
 * strbuf.c - bounded growable strings and checked number parsing.
 */
#include "core/strbuf.h"

#include "cfapkg.h"
#include "cfapkg_frontend.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"

void cfa_buf_init(struct cfa_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void cfa_buf_fini(struct cfa_buf *b)
{
	cfa_free(b->data);
	memset(b, 0, sizeof(*b));
}

void cfa_buf_reset(struct cfa_buf *b)
{
	b->len = 0;
	/* The failure goes too: a buffer reset is one starting over. */
	b->failed = false;
	if (b->data)
		b->data[0] = '\0';
}

void cfa_buf_cut(struct cfa_buf *b, size_t len)
{
	if (len >= b->len)
		return;
	b->len = len;
	b->data[len] = '\0';
}

bool cfa_buf_add(struct cfa_buf *b, const char *s, size_t n)
{
	/* A failed buffer stays failed, so that a caller may add piece after
	 * piece and test once at the end. */
	if (b->failed)
		return false;
	/* The ceiling is checked before growing: input larger than the
	 * caller allowed never gets its memory. */
	if (n > b->max - b->len) {
		b->failed = true;
		return false;
	}
	/* One byte more than the text, so that data is always a string. */
	if (cfa_grow((void **)&b->data, &b->cap, b->len + n + 1, 1) != 0) {
		b->failed = true;
		return false;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return true;
}

bool cfa_buf_adds(struct cfa_buf *b, const char *s)
{
	return cfa_buf_add(b, s, strlen(s));
}

bool cfa_buf_add_json_string(struct cfa_buf *b, const char *s)
{
	cfa_buf_adds(b, "\"");
	/* Quotes, backslashes and control characters are escaped, as JSON
	 * requires of a string; everything else, UTF-8 included, is copied as
	 * it is. */
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			cfa_buf_printf(b, "\\%c", c);
		else if (c < 0x20)
			cfa_buf_printf(b, "\\u%04x", c);
		else
			cfa_buf_add(b, s, 1);
	}
	return cfa_buf_adds(b, "\"");
}

bool cfa_buf_printf(struct cfa_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	/* Most lines fit on the stack; only a longer one is formatted twice. */
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return false;
	}
	if ((size_t)n < sizeof(small))
		return cfa_buf_add(b, small, (size_t)n);
	{
		char *big = cfa_malloc((size_t)n + 1);
		bool ok;
		if (!big) {
			b->failed = true;
			return false;
		}
		/* The second pass formats the same arguments into room measured
		 * by the first: a different length is a broken C library. */
		va_start(ap, fmt);
		ok = vsnprintf(big, (size_t)n + 1, fmt, ap) == n && cfa_buf_add(b, big, (size_t)n);
		va_end(ap);
		b->failed = b->failed || !ok;
		cfa_free(big);
		return ok;
	}
}

const char *cfa_buf_str(const struct cfa_buf *b)
{
	/* Never NULL: a buffer nothing was added to reads as empty text. */
	return b->data ? b->data : "";
}

bool cfa_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return false;
	/* Digits only, nothing else: no sign, blank or "0x", each of which
	 * strtoull would quietly take. */
	for (i = 0; i < len; i++) {
		unsigned d;
		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned)(s[i] - '0');
		/* v * 10 + d <= max, asked without overflowing. */
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool cfa_parse_hex(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++) {
		int d = hexval(s[i]);
		if (d < 0 || v > (max - (unsigned)d) / 16)
			return false;
		v = v * 16 + (unsigned)d;
	}
	*out = v;
	return true;
}

bool cfa_snprintf(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, size, fmt, ap);
	va_end(ap);
	/* n is the length the whole text needs: as long as size, or longer,
	 * means it was cut. */
	return n >= 0 && (size_t)n < size;
}

char *cfa_vaprintf(const char *fmt, va_list ap)
{
	char small[256], *out;
	va_list again;
	int n;

	/* Copied first: one va_list cannot be walked twice.  Most texts (paths,
	 * names) fit on the stack and are formatted once; a longer one is
	 * formatted again into room of its measured size. */
	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0 || !(out = cfa_malloc((size_t)n + 1))) {
		va_end(again);
		return NULL;
	}
	if ((size_t)n < sizeof(small))
		memcpy(out, small, (size_t)n + 1);
	else if (vsnprintf(out, (size_t)n + 1, fmt, again) != n)
		CFA_FREE(out); /* the same text measured another length: a broken C library */
	va_end(again);
	return out;
}

char *cfa_aprintf(const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	out = cfa_vaprintf(fmt, ap);
	va_end(ap);
	return out;
}

bool cfa_vfit_text(char *dst, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(dst, size, fmt, ap);
	size_t cut;

	if (n < 0) {
		dst[0] = '\0';
		return false;
	}
	if ((size_t)n < size)
		return true;
	if (size < 4) {
		dst[0] = '\0'; /* no room even for the mark */
		return false;
	}
	/* Back to the start of a UTF-8 character, so the text stays valid. */
	for (cut = size - 4; cut > 0 && ((unsigned char)dst[cut] & 0xC0) == 0x80; cut--)
		;
	memcpy(dst + cut, "...", 4);
	return false;
}

bool cfa_fit_text(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	bool whole;

	va_start(ap, fmt);
	whole = cfa_vfit_text(dst, size, fmt, ap);
	va_end(ap);
	return whole;
}

/* The public face of cfa_vfit_text, for front ends that see only the
 * public header. */
bool cfapkg_fit_text(char *dst, size_t size, const char *fmt, va_list ap)
{
	return cfa_vfit_text(dst, size, fmt, ap);
}
