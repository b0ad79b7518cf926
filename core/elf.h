/*
 * elf.h - reading what a 64-bit little-endian ELF object asks of the
 * dynamic loader (elf.c): bounded, never the whole file.
 */
#ifndef CFA_ELF_H
#define CFA_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

enum cfa_elf_kind {
	CFA_ELF_OK,       /* read: the fields below hold */
	CFA_ELF_NOT_ELF,  /* not a 64-bit little-endian ELF file (or empty): skip it */
	CFA_ELF_BAD       /* an ELF file whose loader tables do not hold together */
};

#define CFA_ELF_EXEC 2
#define CFA_ELF_DYN 3
#define CFA_ELF_X86_64 62
#define CFA_ELF_AARCH64 183

struct cfa_elf {
	uint16_t type;              /* e_type: CFA_ELF_EXEC, CFA_ELF_DYN, ... */
	uint16_t machine;           /* e_machine */
	const char **needed;        /* DT_NEEDED, in order */
	size_t nneeded;
	const char *soname, *runpath, *rpath;   /* NULL when absent */
	const char **verdefs;       /* version names it defines ("GLIBC_2.36") */
	size_t nverdefs;
};

/* The folders Linux distributions keep their shared libraries in (Debian
 * and Ubuntu's multiarch ones first, then Fedora's and Arch's), for
 * finding the C library and what a system's loader would find. */
extern const char *const cfa_elf_system_dirs[];
extern const size_t cfa_elf_nsystem_dirs;

/* Whether name is a library of the GNU C library itself (libc.so.6,
 * libm.so.6, ld-linux-x86-64.so.2, ...): the machine's, never a part's. */
bool cfa_elf_glibc_name(const char *name);

/* Reads len bytes at off into buf; false when it cannot. */
typedef bool (*cfa_elf_read_fn)(void *arg, uint64_t off, void *buf, size_t len);

/* Parses an object of size bytes through rd; strings land in arena.  On
 * CFA_ELF_BAD, *why says what does not hold. */
enum cfa_elf_kind cfa_elf_parse(cfa_elf_read_fn rd, void *arg, uint64_t size,
                                struct cfa_arena *arena, struct cfa_elf *out, const char **why);
/* The same for a file (an unreadable or empty one is CFA_ELF_NOT_ELF). */
enum cfa_elf_kind cfa_elf_read_file(const char *path, struct cfa_arena *arena,
                                    struct cfa_elf *out, const char **why);

#endif
