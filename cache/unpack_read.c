/*
 * unpack_read.c - reading an archive for the unpacker: opening it (the
 * formats and compressions cfapkg names, read from a file or from a
 * download as it arrives, a .deb's payload straight out of its outer ar
 * archive, either way), and its entries' names, made safe or refused.
 */
#include <archive.h>
#include <archive_entry.h>
#include <string.h>

#include "cache/unpack_int.h"
#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"

#define BLOCK (256u * 1024u)

/* A .deb's payload is its data.tar.* member: read it straight out of the
 * outer ar archive, block by block in libarchive's own buffer (no copy,
 * and nothing shared between threads unpacking different .debs). */
static la_ssize_t read_member(struct archive *inner, void *outer, const void **buf)
{
	size_t size = 0;
	la_int64_t offset;
	int r = archive_read_data_block(outer, buf, &size, &offset);

	if (r == ARCHIVE_EOF)
		return 0;
	if (r != ARCHIVE_OK) {
		archive_set_error(inner, archive_errno(outer), "%s",
		                  archive_error_string(outer) ? archive_error_string(outer)
		                                              : "cannot read the .deb");
		return -1;
	}
	return (la_ssize_t)size;
}

/* In the user's terms where libarchive's words would mislead.  Whether
 * entries are encrypted can only be asked once a format was chosen
 * (libarchive crashes before). */
enum cfapkg_err cfa_unpack_unreadable(struct unpacker *u, struct archive *a, const char *format)
{
	if (a && archive_format(a) && archive_read_has_encrypted_entries(a) > 0)
		return cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: encrypted archives are not "
		                "supported; nothing was installed from this archive", u->label);
	return cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: not a readable %s archive: %s", u->label,
	                format, a && archive_error_string(a) ? archive_error_string(a)
	                                                    : "out of memory");
}

static struct archive *open_deb(struct unpacker *u, struct archive *a, struct archive **outer)
{
	struct archive_entry *en;

	if (!(*outer = archive_read_new()))
		return NULL;
	archive_read_support_format_ar(*outer);
	/* From the file, or front to back as it downloads: ar reads so. */
	if ((u->file ? archive_read_open_filename(*outer, u->file, BLOCK)
	             : archive_read_open(*outer, u->src_arg, NULL, u->src, NULL)) != ARCHIVE_OK) {
		cfa_unpack_unreadable(u, *outer, "deb");
		return NULL;
	}
	while (archive_read_next_header(*outer, &en) == ARCHIVE_OK)
		if (strncmp(archive_entry_pathname(en), "data.tar", 8) == 0) {
			archive_read_support_format_tar(a);
			if (archive_read_open(a, *outer, NULL, read_member, NULL) == ARCHIVE_OK)
				return a;
			cfa_unpack_unreadable(u, a, "deb");
			return NULL;
		}
	cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: a .deb without data.tar", u->label);
	return NULL;
}

struct archive *cfa_unpack_reader(struct unpacker *u, const char *format, struct archive **outer)
{
	struct archive *a = archive_read_new();

	*outer = NULL;
	if (!a) {
		cfa_nomem(u->ctx);
		return NULL;
	}
	/* Only the compressions cfapkg's formats name, all built into
	 * libarchive: "all" would also start external programs (lzop, lrzip,
	 * grzip) found on PATH for the filters it lacks. */
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_zstd(a);
	/* A verified archive's zip CRC-32s repeat what its SHA-256 proved. */
	if (u->hash_checked)
		archive_read_set_format_option(a, "zip", "ignorecrc32", "1");
	if (strcmp(format, "deb") == 0) {
		if (open_deb(u, a, outer))
			return a;
	} else if (!u->file || u->front_to_back) {
		/* Only what can be read front to back: zip through its local
		 * headers (the bytes are the pinned ones: hashed as they arrive). */
		archive_read_support_format_zip_streamable(a);
		archive_read_support_format_tar(a);
		if ((u->file ? archive_read_open_filename(a, u->file, BLOCK)
		             : archive_read_open(a, u->src_arg, NULL, u->src, NULL)) == ARCHIVE_OK)
			return a;
		cfa_unpack_unreadable(u, a, format);
	} else {
		/* As bsdtar: the central directory when there is one, the local
		 * headers of a zip whose end cannot be found (padding, a stub);
		 * the commit refuses a zip without one (zipdir.c). */
		archive_read_support_format_zip_seekable(a);
		archive_read_support_format_zip_streamable(a);
		archive_read_support_format_7zip(a);
		archive_read_support_format_tar(a);
		if (archive_read_open_filename(a, u->file, BLOCK) == ARCHIVE_OK)
			return a;
		cfa_unpack_unreadable(u, a, format);
	}
	archive_read_free(a);
	if (*outer)
		archive_read_free(*outer);
	*outer = NULL;
	return NULL;
}

