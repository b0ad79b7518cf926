/*
 * version_deb.c - the Debian revision ("2", "83~24.04", "0ubuntu1"):
 * checking it, dpkg's order, and the numbers its EVR spelling lists; and
 * dpkg's order of whole Debian versions, as a Packages index's Depends
 * compares them ("1:1.3.dfsg+really1.3.2-4", which cfapkg's own versions
 * need not parse).
 */
#include "core/version.h"

#include <string.h>

#include "core/strbuf.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool cfa_ver_rev_check(const char *s, size_t n, const char **why)
{
	size_t i = 0, end;
	uint64_t run;

	if (n > CFA_VER_REV_MAX) {
		*why = "the Debian revision is longer than 64 characters";
		return false;
	}
	for (; i < n; i = end) {
		for (end = i; end < n && is_digit(s[end]); end++)
			;
		if (end > i && !cfa_parse_u64(s + i, end - i, CFA_VER_SEG_MAX, &run)) {
			/* The EVR spells each run as one number. */
			*why = "a number in the Debian revision is larger than 999999999";
			return false;
		}
		if (end == i && !is_alpha(s[i]) && s[i] != '.' && s[i] != '+' && s[i] != '~') {
			*why = "the Debian revision may hold only letters, digits, '.', '+' and '~'";
			return false;
		}
		if (end == i)
			end++;
	}
	return true;
}

/* dpkg's weight of position i in a non-digit run: '~' sorts before the
 * run's end (the end of the text or a digit), the end before letters,
 * letters before everything else. */
static int weight(const char *s, size_t i, size_t n)
{
	if (i >= n || is_digit(s[i]))
		return 0;
	if (s[i] == '~')
		return -1;
	return is_alpha(s[i]) ? (unsigned char)s[i] : (unsigned char)s[i] + 256;
}

/* The digit runs at *i and *j compared as numbers, each of any length
 * (a Packages index's versions are not checked revisions: "0+git
 * 20240101123456" has a run no integer type holds); both step past them. */
static int run_cmp(const char *a, size_t *i, size_t na, const char *b, size_t *j, size_t nb)
{
	size_t si, sj;

	while (*i < na && a[*i] == '0')
		(*i)++;
	while (*j < nb && b[*j] == '0')
		(*j)++;
	for (si = *i; *i < na && is_digit(a[*i]); (*i)++)
		;
	for (sj = *j; *j < nb && is_digit(b[*j]); (*j)++)
		;
	/* Without leading zeros the longer run is the larger number. */
	if (*i - si != *j - sj)
		return *i - si < *j - sj ? -1 : 1;
	for (; si < *i; si++, sj++)
		if (a[si] != b[sj])
			return a[si] < b[sj] ? -1 : 1;
	return 0;
}

int cfa_ver_rev_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i = 0, j = 0;
	int r;

	while (i < na || j < nb) {
		/* Equal weights are two real characters: both step on. */
		while ((i < na && !is_digit(a[i])) || (j < nb && !is_digit(b[j]))) {
			int wa = weight(a, i, na), wb = weight(b, j, nb);
			if (wa != wb)
				return wa < wb ? -1 : 1;
			i++;
			j++;
		}
		if ((r = run_cmp(a, &i, na, b, &j, nb)) != 0)
			return r;
	}
	return 0;
}

/* The digit run at *i as a number (0 when empty); a checked revision's
 * runs fit in 999999999. */
static uint32_t run_value(const char *s, size_t *i, size_t n)
{
	size_t start = *i;
	uint64_t v = 0;

	for (; *i < n && is_digit(s[*i]); (*i)++)
		;
	/* Empty, or (unchecked) past 32 bits: 0, as before any digit. */
	if (*i == start || !cfa_parse_u64(s + start, *i - start, UINT32_MAX, &v))
		v = 0;
	return (uint32_t)v;
}

/* [epoch:]upstream[-revision] split as dpkg splits it: the epoch before
 * the first ':', the revision after the last '-' ("" when none). */
struct deb_parts {
	const char *epoch, *up, *rev;
	size_t nepoch, nup, nrev;
};

static void deb_split(const char *s, size_t n, struct deb_parts *p)
{
	const char *colon = memchr(s, ':', n), *dash = NULL, *c;

	p->epoch = s;
	p->nepoch = colon ? (size_t)(colon - s) : 0;
	p->up = colon ? colon + 1 : s;
	for (c = p->up; c < s + n; c++)
		if (*c == '-')
			dash = c;
	p->nup = (size_t)((dash ? dash : s + n) - p->up);
	p->rev = dash ? dash + 1 : s + n;
	p->nrev = (size_t)(s + n - p->rev);
}

int cfa_deb_version_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	struct deb_parts x, y;
	size_t i = 0, j = 0;
	int c;

	deb_split(a, na, &x);
	deb_split(b, nb, &y);
	/* No epoch is epoch 0; no revision compares as an empty one. */
	if ((c = run_cmp(x.epoch, &i, x.nepoch, y.epoch, &j, y.nepoch)) != 0)
		return c;
	if ((c = cfa_ver_rev_cmp(x.up, x.nup, y.up, y.nup)) != 0)
		return c;
	return cfa_ver_rev_cmp(x.rev, x.nrev, y.rev, y.nrev);
}

int cfa_deb_ver_cmp(const char *a, const char *b)
{
	return cfa_deb_version_cmp(a, strlen(a), b, strlen(b));
}

/* Per non-digit run, each character's weight + 2 ('~' 1, a letter 2 + c,
 * anything else 258 + c) and 2 for the run's end; then the digit run's
 * value; after the last run a final 2, the weight + 2 of the end that
 * dpkg compares a longer revision's next run against.  Compared as
 * numbers left to right, shorter first, these lists order as dpkg orders
 * the revisions, and the dpkg and rpm orders both compare them so. */
size_t cfa_ver_rev_codes(const char *s, size_t n, uint32_t codes[CFA_VER_REV_CODES])
{
	size_t i = 0, k = 0;

	/* Each pass takes at least one character and writes at most three
	 * codes per character taken: a checked revision fits. */
	if (n == 0 || n > CFA_VER_REV_MAX)
		return 0;
	do {
		for (; i < n && !is_digit(s[i]); i++)
			codes[k++] = (uint32_t)(weight(s, i, n) + 2);
		codes[k++] = 2;
		codes[k++] = run_value(s, &i, n);
	} while (i < n);
	codes[k++] = 2;
	return k;
}
