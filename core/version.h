/*
 * version.h - upstream version spellings, ordered one way everywhere.
 *
 * A version is numeric release segments, an optional pre-release tag and
 * number, and an optional build label:
 *
 *   6-preview.69    release 6, tag "preview", number 69
 *   7.14.0a20260612 release 7.14.0, tag "a", number 20260612
 *   2.3.0+cu118     release 2.3.0, build label "cu118"
 *
 * Order: release segments numerically (missing segments are 0, so 6.4 ==
 * 6.4.0), then tag rank (dev < alpha < beta < preview < rc < final <
 * post), then tag number, then build label (none first).  Hence
 * 6-preview.69 < 6-preview.79 < 6 < 7-preview.10.
 *
 * libsolv compares versions the way it was built to (dpkg order on Debian,
 * rpm order elsewhere).  cfa_ver_evr() writes a canonical spelling made of
 * digits and dots only, with a fixed number of segments, which both orders
 * sort identically; the build label goes into the release part so that a
 * constraint without a label ("==2.3.0") matches any label.
 */
#ifndef CFA_VERSION_H
#define CFA_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFA_VER_SEGS 6
#define CFA_VER_SEG_MAX 999999999u
#define CFA_VER_LABEL_MAX 64
#define CFA_VER_EVR_MAX (CFA_VER_SEGS * 10 + 24 + CFA_VER_LABEL_MAX * 4)

enum cfa_ver_rank {
	CFA_RANK_DEV = 1,
	CFA_RANK_ALPHA,
	CFA_RANK_BETA,
	CFA_RANK_PREVIEW,
	CFA_RANK_RC,
	CFA_RANK_FINAL,
	CFA_RANK_POST
};

struct cfa_ver {
	uint32_t rel[CFA_VER_SEGS];
	uint8_t nrel;          /* segments as spelled */
	uint8_t rank;          /* enum cfa_ver_rank */
	uint32_t prenum;
	uint8_t labellen;
	const char *label;     /* points into the parsed text; not terminated */
};

/* Parses s[0..len); v->label borrows from s.  On failure returns false and, when why is not NULL,
 * a short reason ("segment 3 is too large"). */
bool cfa_ver_parse(const char *s, size_t len, struct cfa_ver *v, const char **why);
int cfa_ver_cmp(const struct cfa_ver *a, const struct cfa_ver *b);
/* Compares without the build label. */
int cfa_ver_cmp_nolabel(const struct cfa_ver *a, const struct cfa_ver *b);
/* Canonical libsolv EVR into buf (CFA_VER_EVR_MAX bytes is enough). */
void cfa_ver_evr(const struct cfa_ver *v, char *buf, size_t len);

#endif
