/*
 * index.c - reading a channel index: its signatures first, then its
 * payload (channel name, version, expiry, next keys, recipes).  Nothing in
 * the payload is looked at before a trusted key's signature over its exact
 * bytes has been checked.
 */
#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "core/channel.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"

/* Base64 of n bytes, NUL-terminated; out holds 4 * ((n + 2) / 3) + 1. */
void cfa_b64_encode(const unsigned char *in, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

/* The value of one base64 digit, or -1. */
static int b64_digit(char c)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *at = c ? strchr(digits, c) : NULL;

	return at ? (int)(at - digits) : -1;
}

/* Decodes exactly want bytes from text (padding included), else false.
 * Decoded here rather than by libcrypto: reading a channel's keys is part
 * of every plan, and loading libcrypto for it costs more than the plan. */
bool cfa_b64_decode(const char *text, unsigned char *out, size_t want)
{
	size_t len = strlen(text), pad, i, k = 0;
	uint32_t acc = 0;

	if (len == 0 || len % 4)
		return false;
	pad = (text[len - 1] == '=') + (text[len - 2] == '=');
	if (len / 4 * 3 - pad != want)
		return false;
	for (i = 0; i < len - pad; i++) {
		int d = b64_digit(text[i]);
		if (d < 0)
			return false;
		acc = acc << 6 | (uint32_t)d;
		if (i % 4 == 3) {
			out[k++] = (unsigned char)(acc >> 16);
			out[k++] = (unsigned char)(acc >> 8);
			out[k++] = (unsigned char)acc;
		}
	}
	/* The last group: 2 or 3 digits give 1 or 2 bytes; the bits left
	 * over must be zero, as an encoder writes them. */
	if (pad == 2 && (acc & 0xf) == 0)
		out[k++] = (unsigned char)(acc >> 4);
	else if (pad == 1 && (acc & 0x3) == 0) {
		out[k++] = (unsigned char)(acc >> 10);
		out[k++] = (unsigned char)(acc >> 2);
	}
	return k == want;
}

/* The first 8 bytes of the key's SHA-256, in hex: short enough to print,
 * long enough that two keys of one channel never share it. */
void cfa_key_id(const unsigned char pub[CFA_PUBKEY_LEN], char id[CFA_KEYID_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	static const char digits[] = "0123456789abcdef";
	size_t i;

	/* A digest that fails gives an id of zeros, which no signature line
	 * names: the key then matches nothing rather than something wrong. */
	if (EVP_Digest(pub, CFA_PUBKEY_LEN, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
		memset(md, 0, 32);
	for (i = 0; i < CFA_KEYID_LEN / 2; i++) {
		id[2 * i] = digits[md[i] >> 4];
		id[2 * i + 1] = digits[md[i] & 15];
	}
	id[CFA_KEYID_LEN] = '\0';
}

bool cfa_verify(const unsigned char pub[CFA_PUBKEY_LEN], const void *data, size_t len,
                const unsigned char sig[CFA_SIG_LEN])
{
	EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, CFA_PUBKEY_LEN);
	EVP_MD_CTX *md = key ? EVP_MD_CTX_new() : NULL;
	/* No digest is named: Ed25519 hashes the message itself, in one
	 * call. */
	bool ok = md && EVP_DigestVerifyInit(md, NULL, NULL, NULL, key) == 1 &&
	          EVP_DigestVerify(md, sig, CFA_SIG_LEN, data, len) == 1;

	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	return ok;
}

void cfa_keys_free(struct cfa_keys *k)
{
	cfa_free(k->pub);
	k->pub = NULL;
	k->n = 0;
}

bool cfa_keys_has(const struct cfa_keys *k, const unsigned char pub[CFA_PUBKEY_LEN])
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (memcmp(k->pub[i], pub, CFA_PUBKEY_LEN) == 0)
			return true;
	return false;
}

bool cfa_keys_add(struct cfa_keys *k, const unsigned char pub[CFA_PUBKEY_LEN])
{
	void *grown;

	/* A key listed twice is kept once, so that the list counts distinct
	 * keys. */
	if (cfa_keys_has(k, pub))
		return true;
	if (!(grown = cfa_realloc(k->pub, (k->n + 1) * CFA_PUBKEY_LEN)))
		return false;
	k->pub = grown;
	memcpy(k->pub[k->n++], pub, CFA_PUBKEY_LEN);
	return true;
}

/* One "ed25519 KEYID BASE64" line against the trusted keys. */
static bool line_verifies(const char *line, size_t n, const char *payload, size_t len,
                          const struct cfa_keys *trusted, struct cfa_index *out)
{
	char id[CFA_KEYID_LEN + 1], b64[CFA_SIG_B64_LEN + 1];
	unsigned char sig[CFA_SIG_LEN];
	size_t i;

	/* The whole shape is checked before anything is copied, so a line of
	 * any other length is never read past its end. */
	if (n != 8 + CFA_KEYID_LEN + 1 + CFA_SIG_B64_LEN || strncmp(line, "ed25519 ", 8) != 0 ||
	    line[8 + CFA_KEYID_LEN] != ' ')
		return false;
	memcpy(b64, line + 8 + CFA_KEYID_LEN + 1, CFA_SIG_B64_LEN);
	b64[CFA_SIG_B64_LEN] = '\0';
	if (!cfa_b64_decode(b64, sig, sizeof(sig)))
		return false;
	/* The id only picks which keys to try; the signature is the proof, so a
	 * matching id with a bad signature goes on to the next key. */
	for (i = 0; i < trusted->n; i++) {
		cfa_key_id(trusted->pub[i], id);
		if (memcmp(id, line + 8, CFA_KEYID_LEN) == 0 &&
		    cfa_verify(trusted->pub[i], payload, len, sig)) {
			memcpy(out->signer, id, sizeof(id));
			memcpy(out->signer_pub, trusted->pub[i], CFA_PUBKEY_LEN);
			return true;
		}
	}
	return false;
}

static bool signed_by_trusted(const char *sigs, const char *payload, size_t len,
                              const struct cfa_keys *trusted, struct cfa_index *out)
{
	/* Any one line that verifies is enough: an index signed by an old key
	 * and its successor stays readable on both sides of a rotation. */
	while (*sigs) {
		size_t n = strcspn(sigs, "\r\n");
		if (line_verifies(sigs, n, payload, len, trusted, out))
			return true;
		sigs += n;
		sigs += strspn(sigs, "\r\n");
	}
	return false;
}

static enum cfapkg_err bad(struct cfapkg_ctx *ctx, const char *label, const char *what)
{
	return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: %s; nothing was changed", label, what);
}

static enum cfapkg_err read_keys(struct cfapkg_ctx *ctx, const char *label, const cJSON *arr,
                                 struct cfa_keys *keys)
{
	const cJSON *it;
	unsigned char pub[CFA_PUBKEY_LEN];

	cJSON_ArrayForEach(it, arr)
	{
		if (!cJSON_IsString(it) || !cfa_b64_decode(it->valuestring, pub, sizeof(pub)))
			return bad(ctx, label, "\"keys\" holds something that is not a public key");
		if (!cfa_keys_add(keys, pub))
			return cfa_nomem(ctx);
	}
	return CFAPKG_E_OK;
}

/* The fields every index has, with the reason when one is wrong. */
static enum cfapkg_err read_header(struct cfapkg_ctx *ctx, const char *label,
                                   struct cfa_index *ix)
{
	const cJSON *d = ix->doc;
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(d, "format");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "channel");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(d, "version");
	const cJSON *exp = cJSON_GetObjectItemCaseSensitive(d, "expires");
	const cJSON *keys = cJSON_GetObjectItemCaseSensitive(d, "keys");

	/* A format this cfapkg does not know is refused whole: reading it as
	 * format 1 could take a new field's absence for a meaning. */
	if (!cJSON_IsObject(d) || !cJSON_IsNumber(fmt) || fmt->valuedouble != 1)
		return bad(ctx, label, "not a format 1 channel index (a newer cfapkg may read it)");
	if (!cJSON_IsString(name) || !name->valuestring[0])
		return bad(ctx, label, "the index does not name its channel");
	/* Integral and below 2^53, so the double cJSON keeps is exact. */
	if (!cJSON_IsNumber(ver) || ver->valuedouble < 1 || ver->valuedouble > 9007199254740991.0 ||
	    ver->valuedouble != (double)(uint64_t)ver->valuedouble)
		return bad(ctx, label, "the index version is not a whole number from 1");
	if (!cJSON_IsString(exp) || !cfa_utc_parse(exp->valuestring, &ix->expires))
		return bad(ctx, label, "\"expires\" is not a UTC time like 2027-01-31T00:00:00Z");
	if (keys && !cJSON_IsArray(keys))
		return bad(ctx, label, "\"keys\" is not a list of public keys");
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(d, "recipes")))
		return bad(ctx, label, "the index has no \"recipes\" object");
	ix->channel = name->valuestring;
	ix->version = (uint64_t)ver->valuedouble;
	return read_keys(ctx, label, keys, &ix->keys);
}

