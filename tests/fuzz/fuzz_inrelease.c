/*
 * fuzz_inrelease.c - the InRelease reader (core/inrelease.c): the input
 * as a whole InRelease file (its clearsigned shape), as the signed
 * Release text (its fields), and each line as a date.  Properties beyond
 * not crashing:
 *   - a file judged one clearsigned message starts with the BEGIN PGP
 *     SIGNED MESSAGE line and has exactly three armor lines (that one,
 *     BEGIN PGP SIGNATURE, END PGP SIGNATURE), counted independently;
 *   - a Release text that parses has a Date at or after 1970, and every
 *     entry of its SHA256 list is found again by its path with 64
 *     lower-case hex digits;
 *   - a date that parses, written again as "D Mon YYYY HH:MM:SS +0000"
 *     (and with a weekday, and as UTC), parses to the same second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/channel.h"
#include "core/inrelease.h"
#include "tests/fuzz/fuzz.h"

static size_t armor_lines(const char *text)
{
	const char *line = text;
	size_t n = 0;

	for (; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, "-----", 5) == 0)
			n++;
	return n;
}

/* data: the input as it came; text: the same as a C string (an accepted
 * file holds no NUL, so the two are the same bytes). */
static void check_frame(const char *data, size_t len, const char *text)
{
	const char *why = NULL;

	if (!cfa_clearsign_framed(data, len, &why)) {
		FUZZ_CHECK(why && *why, "a refusal without a reason");
		return;
	}
	FUZZ_CHECK(strncmp(text, "-----BEGIN PGP SIGNED MESSAGE-----", 34) == 0,
	           "accepted without the BEGIN line first");
	FUZZ_CHECK(armor_lines(text) == 3, "accepted with %zu armor lines", armor_lines(text));
}

static bool lower_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}

/* Each " HEX SIZE PATH" line's path, found again. */
static void check_entries(const struct cfa_release *r)
{
	const char *p = r->sha256.s, *end = p ? p + r->sha256.n : NULL;
	char path[256], sha[65];
	uint64_t size;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *stop = nl ? nl : end;
		const char *s = stop, *start;
		while (s > p && (s[-1] == ' ' || s[-1] == '\t' || s[-1] == '\r'))
			s--;
		for (start = s; start > p && start[-1] != ' ' && start[-1] != '\t'; start--)
			;
		if (s > start && (size_t)(s - start) < sizeof(path)) {
			memcpy(path, start, (size_t)(s - start));
			path[s - start] = '\0';
			FUZZ_CHECK(cfa_release_find(r, path, sha, &size), "%s is listed but not found",
			           path);
			FUZZ_CHECK(lower_hex64(sha), "%s: SHA-256 %s", path, sha);
		}
		p = stop + 1;
	}
}

static void check_release(const char *text, size_t len)
{
	struct cfa_release r;
	const char *why = NULL;

	if (!cfa_release_parse(text, len, &r, &why)) {
		FUZZ_CHECK(why && *why, "a refusal without a reason");
		return;
	}
	FUZZ_CHECK(r.date >= 0 && r.valid_until >= 0, "Date %lld, Valid-Until %lld",
	           (long long)r.date, (long long)r.valid_until);
	check_entries(&r);
}

/* t written as a Release file writes dates, in three spellings. */
static void check_date(const char *line)
{
	static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	char iso[32], text[3][64];
	int64_t t, again;
	int y, m, d, hh, mm, ss, k;

	if (!cfa_release_date_parse(line, strlen(line), &t))
		return;
	FUZZ_CHECK(t >= -(23 * 3600 + 59 * 60), "%s: %lld", line, (long long)t);
	if (t < 0)
		return; /* 1970-01-01 with an offset east of UTC: before the epoch */
	cfa_utc_format(t, iso);
	FUZZ_CHECK(sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2dZ", &y, &m, &d, &hh, &mm, &ss) == 6,
	           "%s: %s", line, iso);
	snprintf(text[0], sizeof(text[0]), "%d %s %04d %02d:%02d:%02d +0000", d, mon[m - 1], y, hh,
	         mm, ss);
	snprintf(text[1], sizeof(text[1]), "Sun, %02d %s %04d %02d:%02d:%02d UTC", d, mon[m - 1],
	         y, hh, mm, ss);
	snprintf(text[2], sizeof(text[2]), "%02d %s %04d %02d:%02d:%02d GMT", d, mon[m - 1], y,
	         hh, mm, ss);
	for (k = 0; k < 3; k++)
		FUZZ_CHECK(cfa_release_date_parse(text[k], strlen(text[k]), &again) && again == t,
		           "%s gives %lld; written as %s: %lld", line, (long long)t, text[k],
		           (long long)again);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *line, *eol;

	check_frame((const char *)data, size, text);
	check_release((const char *)data, size);
	for (line = text; line; line = eol ? eol + 1 : NULL) {
		if ((eol = strchr(line, '\n')) != NULL)
			*eol = '\0';
		check_date(line);
	}
	free(text);
	return 0;
}
