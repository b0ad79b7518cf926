/*
 * elf.h - what the loader reads of a shared library before it loads it:
 * its DT_NEEDED names and its DT_RPATH / DT_RUNPATH.  Plain C on the
 * standard library alone (the GPU test machine builds it with gcc to read
 * a real wheel), 64-bit little-endian ELF only, as every x86-64 and
 * AArch64 Linux wheel is.
 */
#ifndef CFA_ELF_H
#define CFA_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CFA_ELF_MAX_NEEDED 64

struct cfa_elf_dyn {
	char *strings;             /* the dynamic string table (owned) */
	const char *needed[CFA_ELF_MAX_NEEDED]; /* into strings */
	size_t nneeded;
	const char *rpath;         /* DT_RPATH, or NULL */
	const char *runpath;       /* DT_RUNPATH, or NULL (it turns DT_RPATH off) */
	const char *soname;        /* DT_SONAME, or NULL */
};

/* Reads f's dynamic section.  false (*why: a static text) when f is no
 * 64-bit little-endian ELF with one, or a table points outside the file. */
bool cfa_elf_read(FILE *f, struct cfa_elf_dyn *out, const char **why);
void cfa_elf_free(struct cfa_elf_dyn *d);

#endif
