/*
 * elf.c - the dynamic section of a 64-bit little-endian ELF file: which
 * libraries it needs and where its own search path sends the loader.
 * Every offset and size read from the file is checked against the file
 * before it is used; nothing is mapped or trusted.
 */
#include "runtime/elf.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PT_LOAD 1
#define PT_DYNAMIC 2
#define DT_NULL 0
#define DT_NEEDED 1
#define DT_STRTAB 5
#define DT_STRSZ 10
#define DT_SONAME 14
#define DT_RPATH 15
#define DT_RUNPATH 29
#define MAX_PHDRS 512
#define MAX_DYN 4096                  /* entries read, far past any real library */
#define MAX_STRINGS (64u << 20)       /* a dynamic string table larger than this is refused */

struct phdr {
	uint32_t type;
	uint64_t offset, vaddr, filesz;
};

/* A little-endian field of n bytes: the ELF class this reads is always
 * little-endian, whatever the host. */
static uint64_t le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Why reading stopped: a static text, so no buffer can cut it. */
static bool fail(const char **why, const char *text)
{
	*why = text;
	return false;
}

/* n bytes at offset into buf; false past the end or beyond what fseek
 * reaches on this system. */
static bool read_at(FILE *f, uint64_t offset, void *buf, size_t n)
{
	return offset <= (uint64_t)LONG_MAX && fseek(f, (long)offset, SEEK_SET) == 0 &&
	       fread(buf, 1, n, f) == n;
}

/* The program header table's place, entry size and count come from the ELF
 * header (e_phoff, e_phentsize, e_phnum); an entry size other than the 64-bit
 * one means the file is not what this reads. */
static bool read_phdrs(FILE *f, const unsigned char *eh, struct phdr *ph, size_t *n,
                       const char **why)
{
	uint64_t off = le(eh + 32, 8);
	size_t size = (size_t)le(eh + 54, 2), count = (size_t)le(eh + 56, 2), i;
	unsigned char raw[56];

	if (size != sizeof(raw) || count == 0 || count > MAX_PHDRS)
		return fail(why, "unexpected program headers");
	for (i = 0; i < count; i++) {
		if (!read_at(f, off + i * size, raw, sizeof(raw)))
			return fail(why, "program headers past the end of the file");
		ph[i].type = (uint32_t)le(raw, 4);
		ph[i].offset = le(raw + 8, 8);
		ph[i].vaddr = le(raw + 16, 8);
		ph[i].filesz = le(raw + 32, 8);
	}
	*n = count;
	return true;
}

/* The file offset of an address inside a loaded segment's file bytes.
 * The dynamic tags give addresses, not file offsets: the PT_LOAD segment that
 * holds the address says where its bytes are in the file. */
static bool file_offset(const struct phdr *ph, size_t n, uint64_t addr, uint64_t *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ph[i].type == PT_LOAD && addr >= ph[i].vaddr &&
		    addr - ph[i].vaddr < ph[i].filesz) {
			*out = ph[i].offset + (addr - ph[i].vaddr);
			return true;
		}
	return false;
}

struct dyn_tags {
	uint64_t strtab, strsz, soname, rpath, runpath;
	uint64_t needed[CFA_ELF_MAX_NEEDED];
	size_t nneeded;
	bool has_soname, has_rpath, has_runpath;
};

/* NEEDED entries past CFA_ELF_MAX_NEEDED are dropped: far more than any real
 * library lists. */
static void note_tag(struct dyn_tags *t, uint64_t tag, uint64_t val)
{
	switch (tag) {
	case DT_NEEDED:
		if (t->nneeded < CFA_ELF_MAX_NEEDED)
			t->needed[t->nneeded++] = val;
		break;
	case DT_STRTAB:
		t->strtab = val;
		break;
	case DT_STRSZ:
		t->strsz = val;
		break;
	case DT_SONAME:
		t->soname = val;
		t->has_soname = true;
		break;
	case DT_RPATH:
		t->rpath = val;
		t->has_rpath = true;
		break;
	case DT_RUNPATH:
		t->runpath = val;
		t->has_runpath = true;
		break;
	default:
		break;
	}
}

