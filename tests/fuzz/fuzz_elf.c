/*
 * fuzz_elf.c - the ELF reader (core/elf.c), which reads the libraries of
 * every package installed (the load check) and a machine's libc.so.6.
 * The input is the file.  Properties, beyond not crashing:
 *   - the reader never asks for a byte outside the file (the read
 *     function aborts if it does);
 *   - every name it returns (DT_NEEDED, DT_SONAME, DT_RUNPATH, DT_RPATH,
 *     the version definitions) is terminated, non-empty where a loader
 *     would need it to be, and its bytes occur in the input;
 *   - reading the same bytes from a file (the mapped-window reader) gives
 *     the same answer, name for name.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/elf.h"
#include "tests/fuzz/fuzz.h"

struct buffer {
	const uint8_t *data;
	size_t size;
};

static bool buffer_read(void *arg, uint64_t off, void *buf, size_t len)
{
	const struct buffer *b = arg;

	FUZZ_CHECK(off <= b->size && len <= b->size - off, "read %zu at %llu of %zu", len,
	           (unsigned long long)off, b->size);
	memcpy(buf, b->data + off, len);
	return true;
}

static bool in_input(const struct buffer *b, const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		return true;
	for (size_t i = 0; i + n <= b->size; i++)
		if (memcmp(b->data + i, s, n) == 0)
			return true;
	return false;
}

static void check_names(const struct buffer *b, const char *const *names, size_t n,
                        const char *what)
{
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(names[i] != NULL, "%s %zu is NULL", what, i);
		FUZZ_CHECK(in_input(b, names[i]), "%s \"%s\" is not in the input", what, names[i]);
	}
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_same(const struct cfa_elf *a, const struct cfa_elf *b)
{
	FUZZ_CHECK(a->type == b->type && a->machine == b->machine, "header differs");
	FUZZ_CHECK(a->nneeded == b->nneeded && a->nverdefs == b->nverdefs, "counts differ");
	for (size_t i = 0; i < a->nneeded; i++)
		FUZZ_CHECK(strcmp(a->needed[i], b->needed[i]) == 0, "needed %zu differs", i);
	for (size_t i = 0; i < a->nverdefs; i++)
		FUZZ_CHECK(strcmp(a->verdefs[i], b->verdefs[i]) == 0, "verdef %zu differs", i);
	FUZZ_CHECK(same_str(a->soname, b->soname) && same_str(a->runpath, b->runpath) &&
	           same_str(a->rpath, b->rpath), "soname or paths differ");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buffer b = {data, size};
	struct cfa_arena a1, a2;
	struct cfa_elf e1, e2;
	const char *why1 = NULL, *why2 = NULL;
	enum cfa_elf_kind k1, k2;
	char path[1024];

	cfa_arena_init(&a1);
	cfa_arena_init(&a2);
	k1 = cfa_elf_parse(buffer_read, &b, size, &a1, &e1, &why1);
	FUZZ_CHECK(k1 != CFA_ELF_BAD || why1, "a refusal without a reason");
	if (k1 == CFA_ELF_OK) {
		check_names(&b, e1.needed, e1.nneeded, "needed");
		check_names(&b, e1.verdefs, e1.nverdefs, "verdef");
		check_names(&b, (const char *const[]){e1.soname ? e1.soname : "",
		                                      e1.runpath ? e1.runpath : "",
		                                      e1.rpath ? e1.rpath : ""}, 3, "name");
	}
	fuzz_path(path, sizeof(path), "object.so");
	fuzz_write(path, data, size);
	k2 = cfa_elf_read_file(path, &a2, &e2, &why2);
	/* An empty file cannot be mapped: the file reader calls it not ELF. */
	FUZZ_CHECK(k1 == k2 || (size == 0 && k2 == CFA_ELF_NOT_ELF), "buffer %d, file %d", k1, k2);
	if (k1 == CFA_ELF_OK && k2 == CFA_ELF_OK)
		check_same(&e1, &e2);
	cfa_arena_fini(&a1);
	cfa_arena_fini(&a2);
	return 0;
}
