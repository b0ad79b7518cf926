/*
 * channel_state.c - what the client keeps per channel, read and written:
 * ROOT/channels/NAME/channel.json (URL, trusted keys, priority, the
 * accepted version and expiry) and index.signed (the accepted index and its signature), and the
 * accepted indexes read into the recipe set.  Each is checked against its
 * channel's trusted keys again when it is read (one ed25519 verification,
 * far below a millisecond), so a file changed on disk after it was
 * accepted is refused, not used.
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/atomic_file.h"
#include "core/cache_key.h"
#include "core/channel.h"
#include "core/gpus.h"
#include "core/json.h"
#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/recipe_cache.h"
#include "core/strbuf.h"
#include "core/utc.h"
#include "platform/platform.h"

/* Names become folder names on every platform: keep them plain. */
bool cfa_channel_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	/* No leading '.' (".", "..", hidden folders) or '-' (it would read
	 * as a command-line option).  Lower case only: Windows folder
	 * names ignore case, so two names differing in case would share a
	 * folder. */
	if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-')
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.'))
			return false;
	}
	return true;
}

char *cfa_channel_file(struct cfapkg_ctx *ctx, const char *name, const char *file)
{
	char *rel = cfa_aprintf("%s/%s", name, file), *path;

	if (!rel) {
		cfa_nomem(ctx);
		return NULL;
	}
	path = cfa_root_path(ctx, CFA_CHANNELS, rel);
	cfa_free(rel);
	return path;
}

void cfa_channel_state_free(struct cfa_channel_state *st)
{
	cfa_free(st->name);
	cfa_free(st->url);
	cfa_free(st->upstream);
	cfa_keys_free(&st->keys);
	memset(st, 0, sizeof(*st));
}

/* A missing or non-string member reads as "", so NULL from here means out of
 * memory only. */
static char *dup_member(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cfa_strdup(cJSON_IsString(v) ? v->valuestring : "");
}

/* Every key must decode: one damaged key fails the read rather than being
 * skipped.  A missing "keys" array gives no keys, which is refused. */
static bool read_state_keys(const cJSON *doc, struct cfa_keys *keys)
{
	unsigned char pub[CFA_PUBKEY_LEN];
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "keys"))
	{
		if (!cJSON_IsString(it) || !cfa_b64_decode(it->valuestring, pub, sizeof(pub)) ||
		    !cfa_keys_add(keys, pub))
			return false;
	}
	return keys->n > 0;
}

/* A number between lo and hi, 0 for anything else: the state file is the
 * root's own, but a damaged one must not make the cast undefined. */
static double number_of(const cJSON *o, const char *key, double lo, double hi)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi ? v->valuedouble
	                                                                         : 0;
}

enum cfapkg_err cfa_channel_state_read(struct cfapkg_ctx *ctx, const char *name,
                                       struct cfa_channel_state *st)
{
	char *path = cfa_channel_file(ctx, name, "channel.json");
	const cJSON *exp;
	cJSON *doc = NULL;
	enum cfapkg_err e;

	memset(st, 0, sizeof(*st));
	if (!path)
		return ctx->err_code;
	if (!cfa_plat_is_file(path)) {
		e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "no channel named %s ('cfapkg channel list' "
		             "shows them)", name);
		cfa_free(path);
		return e;
	}
	e = cfa_json_read_file(ctx, path, CFAPKG_E_IO, &doc);
	if (!e) {
		st->name = cfa_strdup(name);
		st->url = dup_member(doc, "url");
		st->upstream = dup_member(doc, "channel");
		st->priority = (int)number_of(doc, "priority", INT_MIN, INT_MAX);
		/* Version 0 means the channel was added but no index accepted
		 * yet (see load_one). */
		st->version = (uint64_t)number_of(doc, "version", 0, 9007199254740991.0);
		exp = cJSON_GetObjectItemCaseSensitive(doc, "expires");
		/* An expiry that does not parse leaves expires at 0, which
		 * reads as no expiry. */
		if (cJSON_IsString(exp))
			cfa_utc_parse(exp->valuestring, &st->expires);
		exp = cJSON_GetObjectItemCaseSensitive(doc, "stamp");
		if (cJSON_IsString(exp) && !cfa_snprintf(st->stamp, sizeof(st->stamp), "%s",
		                                          exp->valuestring))
			st->stamp[0] = '\0'; /* not one cfapkg wrote: checked again */
		/* The allocations above are checked together here;
		 * cfa_channel_state_free below copes with any of them
		 * NULL. */
		if (!st->name || !st->url || !st->upstream)
			e = cfa_nomem(ctx);
		else if (!read_state_keys(doc, &st->keys))
			e = cfa_fail(ctx, CFAPKG_E_IO, "%s: no trusted key can be read; remove the "
			             "channel and add it again with its key", path);
	}
	cJSON_Delete(doc);
	cfa_free(path);
	if (e)
		cfa_channel_state_free(st);
	return e;
}

