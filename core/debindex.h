/*
 * debindex.h - reading a Debian repository's Packages index: for each
 * wanted package (name and exact version, as Debian spells it), the file
 * the index names, its size and its SHA-256.
 */
#ifndef CFA_DEBINDEX_H
#define CFA_DEBINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/ctx.h"
#include "core/inrelease.h"

struct cfa_deb_want {
	const char *name;        /* "libamdhip64-5" */
	const char *version;     /* "5.2.3-8", "1:2.3-1": compared as text; NULL:
	                            the newest version the index lists */
};

struct cfa_deb_found {
	const char *version;     /* the version found (the wanted one, or the newest) */
	const char *filename;    /* relative to the repository: "pool/main/..." */
	int64_t size;
	const char *sha256;      /* lower-case hex */
	const char *depends;     /* the Depends field as written, or NULL */
};

/* The recipe's "NAME=VERSION" (or "NAME") entries as wants, the names
 * copied into arena; false when out of memory. */
bool cfa_deb_wants(struct cfa_arena *arena, const char *const *packages, size_t n,
                   struct cfa_deb_want *want);

/* Whether the n bytes at s are a Debian package name: lower-case letters,
 * digits, '+', '-' and '.', two or more, starting with a letter or digit. */
bool cfa_deb_name_valid(const char *s, size_t n);

/* Finds every wanted package of architecture arch (or "all") in the
 * index text.  A package the index lacks, or lists without a safe
 * Filename, a Size or a SHA256, is an error naming index_name and the
 * package.  Strings land in arena. */
enum cfapkg_err cfa_deb_index_find(struct cfapkg_ctx *ctx, const char *index_name,
                                   const char *text, size_t len, const char *arch,
                                   const struct cfa_deb_want *want, size_t n,
                                   struct cfa_arena *arena, struct cfa_deb_found *found);

/* Every package of one architecture (or "all") in an index, sorted by
 * name, newest version first among equal names. */
struct cfa_deb_index;
struct cfa_deb_pkg {
	const char *name, *version;
	const char *filename;    /* relative to the repository */
	int64_t size;
	const char *sha256;
	const char *depends, *pre_depends, *provides; /* as written, or NULL */
	const char *gpu_arch;    /* X-Rocm-Gpu-Architecture, or NULL */
	const struct cfa_deb_index *index;
};
struct cfa_deb_index {
	const char *label;       /* the suite, for messages: "sid" */
	const char *arch;
	struct cfa_deb_pkg *pkgs;
	size_t n;
};
enum cfapkg_err cfa_deb_index_read(struct cfapkg_ctx *ctx, const char *label, const char *text,
                                   size_t len, const char *arch, struct cfa_arena *arena,
                                   struct cfa_deb_index *out);
/* The versions of name in idx (newest first) and how many, or NULL. */
const struct cfa_deb_pkg *cfa_deb_index_first(const struct cfa_deb_index *idx, const char *name,
                                              size_t *count);

/* The packages roots ("NAME" or "NAME=VERSION") need, through Depends and
 * Pre-Depends, each met from the first of idx that can (debclosure.c),
 * sorted by name.  Requirements on the package floor (the C library,
 * "libc6") are not followed: the highest version they ask for is floor,
 * with the package asking for it. */
struct cfa_deb_closure {
	const struct cfa_deb_pkg **pkgs;
	size_t n;
	const char *floor;               /* "2.38", or NULL when nothing asked */
	const struct cfa_deb_pkg *floor_by;
};
enum cfapkg_err cfa_deb_closure(struct cfapkg_ctx *ctx, const struct cfa_deb_index *const *idx,
                                size_t nidx, const char *const *roots, size_t nroots,
                                const char *floor, struct cfa_arena *arena,
                                struct cfa_deb_closure *out);

/* Whether every Depends clause of pins (those that carry one) is met by a
 * pin of the set, or is on floor_pkg (the C library), whose highest
 * version asked goes to floor ("" when none); else why names the first
 * clause that is not. */
bool cfa_deb_pins_closed(const struct cfapkg_deb_pin *pins, size_t n, const char *floor_pkg,
                         char *floor, size_t flen, char *why, size_t wlen);

/* Calls fn with the package name of every alternative of every clause of
 * a Depends text, in order, until fn returns false (then false). */
bool cfa_deb_depends_each(const char *depends, bool (*fn)(const char *name, void *arg), void *arg);

/* The stanza scanner both readers use, and the InRelease reader: field
 * gets each "Field: value" (continuation lines joined into the value,
 * ends trimmed), end each stanza's end; either returns false to stop. */
struct cfa_deb_scan_fns {
	bool (*field)(void *arg, const char *name, size_t nlen, const char *v, size_t vlen);
	bool (*end)(void *arg);
	void *arg;
};
void cfa_deb_scan(const char *text, size_t len, const struct cfa_deb_scan_fns *fns);
/* Field names compare without case. */
bool cfa_deb_field_is(const char *name, size_t n, const char *want);

/* What an InRelease or Release says (debrelease.c), read by the one
 * Release reader trust uses too (inrelease.c): strings in the arena, NULL
 * when a field is absent; fields.sha256 points into the arena's copy of
 * the signed text, so cfa_release_find looks an index up there. */
struct cfa_deb_release {
	const char *suite, *codename, *date, *valid_until;
	struct cfa_release fields;
	bool clearsigned;        /* an InRelease: the signed text was read */
};
/* Reads text (label names it in errors); one that is not framed as one
 * clearsigned message, or whose fields cfa_release_parse refuses, or
 * that lists no index, is refused. */
enum cfapkg_err cfa_deb_release_read(struct cfapkg_ctx *ctx, const char *label, const char *text,
                                     size_t len, struct cfa_arena *arena,
                                     struct cfa_deb_release *out);

/* Whether s is a version as Debian spells one: [epoch:]upstream[-revision],
 * upstream starting with a digit. */
bool cfa_deb_version_valid(const char *s);

#endif
