/*
 * fuzz_debfind.c - finding packages in a Debian Packages index (core/debindex.c): the input
 * as the index, the packages wanted being the first few names its
 * "Package:" lines give, each by name alone (the newest version).
 * Properties beyond not crashing:
 *   - a refusal names the index;
 *   - every entry found has a Filename inside the repository, a SHA256
 *     of 64 hex digits, a Size and a version;
 *   - asked again for NAME=VERSION with the versions found, the index
 *     gives the same entries (the first stanza of the newest version is
 *     the first of that version: the order never went back);
 *   - dpkg's order on the versions found and on each line read as a
 *     version is the one a second, plainer reading of Debian Policy's
 *     rules gives, antisymmetric and reflexive.
 */
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"
#include "core/arena.h"
#include "core/debindex.h"
#include "core/recipe.h"
#include "core/version.h"
#include "tests/fuzz/fuzz.h"

#define WANTS_MAX 4
#define INDEX_NAME "fuzz/Packages"

/* The first distinct names of "Package: NAME" lines, in the arena. */
static size_t wanted_names(struct cfa_arena *arena, const char *text, struct cfa_deb_want *w)
{
	const char *p = text;
	size_t n = 0, i, len;

	for (; p && n < WANTS_MAX; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, "Package: ", 9) != 0)
			continue;
		len = strcspn(p + 9, " \t\r\n");
		if (!len)
			continue;
		for (i = 0; i < n && !(strlen(w[i].name) == len && !memcmp(w[i].name, p + 9, len));
		     i++)
			;
		if (i == n && (w[n].name = cfa_arena_strndup(arena, p + 9, len)) != NULL)
			w[n++].version = NULL;
	}
	return n;
}

/* Policy's order of two non-digit runs' characters: '~' before anything,
 * even the end; then the end; letters; everything else. */
static int policy_char(const char *s, size_t i, size_t n)
{
	unsigned char c = i < n ? (unsigned char)s[i] : 0;

	if (i >= n || (c >= '0' && c <= '9'))
		return 0;
	if (c == '~')
		return -1;
	return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ? c : c + 256;
}

/* One part (upstream or revision) by Policy: alternately the non-digit
 * prefixes, character by character, and the digit prefixes as numbers. */
static int policy_part(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i = 0, j = 0, da, db;

	while (i < na || j < nb) {
		while ((i < na && (a[i] < '0' || a[i] > '9')) || (j < nb && (b[j] < '0' || b[j] > '9'))) {
			int x = policy_char(a, i, na), y = policy_char(b, j, nb);
			if (x != y)
				return x < y ? -1 : 1;
			i += i < na, j += j < nb;
		}
		for (; i < na && a[i] == '0'; i++)
			;
		for (; j < nb && b[j] == '0'; j++)
			;
		for (da = 0; i + da < na && a[i + da] >= '0' && a[i + da] <= '9'; da++)
			;
		for (db = 0; j + db < nb && b[j + db] >= '0' && b[j + db] <= '9'; db++)
			;
		if (da != db)
			return da < db ? -1 : 1;
		if (da && memcmp(a + i, b + j, da))
			return memcmp(a + i, b + j, da) < 0 ? -1 : 1;
		i += da, j += db;
	}
	return 0;
}

/* The epoch as a number part, then upstream, then revision. */
static int policy_cmp(const char *a, const char *b)
{
	const char *ca = strchr(a, ':'), *cb = strchr(b, ':');
	const char *ua = ca ? ca + 1 : a, *ub = cb ? cb + 1 : b;
	const char *ra = strrchr(ua, '-'), *rb = strrchr(ub, '-');
	int r;

	if ((r = policy_part(ca ? a : "0", ca ? (size_t)(ca - a) : 1, cb ? b : "0",
	                     cb ? (size_t)(cb - b) : 1)) != 0)
		return r;
	if ((r = policy_part(ua, ra ? (size_t)(ra - ua) : strlen(ua), ub,
	                     rb ? (size_t)(rb - ub) : strlen(ub))) != 0)
		return r;
	return policy_part(ra ? ra + 1 : "", ra ? strlen(ra + 1) : 0, rb ? rb + 1 : "",
	                   rb ? strlen(rb + 1) : 0);
}

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

/* Only versions whose epoch is digits: cfapkg reads another as 0, and
 * dpkg refuses it, so there is no order to agree on. */
