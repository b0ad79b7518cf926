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

/* Finds every wanted package of architecture arch (or "all") in the
 * index text.  A package the index lacks, or lists without a safe
 * Filename, a Size or a SHA256, is an error naming index_name and the
 * package.  Strings land in arena. */
enum cfapkg_err cfa_deb_index_find(struct cfapkg_ctx *ctx, const char *index_name,
                                   const char *text, size_t len, const char *arch,
                                   const struct cfa_deb_want *want, size_t n,
                                   struct cfa_arena *arena, struct cfa_deb_found *found);

/* Whether the n bytes at a are the field name name, as Debian compares
 * field names: without regard to ASCII case. */
bool cfa_deb_field_is(const char *a, size_t n, const char *name);

/* Whether the n bytes at s are a Debian package name: lower-case letters,
 * digits, '+', '-' and '.', two or more, starting with a letter or digit. */
bool cfa_deb_name_valid(const char *s, size_t n);
/* dpkg's order of two versions as Debian spells them: epoch, then the
 * upstream part, then the revision, each compared as dpkg compares. */
int cfa_deb_version_cmp(const char *a, size_t na, const char *b, size_t nb);

/* Whether s is a version as Debian spells one: [epoch:]upstream[-revision],
 * upstream starting with a digit. */
bool cfa_deb_version_valid(const char *s);

#endif
