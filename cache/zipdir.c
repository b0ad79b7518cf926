/*
 * zipdir.c - a zip's two lists of its entries made to agree.  A zip names
 * each entry twice: in a local header before the entry's data, which a
 * reader going front to back (a download as it arrives) sees, and in the
 * central directory at the end, which unzip, Python's zipfile and the
 * seekable reader see.  libarchive's seekable reader takes the name from
 * the local header, so neither of cfapkg's ways of unpacking would notice
 * a zip whose central directory says "../x" where its local header says
 * "ok.txt": cfapkg would install one file where every other tool sees
 * another.  So before a zip is committed, from whichever path, the local
 * headers read front to back must be exactly the central directory's
 * entries, in its places: the same name bytes, method, CRC-32, sizes and
 * kind (folder or not), the first at the start of the zip, each next one
 * where the one before ends, and the directory right after the last.
 * Facts from PKWARE's APPNOTE (4.3: the records, 4.5.3: Zip64 sizes).
 */
#include <stdlib.h>
#include <string.h>

#include "cache/unpack_int.h"
#include "core/mem.h"
#include "platform/platform.h"

#define WINDOW (16u * CFA_MAP_ALIGN) /* 1 MiB mapped at a time */
#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u
#define SIG_DESCRIPTOR 0x08074b50u
#define FLAG_DESCRIPTOR 0x0008u /* sizes and CRC-32 after the data */
#define U32_MAX 0xffffffffu

/* A file read through a window that moves to where it is asked. */
struct win {
	struct cfa_map *m;
	uint64_t size, at;
	size_t len;
	const unsigned char *p;
};

/* len bytes at off, or NULL past the end (or when the system fails). */
static const unsigned char *bytes_at(struct win *w, uint64_t off, size_t len)
{
	uint64_t start, end;

	if (off > w->size || len > w->size - off)
		return NULL;
	if (w->p && off >= w->at && off + len <= w->at + w->len)
		return w->p + (off - w->at);
	/* A view starts on the mapping's alignment and spans a window at least,
	 * so that records read one after another seldom map again.  It replaces
	 * the last one: a pointer given out earlier by this window is good only
	 * until a later call moves it. */
	start = off - off % CFA_MAP_ALIGN;
	end = off + len > start + WINDOW ? off + len : start + WINDOW;
	if (end > w->size)
		end = w->size;
	w->p = cfa_plat_map_view(w->m, start, (size_t)(end - start));
	w->at = start;
	w->len = w->p ? (size_t)(end - start) : 0;
	return w->p ? w->p + (off - start) : NULL;
}

static unsigned u16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t u32(const unsigned char *p)
{
	return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16;
}

static uint64_t u64(const unsigned char *p)
{
	return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32;
}

/* What one list says of an entry. */
struct entry {
	const unsigned char *name;
	size_t name_len;
	unsigned flags, method;
	uint32_t crc;
	uint64_t csize, usize, offset;
	const unsigned char *uname; /* a Unicode path field's name, or NULL */
	size_t uname_len;
	uint32_t name_crc;         /* the CRC-32 of the header's name it stands for */
	bool zip64;                /* a Zip64 field is there (a local header's: its
	                              descriptor's sizes are 8 bytes, as libarchive
	                              reads them) */
	int dir;                   /* 1 a folder, 0 not, -1 not said */
};

/* What an extra block holds that matters here: the Zip64 field (id 1)
 * fills, in order, the values that read all ones; Info-ZIP's Unicode path
 * (id 0x7075, version 1) is the name libarchive and unzip take instead of
 * the header's.  False when a field runs past the block or is too short. */
static bool read_extra(const unsigned char *x, size_t n, uint64_t *const *vals, size_t nvals,
                       struct entry *e)
{
	size_t i, k = 0;

	while (n >= 4) {
		size_t id = u16(x), len = u16(x + 2);
		if (len > n - 4)
			return false;
		e->zip64 |= id == 1;
		/* Eight bytes for each value that read all ones, in the order
		 * the record lists them, and for no other. */
		for (i = 0; id == 1 && i < nvals; i++) {
			if (*vals[i] != U32_MAX)
				continue;
			if (k + 8 > len)
				return false;
			*vals[i] = u64(x + 4 + k);
			k += 8;
		}
		if (id == 0x7075 && len >= 5 && x[4] == 1) {
			e->name_crc = u32(x + 5);
			e->uname = x + 9;
			e->uname_len = len - 5;
		}
		x += 4 + len;
		n -= 4 + len;
	}
	return true;
}

