/*
 * inrelease.c - the shape of a clearsigned InRelease file and the Release
 * fields inside it.  The Release text is one deb822 stanza: "Field: value"
 * lines, a line starting with a blank continuing the field above (the
 * SHA256 list is such a field: " HEX SIZE PATH" per index), field names
 * without regard to case.  Only fields read here are checked; a field the
 * trust rests on that is given twice is refused rather than guessed at.
 */
#include "core/inrelease.h"

#include <string.h>

#include "core/channel.h"
#include "core/debindex.h"
#include "core/strbuf.h"

struct line_iter {
	const char *text;
	size_t len, pos;
};

/* The next line without its "\n" (and "\r"); false at the end. */
static bool next_line(struct line_iter *it, struct cfa_span *line)
{
	const char *nl;
	size_t end;

	if (it->pos >= it->len)
		return false;
	nl = memchr(it->text + it->pos, '\n', it->len - it->pos);
	end = nl ? (size_t)(nl - it->text) : it->len;
	line->s = it->text + it->pos;
	line->n = end - it->pos;
	if (line->n && line->s[line->n - 1] == '\r')
		line->n--;
	/* Past the newline; a last line without one ends the text. */
	it->pos = end + 1;
	return true;
}

/* deb822's continuation lines start with a space or a tab. */
static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The line less the blanks that end it. */
static struct cfa_span trimmed(struct cfa_span l)
{
	while (l.n && blank(l.s[l.n - 1]))
		l.n--;
	return l;
}

static bool line_is(struct cfa_span l, const char *s)
{
	l = trimmed(l);
	return l.n == strlen(s) && memcmp(l.s, s, l.n) == 0;
}

/* The parts of an OpenPGP cleartext-signed message (RFC 4880, 7): the BEGIN
 * line, armor headers up to an empty line, the dash-escaped text, the armored
 * signature, and after END nothing but empty lines. */
enum frame_part { F_FIRST, F_HEADERS, F_TEXT, F_SIGNATURE, F_AFTER };

/* One line of the file in the part it is in; the next part, or -1 with
 * *why. */
static int frame_step(enum frame_part part, struct cfa_span l, const char **why)
{
	switch (part) {
	case F_FIRST:
		if (line_is(l, "-----BEGIN PGP SIGNED MESSAGE-----"))
			return F_HEADERS;
		*why = "it does not start with a \"-----BEGIN PGP SIGNED MESSAGE-----\" line";
		return -1;
	case F_HEADERS:
		if (trimmed(l).n == 0)
			return F_TEXT;
		/* Armor headers are "Key: value" ("Hash: SHA256"); their keys
		 * are not checked here. */
		if (memchr(l.s, ':', l.n))
			return F_HEADERS;
		*why = "its armor headers (\"Hash: SHA256\") do not end with an empty line";
		return -1;
	case F_TEXT:
		if (line_is(l, "-----BEGIN PGP SIGNATURE-----"))
			return F_SIGNATURE;
		/* In the signed text a line that really starts with '-' is
		 * written "- -..."; an unescaped one could be a second BEGIN
		 * line, and which message a reader then takes would be
		 * anyone's guess. */
		if (l.n && l.s[0] == '-' && (l.n < 2 || l.s[1] != ' ')) {
			*why = "a line of its signed text starts with '-' and is not dash-escaped "
			       "(a second message inside the file)";
			return -1;
		}
		return F_TEXT;
	case F_SIGNATURE:
		if (line_is(l, "-----END PGP SIGNATURE-----"))
			return F_AFTER;
		/* Base64 never starts a line with '-', and the checksum line
		 * starts with '='. */
		if (l.n && l.s[0] == '-') {
			*why = "its signature block holds another armor line";
			return -1;
		}
		return F_SIGNATURE;
	default:
		if (trimmed(l).n == 0)
			return F_AFTER;
		*why = "text follows its signature (only the signed part may be read)";
		return -1;
	}
}

