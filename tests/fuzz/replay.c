/*
 * replay.c - runs saved inputs through a harness once, without libFuzzer:
 *   replay_NAME FILE_OR_FOLDER...
 * so that every build (normal, ASan, plain gcc) checks the regression
 * inputs and the seed corpus.  Each input is named before it runs, so a
 * crash shows which one it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"
#include "tests/fuzz/fuzz.h"

static size_t replayed;

static void replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n = -1;

	if (f && fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	if (n < 0 || fseek(f, 0, SEEK_SET) != 0 || !(buf = malloc((size_t)n + 1)) ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	replayed++;
}

static int replay_entry(const char *name, void *arg)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", (const char *)arg, name);
	if (name[0] != '.' && cfa_plat_is_file(path))
		replay_file(path);
	return 0;
}

int main(int argc, char **argv)
{
	int i;

	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		if (cfa_plat_is_dir(argv[i]))
			cfa_plat_list_dir(argv[i], replay_entry, argv[i]);
		else
			replay_file(argv[i]);
	}
	printf("%s: %zu inputs, no property broken\n", argv[0], replayed);
	return 0;
}
