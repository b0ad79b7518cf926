/*
 * cache.h - the cache room's internal helpers.
 */
#ifndef CFA_CACHE_H
#define CFA_CACHE_H

#include <archive.h>
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
 * the file named what or from src (libarchive's read callback: the download
 * being written; NULL: the file), then commit
 * it into the store in one rename, or close to discard it. */
struct unpacker;
bool cfa_unpack_streamable(const char *format);
enum cfapkg_err cfa_unpack_open(struct cfapkg_ctx *ctx, const char *name, const char *what,
                                uint64_t archive_size, const struct cfapkg_unpack_opts *opts,
                                struct unpacker **out, bool *existed);
enum cfapkg_err cfa_unpack_extract(struct unpacker *u, archive_read_callback *src, void *src_arg,
                                   const char *format, unsigned strip);
enum cfapkg_err cfa_unpack_commit(struct unpacker *u, struct cfapkg_unpack_result *out);
void cfa_unpack_close(struct unpacker *u);

/* hasher.c: the SHA-256 of each file an unpack writes, computed on another
 * thread: add_file names a file once it is written and closed (the k-th
 * call is file k), finish waits for the digests, hex gives file k's.  new
 * returns NULL when out of memory; false from the others: out of memory or
 * a file that could not be read back. */
struct cfa_hasher;
struct cfa_hasher *cfa_hasher_new(void);
bool cfa_hasher_add_file(struct cfa_hasher *h, const char *path);
bool cfa_hasher_finish(struct cfa_hasher *h);
const char *cfa_hasher_hex(const struct cfa_hasher *h, size_t k);
void cfa_hasher_free(struct cfa_hasher *h);

/* stream.c: an unpack that reads a download's .part file while it is
 * being written.  feed says how many bytes of the file are written (and
 * flushed), and whether that is all of it; the file may be renamed
 * meanwhile.  finish(keep) waits for the unpack to end and commits it into
 * the store; finish(!keep) stops the unpack and discards it. */
struct cfa_stream;
enum cfapkg_err cfa_stream_start(struct cfapkg_ctx *ctx, const char *format, const char *name,
                                 unsigned strip, uint64_t size, const char *part,
                                 struct cfa_stream **out);
void cfa_stream_feed(struct cfa_stream *s, uint64_t readable, bool complete);
enum cfapkg_err cfa_stream_finish(struct cfa_stream *s, bool keep,
                                  struct cfapkg_unpack_result *out);
/* After the transfers: a downloaded item that asked to be unpacked and
 * did not stream is unpacked from its verified file. */
void cfa_unpack_fetched(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *it);

#endif
