/*
 * cache.h - the cache room's internal helpers.
 */
#ifndef CFA_CACHE_H
#define CFA_CACHE_H

#include <archive.h>
#include <stdbool.h>

#include <stdint.h>
#include <wchar.h>

#include "core/ctx.h"

/* A 32-byte digest as 64 lower-case hex digits and a terminator. */
void cfa_sha256_hex(const unsigned char *md, char hex[65]);
/* The SHA-256 of len bytes in memory; false when OpenSSL fails. */
bool cfa_sha256_buf(const void *data, size_t len, char hex[65]);

/* cachefile.c: the cache's file for an artifact (SHA, or SHA~BOOT when it
 * was not flushed to the disk in this boot; one of a past boot is hashed
 * again first), *out NULL when the cache lacks it (or its size, when
 * size >= 0, is not that).  *out: cfa_free. */
enum cfapkg_err cfa_cache_find(struct cfapkg_ctx *ctx, const char *sha, int64_t size, char **out);
/* The same as a path: the file found, else ROOT/downloads/SHA (absent);
 * NULL with the reason in ctx. */
char *cfa_cache_path(struct cfapkg_ctx *ctx, const char *sha);
/* dir/SHA~BOOT, or NULL where there is no boot id (then downloads are
 * flushed and named SHA). */
char *cfa_cache_unsynced_name(const char *dir, const char *sha);
/* The SHA-256 a cache file's name (SHA or SHA~BOOT) stands for. */
bool cfa_cache_name_sha(const char *name, char sha[65]);
/* Whether s[0..n) is all lower-case hex digits, as the cache's names are. */
bool cfa_lower_hex(const char *s, size_t n);

/* An archive entry's name made safe: components joined by "/", the first
 * strip of them dropped ("" when none is left).  False with *why when the
 * name could reach outside the folder being unpacked. */
bool cfa_safe_entry_path(const char *in, unsigned strip, char *out, size_t len,
                         const char **why);

/* Whether the n bytes at c are a name Windows opens as a device (CON,
 * PRN, AUX, NUL, COM0-9, LPT0-9, CONIN$, CONOUT$), in any case and with
 * any extension. */
bool cfa_device_name(const char *c, size_t n);

/* A wide string (UTF-16 on Windows, UTF-32 elsewhere) as UTF-8 in *out
 * (cfa_free); *out NULL when w is NULL or holds what is not a character.
 * False: out of memory. */
bool cfa_wide_to_utf8(const wchar_t *w, char **out);

/* tree.c: the entries an unpack has written, found by name without regard
 * to ASCII case.  add returns 1 when added, 0 when the name was there
 * already (*out: that entry), -1 when out of memory.  check judges the
 * whole tree: no entry below a symbolic link, every symbolic link resolves
 * inside (following the tree's other links), every hard link names a
 * file; it returns why not (and *bad) or NULL.  resolve gives where a
 * link leads (at: a path inside the tree), or why it cannot be followed.
 * manifest writes the JSON manifest; hex gives file k's digest. */
enum cfa_tree_kind { CFA_TREE_FILE, CFA_TREE_DIR, CFA_TREE_SYMLINK, CFA_TREE_HARDLINK };
#define CFA_TREE_NO_HASH ((size_t)-1)
struct cfa_tree_entry {
	char *path;          /* safe, "/"-separated, inside the tree */
	char *target;        /* links: the text of a symbolic link, the entry
	                        a hard link copies */
	enum cfa_tree_kind kind;
	unsigned mode;       /* files: the permission bits stored */
	uint64_t size;
	size_t hash;         /* files: the hasher's index, or CFA_TREE_NO_HASH */
	bool settled;        /* a streamed zip's entry found in its central directory */
};
struct cfa_tree {
	struct cfa_tree_entry *e;
	size_t n, cap;
	size_t *slots, mask; /* open addressing: entry index + 1, 0 empty */
};
struct cfa_buf;
void cfa_tree_fini(struct cfa_tree *t);
int cfa_tree_add(struct cfa_tree *t, const char *path, enum cfa_tree_kind kind,
                 const char *target, struct cfa_tree_entry **out);
struct cfa_tree_entry *cfa_tree_find(const struct cfa_tree *t, const char *path);
const char *cfa_tree_check(const struct cfa_tree *t, const struct cfa_tree_entry **bad);
const char *cfa_tree_resolve(const struct cfa_tree *t, const struct cfa_tree_entry *link,
                             struct cfa_buf *at);
bool cfa_tree_manifest(const struct cfa_tree *t, struct cfa_buf *out,
                       const char *(*hex)(void *arg, size_t k), void *arg);
