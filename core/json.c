/*
 * json.c - JSON reading helpers with path-precise errors.
 */
#include "core/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

enum cfapkg_err cfa_read_file(struct cfapkg_ctx *ctx, const char *file, char **out,
                              size_t *outlen)
{
	enum cfa_rfile_kind kind;
	uint64_t size = 0;
	struct cfa_rfile *f = cfa_plat_rfile_open(file, &size, &kind);
	char *buf;
	size_t got;

	if (!f && kind == CFA_RFILE_DIR)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: is a folder, not a file; name the file in it",
		                file);
	if (!f && kind == CFA_RFILE_OTHER)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot read (not a regular file?)", file);
	if (!f && errno == ENOMEM)
		return cfa_nomem(ctx);
	if (!f)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot open: %s", file,
		                cfa_plat_strerror(errno));
	/* The cap keeps a wrong path (a disk image, a log) from being read
	 * into memory whole. */
	if (size > CFA_JSON_FILE_MAX) {
		cfa_plat_rfile_close(f);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: larger than %u bytes", file, CFA_JSON_FILE_MAX);
	}
	/* The size is taken up front so the whole file lands in one
	 * allocation. */
	if (!(buf = cfa_malloc((size_t)size + 1))) {
		cfa_plat_rfile_close(f);
		return cfa_nomem(ctx);
	}
	/* A short read means the file shrank since it was opened; the text
	 * would be cut, so it is an error rather than a shorter document. */
	got = cfa_plat_rfile_read(f, buf, (size_t)size, 0);
	cfa_plat_rfile_close(f);
	if (got != (size_t)size) {
		cfa_free(buf);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: read error (changed while reading?)", file);
	}
	/* The terminator is not counted in *outlen; cJSON and the NUL check
	 * both rely on it being there. */
	buf[got] = '\0';
	*out = buf;
	*outlen = got;
	return CFAPKG_E_OK;
}

