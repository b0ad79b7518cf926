/*
 * version.c - parsing, ordering and the canonical libsolv spelling
 * (version_deb.c: the Debian revision's part of each).
 */
#include "core/version.h"

#include <string.h>

#include "cfapkg.h"
#include "core/strbuf.h"

struct tag {
	const char *name;
	enum cfa_ver_rank rank;
};

/* Pre-release tags as upstreams spell them, lower-case. */
static const struct tag tags[] = {
	/* "a", "b" and "c" are PEP 440's short spellings (c is another name
	 * for rc); "pre" and "preview" rank between beta and rc. */
	{"dev", CFA_RANK_DEV},     {"a", CFA_RANK_ALPHA},       {"alpha", CFA_RANK_ALPHA},
	{"b", CFA_RANK_BETA},      {"beta", CFA_RANK_BETA},     {"pre", CFA_RANK_PREVIEW},
	{"preview", CFA_RANK_PREVIEW}, {"rc", CFA_RANK_RC},     {"c", CFA_RANK_RC},
	{"post", CFA_RANK_POST},
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Whether s[0..n) is a known tag, compared without case ("RC" is rc); *rank
 * is left alone when it is not. */
static bool tag_rank(const char *s, size_t n, uint8_t *rank)
{
	size_t i, j;

	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		if (strlen(tags[i].name) != n)
			continue;
		for (j = 0; j < n; j++) {
			char c = s[j];
			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (c != tags[i].name[j])
				break;
		}
		if (j == n) {
			*rank = (uint8_t)tags[i].rank;
			return true;
		}
	}
	return false;
}

static size_t span_digits(const char *s, size_t i, size_t len)
{
	size_t j = i;
	while (j < len && is_digit(s[j]))
		j++;
	return j;
}

/* "1:" in front: the epoch, compared before everything else. */
static bool parse_epoch(const char *s, size_t len, size_t *pos, struct cfa_ver *v,
                        const char **why)
{
	size_t end = span_digits(s, 0, len);
	uint64_t epoch;

	/* No digits followed by ':' means no epoch: the text is read from its
	 * start as the release. */
	if (end == 0 || end == len || s[end] != ':')
		return true;
	if (!cfa_parse_u64(s, end, CFA_VER_SEG_MAX, &epoch)) {
		*why = "the epoch is larger than 999999999";
		return false;
	}
	v->epoch = (uint32_t)epoch;
	*pos = end + 1;
	return true;
}

static bool parse_release(const char *s, size_t len, size_t *pos, struct cfa_ver *v,
                          const char **why)
{
	size_t i = *pos;

	for (;;) {
		size_t end = span_digits(s, i, len);
		uint64_t seg;
		if (end == i) {
			*why = "expected a number";
			return false;
		}
		/* The EVR spells every one of the six segments, so a seventh
		 * would have nowhere to go. */
		if (v->nrel == CFA_VER_SEGS) {
			*why = "more than 6 numeric segments";
			return false;
		}
		if (!cfa_parse_u64(s + i, end - i, CFA_VER_SEG_MAX, &seg)) {
			*why = "a numeric segment is larger than 999999999";
			return false;
		}
		/* Segments not given stay 0, so "1.2" and "1.2.0" are the
		 * same version. */
		v->rel[v->nrel++] = (uint32_t)seg;
		i = end;
		/* A dot continues the release only when a digit follows. */
		if (i + 1 < len && s[i] == '.' && is_digit(s[i + 1])) {
			i++;
			continue;
		}
		*pos = i;
		return true;
	}
}

/* The characters allowed between the release and a pre-release tag:
 * "1.0-rc1", "1.0.rc1", "1.0_rc1", "1.0~rc1"; none at all ("1.0rc1") is
 * allowed too. */
static bool is_pre_sep(char c)
{
	return c == '-' || c == '.' || c == '_' || c == '~';
}

/* The tag's number: "rc1", "rc.1", "rc_1", "rc-1".  After "~rc" a '-'
 * starts the Debian revision instead, as in "2.0~rc-1". */
static bool parse_prenum(const char *s, size_t len, size_t *pos, struct cfa_ver *v, char sep,
                         const char **why)
{
	size_t i = *pos, end;
	uint64_t num;

	if (i + 1 < len && (s[i] == '.' || s[i] == '_' || (s[i] == '-' && sep != '~')) &&
	    is_digit(s[i + 1]))
		i++;
	end = span_digits(s, i, len);
	/* No number ("1.0-rc") is pre-release number 0. */
	if (end == i)
		return true;
	if (!cfa_parse_u64(s + i, end - i, CFA_VER_SEG_MAX, &num)) {
		*why = "the pre-release number is larger than 999999999";
		return false;
	}
	v->prenum = (uint32_t)num;
	*pos = end;
	return true;
}