static bool plain_epoch(const char *v)
{
	const char *c = strchr(v, ':'), *p;

	if (!c)
		return true;
	for (p = v; p < c; p++)
		if (*p < '0' || *p > '9')
			return false;
	return c - v > 0 && c - v < 19;
}

static void check_order(const char *a, const char *b)
{
	int r = cfa_deb_version_cmp(a, strlen(a), b, strlen(b));

	FUZZ_CHECK(r == -cfa_deb_version_cmp(b, strlen(b), a, strlen(a)), "%s vs %s: not "
	           "antisymmetric", a, b);
	FUZZ_CHECK(cfa_deb_version_cmp(a, strlen(a), a, strlen(a)) == 0, "%s vs itself", a);
	if (plain_epoch(a) && plain_epoch(b))
		FUZZ_CHECK(sign(r) == policy_cmp(a, b), "%s vs %s: cfapkg says %d, Policy %d", a, b,
		           r, policy_cmp(a, b));
}

static void check_found(const struct cfa_deb_want *w, const struct cfa_deb_found *f, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		FUZZ_CHECK(f[i].filename && cfa_safe_relative(f[i].filename), "%s: Filename %s",
		           w[i].name, f[i].filename ? f[i].filename : "(none)");
		FUZZ_CHECK(f[i].sha256 && cfa_valid_sha256(f[i].sha256) && f[i].size >= 0,
		           "%s: SHA256 %s, Size %lld", w[i].name, f[i].sha256 ? f[i].sha256 : "-",
		           (long long)f[i].size);
		FUZZ_CHECK(f[i].version && f[i].version[0], "%s: found without a version",
		           w[i].name);
		for (k = 0; k <= i; k++)
			check_order(f[i].version, f[k].version);
	}
}

/* NAME=VERSION for what was found: the same entries again. */
static void check_again(struct cfapkg_ctx *ctx, struct cfa_arena *arena, const char *text,
                        const struct cfa_deb_want *w, const struct cfa_deb_found *f, size_t n)
{
	struct cfa_deb_want exact[WANTS_MAX];
	struct cfa_deb_found again[WANTS_MAX];
	size_t i;

	for (i = 0; i < n; i++)
		exact[i] = (struct cfa_deb_want){w[i].name, f[i].version};
	FUZZ_CHECK(cfa_deb_index_find(ctx, INDEX_NAME, text, strlen(text), "amd64", exact, n,
	                              arena, again) == CFAPKG_E_OK,
	           "the newest versions found are not found by version: %s", cfapkg_ctx_error(ctx));
	for (i = 0; i < n; i++)
		FUZZ_CHECK(strcmp(again[i].filename, f[i].filename) == 0 &&
		                   strcmp(again[i].sha256, f[i].sha256) == 0 && again[i].size == f[i].size,
		           "%s %s: %s by version, %s as the newest", w[i].name, f[i].version,
		           again[i].filename, f[i].filename);
}

/* Each line also read as a version, against the one before (text is
 * cut into its lines). */
static void check_lines(char *text)
{
	char *line, *eol, *prev = NULL;

	for (line = text; line; line = eol ? eol + 1 : NULL) {
		if ((eol = strchr(line, '\n')) != NULL)
			*eol = '\0';
		if (prev)
			check_order(prev, line);
		prev = line;
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	char *text = fuzz_text(data, size);
	struct cfa_arena arena;
	struct cfa_deb_want want[WANTS_MAX];
	struct cfa_deb_found found[WANTS_MAX];
	size_t n;

	cfa_arena_init(&arena);
	if ((n = wanted_names(&arena, text, want)) > 0) {
		if (cfa_deb_index_find(ctx, INDEX_NAME, text, strlen(text), "amd64", want, n, &arena,
		                       found)) {
			FUZZ_CHECK(strstr(cfapkg_ctx_error(ctx), INDEX_NAME), "a refusal without the "
			           "index's name: %s", cfapkg_ctx_error(ctx));
		} else {
			check_found(want, found, n);
			check_again(ctx, &arena, text, want, found, n);
		}
	}
	check_lines(text); /* last: it cuts the text */
	cfa_arena_fini(&arena);
	free(text);
	cfapkg_ctx_free(ctx);
	return 0;
}
