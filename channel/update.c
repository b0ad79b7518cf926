/*
 * update.c - adding a channel and accepting its newer indexes.  An index is
 * accepted only when a key the client trusts signed its exact bytes, it
 * names the same channel, its version is newer than the last accepted one
 * (never older: a rollback), it has not expired (a frozen mirror), it is
 * not bigger than CFA_CHANNEL_INDEX_MAX, and every recipe in it parses.
 * Otherwise nothing on disk changes.
 */
#include <cjson/cJSON.h>
#include <string.h>
#include <time.h>

#include "channel/channel.h"
#include "core/gpus.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

struct fetched {
	char *sigs, *payload;      /* cfa_free */
	size_t len;
};

static enum cfapkg_err refuse(struct cfapkg_ctx *ctx, const char *name, const char *fmt,
                              const char *a, const char *b)
{
	return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "channel %s: refused: %s%s%s; nothing was changed",
	                name, fmt, a ? a : "", b ? b : "");
}

/* One file of the channel's folder, at most cap bytes, into memory; the
 * cache keeps no copy (it is not an artifact). */
static enum cfapkg_err fetch_file(struct cfapkg_ctx *ctx, const struct cfa_channel_state *st,
                                  const char *file, uint64_t cap,
                                  const struct cfapkg_fetch_opts *fo, char **out, size_t *len)
{
	struct cfapkg_fetch_opts o = fo ? *fo : (struct cfapkg_fetch_opts){0};
	struct cfapkg_fetch_item it;
	const char *urls[1];
	char *url = cfa_aprintf("%s%s%s", st->url,
	                        st->url[0] && st->url[strlen(st->url) - 1] == '/' ? "" : "/", file);
	enum cfapkg_err e;

	if (!url)
		return cfa_nomem(ctx);
	memset(&it, 0, sizeof(it));
	urls[0] = url;
	it.label = file;
	it.urls = urls;
	it.nurls = 1;
	it.size = -1;
	o.max_unknown_size = cap;
	e = cfapkg_fetch(ctx, &it, 1, &o);
	if (e) {
		cfapkg_ctx_clear_error(ctx);
		e = cfa_fail(ctx, e, "channel %s: cannot fetch %s: %s; nothing was changed", st->name,
		             url, it.error ? it.error : cfapkg_strerror(e));
	} else {
		e = cfa_read_file(ctx, it.path, out, len);
		cfa_plat_remove(it.path);
	}
	cfapkg_fetch_item_clear(&it);
	cfa_free(url);
	return e;
}

static enum cfapkg_err fetch_index(struct cfapkg_ctx *ctx, const struct cfa_channel_state *st,
                                   const struct cfapkg_fetch_opts *fo, struct fetched *f)
{
	size_t n;
	enum cfapkg_err e;

	e = fetch_file(ctx, st, "index.json.sig", CFA_CHANNEL_SIG_MAX, fo, &f->sigs, &n);
	if (!e)
		e = fetch_file(ctx, st, "index.json", CFA_CHANNEL_INDEX_MAX, fo, &f->payload, &f->len);
	return e;
}

/* The recipes (and GPU table) must load as the planner will load them. */
static enum cfapkg_err check_contents(struct cfapkg_ctx *ctx, const struct cfa_index *ix,
                                      const char *label)
{
	struct cfapkg_ctx *scratch = cfapkg_ctx_new();
	const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(ix->doc, "gpus");
	struct cfapkg_recipe **list = NULL;
	size_t n = 0;
	enum cfapkg_err e;

	if (!scratch)
		return cfa_nomem(ctx);
	e = cfa_index_recipes(scratch, ix, label, "", &list, &n);
	if (!e && gpus)
		e = cfa_gpus_load_json(scratch, label, gpus);
	if (e)
		e = cfa_fail(ctx, CFAPKG_E_RECIPE, "%s; the index was refused and nothing was changed",
		             cfapkg_ctx_error(scratch));
	cfa_free(list);
	cfapkg_ctx_free(scratch);
	return e;
}

enum accepted_copy { COPY_SAME, COPY_DIFFERENT, COPY_BROKEN };

/* The stored copy of the accepted index against what the server sent
 * under the same version.  A stored copy that no longer verifies (damaged
 * on disk) is replaced by the server's, which does. */
static enum accepted_copy compare_accepted(struct cfapkg_ctx *ctx,
                                          const struct cfa_channel_state *st,
                                          const struct fetched *f)
{
	const char *payload = NULL;
	char *text = NULL;
	size_t len = 0;
	struct cfa_index ix;
	enum accepted_copy c = COPY_BROKEN;

	if (!cfa_channel_signed_read(ctx, st->name, &text, &payload, &len) &&
	    !cfa_index_open(ctx, st->name, payload, len, text, &st->keys, &ix)) {
		c = len == f->len && memcmp(payload, f->payload, len) == 0 ? COPY_SAME
		                                                            : COPY_DIFFERENT;
		cfa_index_close(&ix);
	}
	cfapkg_ctx_clear_error(ctx);
	cfa_free(text);
	return c;
}