bool cfa_clearsign_framed(const char *text, size_t len, const char **why)
{
	struct line_iter it = {text, len, 0};
	enum frame_part part = F_FIRST;
	struct cfa_span l;
	int next;

	/* A NUL would end the text for any C-string reader after this one,
	 * which would then see another file than the one checked. */
	if (memchr(text, '\0', len)) {
		*why = "it holds a NUL byte";
		return false;
	}
	while (next_line(&it, &l)) {
		if ((next = frame_step(part, l, why)) < 0)
			return false;
		part = (enum frame_part)next;
	}
	/* F_AFTER is only reached through the END line: anything short of it
	 * is a cut file. */
	if (part != F_AFTER) {
		*why = part == F_FIRST ? "it is empty" : "it ends before its signature block does";
		return false;
	}
	return true;
}

static bool all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The next blank-separated word of [*s, end) into w; false when none. */
static bool next_word(const char **s, const char *end, struct cfa_span *w)
{
	while (*s < end && blank(**s))
		(*s)++;
	w->s = *s;
	while (*s < end && !blank(**s))
		(*s)++;
	w->n = (size_t)(*s - w->s);
	return w->n > 0;
}

/* " HEX SIZE PATH": the three words, checked. */
static bool sha_line(struct cfa_span l, struct cfa_span *hex, uint64_t *size,
                     struct cfa_span *path)
{
	const char *s = l.s, *end = l.s + l.n;
	struct cfa_span num, extra;
	size_t i;

	if (!next_word(&s, end, hex) || !next_word(&s, end, &num) || !next_word(&s, end, path) ||
	    next_word(&s, end, &extra) || hex->n != 64)
		return false;
	for (i = 0; i < 64; i++)
		if (!is_hex(hex->s[i]))
			return false;
	/* Sizes are later held as int64_t, so larger ones are refused
	 * here. */
	return cfa_parse_u64(num.s, num.n, (uint64_t)INT64_MAX, size);
}

static const char *const month_names[12] = {"jan", "feb", "mar", "apr", "may", "jun",
                                            "jul", "aug", "sep", "oct", "nov", "dec"};

static int month_of(struct cfa_span w)
{
	int m;
	size_t i;

	if (w.n != 3)
		return 0;
	for (m = 0; m < 12; m++) {
		for (i = 0; i < 3; i++)
			/* Setting bit 0x20 lower-cases an ASCII letter and
			 * maps no other byte onto a lower-case letter, so
			 * "Oct", "OCT" and "oct" all match. */
			if ((w.s[i] | 0x20) != month_names[m][i])
				break;
		if (i == 3)
			return m + 1;
	}
	return 0;
}

static unsigned month_days(int64_t y, int m)
{
	static const unsigned days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	/* Gregorian: 1900 was not a leap year, 2000 was. */
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[m - 1] + (m == 2 && leap);
}

static uint64_t num(const char *s, size_t n)
{
	uint64_t v = 0;

	(void)cfa_parse_u64(s, n, UINT64_MAX, &v); /* digits checked by the caller */
	return v;
}

/* "HH:MM:SS" into seconds of the day; -1 when it is not one. */
static int64_t clock_of(struct cfa_span w)
{
	uint64_t h, m, s;

	if (w.n != 8 || w.s[2] != ':' || w.s[5] != ':' || !all_digits(w.s, 2) ||
	    !all_digits(w.s + 3, 2) || !all_digits(w.s + 6, 2))
		return -1;
	h = num(w.s, 2), m = num(w.s + 3, 2), s = num(w.s + 6, 2);
	/* 60 is a leap second, which RFC 2822 dates may carry. */
	if (h > 23 || m > 59 || s > 60)
		return -1;
	return (int64_t)(h * 3600 + m * 60 + s);
}