static bool parse_pre(const char *s, size_t len, size_t *pos, struct cfa_ver *v,
                      const char **why)
{
	size_t i = *pos, t;
	char sep = 0;

	/* A separator counts only before a letter; before a digit it belongs
	 * to what follows (a revision "-2"). */
	if (i + 1 < len && is_pre_sep(s[i]) && is_alpha(s[i + 1]))
		sep = s[i++];
	if (i >= len || !is_alpha(s[i]))
		return true;
	t = i;
	while (i < len && is_alpha(s[i]))
		i++;
	if (!tag_rank(s + t, i - t, &v->rank)) {
		/* "-ubuntu1" is a Debian revision; only a known word is a tag. */
		if (sep == '-')
			return true;
		*why = "unknown pre-release tag (use dev, alpha, beta, preview, rc or post)";
		return false;
	}
	/* Only now is the tag consumed: an unknown word after '-' is left for
	 * the revision. */
	*pos = i;
	return parse_prenum(s, len, pos, v, sep, why);
}

/* A label's first character may not be '+': "1.0++x" is a typo, not a
 * label. */
static bool label_char(char c, bool first)
{
	return is_alpha(c) || is_digit(c) || c == '.' || c == '_' || (c == '+' && !first);
}

/* "+cu118", "+dfsg+1": up to the end or the revision's '-'. */
static bool parse_label(const char *s, size_t len, size_t *pos, struct cfa_ver *v,
                        const char **why)
{
	size_t i = *pos, k;

	if (i == len || s[i] != '+')
		return true;
	for (k = i + 1; k < len && s[k] != '-'; k++) {
		if (!label_char(s[k], k == i + 1)) {
			*why = "the build label may hold only letters, digits, '.', '_' and '+' "
			       "(not first)";
			return false;
		}
	}
	/* labellen is a uint8_t: the 64-character limit also keeps it from
	 * wrapping. */
	if (k == i + 1 || k - i - 1 > CFA_VER_LABEL_MAX) {
		*why = "the build label is empty or longer than 64 characters";
		return false;
	}
	/* label and rev point into the caller's text, which must outlive
	 * v. */
	v->label = s + i + 1;
	v->labellen = (uint8_t)(k - i - 1);
	*pos = k;
	return true;
}

/* "-2", "-83~24.04", "-0ubuntu1": the rest of the text. */
static bool parse_rev(const char *s, size_t len, size_t i, struct cfa_ver *v, const char **why)
{
	if (i == len)
		return true;
	/* Whatever is left after the release, tag and label can only be a
	 * Debian revision. */
	if (s[i] != '-' || i + 1 == len || !(is_digit(s[i + 1]) || is_alpha(s[i + 1]))) {
		*why = "unexpected character (a build label starts with '+', a Debian revision "
		       "with '-' and a digit or letter)";
		return false;
	}
	if (!cfa_ver_rev_check(s + i + 1, len - i - 1, why))
		return false;
	v->rev = s + i + 1;
	v->revlen = (uint8_t)(len - i - 1);
	return true;
}

bool cfa_ver_parse(const char *s, size_t len, struct cfa_ver *v, const char **why)
{
	const char *dummy;
	size_t pos = 0;

	/* Callers that only want a yes or no pass NULL; the parsers below
	 * always write why on failure. */
	if (!why)
		why = &dummy;
	memset(v, 0, sizeof(*v));
	/* No tag is a final release, which sorts after every pre-release and
	 * before post. */
	v->rank = CFA_RANK_FINAL;
	if (len == 0) {
		*why = "empty version";
		return false;
	}
	if (!parse_epoch(s, len, &pos, v, why) || !parse_release(s, len, &pos, v, why) ||
	    !parse_pre(s, len, &pos, v, why) || !parse_label(s, len, &pos, v, why))
		return false;
	return parse_rev(s, len, pos, v, why);
}

int cfa_ver_cmp_nolabel(const struct cfa_ver *a, const struct cfa_ver *b)
{
	int i;

	if (a->epoch != b->epoch)
		return a->epoch < b->epoch ? -1 : 1;
	/* All six segments, the missing ones 0: "1.2" equals "1.2.0". */
	for (i = 0; i < CFA_VER_SEGS; i++)
		if (a->rel[i] != b->rel[i])
			return a->rel[i] < b->rel[i] ? -1 : 1;
	/* Ranks are numbered in their order (dev lowest, post highest), so
	 * comparing the numbers orders the tags. */
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->prenum != b->prenum)
		return a->prenum < b->prenum ? -1 : 1;
	return 0;
}