static enum cfapkg_err judge(struct cfapkg_ctx *ctx, struct cfa_channel_state *st,
                             const struct cfa_index *ix, const struct fetched *f, bool *current)
{
	char have[24], got[24], when[32];

	*current = false;
	if (st->upstream[0] && strcmp(st->upstream, ix->channel) != 0)
		return refuse(ctx, st->name, "the server sent the index of another channel, ",
		              ix->channel, "");
	if (!cfa_snprintf(have, sizeof(have), "%llu", (unsigned long long)st->version) ||
	    !cfa_snprintf(got, sizeof(got), "%llu", (unsigned long long)ix->version))
		return cfa_nomem(ctx);
	if (ix->version < st->version)
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "channel %s: refused: the server sent index "
		                "version %s, older than version %s accepted before (a rollback: a "
		                "stale mirror or an attack); nothing was changed", st->name, got, have);
	if (ix->version == st->version) {
		enum accepted_copy c = compare_accepted(ctx, st, f);
		*current = c == COPY_SAME;
		if (c == COPY_DIFFERENT)
			return refuse(ctx, st->name, "the server sent different contents under the "
			              "accepted version ", have, "");
		if (c == COPY_SAME)
			return CFAPKG_E_OK;
	}
	cfa_utc_format(ix->expires, when);
	if (ix->expires <= (int64_t)time(NULL))
		return refuse(ctx, st->name, "the index expired on ", when,
		              " (a frozen mirror, or a publisher who must sign it again)");
	return CFAPKG_E_OK;
}

/* What index.signed looks like now it is written and checked: planning
 * checks its signature again only when that changes. */
static void stamp_signed(struct cfapkg_ctx *ctx, struct cfa_channel_state *st)
{
	char *path = cfa_channel_file(ctx, st->name, "index.signed");

	if (!path || !cfa_plat_file_stamp(path, st->stamp))
		st->stamp[0] = '\0';
	cfapkg_ctx_clear_error(ctx);
	cfa_free(path);
}

/* Takes the index: contents checked, written, then the state. */
static enum cfapkg_err accept(struct cfapkg_ctx *ctx, struct cfa_channel_state *st,
                              struct cfa_index *ix, const struct fetched *f, const char *label)
{
	char line[8 + CFA_KEYID_LEN + 1 + CFA_SIG_B64_LEN + 2];
	const char *at = strstr(f->sigs, ix->signer);
	char *dup = NULL;
	enum cfapkg_err e;

	if ((e = check_contents(ctx, ix, label)))
		return e;
	/* Keep the one line that verified, so the stored file has one shape. */
	if (!at || at - f->sigs < 8 || strlen(at - 8) < sizeof(line) - 2)
		return cfa_nomem(ctx);
	memcpy(line, at - 8, sizeof(line) - 2);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	if (!cfa_plat_is_dir(dup = cfa_channel_file(ctx, st->name, "")) && dup &&
	    cfa_plat_mkdir_p(dup))
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create it", dup);
	cfa_free(dup);
	if (!e)
		e = cfa_channel_signed_write(ctx, st->name, line, f->payload, f->len);
	if (e)
		return e;
	stamp_signed(ctx, st);
	if (!(dup = cfa_strdup(ix->channel)))
		return cfa_nomem(ctx);
	cfa_free(st->upstream);
	st->upstream = dup;
	st->version = ix->version;
	st->expires = ix->expires;
	/* Rotation: the keys a trusted index names are the ones trusted next,
	 * with the key that signed it, which stays trusted until an index
	 * signed by another key is accepted (so the stored copy still
	 * verifies). */
	if (ix->keys.n) {
		if (!cfa_keys_add(&ix->keys, ix->signer_pub))
			return cfa_nomem(ctx);
		cfa_keys_free(&st->keys);
		st->keys = ix->keys;
		ix->keys = (struct cfa_keys){0};
	}
	return cfa_channel_state_write(ctx, st);
}

/* Fetches, checks and (when newer) accepts st's index. */
enum cfapkg_err cfa_channel_update_one(struct cfapkg_ctx *ctx, struct cfa_channel_state *st,
                                  const struct cfapkg_fetch_opts *fo, bool *current)
{
	struct fetched f = {0};
	struct cfa_index ix;
	char *label = cfa_aprintf("channel %s (%s)", st->name, st->url);
	enum cfapkg_err e = label ? fetch_index(ctx, st, fo, &f) : cfa_nomem(ctx);

	*current = false;
	if (!e && !(e = cfa_index_open(ctx, label, f.payload, f.len, f.sigs, &st->keys, &ix))) {
		if (!(e = judge(ctx, st, &ix, &f, current)) && !*current)
			e = accept(ctx, st, &ix, &f, label);
		cfa_index_close(&ix);
	}
	cfa_free(f.sigs);
	cfa_free(f.payload);
	cfa_free(label);
	return e;
}

enum cfapkg_err cfapkg_channel_add(struct cfapkg_ctx *ctx, const char *name, const char *url,
                                   const char *key, int priority,
                                   const struct cfapkg_fetch_opts *fo)
{
	struct cfa_channel_state st;
	unsigned char pub[CFA_PUBKEY_LEN];
	char *dir;
	bool exists, current;
	enum cfapkg_err e;

	if (!cfa_channel_name_ok(name))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "'%s' cannot name a channel: use up to 64 "
		                "lower-case letters, digits, '-', '_' and '.'", name);
	if (!(dir = cfa_channel_file(ctx, name, "channel.json")))
		return ctx->err_code;
	exists = cfa_plat_is_file(dir);
	cfa_free(dir);
	if (exists)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "a channel named %s exists ('cfapkg channel "
		                "remove %s' first)", name, name);
	if ((e = cfa_key_parse_public(ctx, key, pub)))
		return e;
	memset(&st, 0, sizeof(st));
	st.priority = priority;
	if (!(st.name = cfa_strdup(name)) || !(st.url = cfa_strdup(url)) ||
	    !(st.upstream = cfa_strdup("")) || !cfa_keys_add(&st.keys, pub))
		e = cfa_nomem(ctx);
	/* The first index is fetched and checked before anything is kept. */
	if (!e)
		e = cfa_channel_update_one(ctx, &st, fo, &current);
	cfa_channel_state_free(&st);
	return e;
}
