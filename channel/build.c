/*
 * build.c - making a channel: every recipe of a folder (each checked by the
 * same parser the client uses) and its gpus.json go into one index.json,
 * signed into index.json.sig.  The publisher's side of channel.h.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel/channel.h"
#include "core/gpus.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* An index expires so that an old signed one cannot be served forever in
 * place of a newer one: 30 days unless the publisher asks otherwise. */
#define DEFAULT_EXPIRY_DAYS 30

struct names {
	char **v;
	size_t n, cap;
	bool failed;
};

static int collect_json(const char *name, void *arg)
{
	struct names *s = arg;
	size_t n = strlen(name);

	/* A folder that was published before holds its own index.json, which
	 * is output, not input. */
	if (name[0] == '.' || n <= 5 || strcmp(name + n - 5, ".json") != 0 ||
	    strcmp(name, "index.json") == 0)
		return 0;
	if (cfa_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)) ||
	    !(s->v[s->n] = cfa_strdup(name))) {
		s->failed = true;
		return 1;
	}
	s->n++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One file of the folder: checked as the client will check it, then added
 * to the payload as the JSON it is. */
static enum cfapkg_err add_file(struct cfapkg_ctx *ctx, struct cfapkg_ctx *scratch,
                                const char *dir, const char *name, cJSON *recipes, cJSON *index)
{
	char *path = cfa_aprintf("%s/%s", dir, name);
	bool gpus = strcmp(name, CFA_GPUS_FILE) == 0;
	struct cfapkg_recipe *r;
	cJSON *doc = NULL;
	enum cfapkg_err e;

	if (!path)
		return cfa_nomem(ctx);
	e = cfa_json_read_file(ctx, path, CFAPKG_E_RECIPE, &doc);
	if (!e)
		/* Parsed into a scratch context: what is checked must not
		 * become part of the publisher's own recipe set, only its
		 * verdict counts. */
		e = gpus ? cfa_gpus_load(scratch, path) : cfa_recipe_parse_json(scratch, path, doc, &r);
	/* A parse error lives in scratch; it is copied so the caller reads it
	 * from ctx. */
	if (e && !ctx->err_code)
		e = cfa_fail(ctx, e, "%s", cfapkg_ctx_error(scratch));
	/* The document goes into the index as read, not as re-serialised from
	 * the parsed recipe: the client parses exactly what the publisher
	 * checked.  Keys are copied by cJSON, so r->name need not outlive
	 * scratch. */
	if (!e && !(gpus ? cJSON_AddItemToObject(index, "gpus", doc)
	                 : cJSON_AddItemToObject(recipes, r->name, doc)))
		e = cfa_nomem(ctx);
	if (e)
		cJSON_Delete(doc);
	cfa_free(path);
	return e;
}

static enum cfapkg_err add_folder(struct cfapkg_ctx *ctx, const char *dir, cJSON *index)
{
	struct cfapkg_ctx *scratch = cfapkg_ctx_new();
	cJSON *recipes = cJSON_AddObjectToObject(index, "recipes");
	struct names s = {0};
	enum cfapkg_err e = CFAPKG_E_OK;
	int rc;
	size_t i;

	if (!scratch || !recipes) {
		cfapkg_ctx_free(scratch);
		return cfa_nomem(ctx);
	}
	rc = cfa_plat_list_dir(dir, collect_json, &s);
	if (s.failed)
		e = cfa_nomem(ctx);
	else if (rc)
		e = cfa_fail(ctx, CFAPKG_E_IO, "recipe folder %s: %s", dir, cfa_plat_strerror(rc));
	else if (s.n == 0)
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "%s holds no recipe (*.json) to publish", dir);
	/* Sorted so that the same folder always gives the same index text,
	 * byte for byte. */
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), by_name);
	/* One scratch context for all files: it only ever holds the last
	 * file's error. */
	for (i = 0; i < s.n && !e; i++)
		e = add_file(ctx, scratch, dir, s.v[i], recipes, index);
	for (i = 0; i < s.n; i++)
		cfa_free(s.v[i]);
	cfa_free(s.v);
	cfapkg_ctx_free(scratch);
	return e;
}

