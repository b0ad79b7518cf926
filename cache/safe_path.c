/*
 * safe_path.c - archive entry names, made safe or refused.  An entry may
 * only name a place inside the folder being unpacked, the same way on
 * Linux and Windows: no absolute paths, drive letters, UNC or device names,
 * no ".." components, "\" counts as a separator, nothing that Windows
 * would silently rename (":" streams, trailing dots or spaces) and no
 * name that Windows opens as a device.  Links are judged elsewhere
 * (tree.c), against the whole tree.
 */
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "cache/cache.h"
#include "core/mem.h"

/* Names Windows gives to devices, in any case and with any extension:
 * "nul.dll" opens the null device, "COM1.txt" a serial port. */
bool cfa_device_name(const char *c, size_t n)
{
	static const char *const names[] = {"con", "prn", "aux", "nul", "conin$", "conout$"};
	static const char *const numbered[] = {"com", "lpt"};
	size_t base = 0, i, k;
	char low[8];

	while (base < n && c[base] != '.')
		base++;
	while (base > 0 && c[base - 1] == ' ')
		base--; /* Windows drops the spaces before the extension too */
	if (base < 3 || base > 7)
		return false;
	for (i = 0; i < base; i++)
		low[i] = c[i] >= 'A' && c[i] <= 'Z' ? (char)(c[i] - 'A' + 'a') : c[i];
	low[base] = '\0';
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strcmp(low, names[k]) == 0)
			return true;
	for (k = 0; k < 2; k++) {
		if (strncmp(low, numbered[k], 3) != 0)
			continue;
		if (base == 4 && low[3] >= '0' && low[3] <= '9')
			return true;
		/* COM¹, LPT² and LPT³: superscript digits count too */
		if (base == 5 && (unsigned char)low[3] == 0xC2 &&
		    ((unsigned char)low[4] == 0xB9 || (unsigned char)low[4] == 0xB2 ||
		     (unsigned char)low[4] == 0xB3))
			return true;
	}
	return false;
}

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
	if (n > 255) {
		*why = "a file or folder name longer than 255 bytes (too long for the file system)";
		return true;
	}
	if (cfa_device_name(c, n)) {
		*why = "a name Windows keeps for a device (CON, PRN, AUX, NUL, COM0-9, LPT0-9)";
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

/* Appends code point c as UTF-8; false when it does not fit. */
static bool put_utf8(unsigned long c, char *out, size_t len, size_t *n)
{
	unsigned char b[4];
	size_t k = 0, i;

	if (c < 0x80) {
		b[k++] = (unsigned char)c;
	} else if (c < 0x800) {
		b[k++] = (unsigned char)(0xC0 | (c >> 6));
		b[k++] = (unsigned char)(0x80 | (c & 0x3F));
	} else if (c < 0x10000) {
		b[k++] = (unsigned char)(0xE0 | (c >> 12));
		b[k++] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
		b[k++] = (unsigned char)(0x80 | (c & 0x3F));
	} else {
		b[k++] = (unsigned char)(0xF0 | (c >> 18));
		b[k++] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
		b[k++] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
		b[k++] = (unsigned char)(0x80 | (c & 0x3F));
	}
	if (*n + k >= len)
		return false;
	for (i = 0; i < k; i++)
		out[(*n)++] = (char)b[i];
	return true;
}

/* The UTF-8 of w into out (room for 4 bytes per wchar_t: a UTF-16 pair is
 * 4 bytes, a lone unit at most 3); false when w holds what is not a
 * character. */
static bool wide_into(const wchar_t *w, char *out, size_t len)
{
	size_t n = 0;

	for (; *w; w++) {
		unsigned long c = (unsigned long)*w;
		/* wchar_t is UTF-16 on Windows: join a surrogate pair */
		if (sizeof(wchar_t) == 2 && c >= 0xD800 && c < 0xDC00 && w[1] >= 0xDC00 &&
		    w[1] < 0xE000) {
			c = 0x10000 + ((c - 0xD800) << 10) + ((unsigned long)w[1] - 0xDC00);
			w++;
		}
		if (c > 0x10FFFF || (c >= 0xD800 && c < 0xE000))
			return false; /* not a character: no name can be made of it */
		if (!put_utf8(c, out, len, &n))
			return false;
	}
	out[n] = '\0';
	return true;
}

bool cfa_wide_to_utf8(const wchar_t *w, char **out)
{
	size_t n = w ? wcslen(w) : 0;

	*out = NULL;
	if (!w)
		return true;
	if (n > (SIZE_MAX - 1) / 4 || !(*out = cfa_malloc(4 * n + 1)))
		return false;
	if (!wide_into(w, *out, 4 * n + 1))
		CFA_FREE(*out);
	return true;
}