/* The CRC-32 of zip (ISO 3309), bit by bit: only names go through it. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
	uint32_t c = U32_MAX;
	size_t i;
	int b;

	/* 0xedb88320: the polynomial 0x04c11db7 with its bits reversed, as
	 * zip's CRC-32 takes each byte low bit first. */
	for (i = 0; i < n; i++)
		for (c ^= p[i], b = 0; b < 8; b++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	return ~c;
}

/* The kind the central directory's attributes give: Unix mode bits when
 * made on Unix, else the DOS folder bit; -1 when they do not say (many
 * writers leave a folder's DOS bits clear). */
static int central_kind(unsigned made_by, uint32_t attrs)
{
	unsigned type = (unsigned)(attrs >> 16) & 0170000u;

	/* Made on Unix (3 in the high byte): the file type bits of st_mode sit
	 * in the attributes' high half. */
	if (made_by >> 8 == 3 && type)
		return type == 0040000u;
	return attrs & 0x10u ? 1 : -1;
}

/* The central record at *pos into e; *pos moves past it. */
static const char *read_central(struct win *w, uint64_t *pos, uint64_t end, struct entry *e)
{
	const unsigned char *p = bytes_at(w, *pos, 46);
	uint64_t *vals[3] = {&e->usize, &e->csize, &e->offset};
	size_t n, m, c;

	if (!p || *pos + 46 > end || u32(p) != SIG_CENTRAL)
		return "its central directory is damaged";
	n = u16(p + 28), m = u16(p + 30), c = u16(p + 32);
	e->flags = u16(p + 8), e->method = u16(p + 10), e->crc = u32(p + 16);
	e->csize = u32(p + 20), e->usize = u32(p + 24), e->offset = u32(p + 42);
	if (*pos + 46 + n + m + c > end || !(p = bytes_at(w, *pos, 46 + n + m)))
		return "its central directory is damaged";
	/* Points into w's window: valid until w reads elsewhere, which is why
	 * the two lists are read through two windows. */
	e->name = p + 46;
	e->name_len = n;
	e->uname = NULL;
	e->zip64 = false;
	e->dir = central_kind(u16(p + 4), u32(p + 38));
	if (!read_extra(p + 46 + n, m, vals, 3, e))
		return "its central directory record has a damaged extra field";
	*pos += 46 + n + m + c;
	return NULL;
}

/* The local header at e->offset into l; *data: where its data starts. */
static const char *read_local(struct win *w, const struct entry *e, struct entry *l,
                              uint64_t *data)
{
	const unsigned char *p = bytes_at(w, e->offset, 30);
	uint64_t *vals[2] = {&l->usize, &l->csize};
	size_t n, m;

	if (!p || u32(p) != SIG_LOCAL)
		return "the central directory points where there is no local header";
	n = u16(p + 26), m = u16(p + 28);
	l->flags = u16(p + 6), l->method = u16(p + 8), l->crc = u32(p + 14);
	l->csize = u32(p + 18), l->usize = u32(p + 22);
	if (!(p = bytes_at(w, e->offset, 30 + n + m)))
		return "its local header runs past the end of the file";
	l->name = p + 30;
	l->name_len = n;
	l->uname = NULL;
	l->zip64 = false;
	if (!read_extra(p + 30 + n, m, vals, 2, l))
		return "its local header has a damaged extra field";
	*data = e->offset + 30 + n + m;
	return NULL;
}

/* The sizes and CRC-32 after the data (with or without their signature)
 * into l; *end: where the descriptor ends. */
static const char *read_descriptor(struct win *w, uint64_t at, bool zip64, struct entry *l,
                                   uint64_t *end)
{
	size_t len = zip64 ? 20 : 12;
	const unsigned char *p = bytes_at(w, at, 4);

	if (p && u32(p) == SIG_DESCRIPTOR)
		at += 4;
	if (!(p = bytes_at(w, at, len)))
		return "its data descriptor runs past the end of the file";
	l->crc = u32(p);
	l->csize = zip64 ? u64(p + 4) : u32(p + 4);
	l->usize = zip64 ? u64(p + 12) : u32(p + 8);
	*end = at + len;
	return NULL;
}