/* The zone's offset east of UTC in seconds; false when it is not one. */
static bool zone_of(struct cfa_span w, int64_t *off)
{
	uint64_t h, m;

	*off = 0;
	/* "UTC" as Debian and Ubuntu write it, RFC 2822's "UT" and "GMT", the
	 * military "Z", and numeric offsets ("+0200"). */
	if ((w.n == 3 && (memcmp(w.s, "UTC", 3) == 0 || memcmp(w.s, "GMT", 3) == 0)) ||
	    (w.n == 2 && memcmp(w.s, "UT", 2) == 0) || (w.n == 1 && w.s[0] == 'Z'))
		return true;
	if (w.n != 5 || (w.s[0] != '+' && w.s[0] != '-') || !all_digits(w.s + 1, 4))
		return false;
	h = num(w.s + 1, 2), m = num(w.s + 3, 2);
	if (h > 23 || m > 59)
		return false;
	*off = (int64_t)(h * 3600 + m * 60) * (w.s[0] == '-' ? -1 : 1);
	return true;
}

bool cfa_release_date_parse(const char *s, size_t n, int64_t *t)
{
	const char *p = s, *end = s + n;
	struct cfa_span w[6];
	int64_t year, secs, off;
	uint64_t day;
	int k = 0, month;

	/* Release dates are RFC 2822's: "[Weekday,] DD Mon YYYY HH:MM:SS
	 * ZONE". */
	while (k < 6 && next_word(&p, end, &w[k]))
		k++;
	if (k && w[0].s[w[0].n - 1] == ',') { /* the weekday says nothing more */
		memmove(w, w + 1, (size_t)(k - 1) * sizeof(w[0]));
		k--;
	}
	if (k != 5 || next_word(&p, end, &w[5]) || w[0].n > 2 || !all_digits(w[0].s, w[0].n) ||
	    w[2].n != 4 || !all_digits(w[2].s, 4))
		return false;
	day = num(w[0].s, w[0].n), month = month_of(w[1]), year = (int64_t)num(w[2].s, 4);
	/* No date before the Unix epoch is meaningful for a repository, and
	 * "31 Feb" is refused rather than rolled into March. */
	if (!month || year < 1970 || day < 1 || day > month_days(year, month) ||
	    (secs = clock_of(w[3])) < 0 || !zone_of(w[4], &off))
		return false;
	/* off is east of UTC, so it is taken away to reach UTC. */
	*t = cfa_days_from_civil(year, (unsigned)month, (unsigned)day) * 86400 + secs - off;
	return true;
}

enum rel_field { R_DATE, R_VALID_UNTIL, R_SUITE, R_CODENAME, R_BY_HASH, R_SHA256, R_COUNT };

/* In enum rel_field's order; matched without regard to case, as deb822 field
 * names are. */
static const char *const rel_names[R_COUNT] = {"Date",     "Valid-Until",     "Suite",
                                               "Codename", "Acquire-By-Hash", "SHA256"};

struct rel_reader {
	struct cfa_span f[R_COUNT];
	bool seen[R_COUNT];
	int current;               /* the field continuation lines belong to, or -1 */
};

/* "Field: value": the field's value (first line) kept when it is one read. */
static bool rel_field_line(struct rel_reader *r, struct cfa_span l, const char **why)
{
	const char *colon = memchr(l.s, ':', l.n), *v;
	int k;

	r->current = -1;
	if (!colon) {
		*why = "a line is neither \"Field: value\" nor a continuation";
		return false;
	}
	for (k = 0; k < R_COUNT; k++)
		if (cfa_deb_field_is(l.s, (size_t)(colon - l.s), rel_names[k]))
			break;
	/* Fields not read here (Origin, Architectures, MD5Sum...) pass
	 * unchecked. */
	if (k == R_COUNT)
		return true;
	/* Which of two copies counts is up to each reader (the first, the
	 * last): two readers of one signed file could disagree. */
	if (r->seen[k]) {
		*why = "a field the trust rests on (Date, Valid-Until, Suite, Codename, "
		       "Acquire-By-Hash, SHA256) is given twice";
		return false;
	}
	for (v = colon + 1; v < l.s + l.n && blank(*v); v++)
		;
	r->seen[k] = true;
	r->f[k].s = v;
	r->f[k].n = (size_t)(l.s + l.n - v);
	/* Spans point into the caller's text, which must outlive the reader's
	 * result. */
	r->f[k] = trimmed(r->f[k]);
	r->current = k;
	return true;
}

