/*
 * version.c - parsing, ordering and the canonical libsolv spelling.
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

static bool parse_release(const char *s, size_t len, size_t *pos, struct cfa_ver *v,
                          const char **why)
{
	size_t i = 0;

	for (;;) {
		size_t end = span_digits(s, i, len);
		uint64_t seg;
		if (end == i) {
			*why = "expected a number";
			return false;
		}
		if (v->nrel == CFA_VER_SEGS) {
			*why = "more than 6 numeric segments";
			return false;
		}
		if (!cfa_parse_u64(s + i, end - i, CFA_VER_SEG_MAX, &seg)) {
			*why = "a numeric segment is larger than 999999999";
			return false;
		}
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

static bool parse_pre(const char *s, size_t len, size_t *pos, struct cfa_ver *v,
                      const char **why)
{
	size_t i = *pos, t, end;
	uint64_t num;

	if (i < len && (s[i] == '-' || s[i] == '.' || s[i] == '_') && i + 1 < len &&
	    is_alpha(s[i + 1]))
		i++;
	if (i >= len || !is_alpha(s[i]))
		return true;
	t = i;
	while (i < len && is_alpha(s[i]))
		i++;
	if (!tag_rank(s + t, i - t, &v->rank)) {
		*why = "unknown pre-release tag (use dev, alpha, beta, preview, rc or post)";
		return false;
	}
	if (i + 1 < len && (s[i] == '.' || s[i] == '-' || s[i] == '_') && is_digit(s[i + 1]))
		i++;
	end = span_digits(s, i, len);
	if (end > i) {
		if (!cfa_parse_u64(s + i, end - i, CFA_VER_SEG_MAX, &num)) {
			*why = "the pre-release number is larger than 999999999";
			return false;
		}
		v->prenum = (uint32_t)num;
		i = end;
	}
	*pos = i;
	return true;
}

static bool parse_label(const char *s, size_t len, size_t i, struct cfa_ver *v,
                        const char **why)
{
	size_t n;

	if (i == len)
		return true;
	if (s[i] != '+') {
		*why = "unexpected character (a build label starts with '+')";
		return false;
	}
	n = len - i - 1;
	if (n == 0 || n > CFA_VER_LABEL_MAX) {
		*why = "the build label is empty or longer than 64 characters";
		return false;
	}
	for (size_t k = i + 1; k < len; k++) {
		char c = s[k];
		if (!is_alpha(c) && !is_digit(c) && c != '.' && c != '_') {
			*why = "the build label may hold only letters, digits, '.' and '_'";
			return false;
		}
	}
	v->label = s + i + 1;
	v->labellen = (uint8_t)n;
	return true;
}

bool cfa_ver_parse(const char *s, size_t len, struct cfa_ver *v, const char **why)
{
	const char *dummy;
	size_t pos = 0;

	if (!why)
		why = &dummy;
	memset(v, 0, sizeof(*v));
	v->rank = CFA_RANK_FINAL;
	if (len == 0) {
		*why = "empty version";
		return false;
	}
	if (!parse_release(s, len, &pos, v, why) || !parse_pre(s, len, &pos, v, why))
		return false;
	return parse_label(s, len, pos, v, why);
}

int cfa_ver_cmp_nolabel(const struct cfa_ver *a, const struct cfa_ver *b)
{
	int i;

	for (i = 0; i < CFA_VER_SEGS; i++)
		if (a->rel[i] != b->rel[i])
			return a->rel[i] < b->rel[i] ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->prenum != b->prenum)
		return a->prenum < b->prenum ? -1 : 1;
	return 0;
}

int cfa_ver_cmp(const struct cfa_ver *a, const struct cfa_ver *b)
{
	int r = cfa_ver_cmp_nolabel(a, b);
	int c;

	if (r)
		return r;
	/* Byte order, shorter prefix first: what the EVR encoding sorts as. */
	c = a->labellen && b->labellen
	            ? memcmp(a->label, b->label,
	                     a->labellen < b->labellen ? a->labellen : b->labellen)
	            : 0;
	if (c)
		return c < 0 ? -1 : 1;
	return a->labellen == b->labellen ? 0 : (a->labellen < b->labellen ? -1 : 1);
}

/* Appends sep and the decimal digits of x; returns the new length. */
static size_t put_num(char *buf, size_t n, size_t len, char sep, uint32_t x)
{
	char tmp[12];
	size_t k = 0;

	do
		tmp[k++] = (char)('0' + x % 10);
	while ((x /= 10) != 0);
	if (n + k + 2 > len)
		return n;
	if (sep)
		buf[n++] = sep;
	while (k)
		buf[n++] = tmp[--k];
	buf[n] = '\0';
	return n;
}

void cfa_ver_evr(const struct cfa_ver *v, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	for (i = 0; i < CFA_VER_SEGS; i++)
		n = put_num(buf, n, len, i ? '.' : 0, v->rel[i]);
	n = put_num(buf, n, len, '.', v->rank);
	n = put_num(buf, n, len, '.', v->prenum);
	/* The label as byte codes: digits and dots compare alike in both
	 * orders, letters do not. */
	for (i = 0; i < v->labellen; i++)
		n = put_num(buf, n, len, i ? '.' : '-', (unsigned char)v->label[i]);
}

int cfapkg_version_compare(const char *a, const char *b, enum cfapkg_err *err)
{
	struct cfa_ver va, vb;

	if (!cfa_ver_parse(a, strlen(a), &va, NULL) || !cfa_ver_parse(b, strlen(b), &vb, NULL)) {
		if (err)
			*err = CFAPKG_E_VERSION;
		return 0;
	}
	if (err)
		*err = CFAPKG_E_OK;
	return cfa_ver_cmp(&va, &vb);
}