/* Code page 437's upper half, which a zip's name is in unless its UTF-8
 * flag (bit 11) is set: the Unicode code points of bytes 0x80 to 0xff. */
static const unsigned short cp437_high[128] = {
	0x00c7, 0x00fc, 0x00e9, 0x00e2, 0x00e4, 0x00e0, 0x00e5, 0x00e7,
	0x00ea, 0x00eb, 0x00e8, 0x00ef, 0x00ee, 0x00ec, 0x00c4, 0x00c5,
	0x00c9, 0x00e6, 0x00c6, 0x00f4, 0x00f6, 0x00f2, 0x00fb, 0x00f9,
	0x00ff, 0x00d6, 0x00dc, 0x00a2, 0x00a3, 0x00a5, 0x20a7, 0x0192,
	0x00e1, 0x00ed, 0x00f3, 0x00fa, 0x00f1, 0x00d1, 0x00aa, 0x00ba,
	0x00bf, 0x2310, 0x00ac, 0x00bd, 0x00bc, 0x00a1, 0x00ab, 0x00bb,
	0x2591, 0x2592, 0x2593, 0x2502, 0x2524, 0x2561, 0x2562, 0x2556,
	0x2555, 0x2563, 0x2551, 0x2557, 0x255d, 0x255c, 0x255b, 0x2510,
	0x2514, 0x2534, 0x252c, 0x251c, 0x2500, 0x253c, 0x255e, 0x255f,
	0x255a, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550, 0x256c, 0x2567,
	0x2568, 0x2564, 0x2565, 0x2559, 0x2558, 0x2552, 0x2553, 0x256b,
	0x256a, 0x2518, 0x250c, 0x2588, 0x2584, 0x258c, 0x2590, 0x2580,
	0x03b1, 0x00df, 0x0393, 0x03c0, 0x03a3, 0x03c3, 0x00b5, 0x03c4,
	0x03a6, 0x0398, 0x03a9, 0x03b4, 0x221e, 0x03c6, 0x03b5, 0x2229,
	0x2261, 0x00b1, 0x2265, 0x2264, 0x2320, 0x2321, 0x00f7, 0x2248,
	0x00b0, 0x2219, 0x00b7, 0x221a, 0x207f, 0x00b2, 0x25a0, 0x00a0,
};

/* Whether raw, read as code page 437, is the UTF-8 text utf8. */
static bool cp437_is(const unsigned char *raw, size_t n, const unsigned char *utf8, size_t m)
{
	unsigned char enc[3];
	size_t i, k, o = 0;

	for (i = 0; i < n; i++, o += k) {
		unsigned c = raw[i] < 0x80 ? raw[i] : cp437_high[raw[i] - 0x80];
		k = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
		enc[0] = (unsigned char)(k == 1 ? c : k == 2 ? 0xc0 | c >> 6 : 0xe0 | c >> 12);
		enc[1] = (unsigned char)(k == 2 ? 0x80 | (c & 0x3f) : 0x80 | ((c >> 6) & 0x3f));
		enc[2] = (unsigned char)(0x80 | (c & 0x3f));
		if (o + k > m || memcmp(utf8 + o, enc, k) != 0)
			return false;
	}
	return o == m;
}

/* unzip and Python take a Unicode path only when its CRC-32 is the
 * header name's, else the name itself (in UTF-8 or code page 437, as the
 * flag says); libarchive always takes the Unicode path.  The two must
 * then be one name. */
static bool unicode_path_fits(const struct entry *c)
{
	if (!c->uname || crc32_of(c->name, c->name_len) == c->name_crc)
		return true;
	if (c->flags & 0x800u)
		return c->name_len == c->uname_len && memcmp(c->name, c->uname, c->name_len) == 0;
	return cp437_is(c->name, c->name_len, c->uname, c->uname_len);
}

/* The name a reader takes: the Unicode path field's when there is one. */
static bool same_name(const struct entry *c, const struct entry *l)
{
	const unsigned char *a = c->uname ? c->uname : c->name, *b = l->uname ? l->uname : l->name;
	size_t na = c->uname ? c->uname_len : c->name_len, nb = l->uname ? l->uname_len : l->name_len;

	/* The header's own bytes read as UTF-8 or as code page 437: the same
	 * flag in both, or the same bytes could make two names. */
	if (!c->uname && !l->uname && (c->flags & 0x800u) != (l->flags & 0x800u))
		return false;
	return na == nb && memcmp(a, b, na) == 0;
}

