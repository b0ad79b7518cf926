/*
 * fuzz_safe_path.c - archive entry names (cache/safe_path.c) and the
 * recipes' relative paths (cfa_safe_relative).  The first byte picks how
 * many leading folders to strip (0-3); the rest is the name.  Properties
 * of an accepted entry name: it never has a ".." or "." component, an
 * empty component, a leading "/", a drive letter or ":" stream, a
 * backslash, a control character, or a component ending in a dot or
 * space; it fits its buffer; it is accepted again unchanged; and
 * stripping only drops leading components of the unstripped result.
 * An accepted relative path never holds a ".." component or a ":" and is
 * never absolute.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "core/recipe.h"
#include "tests/fuzz/fuzz.h"

static void check_components(const char *in, const char *out)
{
	const char *p = out;

	FUZZ_CHECK(out[0] != '/' && !strchr(out, '\\') && !strchr(out, ':'),
	           "\"%s\" gave \"%s\"", in, out);
	while (*p) {
		size_t n = strcspn(p, "/"), i;
		FUZZ_CHECK(n > 0 && !(n == 1 && p[0] == '.') && !(n == 2 && p[0] == '.' && p[1] == '.'),
		           "\"%s\" gave \"%s\": a bad component", in, out);
		FUZZ_CHECK(p[n - 1] != '.' && p[n - 1] != ' ', "\"%s\" gave \"%s\"", in, out);
		for (i = 0; i < n; i++)
			FUZZ_CHECK((unsigned char)p[i] >= 0x20, "\"%s\": a control character", in);
		p += n;
		if (*p) {
			p++;
			FUZZ_CHECK(*p, "\"%s\" gave \"%s\": a trailing /", in, out);
		}
	}
}

/* out with its first strip components dropped is stripped. */
static void check_strip(const char *in, const char *full, const char *stripped,
                        unsigned strip)
{
	const char *p = full;

	while (strip-- && *p) {
		p += strcspn(p, "/");
		if (*p)
			p++;
	}
	FUZZ_CHECK(strcmp(p, stripped) == 0, "\"%s\": stripped \"%s\", unstripped \"%s\"", in,
	           stripped, full);
}

static void check_entry(const char *name, unsigned strip)
{
	char out[4096], full[4096], again[4096], small[24];
	const char *why = NULL;
	bool ok = cfa_safe_entry_path(name, strip, out, sizeof(out), &why);

	if (cfa_safe_entry_path(name, strip, small, sizeof(small), &why))
		FUZZ_CHECK(strlen(small) < sizeof(small) && ok && strcmp(small, out) == 0,
		           "\"%s\" in a small buffer gave \"%s\"", name, small);
	if (!ok)
		return;
	check_components(name, out);
	/* Without stripping, only the whole name's own limits may refuse it. */
	if (cfa_safe_entry_path(name, 0, full, sizeof(full), &why))
		check_strip(name, full, out, strip);
	else
		FUZZ_CHECK(strstr(why, ".cfapkg") || strstr(why, "too long"),
		           "\"%s\" accepted with strip %u, refused without: %s", name, strip, why);
	if (out[0]) {
		FUZZ_CHECK(cfa_safe_entry_path(out, 0, again, sizeof(again), &why) &&
		               strcmp(out, again) == 0,
		           "\"%s\" gave \"%s\", which is not accepted unchanged", name, out);
	}
}

static void check_relative(const char *p)
{
	const char *seg = p;

	if (!cfa_safe_relative(p))
		return;
	FUZZ_CHECK(p[0] && p[0] != '/' && p[0] != '\\' && !strchr(p, ':'), "\"%s\"", p);
	while (*seg) {
		size_t n = strcspn(seg, "/\\");
		FUZZ_CHECK(!(n == 2 && seg[0] == '.' && seg[1] == '.'), "\"%s\" has ..", p);
		seg += n;
		if (*seg)
			seg++;
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
	char *name;

	if (size == 0)
		return 0;
	name = fuzz_text(data + 1, size - 1);
	check_entry(name, data[0] % 4);
	check_relative(name);
	free(name);
	return 0;
}
