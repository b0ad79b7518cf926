/*
 * state.c - writing what the client keeps per channel (core/channel.h
 * reads it): channel.json and index.signed, each replaced atomically.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "channel/channel.h"
#include "core/json.h"
#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

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
	char expires[32] = "", now[32];
	enum cfapkg_err e;

	if (!path) {
		cJSON_Delete(doc);
		return ctx->err_code;
	}
	if (st->expires)
		cfa_utc_format(st->expires, expires);
	cfa_utc_now(now);
	cfa_json_add_number(&jb, doc, "format", 1);
	cfa_json_add_string(&jb, doc, "url", st->url);
	cfa_json_add_string(&jb, doc, "channel", st->upstream);
	cfa_json_add_number(&jb, doc, "priority", st->priority);
	add_keys(&jb, doc, &st->keys);
	cfa_json_add_number(&jb, doc, "version", (double)st->version);
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
	memcpy(all + nsig, "\n\n", newline ? 1 : 2);
	memcpy(all + nsig + (newline ? 1 : 2), payload, len);
	e = cfa_write_atomic(ctx, path, all, nsig + (newline ? 1 : 2) + len);
	cfa_free(all);
	cfa_free(path);
	return e;
}