enum cfapkg_err cfa_index_open(struct cfapkg_ctx *ctx, const char *label, const char *payload,
                               size_t len, const char *sigs, const struct cfa_keys *trusted,
                               struct cfa_index *out)
{
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if (trusted && !signed_by_trusted(sigs, payload, len, trusted, out))
		return bad(ctx, label, "no valid signature by a key this channel trusts (a damaged "
		           "or forged index, or a key that was rotated without notice)");
	/* Parsed only now, after the signature: nothing of a payload is looked
	 * at before its bytes are known to be the channel's. */
	if (!(out->doc = cJSON_ParseWithLength(payload, len)))
		return bad(ctx, label, "signed, but not JSON");
	if ((e = cfa_json_refuse_nul(ctx, label, payload, len, CFAPKG_E_INTEGRITY))) {
		cfa_index_close(out);
		return e;
	}
	if ((e = read_header(ctx, label, out)))
		cfa_index_close(out);
	return e;
}

void cfa_index_close(struct cfa_index *ix)
{
	cJSON_Delete(ix->doc);
	cfa_keys_free(&ix->keys);
	memset(ix, 0, sizeof(*ix));
}

enum cfapkg_err cfa_index_recipes(struct cfapkg_ctx *ctx, const struct cfa_index *ix,
                                  const char *label, const char *origin,
                                  struct cfapkg_recipe ***out, size_t *n)
{
	const cJSON *recipes = cJSON_GetObjectItemCaseSensitive(ix->doc, "recipes"), *it;
	size_t count = (size_t)cJSON_GetArraySize(recipes), k = 0;
	enum cfapkg_err e = CFAPKG_E_OK;
	struct cfapkg_recipe **list = cfa_calloc(count + 1, sizeof(*list));

	if (!list)
		return cfa_nomem(ctx);
	cJSON_ArrayForEach(it, recipes)
	{
		/* "LABEL recipes/zluda.json": the file name the recipe must match. */
		char *file = cfa_aprintf("%s recipes/%s.json", label, it->string);
		e = file ? cfa_recipe_parse_json(ctx, file, it, &list[k]) : cfa_nomem(ctx);
		cfa_free(file);
		if (e)
			break;
		list[k++]->origin = origin;
	}
	if (e) {
		cfa_free(list);
		return e;
	}
	*out = list;
	*n = k;
	return CFAPKG_E_OK;
}