static bool ends_in_slash(const struct entry *e)
{
	const unsigned char *name = e->uname ? e->uname : e->name;
	size_t n = e->uname ? e->uname_len : e->name_len;

	return n && name[n - 1] == '/';
}

/* Whether the two say the same of one entry. */
static const char *compare(const struct entry *c, const struct entry *l)
{
	if (!same_name(c, l))
		return "its local header gives it another name than the central directory";
	if (!unicode_path_fits(c))
		return "its Unicode path field names another file than its name does";
	/* Read as a C string the name would end there: another file. */
	if (memchr(c->name, '\0', c->name_len) || (c->uname && memchr(c->uname, '\0', c->uname_len)))
		return "its name holds a NUL byte";
	if (c->method != l->method || (c->flags & 1u) != (l->flags & 1u))
		return "its local header and the central directory give it another compression "
		       "or encryption";
	if (c->crc != l->crc || c->csize != l->csize || c->usize != l->usize)
		return "its local header and the central directory give it another size or CRC-32";
	if (c->dir >= 0 && c->dir != ends_in_slash(c))
		return "the central directory gives it another kind (folder or file) than its name "
		       "in the local header";
	return NULL;
}

/* Whether bytes [from, to) hold a local header's signature: a reader
 * going front to back would take it for an entry.  Other bytes there (a
 * self-extractor's stub, junk between entries) it skips. */
static bool hides_header(struct win *w, uint64_t from, uint64_t to)
{
	const unsigned char *p, *q;
	size_t len;

	for (; from + 4 <= to; from += len - 3) {
		len = to - from < CFA_MAP_ALIGN ? (size_t)(to - from) : CFA_MAP_ALIGN;
		if (!(p = bytes_at(w, from, len)))
			return true; /* unreadable: not known to be clean */
		/* 'P' is the first byte of the signature as stored (50 4b 03
		 * 04); the chunks overlap by three bytes, so one that straddles
		 * two is found too. */
		for (q = p; (q = memchr(q, 'P', len - 3 - (size_t)(q - p))); q++)
			if (u32(q) == SIG_LOCAL)
				return true;
		if (len < CFA_MAP_ALIGN)
			break;
	}
	return false;
}

/* One entry: its local header at or after *expect, agreeing; *expect
 * moves to where its data (and descriptor) end. */
static const char *check_entry(struct win *lw, const struct entry *c, uint64_t *expect)
{
	struct entry l;
	uint64_t data, end;
	const char *why;

	if (c->offset < *expect)
		return "its data overlaps another entry's";
	if (hides_header(lw, *expect, c->offset))
		return "before its local header lies another that the central directory does not list";
	if ((why = read_local(lw, c, &l, &data)))
		return why;
	if (data > lw->size || c->csize > lw->size - data)
		return "its data runs past the end of the file";
	end = data + c->csize;
	/* With a descriptor the header may hold zeros; what counts follows the data. */
	if ((l.flags & FLAG_DESCRIPTOR) && (why = read_descriptor(lw, end, l.zip64, &l, &end)))
		return why;
	l.dir = c->dir;
	if ((why = compare(c, &l)))
		return why;
	*expect = end;
	return NULL;
}

/* The end of central directory record (the last valid one, as libarchive
 * takes it), and the Zip64 one when it says so. */
struct dir {
	uint64_t offset, size, entries, end;   /* end: where the directory must end */
};

/* The Zip64 end record the locator before the end record points at:
 * its values stand for the ones the end record leaves all ones. */
static bool end_record64(struct win *w, uint64_t locator, struct dir *d)
{
	const unsigned char *p = bytes_at(w, locator, 20);
	uint64_t rec = p ? u64(p + 8) : 0;

	/* Disk numbers 0, and this disk's entries all of them: a zip split over
	 * disks is refused, as in end_record. */
	if (!p || !(p = bytes_at(w, rec, 56)) || u32(p) != SIG_END64 || u32(p + 16) || u32(p + 20) ||
	    u64(p + 24) != u64(p + 32))
		return false;
	d->entries = u64(p + 32), d->size = u64(p + 40), d->offset = u64(p + 48);
	d->end = rec;
	return true;
}