/* A continuation line: only the SHA256 list's are read, each checked. */
static bool rel_more_line(struct rel_reader *r, struct cfa_span l, const char **why)
{
	struct cfa_span hex, path;
	uint64_t size;

	/* Continuations of fields not read here (or of no field) are
	 * skipped. */
	if (r->current != R_SHA256)
		return true;
	if (!sha_line(l, &hex, &size, &path)) {
		*why = "a line of its SHA256 list is not \"HEX SIZE PATH\"";
		return false;
	}
	if (r->f[R_SHA256].n == 0) /* the list starts on this line */
		r->f[R_SHA256].s = l.s;
	/* The span runs from the first list line to the end of this one, so
	 * cfa_release_find can walk it line by line. */
	r->f[R_SHA256].n = (size_t)(l.s + l.n - r->f[R_SHA256].s);
	return true;
}

static bool rel_dates(const struct rel_reader *r, struct cfa_release *out, const char **why)
{
	if (!r->seen[R_DATE]) {
		*why = "it has no Date field";
		return false;
	}
	if (!cfa_release_date_parse(r->f[R_DATE].s, r->f[R_DATE].n, &out->date)) {
		*why = "its Date is not a date as \"Fri, 30 Oct 2026 08:08:01 UTC\"";
		return false;
	}
	/* Valid-Until is optional: without it the Release never expires by
	 * itself. */
	if (r->seen[R_VALID_UNTIL] &&
	    !cfa_release_date_parse(r->f[R_VALID_UNTIL].s, r->f[R_VALID_UNTIL].n,
	                            &out->valid_until)) {
		*why = "its Valid-Until is not a date as \"Fri, 06 Nov 2026 08:08:01 UTC\"";
		return false;
	}
	return true;
}

bool cfa_release_parse(const char *text, size_t len, struct cfa_release *out, const char **why)
{
	struct line_iter it = {text, len, 0};
	struct rel_reader r;
	struct cfa_span l;
	bool started = false;

	memset(&r, 0, sizeof(r));
	/* Absent fields read as empty spans (NULL, 0) to the caller. */
	memset(out, 0, sizeof(*out));
	r.current = -1;
	while (next_line(&it, &l)) {
		if (trimmed(l).n == 0) {
			if (started) /* one stanza: what follows is not the Release's */
				break;
			continue;
		}
		started = true;
		if (!(blank(l.s[0]) ? rel_more_line(&r, l, why) : rel_field_line(&r, l, why)))
			return false;
	}
	if (!rel_dates(&r, out, why))
		return false;
	out->date_text = r.f[R_DATE];
	out->valid_until_text = r.f[R_VALID_UNTIL];
	out->suite = r.f[R_SUITE];
	out->codename = r.f[R_CODENAME];
	/* Anything but "yes" (in any case) is no. */
	out->by_hash = r.f[R_BY_HASH].n == 3 && cfa_deb_field_is(r.f[R_BY_HASH].s, 3, "yes");
	out->sha256 = r.f[R_SHA256];
	return true;
}

bool cfa_release_find(const struct cfa_release *r, const char *path, char sha256[65],
                      uint64_t *size)
{
	struct line_iter it = {r->sha256.s, r->sha256.n, 0};
	struct cfa_span l, hex, p;
	size_t i;

	/* No SHA256 list: no index can be verified, so none is found. */
	if (!r->sha256.s)
		return false;
	while (next_line(&it, &l)) {
		/* sha_line writes *size for every line; it only means
		 * something when true is returned. */
		if (!sha_line(l, &hex, size, &p) || p.n != strlen(path) || memcmp(p.s, path, p.n) != 0)
			continue;
		for (i = 0; i < 64; i++)
			sha256[i] = (char)(hex.s[i] | 0x20); /* lower case, as the cache names files */
		sha256[64] = '\0';
		return true;
	}
	return false;
}