/* DT_NULL ends the table; a table without one ends at the segment's size, and
 * MAX_DYN bounds a damaged one. */
static bool read_tags(FILE *f, const struct phdr *dyn, struct dyn_tags *t,
                      const char **why)
{
	unsigned char raw[16];
	uint64_t i, count = dyn->filesz / sizeof(raw);

	memset(t, 0, sizeof(*t));
	for (i = 0; i < count && i < MAX_DYN; i++) {
		if (!read_at(f, dyn->offset + i * sizeof(raw), raw, sizeof(raw)))
			return fail(why, "the dynamic section runs past the end of the file");
		if (le(raw, 8) == DT_NULL)
			return true;
		note_tag(t, le(raw, 8), le(raw + 8, 8));
	}
	return true;
}

/* A name at offset in the table, or NULL when the offset is outside it.
 * The copy ends in a NUL of its own (read_strings), so any offset inside the
 * table gives a terminated string. */
static const char *str_at(const struct cfa_elf_dyn *d, uint64_t size, uint64_t off)
{
	return off < size ? d->strings + off : NULL;
}

static bool read_strings(FILE *f, const struct phdr *ph, size_t n, const struct dyn_tags *t,
                         struct cfa_elf_dyn *d, const char **why)
{
	uint64_t at;
	size_t i;

	if (t->strsz == 0 || t->strsz > MAX_STRINGS || !file_offset(ph, n, t->strtab, &at))
		return fail(why, "no readable dynamic string table");
	if (!(d->strings = malloc((size_t)t->strsz + 1)))
		return fail(why, "out of memory");
	if (!read_at(f, at, d->strings, (size_t)t->strsz))
		return fail(why, "the dynamic string table runs past the end of the file");
	d->strings[t->strsz] = '\0'; /* every name ends inside the copy */
	for (i = 0; i < t->nneeded; i++)
		if ((d->needed[d->nneeded] = str_at(d, t->strsz, t->needed[i])))
			d->nneeded++;
	d->soname = t->has_soname ? str_at(d, t->strsz, t->soname) : NULL;
	/* Both paths are kept: the caller decides which one the loader uses (a
	 * RUNPATH makes glibc ignore the RPATH). */
	d->rpath = t->has_rpath ? str_at(d, t->strsz, t->rpath) : NULL;
	d->runpath = t->has_runpath ? str_at(d, t->strsz, t->runpath) : NULL;
	return true;
}

/* On failure *why is a static text and out is cleared, so the caller has
 * nothing to free. */
bool cfa_elf_read(FILE *f, struct cfa_elf_dyn *out, const char **why)
{
	unsigned char eh[64];
	struct phdr *ph = malloc(MAX_PHDRS * sizeof(*ph));
	struct dyn_tags *t = malloc(sizeof(*t));
	size_t n = 0, i;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (!ph || !t)
		fail(why, "out of memory");
	else if (!read_at(f, 0, eh, sizeof(eh)) || memcmp(eh, "\177ELF", 4) != 0)
		fail(why, "not an ELF file");
	else if (eh[4] != 2 || eh[5] != 1)
		fail(why, "not a 64-bit little-endian ELF file");
	else if (read_phdrs(f, eh, ph, &n, why)) {
		for (i = 0; i < n && ph[i].type != PT_DYNAMIC; i++)
			;
		/* A file without PT_DYNAMIC is linked statically: it loads no
		 * libraries. */
		if (i == n)
			fail(why, "no dynamic section (a static file?)");
		else
			ok = read_tags(f, &ph[i], t, why) && read_strings(f, ph, n, t, out, why);
	}
	free(ph);
	free(t);
	if (!ok)
		cfa_elf_free(out);
	return ok;
}

void cfa_elf_free(struct cfa_elf_dyn *d)
{
	free(d->strings);
	memset(d, 0, sizeof(*d));
}