/* Byte order, shorter prefix first: what the EVR encoding sorts as. */
static int label_cmp(const struct cfa_ver *a, const struct cfa_ver *b)
{
	int c = a->labellen && b->labellen
	                ? memcmp(a->label, b->label,
	                         a->labellen < b->labellen ? a->labellen : b->labellen)
	                : 0;

	if (c)
		return c < 0 ? -1 : 1;
	return a->labellen == b->labellen ? 0 : (a->labellen < b->labellen ? -1 : 1);
}

int cfa_ver_cmp(const struct cfa_ver *a, const struct cfa_ver *b)
{
	int r = cfa_ver_cmp_nolabel(a, b);

	if (!r)
		r = label_cmp(a, b);
	if (r || (!a->revlen && !b->revlen))
		return r;
	/* No revision first, as no label: the EVR's release part does so. */
	if (!a->revlen || !b->revlen)
		return a->revlen ? 1 : -1;
	return cfa_ver_rev_cmp(a->rev, a->revlen, b->rev, b->revlen);
}

struct evr_out {
	char *buf;
	size_t len, n;
	bool ok;
};

/* Appends sep (when not 0) and the decimal digits of x; a number that
 * does not fit spoils the whole spelling. */
static void put_num(struct evr_out *o, char sep, uint32_t x)
{
	char tmp[12];
	size_t k = 0;

	/* Most numbers of a spelling are one digit (zero segments, label
	 * bytes' tens): those skip the division loop. */
	if (x < 10)
		tmp[k++] = (char)('0' + x);
	else
		do
			tmp[k++] = (char)('0' + x % 10);
		while ((x /= 10) != 0);
	/* Room for the separator, the digits and the terminator; once spoilt,
	 * later numbers are not written either. */
	if (!o->ok || o->n + k + (sep ? 1 : 0) + 1 > o->len) {
		o->ok = false;
		return;
	}
	if (sep)
		o->buf[o->n++] = sep;
	while (k)
		o->buf[o->n++] = tmp[--k];
	/* Kept terminated after every number, so a caller that ignores ok
	 * still gets a string. */
	o->buf[o->n] = '\0';
}

/* After the '-': the label as byte codes (digits and dots compare alike
 * in both orders, letters do not), then, for a revision, 1 (below every
 * label byte, so a shorter label still sorts first) and the revision's
 * numbers (version_deb.c). */
static void put_release(struct evr_out *o, const struct cfa_ver *v)
{
	uint32_t codes[CFA_VER_REV_CODES];
	size_t i, n;
	char sep = '-';

	/* Each label byte as a number: libsolv compares the EVR's numbers as
	 * numbers, which is byte order for the label. */
	for (i = 0; i < v->labellen; i++, sep = '.')
		put_num(o, sep, (unsigned char)v->label[i]);
	if (!v->revlen)
		return;
	/* Label bytes are printable (at least '+', 43), so 1 is below all of
	 * them. */
	put_num(o, sep, 1);
	n = cfa_ver_rev_codes(v->rev, v->revlen, codes);
	for (i = 0; i < n; i++)
		put_num(o, '.', codes[i]);
}

bool cfa_ver_evr(const struct cfa_ver *v, char *buf, size_t len)
{
	/* A zero-length buffer cannot hold even the terminator: the spelling
	 * fails. */
	struct evr_out o = {buf, len, 0, len > 0};
	int i;

	if (v->epoch)
		put_num(&o, 0, v->epoch);
	for (i = 0; i < CFA_VER_SEGS; i++)
		put_num(&o, i ? '.' : (v->epoch ? ':' : 0), v->rel[i]);
	/* Rank and pre-release number follow the six segments as two more
	 * numbers, so the EVR orders pre-releases before the final
	 * release. */
	put_num(&o, '.', v->rank);
	put_num(&o, '.', v->prenum);
	put_release(&o, v);
	/* On failure buf holds "", never a cut spelling that libsolv might
	 * order wrongly. */
	if (!o.ok && len)
		buf[0] = '\0';
	return o.ok;
}

int cfapkg_version_compare(const char *a, const char *b, enum cfapkg_err *err)
{
	struct cfa_ver va, vb;

	/* Unparsable versions compare equal (0): callers that care pass err
	 * and check it. */
	if (!cfa_ver_parse(a, strlen(a), &va, NULL) || !cfa_ver_parse(b, strlen(b), &vb, NULL)) {
		if (err)
			*err = CFAPKG_E_VERSION;
		return 0;
	}
	if (err)
		*err = CFAPKG_E_OK;
	return cfa_ver_cmp(&va, &vb);
}
