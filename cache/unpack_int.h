/*
 * unpack_int.h - the unpacker's state, shared by the files of one unpack:
 * unpack.c (reading entries, committing), unpack_links.c (making the
 * links once the tree is whole) and unpack_zip.c (settling a streamed zip
 * against its central directory).
 */
#ifndef CFA_UNPACK_INT_H
#define CFA_UNPACK_INT_H

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>

#include "cache/cache.h"

#define CFA_UNPACK_NAME 2048               /* an entry's name, made safe */
#define CFA_UNPACK_PATH (4096 + CFA_UNPACK_NAME) /* the staging folder + a name */

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
	char format[16];
	unsigned strip;
	char staging[4096], store[4096], final[4300];
	uint64_t cap, total, files;
	struct cfa_tree tree;
	struct cfa_hasher *hasher;
	size_t nhashed;            /* files named to the hasher so far */
};

/* An entry's path, symbolic link text or hard link target in UTF-8, or
 * NULL.  libarchive's own UTF-8 when it has one; else its wide form,
 * which is all Windows keeps of a name outside the ANSI code page. */
enum cfa_entry_text { CFA_TEXT_PATH, CFA_TEXT_SYMLINK, CFA_TEXT_HARDLINK };
const char *cfa_unpack_text(struct archive_entry *en, enum cfa_entry_text which, char *buf,
                            size_t len);
/* An entry's name made safe into name (*raw: as the archive spells it),
 * or a refusal: a name that could leave the folder, an encrypted entry. */
enum cfapkg_err cfa_unpack_name(struct unpacker *u, struct archive_entry *en, char *text,
                                size_t len, char name[CFA_UNPACK_NAME], const char **raw);
enum cfapkg_err cfa_unpack_refuse(struct unpacker *u, const char *entry, const char *why);
enum cfapkg_err cfa_unpack_put(struct unpacker *u, FILE *f, const char *name, const char *full,
                               const void *data, size_t n, uint64_t *size);
unsigned cfa_unpack_mode(unsigned archive_perm);
/* A reader for u->format over u->file, or over u->src when file is NULL
 * (NULL with the reason in u->ctx). */
struct archive *cfa_unpack_reader(struct unpacker *u, const char *format, struct archive **outer);
/* Judges every link against the whole tree, then makes them: hard links
 * as copies, symbolic links as links (copies where the system has none). */
enum cfapkg_err cfa_unpack_links(struct unpacker *u);
/* A zip read through its local headers, settled against the central
 * directory of the whole file: modes, symbolic links, the same entries. */
enum cfapkg_err cfa_unpack_settle_zip(struct unpacker *u, const char *file);

#endif
