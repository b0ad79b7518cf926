/*
 * safe_path.c - archive entry names, made safe or refused.  An entry may
 * only name a place inside the folder being unpacked, the same way on
 * Linux and Windows: no absolute paths, drive letters, UNC or device names,
 * no ".." components, "\" counts as a separator, and nothing that Windows
 * would silently rename (":" streams, trailing dots or spaces).
 */
#include <string.h>

#include "cache/cache.h"
#include "core/strbuf.h"

static bool bad_component(const char *c, size_t n, const char **why)
{
	size_t i;

	if (n == 2 && c[0] == '.' && c[1] == '.') {
		*why = "a \"..\" component leaves the folder";
		return true;
	}
	if (c[n - 1] == '.' || c[n - 1] == ' ') {
		*why = "a name ending in a dot or space (Windows would rename it)";
		return true;
	}
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)c[i];
		if (ch < 0x20 || ch == ':' || ch == '<' || ch == '>' || ch == '"' || ch == '|' ||
		    ch == '?' || ch == '*') {
			*why = "a character Windows cannot have in a file name";
			return true;
		}
	}
	return false;
}

bool cfa_safe_entry_path(const char *in, unsigned strip, char *out, size_t len,
                         const char **why)
{
	const char *p = in;
	size_t n = 0;

	*out = '\0';
	if (!*in) {
		*why = "an empty name";
		return false;
	}
	if (in[0] == '/' || in[0] == '\\' || (in[0] && in[1] == ':')) {
		*why = "an absolute path, drive letter or network path";
		return false;
	}
	while (*p) {
		size_t c = strcspn(p, "/\\");
		if (c > 0 && !(c == 1 && p[0] == '.')) {
			if (bad_component(p, c, why))
				return false;
			if (strip > 0) {
				strip--;
			} else {
				if (n + c + 2 > len) {
					*why = "a name too long";
					return false;
				}
				if (n)
					out[n++] = '/';
				memcpy(out + n, p, c);
				n += c;
				out[n] = '\0';
			}
		}
		p += c;
		if (*p)
			p++;
	}
	if (strncmp(out, ".cfapkg", 7) == 0 && (out[7] == '\0' || out[7] == '/')) {
		*why = "the name .cfapkg is cfapkg's own";
		return false;
	}
	return true;
}

bool cfa_link_stays_inside(const char *entry, const char *target)
{
	const char *p;
	int depth = 0;

	if (!*target || target[0] == '/' || target[0] == '\\' || (target[0] && target[1] == ':'))
		return false;
	for (p = entry; *p; p++) /* the folders the link lives in */
		if (*p == '/')
			depth++;
	for (p = target; *p;) {
		size_t c = strcspn(p, "/\\");
		if (c == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (c > 0 && !(c == 1 && p[0] == '.')) {
			depth++;
		}
		p += c;
		if (*p)
			p++;
	}
	return true;
}
