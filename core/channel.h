/*
 * channel.h - signed channels, the reading side: a channel is a static
 * folder whose index.json holds every recipe (and gpus.json) of one channel
 * version, signed with ed25519 in index.json.sig.  The client keeps, per
 * channel, the keys it trusts and the last index it accepted; planning
 * reads that accepted copy and checks its signature again.  Publishing and
 * accepting new indexes is channel/ (above env/ in the folder order).
 *
 *   index.json      {"format": 1, "channel": NAME, "version": N,
 *                    "expires": "YYYY-MM-DDTHH:MM:SSZ", "keys": [PUB...],
 *                    "recipes": {NAME: RECIPE...}, "gpus": GPUS}
 *   index.json.sig  one line per signature: "ed25519 KEYID BASE64"
 *
 *   ROOT/channels/NAME/channel.json   URL, trusted keys, priority, the
 *                                     accepted version and expiry
 *   ROOT/channels/NAME/index.signed   the accepted signature line, an
 *                                     empty line, then index.json's bytes
 */
#ifndef CFA_CHANNEL_H
#define CFA_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ctx.h"
#include "core/utc.h"

struct cJSON;

#define CFA_PUBKEY_LEN 32
#define CFA_PUBKEY_B64_LEN 44
#define CFA_SIG_LEN 64
#define CFA_SIG_B64_LEN 88
#define CFA_KEYID_LEN 16
/* Larger than any honest index by far (the shipped recipes make ~80 KiB):
 * a server sending more is refused before it fills the disk. */
#define CFA_CHANNEL_INDEX_MAX (16u * 1024u * 1024u)
#define CFA_CHANNEL_SIG_MAX (64u * 1024u)

void cfa_b64_encode(const unsigned char *in, size_t n, char *out);
bool cfa_b64_decode(const char *text, unsigned char *out, size_t want);
void cfa_key_id(const unsigned char pub[CFA_PUBKEY_LEN], char id[CFA_KEYID_LEN + 1]);
bool cfa_verify(const unsigned char pub[CFA_PUBKEY_LEN], const void *data, size_t len,
                const unsigned char sig[CFA_SIG_LEN]);

/* A set of trusted public keys. */
struct cfa_keys {
	unsigned char (*pub)[CFA_PUBKEY_LEN];
	size_t n;
};

void cfa_keys_free(struct cfa_keys *k);
bool cfa_keys_add(struct cfa_keys *k, const unsigned char pub[CFA_PUBKEY_LEN]);
bool cfa_keys_has(const struct cfa_keys *k, const unsigned char pub[CFA_PUBKEY_LEN]);

/* One index, parsed after its signature was checked. */
struct cfa_index {
	struct cJSON *doc;         /* the payload; cJSON_Delete */
	const char *channel;       /* borrowed from doc */
	uint64_t version;
	int64_t expires;           /* Unix time */
	struct cfa_keys keys;      /* the keys it names for later versions */
	char signer[CFA_KEYID_LEN + 1];
	unsigned char signer_pub[CFA_PUBKEY_LEN]; /* the trusted key that verified it */
};

/* Checks that one of sigs' lines is a valid signature of payload by a key
 * in trusted (none: the caller knows it was checked), then parses the
 * payload; label names the index in errors. */
enum cfapkg_err cfa_index_open(struct cfapkg_ctx *ctx, const char *label, const char *payload,
                               size_t len, const char *sigs, const struct cfa_keys *trusted,
                               struct cfa_index *out);
void cfa_index_close(struct cfa_index *ix);
/* Parses every recipe of the index into ctx, origin naming where they came
 * from; *out (cfa_free) lists them, borrowed from ctx. */
enum cfapkg_err cfa_index_recipes(struct cfapkg_ctx *ctx, const struct cfa_index *ix,
                                  const char *label, const char *origin,
                                  struct cfapkg_recipe ***out, size_t *n);

struct cfa_channel_state {
	char *name;                /* the local name (its folder) */
	char *url;                 /* the folder index.json is in */
	char *upstream;            /* the name the index gives itself, "" before
	                              the first one was accepted */
	int priority;              /* higher wins over lower for one recipe name */
	struct cfa_keys keys;      /* trusted to sign the next version */
	uint64_t version;          /* last accepted, 0 before the first */
	int64_t expires;           /* of the accepted index, 0 before the first */
	char stamp[64];            /* index.signed's (cfa_plat_file_stamp) when it was
	                              accepted: unchanged, it needs no second check */
};

bool cfa_channel_name_ok(const char *name);
/* ROOT/channels/NAME/FILE, or NULL with the reason in ctx. */
char *cfa_channel_file(struct cfapkg_ctx *ctx, const char *name, const char *file);
enum cfapkg_err cfa_channel_state_read(struct cfapkg_ctx *ctx, const char *name,
                                       struct cfa_channel_state *st);
void cfa_channel_state_free(struct cfa_channel_state *st);
/* Both files are replaced atomically, and written only after the index
 * they hold was checked against the channel's trusted keys. */
enum cfapkg_err cfa_channel_state_write(struct cfapkg_ctx *ctx,
                                        const struct cfa_channel_state *st);
enum cfapkg_err cfa_channel_signed_write(struct cfapkg_ctx *ctx, const char *name,
                                         const char *sigs, const char *payload, size_t len);
/* *text: cfa_free; *payload points into it. */
enum cfapkg_err cfa_channel_signed_read(struct cfapkg_ctx *ctx, const char *name, char **text,
                                        const char **payload, size_t *len);
/* The names of the channels in ROOT/channels, lowest priority first (then
 * by name): the order their recipes are added in.  *names: cfa_free each
 * and the array. */
enum cfapkg_err cfa_channel_names(struct cfapkg_ctx *ctx, char ***names, size_t *n);

/* One accepted index as a plan finds it: its file, the file's stamp (the
 * one recorded when it was accepted) and the accepted version. */
struct cfa_channel_seen {
	const char *label;
	const char *stamp;
	uint64_t version;
};

struct cfa_gpus;

/* The index's recipes (each given origin; *list cfa_free, the recipes in
 * ctx's arena) and its GPU table (*gpus, cfa_gpus_free; NULL when it has
 * none) from their cache; *list NULL when there is no cache for seen or it
 * is damaged (a damaged one is removed). */
enum cfapkg_err cfa_channel_cached(struct cfapkg_ctx *ctx, const struct cfa_channel_seen *seen,
                                   const char *origin, struct cfapkg_recipe ***list, size_t *n,
                                   struct cfa_gpus **gpus);
/* Caches the n recipes and the GPU table (NULL: the index has none) parsed
 * from the index seen; a cache that cannot be written is only not
 * written. */
enum cfapkg_err cfa_channel_cache_write(struct cfapkg_ctx *ctx,
                                        const struct cfa_channel_seen *seen,
                                        struct cfapkg_recipe *const *recipes, size_t n,
                                        const struct cfa_gpus *gpus);
/* Removes the cache of the index file label (its index was refused). */
void cfa_channel_cache_drop(struct cfapkg_ctx *ctx, const char *label);

/* Adds one channel's recipes to the set (the registry's job). */
typedef enum cfapkg_err (*cfa_channel_add_fn)(struct cfapkg_ctx *ctx,
                                              struct cfapkg_recipe **recipes, size_t n,
                                              void *arg);
/* Every channel's accepted recipes, in channel order, through add. */
enum cfapkg_err cfa_channels_load(struct cfapkg_ctx *ctx, cfa_channel_add_fn add, void *arg);

#endif