/* The accepted index: signature lines, an empty line, the payload. */
enum cfapkg_err cfa_channel_signed_read(struct cfapkg_ctx *ctx, const char *name, char **text,
                                        const char **payload, size_t *len)
{
	char *path = cfa_channel_file(ctx, name, "index.signed");
	size_t total = 0;
	char *split;
	enum cfapkg_err e;

	*text = NULL;
	if (!path)
		return ctx->err_code;
	e = cfa_read_file(ctx, path, text, &total);
	/* Signature lines never hold an empty line, so the first one is the
	 * boundary even when the payload holds more. */
	if (!e && !(split = strstr(*text, "\n\n")))
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s is damaged; run 'cfapkg channel update %s'", path,
		             name);
	if (!e) {
		split[1] = '\0'; /* the signature lines end at the empty line */
		*payload = split + 2;
		/* The payload keeps its own length: it is signed byte for
		 * byte and may itself end without a newline. */
		*len = total - (size_t)(split + 2 - *text);
	}
	if (e) {
		cfa_free(*text);
		*text = NULL;
	}
	cfa_free(path);
	return e;
}

/* A channel's name with its priority, for ordering the load. */
struct ranked {
	char *name;
	int priority;
};

struct scan {
	struct cfapkg_ctx *ctx;
	struct ranked *v;
	size_t n, cap;
	bool failed;
};

static int collect(const char *name, void *arg)
{
	struct scan *s = arg;
	struct cfa_channel_state st;

	if (!cfa_channel_name_ok(name) || cfa_channel_state_read(s->ctx, name, &st)) {
		cfapkg_ctx_clear_error(s->ctx); /* not a channel (or a broken one): skipped */
		return 0;
	}
	/* Out of memory stops the listing (returning 1); the broken-channel
	 * case above does not. */
	if (cfa_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
		s->failed = true;
		cfa_channel_state_free(&st);
		return 1;
	}
	s->v[s->n].priority = st.priority;
	s->v[s->n++].name = st.name;
	/* The name now belongs to s->v; the rest of the state is freed. */
	st.name = NULL;
	cfa_channel_state_free(&st);
	return 0;
}

/* Lower priority numbers first, then by name, so the order does not depend on
 * the order the folder is listed in. */
static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	return strcmp(x->name, y->name);
}

enum cfapkg_err cfa_channel_names(struct cfapkg_ctx *ctx, char ***names, size_t *n)
{
	char *dir = cfa_root_path(ctx, CFA_CHANNELS, NULL);
	struct scan s = {ctx, NULL, 0, 0, false};
	size_t i;

	*names = NULL;
	*n = 0;
	if (!dir) {
		if (ctx->err_code == CFAPKG_E_NOMEM)
			return CFAPKG_E_NOMEM;
		/* No root can be chosen here (no home folder): no channels either. */
		cfapkg_ctx_clear_error(ctx);
		return CFAPKG_E_OK;
	}
	/* No channels folder yet is simply no channels. */
	if (cfa_plat_is_dir(dir))
		cfa_plat_list_dir(dir, collect, &s);
	cfa_free(dir);
	if (s.failed || (s.n && !(*names = cfa_calloc(s.n, sizeof(**names))))) {
		for (i = 0; i < s.n; i++)
			cfa_free(s.v[i].name);
		cfa_free(s.v);
		return cfa_nomem(ctx);
	}
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), by_rank);
	for (i = 0; i < s.n; i++)
		/* The names move into the result; only the ranking array is
		 * freed. */
		(*names)[i] = s.v[i].name;
	*n = s.n;
	cfa_free(s.v);
	return CFAPKG_E_OK;
}

/* "channel lab (index 7, http://mirror/lab)", kept as long as ctx. */
/* Kept in the context's arena because every recipe read from the index points
 * at it. */
static const char *origin_of(struct cfapkg_ctx *ctx, const struct cfa_channel_state *st)
{
	char *text = cfa_aprintf("channel %s (index %llu, %s)", st->name,
	                         (unsigned long long)st->version, st->url);
	const char *kept = text ? cfa_arena_strdup(&ctx->arena, text) : NULL;

	cfa_free(text);
	return kept;
}