/* The length of the UTF-8 sequence at s (n bytes left), 0 when it is not
 * one: a stray byte, an overlong or surrogate form, or one cut short. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
	           : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	unsigned long c;
	size_t i;

	if (!len || len > n)
		return 0;
	c = len == 1 ? s[0] : s[0] & (0x7fu >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

/* One character of name at *i into out: a control character (a terminal
 * would act on it) as "?", a byte that is not UTF-8 as "\xNN" (a terminal
 * would show it as something else, a JSON reader refuse it); false when
 * out has no room left. */
static bool show_char(const unsigned char *name, size_t n, size_t *i, char *out, size_t len,
                      size_t *o)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = utf8_len(name + *i, n - *i);

	if (*o + 5 > len)
		return false;
	if (k == 1 && (name[*i] < 0x20 || name[*i] == 0x7f))
		out[(*o)++] = '?';
	else if (k)
		memcpy(out + *o, name + *i, k), *o += k;
	else
		out[(*o)++] = '\\', out[(*o)++] = 'x', out[(*o)++] = hex[name[*i] >> 4],
		out[(*o)++] = hex[name[*i] & 15];
	*i += k ? k : 1;
	return true;
}

void cfa_unpack_shown(const char *name, char *out, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = strlen(name), head = n, tail = n, i = 0, o = 0;

	/* A very long name is shortened in the middle, so that the reason
	 * after it is not cut off. */
	if (n > 120) {
		for (head = 60; head && (s[head] & 0xc0) == 0x80; head--)
			; /* not inside a UTF-8 sequence */
		for (tail = n - 40; tail < n && (s[tail] & 0xc0) == 0x80; tail++)
			;
	}
	while (i < head && show_char(s, n, &i, out, len, &o))
		;
	if (head < n && o + 4 <= len) {
		memcpy(out + o, "...", 3), o += 3;
		for (i = tail; i < n && show_char(s, n, &i, out, len, &o);)
			;
	}
	out[o] = '\0';
}

enum cfapkg_err cfa_unpack_refuse(struct unpacker *u, const char *entry, const char *why)
{
	char shown[200], length[48] = "";

	u->refused = true;
	cfa_unpack_shown(entry, shown, sizeof(shown));
	/* A number's room: it fits; should it not, the length is left out. */
	if (strlen(entry) > 120 && !cfa_snprintf(length, sizeof(length), " (a name of %lu bytes)",
	                                         (unsigned long)strlen(entry)))
		length[0] = '\0';
	return cfa_fail(u->ctx, CFAPKG_E_INTEGRITY, "%s: entry \"%s\"%s refused: %s; nothing was "
	                "installed from this archive", u->label, shown, length, why);
}

bool cfa_unpack_text(struct archive_entry *en, enum cfa_entry_text which, const char **text,
                     char **owned)
{
	bool ok;

	*owned = NULL;
	switch (which) {
	case CFA_TEXT_SYMLINK:
		*text = archive_entry_symlink_utf8(en);
		ok = *text || cfa_wide_to_utf8(archive_entry_symlink_w(en), owned);
		break;
	case CFA_TEXT_HARDLINK:
		*text = archive_entry_hardlink_utf8(en);
		ok = *text || cfa_wide_to_utf8(archive_entry_hardlink_w(en), owned);
		break;
	default:
		*text = archive_entry_pathname_utf8(en);
		ok = *text || cfa_wide_to_utf8(archive_entry_pathname_w(en), owned);
	}
	if (!*text)
		*text = *owned;
	return ok;
}

bool cfa_unpack_safe(const char *text, unsigned strip, char **out, const char **why)
{
	/* A safe name only drops and joins text's components; the check asks
	 * a byte for a separator more. */
	size_t len = strlen(text) + 2;

	*why = NULL;
	if (!(*out = cfa_malloc(len)))
		return false;
	if (cfa_safe_entry_path(text, strip, *out, len, why))
		return true;
	CFA_FREE(*out);
	return false;
}

enum cfapkg_err cfa_unpack_name(struct unpacker *u, struct archive_entry *en,
                                struct cfa_entry_name *n)
{
	const char *why = NULL;

	memset(n, 0, sizeof(*n));
	if (!cfa_unpack_text(en, CFA_TEXT_PATH, &n->raw, &n->owned))
		return cfa_nomem(u->ctx);
	if (!n->raw)
		n->raw = archive_entry_pathname(en);
	if (!n->raw)
		return cfa_unpack_refuse(u, "?", "no name");
	/* One rule on every system, so that an archive unpacks alike
	 * everywhere: no name longer than the longest path Linux opens. */
	if (strlen(n->raw) > CFA_ENTRY_NAME_MAX)
		return cfa_unpack_refuse(u, n->raw, "a name too long (more than "
		                         CFA_STR(CFA_ENTRY_NAME_MAX) " bytes)");
	if (!cfa_unpack_safe(n->raw, u->strip, &n->name, &why))
		return why ? cfa_unpack_refuse(u, n->raw, why) : cfa_nomem(u->ctx);
	if (archive_entry_is_encrypted(en))
		return cfa_unpack_refuse(u, n->raw, "encrypted archives are not supported");
	return CFAPKG_E_OK;
}

void cfa_entry_name_fini(struct cfa_entry_name *n)
{
	cfa_free(n->name);
	cfa_free(n->owned);
}
