/*
 * cache.h - the cache room's internal helpers.
 */
#ifndef CFA_CACHE_H
#define CFA_CACHE_H

#include <stdbool.h>

#include <stdint.h>

#include "core/ctx.h"

/* A 32-byte digest as 64 lower-case hex digits and a terminator. */
void cfa_sha256_hex(const unsigned char *md, char hex[65]);

/* An archive entry's name made safe: components joined by "/", the first
 * strip of them dropped ("" when none is left).  False with *why when the
 * name could reach outside the folder being unpacked. */
bool cfa_safe_entry_path(const char *in, unsigned strip, char *out, size_t len,
                         const char **why);
/* Whether a link at entry (a safe path) pointing to target stays inside. */
bool cfa_link_stays_inside(const char *entry, const char *target);

/* Unpacking in stages (unpack.c), so that an archive can be unpacked
 * while it downloads (stream.c): open a staging folder for store folder
 * name (existed: it is already in the store, nothing to do), extract from
 * the file named what or from src (chunks the download feeds), then commit
 * it into the store in one rename, or close to discard it. */
struct unpacker;
bool cfa_unpack_streamable(const char *format);
enum cfapkg_err cfa_unpack_open(struct cfapkg_ctx *ctx, const char *name, const char *what,
                                uint64_t archive_size, const struct cfapkg_unpack_opts *opts,
                                struct unpacker **out, bool *existed);
struct cfa_chunkq;
enum cfapkg_err cfa_unpack_extract(struct unpacker *u, struct cfa_chunkq *src, const char *format,
                                   unsigned strip);
enum cfapkg_err cfa_unpack_commit(struct unpacker *u, struct cfapkg_unpack_result *out);
void cfa_unpack_close(struct unpacker *u);

/* chunkq.c: bytes passed from a producer thread to a consumer thread in
 * n chunks of size bytes.  write copies (waiting while all chunks are in
 * use); end_unit publishes the chunk being filled marked as a unit's last
 * (an empty one when nothing was written since); close ends the data.
 * next returns the following chunk in place (valid until the next call),
 * false after close; abandon lets a consumer stop early: the producer's
 * calls then return false instead of waiting. */
struct cfa_chunkq;
struct cfa_chunkq *cfa_chunkq_new(size_t n, size_t size);
void cfa_chunkq_free(struct cfa_chunkq *q);
bool cfa_chunkq_write(struct cfa_chunkq *q, const void *data, size_t n);
bool cfa_chunkq_end_unit(struct cfa_chunkq *q);
void cfa_chunkq_close(struct cfa_chunkq *q);
bool cfa_chunkq_next(struct cfa_chunkq *q, const void **data, size_t *len, bool *end);
void cfa_chunkq_abandon(struct cfa_chunkq *q);

/* hasher.c: the SHA-256 of each file an unpack writes, computed on another
 * thread: add a file's bytes, end_file after each file (the k-th call ends
 * file k), finish waits for the digests, hex gives file k's.  new returns
 * NULL when out of memory; false from the others: out of memory. */
struct cfa_hasher;
struct cfa_hasher *cfa_hasher_new(void);
bool cfa_hasher_add(struct cfa_hasher *h, const void *data, size_t n);
bool cfa_hasher_end_file(struct cfa_hasher *h);
bool cfa_hasher_finish(struct cfa_hasher *h);
const char *cfa_hasher_hex(const struct cfa_hasher *h, size_t k);
void cfa_hasher_free(struct cfa_hasher *h);

/* stream.c: an unpack fed while the archive downloads.  feed is called
 * with every body byte in order (false: the unpack gave up; keep
 * downloading, unpack the file afterwards); finish keeps (commits into the
 * store) or discards. */
struct cfa_stream;
enum cfapkg_err cfa_stream_start(struct cfapkg_ctx *ctx, const char *format, const char *name,
                                 unsigned strip, uint64_t size, struct cfa_stream **out);
bool cfa_stream_feed(struct cfa_stream *s, const void *data, size_t n);
enum cfapkg_err cfa_stream_finish(struct cfa_stream *s, bool keep,
                                  struct cfapkg_unpack_result *out);
/* After the transfers: a downloaded item that asked to be unpacked and
 * did not stream is unpacked from its verified file. */
void cfa_unpack_fetched(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *it);

#endif