/* The index read from its signed file: its signatures checked unless it
 * is the file accepted (seen->stamp set), its recipes added and its GPU
 * table taken; when it is the accepted file both are cached for the next
 * command, and when it is refused so is its cache. */
static enum cfapkg_err from_index(struct cfapkg_ctx *ctx, const struct cfa_channel_state *st,
                                  const struct cfa_channel_seen *seen, const char *origin,
                                  cfa_channel_add_fn add, void *arg)
{
	struct cfapkg_recipe **list = NULL;
	const char *payload = NULL;
	const cJSON *gpus;
	char *text = NULL;
	struct cfa_index ix;
	size_t len = 0, n = 0;
	enum cfapkg_err e = cfa_channel_signed_read(ctx, st->name, &text, &payload, &len);

	if (!e && (e = cfa_index_open(ctx, seen->label, payload, len, text,
	                              seen->stamp ? NULL : &st->keys, &ix)) == CFAPKG_E_INTEGRITY)
		cfa_channel_cache_drop(ctx, seen->label);
	if (e) {
		cfa_free(text);
		return e;
	}
	gpus = cJSON_GetObjectItemCaseSensitive(ix.doc, "gpus");
	if (!(e = cfa_index_recipes(ctx, &ix, seen->label, origin, &list, &n)))
		e = add(ctx, list, n, arg);
	/* An index may carry GPU facts along with its recipes; they go into
	 * the same context. */
	if (!e && gpus)
		e = cfa_gpus_load_json(ctx, seen->label, gpus);
	/* As for folders, an index too large for an image is parsed each
	 * time. */
	if (!e && seen->stamp && !ctx->no_index && len <= CFA_IMAGE_FOLDER_MAX)
		e = cfa_channel_cache_write(ctx, seen, list, n, gpus ? ctx->gpus : NULL);
	/* The recipes handed to add must not point into ix: it is closed right
	 * here. */
	cfa_index_close(&ix);
	cfa_free(list);
	cfa_free(text);
	return e;
}

/* The accepted index from its cache; *done false when there is none. */
static enum cfapkg_err from_cache(struct cfapkg_ctx *ctx, const struct cfa_channel_seen *seen,
                                  const char *origin, cfa_channel_add_fn add, void *arg,
                                  bool *done)
{
	struct cfapkg_recipe **list = NULL;
	struct cfa_gpus *gpus = NULL;
	size_t n = 0;
	enum cfapkg_err e = cfa_channel_cached(ctx, seen, origin, &list, &n, &gpus);

	*done = !e && list;
	if (*done && !(e = add(ctx, list, n, arg)) && gpus) {
		/* As a parsed table does: the channel's replaces the one before. */
		cfa_gpus_take(ctx, gpus);
		gpus = NULL;
	}
	cfa_gpus_free(gpus);
	cfa_free(list);
	return e;
}

/* The channel in the whole load's key: read while its index keeps the
 * stamp it was accepted with, it is that index; checked again, no key. */
static void key_channel(struct cfapkg_ctx *ctx, const struct cfa_channel_seen *seen)
{
	char ver[24];

	if (!seen->stamp || !cfa_snprintf(ver, sizeof(ver), "%llu", (unsigned long long)seen->version)) {
		cfa_load_key_add(ctx, NULL);
		return;
	}
	cfa_load_key_add(ctx, seen->label);
	cfa_load_key_add(ctx, seen->stamp);
	cfa_load_key_add(ctx, ver);
}

static enum cfapkg_err load_one(struct cfapkg_ctx *ctx, const char *name,
                                cfa_channel_add_fn add, void *arg)
{
	struct cfa_channel_state st;
	struct cfa_channel_seen seen = {NULL, NULL, 0};
	const char *origin = NULL;
	char *label = NULL, stamp[64];
	bool done = false;
	enum cfapkg_err e = cfa_channel_state_read(ctx, name, &st);

	/* On failure *st holds nothing: the caller needs to free nothing. */
	if (e)
		return e;
	if (!st.version) { /* added but never accepted: nothing to use */
		cfa_channel_state_free(&st);
		return CFAPKG_E_OK;
	}
	/* label, the index's path, names the file in errors and is the file
	 * whose stamp is compared below. */
	if (!(label = cfa_channel_file(ctx, name, "index.signed")) ||
	    !(origin = origin_of(ctx, &st)))
		e = label ? cfa_nomem(ctx) : ctx->err_code;
	seen.label = label;
	seen.version = st.version;
	/* Checked when it was accepted; checked again only if it changed since
	 * (the first signature check of a process costs OpenSSL's start-up,
	 * about 2 ms).  No stamp recorded, or none readable now, counts as
	 * changed. */
	if (!e && st.stamp[0] && cfa_plat_file_stamp(label, stamp) && strcmp(stamp, st.stamp) == 0)
		seen.stamp = stamp;
	if (!e)
		key_channel(ctx, &seen);
	if (!e && seen.stamp && !ctx->no_index)
		e = from_cache(ctx, &seen, origin, add, arg, &done);
	if (!e && !done)
		e = from_index(ctx, &st, &seen, origin, add, arg);
	cfa_free(label);
	cfa_channel_state_free(&st);
	return e;
}

