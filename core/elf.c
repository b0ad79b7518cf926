/*
 * elf.c - what a shared library or program asks of the dynamic loader:
 * its DT_NEEDED names, DT_SONAME, DT_RUNPATH/DT_RPATH and the symbol
 * versions it defines (DT_VERDEF: a C library's GLIBC_2.x says which
 * glibc it is).  Only 64-bit little-endian ELF is read (x86_64, aarch64);
 * anything else is "not ELF" and skipped by callers.
 *
 * The file is never read whole (ROCm's libraries run past a gigabyte):
 * the header, the program headers, the dynamic segment and the string
 * table are read where they lie, each bounded, each offset checked
 * against the file's size before it is used.  An address the dynamic
 * section names (DT_STRTAB, DT_VERDEF) is turned into a file offset
 * through the PT_LOAD segment that holds it, as the loader maps it.
 */
#include "core/elf.h"

#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define PHNUM_MAX 4096u             /* program headers a sane object has */
#define DYN_MAX (1u << 20)          /* bytes of dynamic section */
#define STRTAB_MAX (64u << 20)      /* bytes of dynamic string table */
#define NAMES_MAX 4096u             /* DT_NEEDED and verdef entries */
#define LOADS_MAX 64u

enum { PT_LOAD = 1, PT_DYNAMIC = 2 };
enum { DT_NULL = 0, DT_NEEDED = 1, DT_STRTAB = 5, DT_STRSZ = 10, DT_SONAME = 14,
       DT_RPATH = 15, DT_RUNPATH = 29 };
#define DT_VERDEF 0x6ffffffcu
#define DT_VERDEFNUM 0x6ffffffdu

struct load {
	uint64_t vaddr, offset, filesz;
};

struct parse {
	cfa_elf_read_fn rd;
	void *arg;
	uint64_t size;
	struct cfa_arena *arena;
	struct cfa_elf *out;
	const char *why;
	struct load loads[LOADS_MAX];
	size_t nloads;
	uint64_t dyn_off, dyn_size;
	char *strtab;
	uint64_t strsz;
};

/* Little-endian whatever the host, as only ELFDATA2LSB files are read, and byte
 * by byte, so that a field at an odd offset is no trap. */
static uint16_t u16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t u64(const unsigned char *p)
{
	return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32;
}

static bool bad(struct parse *p, const char *why)
{
	p->why = why;
	return false;
}

/* len bytes at off, both inside the file. */
static bool read_at(struct parse *p, uint64_t off, void *buf, size_t len)
{
	/* In this form, not off + len > size, so that an offset near the top of
	 * the range cannot wrap round. */
	if (off > p->size || len > p->size - off)
		return bad(p, "a part of it lies past the end of the file");
	if (!p->rd(p->arg, off, buf, len))
		return bad(p, "it could not be read");
	return true;
}

/* The file offset of a mapped address, through its PT_LOAD. */
static bool addr_offset(struct parse *p, uint64_t addr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < p->nloads; i++) {
		const struct load *l = &p->loads[i];
		/* Bytes past filesz are zero-filled memory with nothing
		 * behind them in the file, so an address there has no offset
		 * to read. */
		if (addr >= l->vaddr && addr - l->vaddr < l->filesz) {
			*off = addr - l->vaddr + l->offset;
			return true;
		}
	}
	return bad(p, "its dynamic section names an address no loaded segment holds");
}

static bool program_headers(struct parse *p, const unsigned char *eh)
{
	uint64_t phoff = u64(eh + 32);
	uint16_t phentsize = u16(eh + 54), phnum = u16(eh + 56), i;
	unsigned char ph[56];

	if (phnum == 0)
		return true; /* an object file: nothing for the loader */
	if (phentsize < 56 || phnum > PHNUM_MAX)
		return bad(p, "its program headers are not ones a loader reads");
	for (i = 0; i < phnum; i++) {
		uint32_t type;
		if (!read_at(p, phoff + (uint64_t)i * phentsize, ph, sizeof(ph)))
			return false;
		type = u32(ph);
		/* p_offset, p_vaddr and p_filesz lie at 8, 16 and 32.  Segments
		 * past LOADS_MAX are not kept: an address only they hold then
		 * fails to map, which refuses the file rather than writing past
		 * the array. */
		if (type == PT_LOAD && p->nloads < LOADS_MAX)
			p->loads[p->nloads++] = (struct load){u64(ph + 16), u64(ph + 8), u64(ph + 32)};
		else if (type == PT_DYNAMIC) {
			p->dyn_off = u64(ph + 8);
			p->dyn_size = u64(ph + 32);
		}
	}
	return true;
}