/* The manifest into staging/.cfapkg/manifest.json, flushed and read-only;
 * the error names the file and why ("no space left on device"). */
enum cfapkg_err cfa_tree_write_manifest(struct cfapkg_ctx *ctx, const struct cfa_tree *t,
                                        const char *staging,
                                        const char *(*hex)(void *arg, size_t k), void *arg);

/* Unpacking in stages (unpack.c), so that an archive can be unpacked
 * while it downloads (stream.c): open a staging folder for store folder
 * name (existed: it is already in the store, nothing to do; label names
 * the archive in messages), extract from file or from src (libarchive's
 * read callback: the download being written), then commit it into the
 * store in one rename (file: the whole archive, verified, which a zip read
 * from src is settled against), or close to discard it. */
struct unpacker;
/* A replaced store folder set aside while its replacement takes its name
 * (ROOT/store/.old-NAME), where the system cannot swap the two at once. */
#define CFA_STORE_OLD ".old-"
bool cfa_unpack_streamable(const char *format);
enum cfapkg_err cfa_unpack_open(struct cfapkg_ctx *ctx, const char *name, const char *label,
                                uint64_t archive_size, const struct cfapkg_unpack_opts *opts,
                                struct unpacker **out, bool *existed);
enum cfapkg_err cfa_unpack_extract(struct unpacker *u, archive_read_callback *src, void *src_arg,
                                   const char *file, const char *format, unsigned strip);
/* drop: file (the archive) is deleted before the tree is flushed to the
 * disk, so that its pages not yet written never are.  commit is seal
 * (digests, links, manifest: whatever can refuse the tree), then move
 * (flushed, renamed into the store), for a caller with files to drop
 * between the two. */
enum cfapkg_err cfa_unpack_commit(struct unpacker *u, const char *file, bool drop,
                                  struct cfapkg_unpack_result *out);
enum cfapkg_err cfa_unpack_seal(struct unpacker *u, const char *file);
enum cfapkg_err cfa_unpack_move(struct unpacker *u, struct cfapkg_unpack_result *out);
void cfa_unpack_close(struct unpacker *u);
/* The bytes an archive of archive_size may unpack to (opts' caps). */
uint64_t cfa_unpack_cap(uint64_t archive_size, const struct cfapkg_unpack_opts *opts);
/* unpack_member.c: one archive of a set, unpacked by its own thread (with
 * its own ctx) into the set's staging folder while others are: its files
 * go to the set's hasher, its entries into a tree of its own, joined to
 * the set's once it is whole (join: in the set's order, a path two
 * archives hold refused as a duplicate in one archive is).  Closing a
 * member leaves the folder and the hasher to the set. */
enum cfapkg_err cfa_unpack_open_member(struct cfapkg_ctx *ctx, struct unpacker *set,
                                       const char *label, uint64_t archive_size,
                                       const struct cfapkg_unpack_opts *opts,
                                       struct unpacker **out);
enum cfapkg_err cfa_unpack_join(struct unpacker *member);

/* hasher.c: the SHA-256 of each file an unpack writes, computed on another
 * thread: add_file names a file once it is written and closed (*k: its
 * number, k-th call file k; threads may call it at once), finish waits
 * for the digests, hex gives file k's.  new
 * returns NULL when out of memory; false from the others: out of memory or
 * a file that could not be read back. */
struct cfa_hasher;
struct cfa_hasher *cfa_hasher_new(void);
bool cfa_hasher_add_file(struct cfa_hasher *h, const char *path, size_t *k);
bool cfa_hasher_finish(struct cfa_hasher *h);
const char *cfa_hasher_hex(const struct cfa_hasher *h, size_t k);
void cfa_hasher_free(struct cfa_hasher *h);

/* stream.c: an unpack that reads a download's .part file while it is
 * being written.  feed says how many bytes of the file are written (and
 * flushed), and whether that is all of it; the file may be renamed
 * meanwhile.  finish(keep) waits for the unpack to end and commits it into
 * the store (file: the whole verified archive, which a streamed zip is
 * settled against); finish(!keep) stops the unpack and discards it.
 * opts->label names the archive in messages. */
struct cfa_stream;
enum cfapkg_err cfa_stream_start(struct cfapkg_ctx *ctx, const char *format, const char *name,
                                 const struct cfapkg_unpack_opts *opts, uint64_t size,
                                 const char *part, struct cfa_stream **out);
void cfa_stream_feed(struct cfa_stream *s, uint64_t readable, bool complete);
enum cfapkg_err cfa_stream_finish(struct cfa_stream *s, bool keep, const char *file,
                                  bool drop, struct cfapkg_unpack_result *out);
