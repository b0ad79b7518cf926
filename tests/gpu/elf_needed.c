/*
 * elf_needed.c - prints what runtime/elf.c reads of a library (its
 * DT_NEEDED names, DT_RPATH or DT_RUNPATH, and DT_SONAME), so the GPU test
 * machine shows what cfapkg sees of a real wheel's libtorch_cuda.so.
 * Build: cc -std=c11 -I. tests/gpu/elf_needed.c runtime/elf.c
 */
#include <stdio.h>

#include "runtime/elf.h"

int main(int argc, char **argv)
{
	struct cfa_elf_dyn d;
	const char *why = "";
	FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
	size_t i;

	if (!f || !cfa_elf_read(f, &d, &why)) {
		fprintf(stderr, "elf_needed: %s: %s\n", argc == 2 ? argv[1] : "usage: elf_needed FILE",
		        f ? why : "cannot open it");
		return 1;
	}
	fclose(f);
	printf("SONAME %s\n", d.soname ? d.soname : "-");
	printf("%s %s\n", d.runpath ? "RUNPATH" : "RPATH", d.runpath ? d.runpath : d.rpath ? d.rpath : "-");
	for (i = 0; i < d.nneeded; i++)
		printf("NEEDED %s\n", d.needed[i]);
	cfa_elf_free(&d);
	return 0;
}