/* A string of the dynamic string table, checked to end inside it. */
static const char *dyn_str(struct parse *p, uint64_t at)
{
	if (!p->strtab || at >= p->strsz || !memchr(p->strtab + at, '\0', p->strsz - at)) {
		bad(p, "a name points outside its string table");
		return NULL;
	}
	return p->strtab + at;
}

static bool read_strtab(struct parse *p, uint64_t addr, uint64_t size)
{
	uint64_t off;

	if (!size || size > STRTAB_MAX)
		return bad(p, "its string table is empty or too large");
	if (!addr_offset(p, addr, &off))
		return false;
	if (!(p->strtab = cfa_arena_alloc(p->arena, (size_t)size + 1)))
		return bad(p, "out of memory");
	p->strsz = size;
	return read_at(p, off, p->strtab, (size_t)size);
}

static bool add_name(struct parse *p, const char ***list, size_t *n, size_t *cap,
                     const char *s)
{
	const char *kept;

	if (*n == NAMES_MAX)
		return bad(p, "it names more libraries or versions than any object does");
	if (*n == *cap) {
		size_t grown = *cap ? *cap * 2 : 16;
		const char **more = cfa_arena_alloc(p->arena, grown * sizeof(*more));
		if (!more)
			return bad(p, "out of memory");
		if (*n)
			memcpy(more, *list, *n * sizeof(*more));
		*list = more;
		*cap = grown;
	}
	if (!(kept = cfa_arena_strdup(p->arena, s)))
		return bad(p, "out of memory");
	(*list)[(*n)++] = kept;
	return true;
}

/* Version definitions: the first name of each (its own, not a parent's). */
static bool verdefs(struct parse *p, uint64_t addr, uint64_t count)
{
	uint64_t off, i;
	size_t cap = 0;
	unsigned char vd[20], aux[8];

	if (!addr_offset(p, addr, &off))
		return false;
	for (i = 0; i < count && i < NAMES_MAX; i++) {
		const char *name;
		uint32_t next;
		if (!read_at(p, off, vd, sizeof(vd)) || !read_at(p, off + u32(vd + 12), aux, sizeof(aux)))
			return false;
		/* vd_cnt (at 6) counts the names; the first, at vd_aux (12), is
		 * the version's own. */
		if (u16(vd + 6) && (name = dyn_str(p, u32(aux))) &&
		    !add_name(p, &p->out->verdefs, &p->out->nverdefs, &cap, name))
			return false;
		if (p->why)
			return false;
		/* vd_next 0 ends the chain; count and NAMES_MAX bound it too,
		 * so a chain that loops cannot run forever. */
		if ((next = u32(vd + 16)) == 0)
			break;
		off += next;
	}
	return true;
}

struct dyn_values {
	uint64_t strtab, strsz, soname, rpath, runpath, verdef, verdefnum;
	bool has_strtab, has_soname, has_rpath, has_runpath, has_verdef;
};

/* One pass for the table's addresses, a second for the names. */
static bool dynamic(struct parse *p)
{
	unsigned char *dyn;
	struct dyn_values d;
	uint64_t i, n;
	size_t cap = 0;

	if (!p->dyn_size)
		return true; /* static: needs nothing */
	/* Each entry is two 64-bit words, a tag and a value. */
	if (p->dyn_size > DYN_MAX || p->dyn_size % 16)
		return bad(p, "its dynamic section is not a list of entries");
	n = p->dyn_size / 16;
	if (!(dyn = cfa_arena_alloc(p->arena, (size_t)p->dyn_size)) ||
	    !read_at(p, p->dyn_off, dyn, (size_t)p->dyn_size))
		return p->why ? false : bad(p, "out of memory");
	memset(&d, 0, sizeof(d));
	for (i = 0; i < n && u64(dyn + i * 16) != DT_NULL; i++) {
		uint64_t tag = u64(dyn + i * 16), val = u64(dyn + i * 16 + 8);
		if (tag == DT_STRTAB)
			d.strtab = val, d.has_strtab = true;
		else if (tag == DT_STRSZ)
			d.strsz = val;
		else if (tag == DT_SONAME)
			d.soname = val, d.has_soname = true;
		else if (tag == DT_RPATH)
			d.rpath = val, d.has_rpath = true;
		else if (tag == DT_RUNPATH)
			d.runpath = val, d.has_runpath = true;
		else if (tag == DT_VERDEF)
			d.verdef = val, d.has_verdef = true;
		else if (tag == DT_VERDEFNUM)
			d.verdefnum = val;
	}
	/* Without a string table there are no names to read: the object asks
	 * nothing of the loader by name. */
	if (!d.has_strtab)
		return true;
	if (!read_strtab(p, d.strtab, d.strsz))
		return false;
	for (i = 0; i < n && u64(dyn + i * 16) != DT_NULL; i++) {
		const char *s;
		if (u64(dyn + i * 16) != DT_NEEDED)
			continue;
		if (!(s = dyn_str(p, u64(dyn + i * 16 + 8))) ||
		    !add_name(p, &p->out->needed, &p->out->nneeded, &cap, s))
			return false;
	}
	if ((d.has_soname && !(p->out->soname = dyn_str(p, d.soname))) ||
	    (d.has_rpath && !(p->out->rpath = dyn_str(p, d.rpath))) ||
	    (d.has_runpath && !(p->out->runpath = dyn_str(p, d.runpath))))
		return false;
	return !d.has_verdef || verdefs(p, d.verdef, d.verdefnum);
}