/* stream_set.c: the archives of a set (as cfapkg_unpack_set), each a
 * stream that unpacks it while it downloads, all into the set's one
 * staging folder, run by a few workers of the set: each decoder holds its
 * window (8 MiB for the xz of a .deb), so the workers bound memory, and
 * one more than the processors keeps them busy while one waits for bytes.
 * open: *out NULL when the store folder is there already.  start: archive
 * k's stream over the file part (NULL when it cannot stream: the set then
 * cannot either).  drop: archive k gave up, and with it the set.  seal:
 * waits for every archive, joins them in order, judges the set's tree and
 * writes its manifest; an error means the set is not committed from the
 * streams.  move: flushed and into the store.  close: stops what runs and
 * removes what was not committed.  start and drop may be called from the
 * download threads, for archives of their own. */
struct cfa_stream_set;
enum cfapkg_err cfa_stream_set_open(struct cfapkg_ctx *ctx, const char *name, const char *label,
                                    uint64_t total, size_t n, struct cfa_stream_set **out);
struct cfa_stream *cfa_stream_set_start(struct cfa_stream_set *set, size_t k, const char *format,
                                        unsigned strip, const char *label, uint64_t size,
                                        const char *part);
void cfa_stream_set_drop(struct cfa_stream_set *set, size_t k);
enum cfapkg_err cfa_stream_set_seal(struct cfa_stream_set *set);
enum cfapkg_err cfa_stream_set_move(struct cfa_stream_set *set, struct cfapkg_unpack_result *out);
const char *cfa_stream_set_error(struct cfa_stream_set *set);
void cfa_stream_set_close(struct cfa_stream_set *set);
/* stream.c, for a set: archive k's stream, without a thread (NULL when
 * it cannot stream); run by a worker of the set (feed works as for any
 * stream); cancel makes it stop at its next read; end joins its tree to
 * the set's (keep: it ran, whole, and its download was verified) and
 * frees it. */
struct cfa_stream *cfa_stream_member_new(struct cfapkg_ctx *ctx, struct unpacker *into,
                                         const char *format,
                                         const struct cfapkg_unpack_opts *opts, uint64_t size,
                                         const char *part);
void cfa_stream_member_run(struct cfa_stream *s);
void cfa_stream_cancel(struct cfa_stream *s);
enum cfapkg_err cfa_stream_member_end(struct cfa_stream *s, bool keep);
/* The words that name a fetched archive in messages: "zluda 7 from URL",
 * or NULL when out of memory.  Owned: cfa_free. */
char *cfa_unpack_label(const struct cfapkg_fetch_item *it);
/* fetch.c: an item's error message, in a fixed field of the public
 * struct: a text that does not fit ends in "..." so that the cut shows. */
void cfa_item_error(struct cfapkg_fetch_item *it, const char *fmt, ...) CFA_PRINTF(2, 3);
/* Adds a line to the URLs the item gave up (it->tried). */
void cfa_item_tried(struct cfapkg_fetch_item *it, const char *fmt, ...) CFA_PRINTF(2, 3);
/* After the transfers: a downloaded item that asked to be unpacked and
 * did not stream is unpacked from its verified file.  keep: archives are
 * kept (cfapkg_fetch_opts.keep_archives); else one this fetch brought that
 * would have streamed but for a resume goes once unpacked, as it would
 * have. */
void cfa_unpack_fetched(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *it, bool keep);

/* mirrors.c: the file a file:// URL names (file:///PATH or
 * file://localhost/PATH; %-escapes decoded, a query left out, "/D:/x"
 * read as "D:/x"), or NULL when it names none or out of memory.  Owned:
 * cfa_free. */
char *cfa_file_url_path(const char *url);
/* mirrors.c: https://, or http:// to this machine itself (127.0.0.1,
 * [::1], localhost), which no network carries: what a first download
 * that will be trusted may come over. */
bool cfa_url_secure(const char *url);

/* rawread.c: a whole file, decompressed when it is gzip, xz, bzip2, lzma
 * or zstd, into *text (NUL-terminated, cfa_free); more than max bytes is
 * an error naming label. */
enum cfapkg_err cfa_read_decompressed(struct cfapkg_ctx *ctx, const char *path, const char *label,
                                      size_t max, char **text, size_t *len);

/* storecheck.c: every file the store folder's manifest lists is there
 * with its size and permission bits (no hashing). */
bool cfa_store_intact(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *part);
/* storeseal.c: the stamps of the folders of a store folder a look found
 * whole (paths: its files), and whether they all still hold. */
void cfa_store_seal(const char *dir, const char *const *paths, size_t npaths);
bool cfa_store_seal_holds(struct cfapkg_ctx *ctx, const char *dir);

#endif
