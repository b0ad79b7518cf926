/*
 * cache_key.h - the keys caches are checked by (core/cache_key.c).
 */
#ifndef CFA_CACHE_KEY_H
#define CFA_CACHE_KEY_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over what a cache was made from, and its length, as "SUM-LENGTH"
 * (also a cache file's stem).  Not SHA-256: a key only tells a cache from
 * what its source is now, both written by cfapkg under the root, and
 * libsolv's SHA-256 made a plan load libsolv even when it solved nothing.
 * An accepted channel's key is made from its signed index's digest. */
struct cfa_key {
	uint64_t sum, len;
};
void cfa_key_start(struct cfa_key *k);
void cfa_key_add(struct cfa_key *k, const void *data, size_t n);
void cfa_key_hex(const struct cfa_key *k, char key[65]);

struct cfapkg_ctx;
/* One source of a whole load, in load order, into ctx's load key: a
 * folder's key, an accepted channel's index as checked; NULL for a source
 * without a key (the load then has none). */
void cfa_load_key_add(struct cfapkg_ctx *ctx, const char *part);

#endif
