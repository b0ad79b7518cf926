/*
 * version.h - upstream and Debian version spellings, ordered one way
 * everywhere.
 *
 * A version is an optional epoch, numeric release segments, an optional
 * pre-release tag and number, an optional build label and an optional
 * Debian revision:
 *
 *   6-preview.69    release 6, tag "preview", number 69
 *   7.14.0a20260612 release 7.14.0, tag "a", number 20260612
 *   2.3.0+cu118     release 2.3.0, build label "cu118"
 *   1:2.3-1         epoch 1, release 2.3, revision "1"
 *   2.0~rc1-1       release 2.0, tag "rc", number 1, revision "1"
 *   5.3.0+dfsg-2    release 5.3.0, label "dfsg", revision "2"
 *
 * Order: epoch (none is 0), release segments numerically (missing
 * segments are 0, so 6.4 == 6.4.0), then tag rank (dev < alpha < beta <
 * preview < rc < final < post), then tag number, then build label (none
 * first, then byte order), then revision (none first, then dpkg's order).
 * Hence 6-preview.69 < 6-preview.79 < 6 < 7-preview.10, and
 * 1.0-1~bpo1 < 1.0-1 < 1.0-1a < 1.0-1.1.  dpkg itself would rank a missing
 * revision like "0"; here it ranks first, as a missing label does.
 *
 * libsolv compares versions the way it was built to (dpkg order on Debian,
 * rpm order elsewhere).  cfa_ver_evr() writes a canonical spelling made of
 * digits and dots only ("E:" in front for an epoch), with a fixed number
 * of segments before the '-', which both orders sort identically.  The
 * label and the revision go into the release part after the '-', as
 * numbers, so that a constraint naming neither ("==2.3.0") matches any.
 */
#ifndef CFA_VERSION_H
#define CFA_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFA_VER_SEGS 6
#define CFA_VER_SEG_MAX 999999999u
#define CFA_VER_LABEL_MAX 64
#define CFA_VER_REV_MAX 64
/* Epoch and ':', 8 numbers before the '-', the '-', 3 digits and a dot per
 * label byte, "1.", then at most 9 bytes per revision character (its code,
 * or its share of a run's end and value, each with a dot), the final ".2"
 * and the NUL. */
#define CFA_VER_EVR_MAX                                                                     \
	(11 + (CFA_VER_SEGS + 2) * 10 + 1 + CFA_VER_LABEL_MAX * 4 + 2 + CFA_VER_REV_MAX * 9 + 4)

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
	/* Debian's parts last, so that older initializers stay whole. */
	uint32_t epoch;
	uint8_t revlen;
	const char *rev;       /* points into the parsed text; not terminated */
};

/* Parses s[0..len); v->label and v->rev borrow from s.  On failure
 * returns false and, when why is not NULL, a short reason ("segment 3 is
 * too large"). */
bool cfa_ver_parse(const char *s, size_t len, struct cfa_ver *v, const char **why);
int cfa_ver_cmp(const struct cfa_ver *a, const struct cfa_ver *b);
/* Compares without the build label and the revision (which sorts after
 * the label, so ignoring one means ignoring both). */
int cfa_ver_cmp_nolabel(const struct cfa_ver *a, const struct cfa_ver *b);
/* Canonical libsolv EVR into buf.  CFA_VER_EVR_MAX bytes always suffice;
 * a buffer too small gets "" and false, never a cut spelling. */
bool cfa_ver_evr(const struct cfa_ver *v, char *buf, size_t len);

/* The Debian revision (version_deb.c), for version.c. */
/* Whether s[0..n) is a revision: [A-Za-z0-9.+~], at most CFA_VER_REV_MAX,
 * every digit run at most CFA_VER_SEG_MAX. */
bool cfa_ver_rev_check(const char *s, size_t n, const char **why);
/* dpkg's comparison of two revisions. */
int cfa_ver_rev_cmp(const char *a, size_t na, const char *b, size_t nb);
/* dpkg's order of two whole Debian versions, [epoch:]upstream[-revision]
 * (dpkg --compare-versions): <0, 0, >0; the first of n bytes each, the
 * second of C strings. */
int cfa_deb_version_cmp(const char *a, size_t na, const char *b, size_t nb);
int cfa_deb_ver_cmp(const char *a, const char *b);
/* A checked revision as the numbers its EVR spelling lists; returns how
 * many (at most CFA_VER_REV_CODES). */
#define CFA_VER_REV_CODES (CFA_VER_REV_MAX * 3 + 1)
size_t cfa_ver_rev_codes(const char *s, size_t n, uint32_t codes[CFA_VER_REV_CODES]);

#endif