static bool end_record(struct win *w, uint64_t at, struct dir *d)
{
	const unsigned char *p = bytes_at(w, at, 22), *loc;

	if (!p || u32(p) != SIG_END)
		return false;
	loc = at >= 20 ? bytes_at(w, at - 20, 4) : NULL;
	if (loc && u32(loc) == SIG_LOCATOR64) {
		if (!end_record64(w, at - 20, d))
			return false;
	} else if (u16(p + 4) || u16(p + 6) || u16(p + 8) != u16(p + 10)) {
		return false; /* a zip split over several disks */
	} else {
		d->entries = u16(p + 10), d->size = u32(p + 12), d->offset = u32(p + 16);
		d->end = at;
	}
	return d->size <= d->end;
}

static bool find_directory(struct win *w, struct dir *d)
{
	/* The end record is 22 bytes and its comment at most 65535: it starts
	 * in the file's last 22 + 65535 bytes.  Searched from the end, so that
	 * the last valid one is found. */
	uint64_t at, low = w->size > 22 + 65535 ? w->size - 22 - 65535 : 0;

	for (at = w->size >= 22 ? w->size - 22 + 1 : 0; at-- > low;)
		if (end_record(w, at, d))
			return true;
	return false;
}

static int by_offset(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The central records' places, ordered by their local headers' (pairs:
 * local offset, record position), into *out (cfa_free). */
static const char *directory_order(struct win *cw, const struct dir *d, uint64_t base,
                                   uint64_t **out)
{
	uint64_t pos = base + d->offset, i;
	uint64_t *v;
	struct entry e;
	const char *why = NULL;

	*out = NULL;
	if (d->entries > d->size / 46) /* a record takes 46 bytes at least */
		return "its central directory is damaged (more entries than its size holds)";
	/* One pair more than the entries, so that an empty directory still
	 * allocates. */
	if (!(v = cfa_calloc((size_t)d->entries + 1, 2 * sizeof(*v))))
		return "its central directory lists more entries than fit in memory";

	for (i = 0; !why && i < d->entries; i++) {
		v[2 * i + 1] = pos;
		if (!(why = read_central(cw, &pos, d->end, &e)))
			v[2 * i] = base + e.offset;
	}
	if (!why && pos != d->end)
		why = "its central directory is damaged (its size is not its entries')";
	if (why) {
		cfa_free(v);
		return why;
	}
	qsort(v, (size_t)d->entries, 2 * sizeof(*v), by_offset);
	*out = v;
	return NULL;
}

/* The checks on an opened zip; *bad: the entry (central directory's name). */
static const char *agree(struct win *cw, struct win *lw, struct entry *bad)
{
	struct dir d;
	uint64_t *order, base, expect, i, pos;
	const char *why = NULL;

	if (!find_directory(cw, &d))
		return "no central directory found (a cut or damaged zip)";
	if (d.end - d.size < d.offset)
		return "its central directory is not where its end record says";
	/* A stub before the zip (a self-extractor) moves every offset. */
	base = d.end - d.size - d.offset;
	if ((why = directory_order(cw, &d, base, &order)))
		return why;
	/* A reader going front to back starts at the start. */
	expect = 0;
	for (i = 0; !why && i < d.entries; i++) {
		pos = order[2 * i + 1];
		if ((why = read_central(cw, &pos, d.end, bad)))
			break;
		bad->offset += base;
		why = check_entry(lw, bad, &expect);
	}
	if (!why && (expect > base + d.offset || hides_header(lw, expect, base + d.offset))) {
		bad->name_len = 0;
		why = expect > base + d.offset
		          ? "its central directory overlaps its last entry's data"
		          : "a local header that the central directory does not list lies before it";
	}
	cfa_free(order);
	return why;
}

const char *cfa_zip_lists_agree(const char *file, char **entry)
{
	struct win cw = {0}, lw = {0};
	struct entry bad = {0};
	const char *why;

	*entry = NULL;
	/* Two windows on one file: the central record's name stays mapped in cw
	 * while its local header is read through lw. */
	cw.m = cfa_plat_map_open(file, &cw.size);
	lw.m = cfa_plat_map_open(file, &lw.size);
	why = cw.m && lw.m ? agree(&cw, &lw, &bad) : "it cannot be read (an empty file?)";
	/* The name as the central directory spells it: what other tools show. */
	if (why && bad.name && bad.name_len)
		*entry = cfa_strndup((const char *)bad.name, bad.name_len);
	cfa_plat_map_close(cw.m);
	cfa_plat_map_close(lw.m);
	return why;
}