/* Line and column of a byte offset, for parse errors. */
static void line_col(const char *buf, size_t off, unsigned *line, unsigned *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && buf[i]; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

enum cfapkg_err cfa_json_read_file(struct cfapkg_ctx *ctx, const char *file,
                                   enum cfapkg_err code, cJSON **out)
{
	const char *end = NULL;
	char *buf = NULL;
	size_t len = 0;
	enum cfapkg_err err;
	cJSON *root;

	err = cfa_read_file(ctx, file, &buf, &len);
	if (err)
		return err; /* detail set by read_all */
	/* The length covers the terminator and require_null_terminated is
	 * set: text after the first value ("{} {}") is an error, not silently
	 * dropped. */
	root = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
	if (!root) {
		unsigned line, col;
		/* On failure cJSON points end at the byte it stopped on;
		 * without it the error names line 1, column 1. */
		size_t off = end && end >= buf ? (size_t)(end - buf) : 0;
		line_col(buf, off, &line, &col);
		cfa_free(buf);
		return cfa_fail(ctx, code, "%s:%u:%u: not valid JSON", file, line, col);
	}
	/* Checked on the raw text, after the parse: only the text still shows
	 * a "\u0000" that the parsed strings have already cut short. */
	if ((err = cfa_json_refuse_nul(ctx, file, buf, len, code))) {
		cJSON_Delete(root);
		cfa_free(buf);
		return err;
	}
	cfa_free(buf);
	*out = root;
	return CFAPKG_E_OK;
}

void cfa_jr_init(struct cfa_jr *jr, struct cfapkg_ctx *ctx, struct cfa_arena *arena,
                 const char *file, enum cfapkg_err code)
{
	memset(jr, 0, sizeof(*jr));
	jr->ctx = ctx;
	jr->arena = arena;
	jr->file = file;
	jr->code = code;
}

/* Called for every key read, so it avoids printf.  A segment that does not
 * fit shows as "..." (room for it is always kept): an error's JSON path may
 * be shortened, never silently wrong. */
static size_t push(struct cfa_jr *jr, const char *key, size_t i)
{
	size_t mark = jr->pathlen, n;
	char num[24], *p = num + sizeof(num);
	bool dot = key && mark;

	/* An index is written right to left into num as "[i]", so key then
	 * points into this frame's buffer; it is copied below before push
	 * returns. */
	if (!key) {
		*--p = '\0';
		*--p = ']';
		do
			*--p = (char)('0' + i % 10);
		while ((i /= 10) != 0);
		*--p = '[';
		key = p;
	}
	n = strlen(key);
	/* Room for the separator, the segment and its NUL, plus three bytes
	 * so that a later segment can still be shown as "...". */
	if (mark + dot + n + 1 + 3 <= sizeof(jr->path)) {
		if (dot)
			jr->path[jr->pathlen++] = '.';
		memcpy(jr->path + jr->pathlen, key, n + 1);
		jr->pathlen += n;
	} else if (mark + 4 <= sizeof(jr->path)) {
		memcpy(jr->path + mark, "...", 4);
		jr->pathlen = mark + 3;
	}
	return mark;
}

size_t cfa_jr_push_key(struct cfa_jr *jr, const char *key)
{
	return push(jr, key, 0);
}

size_t cfa_jr_push_index(struct cfa_jr *jr, size_t i)
{
	return push(jr, NULL, i);
}

void cfa_jr_pop(struct cfa_jr *jr, size_t mark)
{
	jr->pathlen = mark;
	jr->path[mark] = '\0';
}

enum cfapkg_err cfa_jr_fail(struct cfa_jr *jr, const char *fmt, ...)
{
	enum cfapkg_err e;
	va_list ap;
	char *msg;

	/* The message may quote a value of the file, of any length. */
	va_start(ap, fmt);
	msg = cfa_vaprintf(fmt, ap);
	va_end(ap);
	if (!msg)
		return cfa_nomem(jr->ctx);
	/* At the top of the document there is no path; "file: : message"
	 * would read as a typo. */
	if (jr->pathlen)
		e = cfa_fail(jr->ctx, jr->code, "%s: %s: %s", jr->file, jr->path, msg);
	else
		e = cfa_fail(jr->ctx, jr->code, "%s: %s", jr->file, msg);
	cfa_free(msg);
	return e;
}

enum cfapkg_err cfa_jr_object(struct cfa_jr *jr, const cJSON *v)
{
	if (!cJSON_IsObject(v))
		return cfa_jr_fail(jr, "expected an object");
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_jr_keys(struct cfa_jr *jr, const cJSON *obj, const char *const *allowed)
{
	const cJSON *m;

	/* Unknown keys are refused, not ignored, so a misspelt optional key
	 * ("sha265") fails loudly instead of leaving the default in place. */
	cJSON_ArrayForEach(m, obj)
	{
		const char *const *a;
		/* The first letters first: this runs for every member of
		 * every version, and few allowed keys share one. */
		for (a = allowed; *a; a++)
			if (**a == *m->string && strcmp(*a, m->string) == 0)
				break;
		if (!*a) {
			/* The path names the offending key itself, not the
			 * object holding it. */
			size_t mark = cfa_jr_push_key(jr, m->string);
			enum cfapkg_err e = cfa_jr_fail(jr, "unknown key (a typo?)");
			cfa_jr_pop(jr, mark);
			return e;
		}
	}
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_jr_string(struct cfa_jr *jr, const cJSON *obj, const char *key,
                              bool required, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t mark;
	char *s;

	/* An explicit null counts as absent only for optional keys; for a
	 * required one it falls through and is reported as not a string. */
	if (!v || (cJSON_IsNull(v) && !required)) {
		if (!required)
			return CFAPKG_E_OK;
		return cfa_jr_fail(jr, "missing required key \"%s\"", key);
	}
	mark = cfa_jr_push_key(jr, key);
	if (!cJSON_IsString(v)) {
		e = cfa_jr_fail(jr, "expected a string");
	/* An empty required string is as good as a missing one to every
	 * caller, so it is refused here once. */
	} else if (required && v->valuestring[0] == '\0') {
		e = cfa_jr_fail(jr, "must not be empty");
	} else {
		/* Copied into the arena: the cJSON tree is usually deleted
		 * right after reading, while the strings live as long as the
		 * context. */
		s = cfa_arena_strdup(jr->arena, v->valuestring);
		if (!s)
			e = cfa_nomem(jr->ctx);
		else
			*out = s;
	}
	cfa_jr_pop(jr, mark);
	return e;
}

enum cfapkg_err cfa_jr_int(struct cfa_jr *jr, const cJSON *obj, const char *key,
                           int64_t min, int64_t max, bool required, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t mark;
	double d;

	if (!v || (cJSON_IsNull(v) && !required)) {
		if (!required)
			return CFAPKG_E_OK;
		return cfa_jr_fail(jr, "missing required key \"%s\"", key);
	}
	mark = cfa_jr_push_key(jr, key);
	/* cJSON keeps every number as a double, so integers past 2^53 have
	 * already lost precision; the callers' ranges stay far below that. */
	d = cJSON_IsNumber(v) ? v->valuedouble : 0;
	/* Range first: casting a double outside int64 (1e30, inf) is undefined. */
	if (cJSON_IsNumber(v) && (d != d || d < -9.2e18 || d > 9.2e18))
		e = cfa_jr_fail(jr, "%g is outside %lld..%lld", d, (long long)min, (long long)max);
	/* A fraction (1.5) is refused rather than truncated; 2.0 passes, as
	 * JSON does not tell it from 2. */
	else if (!cJSON_IsNumber(v) || d != (double)(int64_t)d)
		e = cfa_jr_fail(jr, "expected a whole number");
	else if ((int64_t)d < min || (int64_t)d > max)
		e = cfa_jr_fail(jr, "%.0f is outside %lld..%lld", d, (long long)min,
		                (long long)max);
	else
		*out = (int64_t)d;
	cfa_jr_pop(jr, mark);
	return e;
}

enum cfapkg_err cfa_jr_bool(struct cfa_jr *jr, const cJSON *obj, const char *key, bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t mark;

	/* An explicit null is not accepted for a flag: only true or false. */
	if (!v)
		return CFAPKG_E_OK;
	mark = cfa_jr_push_key(jr, key);
	if (!cJSON_IsBool(v))
		e = cfa_jr_fail(jr, "expected true or false");
	else
		*out = cJSON_IsTrue(v);
	cfa_jr_pop(jr, mark);
	return e;
}

enum cfapkg_err cfa_jr_strings(struct cfa_jr *jr, const cJSON *obj, const char *key,
                               const char *const **out, size_t *n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key), *item;
	enum cfapkg_err e = CFAPKG_E_OK;
	const char **arr;
	size_t mark, i = 0, count;

	*n = 0;
	if (!v)
		return CFAPKG_E_OK;
	mark = cfa_jr_push_key(jr, key);
	if (!cJSON_IsArray(v)) {
		e = cfa_jr_fail(jr, "expected an array of strings");
		goto out;
	}
	/* At least one element, so that an empty array still gets a
	 * pointer of its own rather than the address of the arena's next
	 * allocation. */
	count = (size_t)cJSON_GetArraySize(v);
	arr = cfa_arena_alloc(jr->arena, (count ? count : 1) * sizeof(*arr));
	if (!arr) {
		e = cfa_nomem(jr->ctx);
		goto out;
	}
	cJSON_ArrayForEach(item, v)
	{
		if (!cJSON_IsString(item) || item->valuestring[0] == '\0') {
			/* Left pushed on purpose: the pop at out goes back to
			 * the mark taken before the key, which drops the
			 * index too. */
			cfa_jr_push_index(jr, i);
			e = cfa_jr_fail(jr, "expected a non-empty string");
			goto out;
		}
		/* Each string is copied into the arena, like cfa_jr_string's,
		 * so the array outlives the cJSON tree. */
		arr[i] = cfa_arena_strdup(jr->arena, item->valuestring);
		if (!arr[i++]) {
			e = cfa_nomem(jr->ctx);
			goto out;
		}
	}
	*out = arr;
	*n = count;
/* On error *out and *n stay as they were (n was set to 0 above); what was
 * copied into the arena so far is freed with it. */
out:
	cfa_jr_pop(jr, mark);
	return e;
}

/* Calls fn on each child of v with that child's path segment pushed, storing
 * into an arena array of count elements of size elem. */
static enum cfapkg_err each_child(struct cfa_jr *jr, const cJSON *v, bool by_name, size_t elem,
                                  cfa_jr_item_fn fn, void *arg, void **out, size_t *n)
{
	size_t i = 0, count = (size_t)cJSON_GetArraySize(v);
	unsigned char *arr = cfa_arena_alloc(jr->arena, (count ? count : 1) * elem);
	enum cfapkg_err e = CFAPKG_E_OK;
	const cJSON *item;

	if (!arr)
		return cfa_nomem(jr->ctx);
	cJSON_ArrayForEach(item, v)
	{
		/* The segment is pushed before fn runs so that any error fn
		 * reports names the element it was reading. */
		size_t mark = by_name ? cfa_jr_push_key(jr, item->string) : cfa_jr_push_index(jr, i);
		/* fn gets uninitialised memory: each element is whatever fn
		 * writes into it. */
		e = fn(jr, item, arr + i * elem, arg);
		cfa_jr_pop(jr, mark);
		if (e)
			return e;
		i++;
	}
	*out = arr;
	*n = count;
	return CFAPKG_E_OK;
}

/* obj[key] as an array (or, by_name, an object) walked by each_child. */
static enum cfapkg_err walk_member(struct cfa_jr *jr, const cJSON *obj, const char *key,
                                   bool by_name, bool nonempty, size_t elem, cfa_jr_item_fn fn,
                                   void *arg, void **out, size_t *n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	enum cfapkg_err e;
	size_t mark;

	*n = 0;
	if (!v)
		return CFAPKG_E_OK;
	mark = cfa_jr_push_key(jr, key);
	if (by_name)
		e = cfa_jr_object(jr, v);
	else if (!cJSON_IsArray(v) || (nonempty && cJSON_GetArraySize(v) == 0))
		e = cfa_jr_fail(jr, nonempty ? "expected a non-empty array" : "expected an array");
	else
		e = CFAPKG_E_OK;
	if (!e)
		e = each_child(jr, v, by_name, elem, fn, arg, out, n);
	cfa_jr_pop(jr, mark);
	return e;
}

enum cfapkg_err cfa_jr_array(struct cfa_jr *jr, const cJSON *obj, const char *key, size_t elem,
                             bool nonempty, cfa_jr_item_fn fn, void *arg, void **out,
                             size_t *n)
{
	return walk_member(jr, obj, key, false, nonempty, elem, fn, arg, out, n);
}

enum cfapkg_err cfa_jr_members(struct cfa_jr *jr, const cJSON *obj, const char *key,
                               size_t elem, cfa_jr_item_fn fn, void *arg, void **out,
                               size_t *n)
{
	return walk_member(jr, obj, key, true, false, elem, fn, arg, out, n);
}

char **cfa_json_strings(const cJSON *a, size_t *n)
{
	const cJSON *c;
	size_t bytes = sizeof(char *), count = 0;
	char **out, *p;

	/* First pass: the size of one block holding the pointer array, its
	 * NULL terminator and all the texts. */
	cJSON_ArrayForEach(c, a)
	{
		if (cJSON_IsString(c)) {
			bytes += sizeof(char *) + strlen(c->valuestring) + 1;
			count++;
		}
	}
	if (!(out = cfa_malloc(bytes)))
		return NULL;
	/* The texts follow the count + 1 pointers in the same block, so one
	 * cfa_free releases both. */
	p = (char *)(out + count + 1);
	*n = 0;
	/* Second pass: the same items in the same order, so the sizes counted
	 * above hold. */
	cJSON_ArrayForEach(c, a)
	{
		if (cJSON_IsString(c)) {
			size_t len = strlen(c->valuestring) + 1;
			out[(*n)++] = memcpy(p, c->valuestring, len);
			p += len;
		}
	}
	out[*n] = NULL;
	return out;
}