/* The machine's own library folders, multiarch ones first, as Debian, Ubuntu
 * and Fedora lay them out. */
const char *const cfa_elf_system_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};
const size_t cfa_elf_nsystem_dirs = sizeof(cfa_elf_system_dirs) / sizeof(cfa_elf_system_dirs[0]);

bool cfa_elf_glibc_name(const char *name)
{
	/* What the libc6 package ships as libraries others link against. */
	static const char *const names[] = {
		"libc.so.6", "libm.so.6", "libmvec.so.1", "libpthread.so.0", "libdl.so.2",
		"librt.so.1", "libresolv.so.2", "libutil.so.1", "libanl.so.1", "libnsl.so.1",
		"libBrokenLocale.so.1", "libthread_db.so.1", "libc_malloc_debug.so.0",
		"libnss_files.so.2", "libnss_dns.so.2", "ld-linux-x86-64.so.2",
		"ld-linux-aarch64.so.1"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

enum cfa_elf_kind cfa_elf_parse(cfa_elf_read_fn rd, void *arg, uint64_t size,
                                struct cfa_arena *arena, struct cfa_elf *out, const char **why)
{
	struct parse p;
	unsigned char eh[64];

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	p = (struct parse){.rd = rd, .arg = arg, .size = size, .arena = arena, .out = out};
	*why = NULL;
	if (size < sizeof(eh) || !rd(arg, 0, eh, sizeof(eh)) || memcmp(eh, "\177ELF", 4) != 0)
		return CFA_ELF_NOT_ELF;
	/* ELFCLASS64, ELFDATA2LSB: what the x86_64 and aarch64 loaders read. */
	if (eh[4] != 2 || eh[5] != 1)
		return CFA_ELF_NOT_ELF;
	out->type = u16(eh + 16);
	out->machine = u16(eh + 18);
	if (program_headers(&p, eh) && dynamic(&p))
		return CFA_ELF_OK;
	*why = p.why;
	return CFA_ELF_BAD;
}

/* Reads from a file mapped one window at a time. */
struct file_reader {
	struct cfa_map *map;
};

static bool map_read(void *arg, uint64_t off, void *buf, size_t len)
{
	struct file_reader *f = arg;
	/* A view must start at an aligned offset; only what is asked for is
	 * mapped, so a gigabyte library costs a window, not its size. */
	uint64_t base = off - off % CFA_MAP_ALIGN;
	const unsigned char *view = cfa_plat_map_view(f->map, base, (size_t)(off - base) + len);

	if (!view)
		return false;
	memcpy(buf, view + (off - base), len);
	return true;
}

enum cfa_elf_kind cfa_elf_read_file(const char *path, struct cfa_arena *arena,
                                    struct cfa_elf *out, const char **why)
{
	struct file_reader f;
	uint64_t size = 0;
	enum cfa_elf_kind k;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (!(f.map = cfa_plat_map_open(path, &size)))
		return CFA_ELF_NOT_ELF; /* empty or unreadable: nothing a loader would map */
	k = cfa_elf_parse(map_read, &f, size, arena, out, why);
	cfa_plat_map_close(f.map);
	return k;
}
