/*
 * valid.c - the checks a recipe's words and paths pass wherever they come
 * from (a recipe, a channel index, a Debian index, a first-use file): OS
 * and architecture names, gfx targets, SHA-256 digests, statuses and
 * paths relative to a package.
 */
#include <string.h>

#include "core/recipe.h"

/* The names cfapkg itself gives hosts (cfa_plat_os, cfa_plat_arch): a recipe
 * that spells one otherwise would name no machine, so it is refused rather than
 * left never to match. */
static const char *const os_names[] = {"windows", "linux", NULL};
static const char *const arch_names[] = {"x86_64", "aarch64", "x86", NULL};

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

bool cfa_valid_os(const char *s)
{
	return in_list(s, os_names);
}

bool cfa_valid_arch(const char *s)
{
	return in_list(s, arch_names);
}

bool cfa_valid_gfx(const char *s)
{
	size_t i, n = strlen(s);

	/* "gfx" and three to five hex digits (gfx900, gfx90a, gfx1100),
	 * lower-case only, so that one target has one spelling to compare. */
	if (n < 6 || n > 8 || strncmp(s, "gfx", 3) != 0)
		return false;
	for (i = 3; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool cfa_valid_sha256(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return s[64] == '\0';
}

bool cfa_status_parse(const char *s, enum cfapkg_status *out)
{
	/* By enum value: the index is the status it names. */
	static const char *const names[] = {[CFAPKG_STATUS_VALIDATED] = "validated",
	                                    [CFAPKG_STATUS_CANDIDATE] = "candidate",
	                                    [CFAPKG_STATUS_EXPERIMENTAL] = "experimental"};
	int i;

	for (i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum cfapkg_status)i;
			return true;
		}
	return false;
}

/* A relative path inside a package: no absolute paths, drives or "..". */
bool cfa_safe_relative(const char *p)
{
	const char *seg = p;

	/* A colon anywhere is refused: on Windows it names a drive ("C:x") or a
	 * file's hidden stream ("f:s"), either of which leaves the package. */
	if (!*p || *p == '/' || *p == '\\' || strchr(p, ':'))
		return false;
	while (*seg) {
		size_t n = strcspn(seg, "/\\");
		/* Only a whole ".." segment climbs; "..a" or "a.." is a
		 * name. */
		if (n == 2 && seg[0] == '.' && seg[1] == '.')
			return false;
		seg += n;
		if (*seg)
			seg++;
	}
	return true;
}
