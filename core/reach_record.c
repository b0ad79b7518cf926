/*
 * reach_record.c - the recipes each recent request reached, so that the
 * same plan asked again reads them straight from the folders' images.
 *
 * ROOT/cache/recipes/reached holds one line per request, newest first:
 * "KEY NARROWED N F.I F.I ...", F a folder's place in the load order and I
 * a recipe's in that folder's sorted file names.  The key (recipe_reach.c)
 * covers everything the walk over the indexes depends on, so a line is
 * either exact or never looked up again; the oldest lines fall off.
 */
#include <stdint.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/recipe_cache.h"
#include "core/strbuf.h"

#define RECORD_FILE "reached"
/* Enough for the requests a user makes in turn; more only grows the file
 * every plan reads. */
#define RECORD_LINES 32
/* Far more recipes than a request reaches in any folder set. */
#define RECORD_MAX_RECIPES 100000u

void cfa_reached_fini(struct cfa_reached *r)
{
	cfa_free(r->folder);
	cfa_free(r->recipe);
	memset(r, 0, sizeof(*r));
}

/* The next space-separated word at *p, as [start, len); false at the line's
 * end. */
static bool word(const char **p, const char *end, const char **start, size_t *len)
{
	while (*p < end && **p == ' ')
		(*p)++;
	*start = *p;
	while (*p < end && **p != ' ')
		(*p)++;
	*len = (size_t)(*p - *start);
	return *len > 0;
}

/* "F.I" into folder and recipe. */
static bool place(const char *s, size_t len, uint32_t *folder, uint32_t *recipe)
{
	const char *dot = memchr(s, '.', len);
	uint64_t f, r;

	if (!dot || !cfa_parse_u64(s, (size_t)(dot - s), UINT32_MAX, &f) ||
	    !cfa_parse_u64(dot + 1, len - (size_t)(dot + 1 - s), UINT32_MAX, &r))
		return false;
	*folder = (uint32_t)f;
	*recipe = (uint32_t)r;
	return true;
}

/* The rest of a line after its key: false for anything malformed. */
static enum cfapkg_err parse_line(struct cfapkg_ctx *ctx, const char *p, const char *end,
                                  struct cfa_reached *out, bool *ok)
{
	const char *w;
	size_t len, i;
	uint64_t n = 0;

	*ok = word(&p, end, &w, &len) && len == 1 && (*w == '0' || *w == '1');
	out->narrowed = *ok && *w == '1';
	*ok = *ok && word(&p, end, &w, &len) && cfa_parse_u64(w, len, RECORD_MAX_RECIPES, &n);
	if (!*ok)
		return CFAPKG_E_OK;
	out->folder = cfa_calloc((size_t)n + 1, sizeof(*out->folder));
	out->recipe = cfa_calloc((size_t)n + 1, sizeof(*out->recipe));
	if (!out->folder || !out->recipe)
		return cfa_nomem(ctx);
	out->n = (size_t)n;
	for (i = 0; i < out->n && *ok; i++)
		*ok = word(&p, end, &w, &len) && place(w, len, &out->folder[i], &out->recipe[i]);
	*ok = *ok && !word(&p, end, &w, &len);
	return CFAPKG_E_OK;
}

/* Whether the line [line, end) is key's. */
static bool is_keys(const char *line, const char *end, const char *key)
{
	size_t klen = strlen(key);

	return (size_t)(end - line) > klen && memcmp(line, key, klen) == 0 && line[klen] == ' ';
}

/* The record file's text in *text (NULL when there is none to read). */
static enum cfapkg_err record_text(struct cfapkg_ctx *ctx, char **path, char **text)
{
	size_t len = 0;
	enum cfapkg_err e = cfa_recipe_cache_file(ctx, RECORD_FILE, path);

	*text = NULL;
	if (e || !*path)
		return e;
	/* Missing or unreadable is only not cached: a want of memory is
	 * still one. */
	if ((e = cfa_read_file(ctx, *path, text, &len)) && e != CFAPKG_E_NOMEM) {
		cfapkg_ctx_clear_error(ctx);
		e = CFAPKG_E_OK;
	}
	return e;
}

enum cfapkg_err cfa_reached_find(struct cfapkg_ctx *ctx, const char key[65],
                                 struct cfa_reached *out, bool *found)
{
	char *path = NULL, *text = NULL;
	const char *line, *end;
	enum cfapkg_err e = record_text(ctx, &path, &text);

	memset(out, 0, sizeof(*out));
	*found = false;
	for (line = text; !e && line && *line && !*found; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if (is_keys(line, end, key) &&
		    !(e = parse_line(ctx, line + strlen(key) + 1, end, out, found)) && !*found)
			cfa_reached_fini(out);
	}
	if (e || !*found)
		cfa_reached_fini(out);
	cfa_free(path);
	cfa_free(text);
	return e;
}

/* The new line for key. */
static void put_line(struct cfa_buf *b, const char key[65], const struct cfa_reached *r)
{
	size_t i;

	cfa_buf_printf(b, "%s %d %lu", key, r->narrowed ? 1 : 0, (unsigned long)r->n);
	for (i = 0; i < r->n; i++)
		cfa_buf_printf(b, " %lu.%lu", (unsigned long)r->folder[i], (unsigned long)r->recipe[i]);
	cfa_buf_adds(b, "\n");
}

enum cfapkg_err cfa_reached_keep(struct cfapkg_ctx *ctx, const char key[65],
                                 const struct cfa_reached *r)
{
	struct cfa_buf b;
	char *path = NULL, *text = NULL;
	const char *line, *end;
	size_t kept = 1;
	enum cfapkg_err e = record_text(ctx, &path, &text);

	cfa_buf_init(&b, SIZE_MAX / 2);
	if (!e && path)
		put_line(&b, key, r);
	for (line = text; !e && line && *line && kept < RECORD_LINES; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if (end > line && !is_keys(line, end, key)) {
			cfa_buf_add(&b, line, (size_t)(end - line));
			cfa_buf_adds(&b, "\n");
			kept++;
		}
	}
	if (!e && b.failed)
		e = cfa_nomem(ctx);
	/* A cache only saves time: one not written is made again. */
	if (!e && path && (e = cfa_write_atomic(ctx, path, b.data, b.len)) != CFAPKG_E_NOMEM) {
		cfapkg_ctx_clear_error(ctx);
		e = CFAPKG_E_OK;
	}
	cfa_buf_fini(&b);
	cfa_free(path);
	cfa_free(text);
	return e;
}
