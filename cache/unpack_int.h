/*
 * unpack_int.h - the unpacker's state, shared by the files of one unpack:
 * unpack.c (reading entries, committing), unpack_read.c (opening the
 * archive), unpack_links.c (making the links once the tree is whole) and
 * unpack_zip.c (settling a streamed zip against its central directory).
 * Entry names and the paths made from them are heap strings of any
 * length: a name too long for the system fails where the system says so,
 * naming the path, and is never cut to fit.
 */
#ifndef CFA_UNPACK_INT_H
#define CFA_UNPACK_INT_H

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>

#include "cache/cache.h"

struct unpacker {
	struct cfapkg_ctx *ctx;
	char *label;               /* names the archive in messages */
	const char *file;          /* the archive on disk, or NULL: read from src */
	archive_read_callback *src; /* a download being written, or NULL */
	void *src_arg;
	bool streamed;             /* the entries came front to back (from src, or
	                              from the file as if it were arriving) */
	bool front_to_back;        /* a zip file read through its local headers */
	bool refused;              /* a refusal, not a read error, ended it */
	bool hash_checked;
	bool replace;              /* final exists and is swapped out at commit */
	char format[16];           /* a format's name: "tar.zst", "deb" */
	unsigned strip;
	char *store;               /* ROOT/store */
	char *final;               /* ROOT/store/NAME */
	char *staging;             /* ROOT/store/.staging-NAME; NULL once there is
	                              nothing of it to remove */
	uint64_t cap, total, files;
	struct cfa_tree tree;
	struct cfa_hasher *hasher;
	struct unpacker *set;      /* a member: one archive of this set, written
	                              into its staging folder, hashed by its
	                              hasher, its tree joined to the set's */
};

/* An entry's path, symbolic link text or hard link target in UTF-8 into
 * *text (NULL when it has none).  libarchive's own UTF-8 when it has one;
 * else its wide form, which is all Windows keeps of a name outside the ANSI
 * code page, converted into *owned (cfa_free).  False: out of memory. */
enum cfa_entry_text { CFA_TEXT_PATH, CFA_TEXT_SYMLINK, CFA_TEXT_HARDLINK };
bool cfa_unpack_text(struct archive_entry *en, enum cfa_entry_text which, const char **text,
                     char **owned);
/* An entry's name: as the archive spells it, and made safe ("" for one of
 * the stripped leading folders).  cfa_entry_name_fini frees it. */
struct cfa_entry_name {
	const char *raw;
	char *name;
	char *owned;               /* raw, when it had to be converted */
};
/* The longest entry name unpacked, on every system. */
#define CFA_ENTRY_NAME_MAX 4095
#define CFA_STR_(x) #x
#define CFA_STR(x) CFA_STR_(x)
/* The name made safe, or a refusal: a name that could leave the folder or
 * is too long, an encrypted entry. */
enum cfapkg_err cfa_unpack_name(struct unpacker *u, struct archive_entry *en,
                                struct cfa_entry_name *n);
void cfa_entry_name_fini(struct cfa_entry_name *n);
/* text made safe into *out (cfa_free), the first strip components
 * dropped.  False with *why, or with *why NULL when out of memory. */
bool cfa_unpack_safe(const char *text, unsigned strip, char **out, const char **why);
/* u->staging/name, or NULL after cfa_nomem. */
char *cfa_unpack_full(struct unpacker *u, const char *name);
enum cfapkg_err cfa_unpack_refuse(struct unpacker *u, const char *entry, const char *why);
/* An entry name as a message shows it: control characters as "?", bytes
 * that are not UTF-8 as "\xNN", a very long name shortened in the middle
 * (out of len bytes, at least 8). */
void cfa_unpack_shown(const char *name, char *out, size_t len);
/* Creates the folder a file or link at full goes into, if missing. */
enum cfapkg_err cfa_unpack_make_parent(struct unpacker *u, const char *full);
enum cfapkg_err cfa_unpack_put(struct unpacker *u, FILE *f, const char *name, const char *full,
                               const void *data, size_t n, uint64_t *size);
unsigned cfa_unpack_mode(unsigned archive_perm);
/* zipdir.c: NULL when the zip file's local headers, read front to back,
 * are exactly its central directory's entries (name, method, sizes,
 * CRC-32, kind, place); else why not, with the entry's name as the
 * central directory gives it in *entry (cfa_free; NULL when none). */
const char *cfa_zip_lists_agree(const char *file, char **entry);
/* unpack_read.c: a reader for u->format over u->file, or over u->src when
 * file is NULL (NULL with the reason in u->ctx).  unreadable says why an
 * archive cannot be read, in the user's terms. */
struct archive *cfa_unpack_reader(struct unpacker *u, const char *format, struct archive **outer);
enum cfapkg_err cfa_unpack_unreadable(struct unpacker *u, struct archive *a, const char *format);
/* Judges every link against the whole tree, then makes them: hard links
 * as copies, symbolic links as links (copies where the system has none). */
enum cfapkg_err cfa_unpack_links(struct unpacker *u);
/* A zip read through its local headers, settled against the central
 * directory of the whole file: modes, symbolic links, the same entries. */
enum cfapkg_err cfa_unpack_settle_zip(struct unpacker *u, const char *file);

#endif
