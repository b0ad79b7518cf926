/*
 * json_nul.c - a NUL hidden in a JSON text, found before it is trusted.
 * JSON lets a string hold U+0000 ("\u0000"), and cJSON keeps its strings
 * as C strings, so such a string silently ends there: a recipe's URL
 * "https://host/a\u0000.evil" would be fetched as "https://host/a", a
 * lockfile's part name cut to another name.  No field cfapkg reads has a
 * use for the character, so a text holding one (escaped or as a raw byte)
 * is refused, naming the field as the readers name them: "packages[2].name".
 * The text has already parsed as JSON, so the walk needs no error paths.
 */
#include <string.h>

#include "core/json.h"
#include "core/mem.h"
#include "core/strbuf.h"

/* One open object or array on the way to the string. */
struct frame {
	bool object;
	bool want_key;       /* objects: the next string is a member's name */
	size_t index;        /* arrays: the element being read */
	const char *key;     /* objects: the current member's name, as written */
	size_t key_len;
};

struct walk {
	struct frame *f;
	size_t n, cap;
	bool failed;         /* out of memory */
};

static void open_frame(struct walk *w, bool object)
{
	struct frame *f;

	if (cfa_grow((void **)&w->f, &w->cap, w->n + 1, sizeof(*w->f)) != 0) {
		w->failed = true;
		return;
	}
	f = &w->f[w->n++];
	memset(f, 0, sizeof(*f));
	f->object = object;
	f->want_key = object;
}

/* The path of the value being read (and of key, when the NUL is in a
 * member's name) into out. */
static void path_of(const struct walk *w, const char *key, size_t key_len, struct cfa_buf *out)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		const struct frame *f = &w->f[i];
		if (!f->object)
			cfa_buf_printf(out, "[%lu]", (unsigned long)f->index);
		else if (f->key && !(key && i + 1 == w->n)) /* a new name replaces the last */
			cfa_buf_printf(out, "%s%.*s", out->len ? "." : "", (int)f->key_len, f->key);
	}
	if (key)
		cfa_buf_printf(out, "%s%.*s", out->len ? "." : "", (int)key_len, key);
}

/* The string starting after the quote at *p: *p moves past its closing
 * quote; true when it holds a NUL. */
static bool string_has_nul(const char **p, const char *end)
{
	const char *s = *p;
	bool nul = false;

	/* Each escape is stepped over with what it escapes, so that "\\u0000"
	 * (a backslash, then plain text) is not taken for the escape of a NUL;
	 * the four zeros have no case to differ in. */
	for (; s < end && *s != '"'; s++) {
		if (*s == '\0')
			nul = true;
		else if (*s == '\\' && s + 1 < end && s[1] == 'u' && end - s >= 6 &&
		         memcmp(s + 2, "0000", 4) == 0)
			nul = true, s += 5;
		else if (*s == '\\')
			s++; /* the escaped character, a quote or a backslash included */
	}
	*p = s < end ? s + 1 : end;
	return nul;
}

/* A string at p (after its quote) in the walk's place; true when it holds
 * a NUL, with its path in out. */
static bool read_string(struct walk *w, const char **p, const char *end, struct cfa_buf *out)
{
	const char *start = *p;
	struct frame *top = w->n ? &w->f[w->n - 1] : NULL;
	bool key = top && top->object && top->want_key;

	if (string_has_nul(p, end)) {
		path_of(w, key ? start : NULL, (size_t)(*p - 1 - start), out);
		return true;
	}
	if (key) {
		top->key = start;
		top->key_len = (size_t)(*p - 1 - start);
		top->want_key = false;
	}
	return false;
}

/* A separator or bracket: the walk's place moves. */
static void punctuation(struct walk *w, char c)
{
	struct frame *top = w->n ? &w->f[w->n - 1] : NULL;

	/* Only brackets and commas move the place: the text has parsed as JSON,
	 * so anything else outside a string is a name, a number or a blank. */
	if (c == '{' || c == '[')
		open_frame(w, c == '{');
	else if ((c == '}' || c == ']') && w->n)
		w->n--;
	else if (c == ',' && top && top->object)
		top->want_key = true;
	else if (c == ',' && top)
		top->index++;
}

/* 1 when text holds a NUL (its place in where), 0 when not, -1 when out
 * of memory. */
static int find_nul(const char *text, size_t len, struct cfa_buf *where)
{
	const char *p = text, *end = text + len;
	struct walk w = {NULL, 0, 0, false};
	bool found = false;

	while (p < end && !found && !w.failed) {
		char c = *p++;
		if (c == '"')
			found = read_string(&w, &p, end, where);
		else if (c == '\0')
			found = true; /* outside a string: what follows is not read */
		else
			punctuation(&w, c);
	}
	/* A NUL outside any value, or at the top, has no path to name. */
	if (found && !where->len)
		cfa_buf_adds(where, "the document");
	cfa_free(w.f);
	return w.failed || where->failed ? -1 : found;
}

/* Whether text holds a zero byte or a backslash before "u0000" anywhere.
 * Most hold neither, and memchr finds that far faster than the walk
 * tracks its place; one that does is walked (a "\\u0000" included, which
 * the walk tells apart). */
static bool may_hold_nul(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	if (memchr(text, '\0', len))
		return true;
	while ((p = memchr(p, '\\', (size_t)(end - p)))) {
		if (end - p >= 6 && memcmp(p + 1, "u0000", 5) == 0)
			return true;
		p++;
	}
	return false;
}

enum cfapkg_err cfa_json_refuse_nul(struct cfapkg_ctx *ctx, const char *label, const char *text,
                                    size_t len, enum cfapkg_err code)
{
	struct cfa_buf where;
	enum cfapkg_err e = CFAPKG_E_OK;
	int found;

	if (!may_hold_nul(text, len))
		return CFAPKG_E_OK;
	cfa_buf_init(&where, 4096);
	found = find_nul(text, len, &where);
	if (found < 0)
		e = cfa_nomem(ctx);
	else if (found)
		e = cfa_fail(ctx, code, "%s: %s: holds a NUL character (\\u0000 or a zero byte), "
		             "which would cut the text short there (no field has a use for one); "
		             "nothing was read from it", label, cfa_buf_str(&where));
	cfa_buf_fini(&where);
	return e;
}
