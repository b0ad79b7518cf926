/*
 * inrelease.h - reading an APT repository's InRelease file: the shape of
 * the clearsigned message around it, and the fields of the Release text
 * that trust rests on (Date, Valid-Until, Suite, Codename, the SHA256
 * list of the indexes).  The signature itself is gpgv's to check
 * (trans/aptgpgv.c); the text read here is the one gpgv verified.
 */
#ifndef CFA_INRELEASE_H
#define CFA_INRELEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfa_span {
	const char *s;             /* NULL when absent */
	size_t n;
};

struct cfa_release {
	int64_t date;              /* Date, seconds since 1970 (UTC) */
	int64_t valid_until;       /* Valid-Until; 0 when the file names none */
	struct cfa_span date_text, valid_until_text; /* the two as the file spells them */
	struct cfa_span suite, codename;
	bool by_hash;              /* Acquire-By-Hash: yes */
	struct cfa_span sha256;    /* the SHA256 field's lines, each checked */
};

/* Whether text is exactly one clearsigned message: the BEGIN PGP SIGNED
 * MESSAGE line first, its armor headers, the text (no line in it starts
 * with '-' unless dash-escaped), one signature block, and nothing after
 * it but blank lines.  Text outside the signed part would be read by no
 * one but could mislead a reader that splits the file itself.  False
 * with *why. */
bool cfa_clearsign_framed(const char *text, size_t len, const char **why);

/* The Release fields of text (the signed part).  False with *why: no
 * Date, a date that cannot be read, a field given twice, or a SHA256
 * line that is not "HEX SIZE PATH". */
bool cfa_release_parse(const char *text, size_t len, struct cfa_release *out, const char **why);

/* The SHA256 list's entry for path (relative to dists/SUITE/, as the
 * file lists it): false when it is not listed. */
bool cfa_release_find(const struct cfa_release *r, const char *path, char sha256[65],
                      uint64_t *size);

/* A date as Release files spell it (RFC 2822): "Fri, 30 Oct 2026
 * 08:08:01 UTC", the weekday optional, the zone UTC, GMT, Z or +HHMM /
 * -HHMM. */
bool cfa_release_date_parse(const char *s, size_t n, int64_t *t);

#endif