enum cfapkg_err cfa_channels_load(struct cfapkg_ctx *ctx, cfa_channel_add_fn add, void *arg)
{
	char **names = NULL;
	size_t n = 0, i;
	enum cfapkg_err e = cfa_channel_names(ctx, &names, &n);

	/* In priority order (cfa_channel_names), so add sees the most
	 * preferred channel first; the first error stops the load. */
	for (i = 0; i < n && !e; i++)
		e = load_one(ctx, names[i], add, arg);
	for (i = 0; i < n; i++)
		cfa_free(names[i]);
	cfa_free(names);
	return e;
}

static void add_keys(struct cfa_json_build *jb, cJSON *doc, const struct cfa_keys *keys)
{
	char b64[CFA_PUBKEY_B64_LEN + 1];
	cJSON *arr = cfa_json_add_array(jb, doc, "keys");
	size_t i;

	for (i = 0; i < keys->n; i++) {
		cfa_b64_encode(keys->pub[i], CFA_PUBKEY_LEN, b64);
		cfa_json_append_string(jb, arr, b64);
	}
}

enum cfapkg_err cfa_channel_state_write(struct cfapkg_ctx *ctx, const struct cfa_channel_state *st)
{
	struct cfa_json_build jb = {false};
	cJSON *doc = cfa_json_new_object(&jb);
	char *path = cfa_channel_file(ctx, st->name, "channel.json");
	/* Long enough for cfa_utc_format's "YYYY-MM-DDTHH:MM:SSZ". */
	char expires[32] = "", now[32];
	enum cfapkg_err e;

	if (!path) {
		cJSON_Delete(doc);
		return ctx->err_code;
	}
	if (st->expires)
		cfa_utc_format(st->expires, expires);
	cfa_utc_now(now);
	/* The builder records a failed allocation in jb and the write below
	 * refuses the document, so the adds need no checks of their own. */
	cfa_json_add_number(&jb, doc, "format", 1);
	cfa_json_add_string(&jb, doc, "url", st->url);
	cfa_json_add_string(&jb, doc, "channel", st->upstream);
	cfa_json_add_number(&jb, doc, "priority", st->priority);
	add_keys(&jb, doc, &st->keys);
	/* A double holds every integer up to 2^53 exactly, far more index
	 * versions than a channel will publish. */
	cfa_json_add_number(&jb, doc, "version", (double)st->version);
	/* A NULL value adds no member at all: no "expires" means the index
	 * does not expire. */
	cfa_json_add_string(&jb, doc, "expires", expires[0] ? expires : NULL);
	cfa_json_add_string(&jb, doc, "stamp", st->stamp[0] ? st->stamp : NULL);
	cfa_json_add_string(&jb, doc, "updated", now);
	e = cfa_write_json(ctx, path, cfa_json_finish(&jb, doc));
	cfa_free(path);
	return e;
}

enum cfapkg_err cfa_channel_signed_write(struct cfapkg_ctx *ctx, const char *name,
                                         const char *sigs, const char *payload, size_t len)
{
	char *path = cfa_channel_file(ctx, name, "index.signed");
	size_t nsig = strlen(sigs);
	bool newline = nsig && sigs[nsig - 1] == '\n';
	char *all = path ? cfa_malloc(nsig + 2 + len) : NULL;
	enum cfapkg_err e;

	if (!all) {
		cfa_free(path);
		return path ? cfa_nomem(ctx) : ctx->err_code;
	}
	memcpy(all, sigs, nsig);
	/* One empty line between the signatures and the payload, whether or
	 * not sigs ends with a newline: cfa_channel_signed_read splits at the
	 * first one. */
	memcpy(all + nsig, "\n\n", newline ? 1 : 2);
	memcpy(all + nsig + (newline ? 1 : 2), payload, len);
	/* Written whole or not at all: a reader never sees new signatures
	 * over an old payload. */
	e = cfa_write_atomic(ctx, path, all, nsig + (newline ? 1 : 2) + len);
	cfa_free(all);
	cfa_free(path);
	return e;
}