/* The version after the one already published in dir, 1 for a new one.
 * An index.json that is there but cannot be read is an error: starting
 * again at 1 would publish an index every client already holding a later
 * one refuses as older. */
static enum cfapkg_err next_version(struct cfapkg_ctx *ctx, const char *dir, uint64_t *next)
{
	char *path = cfa_aprintf("%s/index.json", dir);
	const cJSON *v = NULL;
	cJSON *doc = NULL;
	enum cfapkg_err e = CFAPKG_E_OK;
	char *why = NULL;

	*next = 1;
	if (!path)
		return cfa_nomem(ctx);
	if (cfa_plat_is_file(path)) {
		e = cfa_json_read_file(ctx, path, CFAPKG_E_IO, &doc);
		v = doc ? cJSON_GetObjectItemCaseSensitive(doc, "version") : NULL;
		/* Whole numbers a double holds exactly: the cast is defined. */
		if (!e && cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 9007199254740992.0 &&
		    v->valuedouble == (double)(uint64_t)v->valuedouble) {
			*next = (uint64_t)v->valuedouble + 1;
		} else {
			/* The reader's own error (the line and column) goes into
			 * this one, which says what to do. */
			why = e ? cfa_strdup(cfapkg_ctx_error(ctx)) : NULL;
			cfapkg_ctx_clear_error(ctx);
			e = cfa_fail(ctx, CFAPKG_E_USAGE, "%s: the version of the index published there "
			             "cannot be read (%s); pass --index-version N, above the last version "
			             "clients received", path, why ? why : "no whole \"version\" number");
		}
	}
	cfa_free(why);
	cJSON_Delete(doc);
	cfa_free(path);
	return e;
}

static enum cfapkg_err add_header(struct cfapkg_ctx *ctx, cJSON *index,
                                  const struct cfapkg_channel_build_opts *o, uint64_t version,
                                  const unsigned char pub[CFA_PUBKEY_LEN])
{
	unsigned days = o->expires_days ? o->expires_days : DEFAULT_EXPIRY_DAYS;
	char expires[32], b64[CFA_PUBKEY_B64_LEN + 1];
	unsigned char next[CFA_PUBKEY_LEN];
	cJSON *keys;
	size_t i;

	cfa_utc_format((int64_t)time(NULL) + (int64_t)days * 86400, expires);
	cfa_b64_encode(pub, CFA_PUBKEY_LEN, b64);
	/* The signing key comes first among the keys, then any named for
	 * later versions. */
	if (!cJSON_AddNumberToObject(index, "format", 1) ||
	    !cJSON_AddStringToObject(index, "channel", o->name) ||
	    !cJSON_AddNumberToObject(index, "version", (double)version) ||
	    !cJSON_AddStringToObject(index, "expires", expires) ||
	    !(keys = cJSON_AddArrayToObject(index, "keys")) ||
	    !cJSON_AddItemToArray(keys, cJSON_CreateString(b64)))
		return cfa_nomem(ctx);
	/* Keys named for later versions: how a channel rotates its key. */
	for (i = 0; i < o->nnext_keys; i++) {
		enum cfapkg_err e = cfa_key_parse_public(ctx, o->next_keys[i], next);
		/* Once added, doc belongs to the index; only a document not
		 * added is deleted here. */
		if (e)
			return e;
		cfa_b64_encode(next, CFA_PUBKEY_LEN, b64);
		if (!cJSON_AddItemToArray(keys, cJSON_CreateString(b64)))
			return cfa_nomem(ctx);
	}
	return CFAPKG_E_OK;
}

static enum cfapkg_err write_signed(struct cfapkg_ctx *ctx, const char *dir, EVP_PKEY *key,
                                    const unsigned char pub[CFA_PUBKEY_LEN], const char *text)
{
	char id[CFA_KEYID_LEN + 1], b64[CFA_SIG_B64_LEN + 1];
	unsigned char sig[CFA_SIG_LEN];
	char *path = NULL, *line = NULL;
	enum cfapkg_err e;

	/* The signature line names the key by its id so that a client
	 * trusting several keys knows which one to verify with. */
	cfa_key_id(pub, id);
	/* Ed25519 signs the exact bytes written below; any change of
	 * whitespace breaks the signature. */
	if ((e = cfa_sign(ctx, key, text, strlen(text), sig)))
		return e;
	cfa_b64_encode(sig, sizeof(sig), b64);
	/* The index before its signature: a client reading between the two
	 * writes finds them disagree and refuses, changing nothing. */
	if (!(path = cfa_aprintf("%s/index.json", dir)) ||
	    !(line = cfa_aprintf("ed25519 %s %s\n", id, b64)))
		e = cfa_nomem(ctx);
	if (!e)
		e = cfa_write_atomic(ctx, path, text, strlen(text));
	cfa_free(path);
	if (!e && !(path = cfa_aprintf("%s/index.json.sig", dir)))
		e = cfa_nomem(ctx);
	if (!e)
		e = cfa_write_atomic(ctx, path, line, strlen(line));
	cfa_free(path);
	cfa_free(line);
	return e;
}

enum cfapkg_err cfapkg_channel_build(struct cfapkg_ctx *ctx, const char *dir, const char *key_file,
                                     const struct cfapkg_channel_build_opts *o,
                                     uint64_t *version_out)
{
	unsigned char pub[CFA_PUBKEY_LEN];
	uint64_t version = o->version;
	cJSON *index = NULL;
	EVP_PKEY *key = NULL;
	char *text = NULL;
	enum cfapkg_err e;

	if (!version && (e = next_version(ctx, dir, &version)))
		return e;
	index = cJSON_CreateObject();
	if (!o->name || !o->name[0])
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "a channel needs a name (--name)");
	else if (!index)
		e = cfa_nomem(ctx);
	else if (!(e = cfa_key_load_private(ctx, key_file, &key)) && !cfa_key_public(key, pub))
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "%s: cannot read its public half", key_file);
	if (!e && !(e = add_header(ctx, index, o, version, pub)) &&
	    !(e = add_folder(ctx, dir, index)) && !(text = cJSON_Print(index)))
		e = cfa_nomem(ctx);
	/* Checked here too, so a publisher learns before uploading that no
	 * client would accept the index. */
	if (!e && strlen(text) > CFA_CHANNEL_INDEX_MAX)
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "the index of %s would be %lu bytes, more than "
		             "clients accept (%lu)", dir, (unsigned long)strlen(text),
		             (unsigned long)CFA_CHANNEL_INDEX_MAX);
	if (!e)
		e = write_signed(ctx, dir, key, pub, text);
	if (!e && version_out)
		*version_out = version;
	cJSON_free(text);
	cJSON_Delete(index);
	EVP_PKEY_free(key);
	return e;
}

enum cfapkg_err cfapkg_channel_keygen(struct cfapkg_ctx *ctx, const char *private_file,
                                      const char *public_file, char *pub_b64, size_t len)
{
	char b64[CFA_PUBKEY_B64_LEN + 1];
	char *line;
	enum cfapkg_err e;

	if (cfa_plat_is_file(private_file))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s exists: a key is never written over (a "
		                "lost private key cannot sign for its channel again)", private_file);
	if ((e = cfa_key_generate(ctx, private_file, b64)))
		return e;
	if (!(line = cfa_aprintf("ed25519 %s\n", b64)))
		return cfa_nomem(ctx);
	/* The public key file is the text a client is given to trust the
	 * channel: "ed25519 BASE64". */
	e = cfa_write_atomic(ctx, public_file, line, strlen(line));
	cfa_free(line);
	if (!e && pub_b64 && !cfa_snprintf(pub_b64, len, "%s", b64))
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "no room for the public key text");
	return e;
}
