/*
 * main.c - cfapkg-probe LIBRARY [--lib-dir DIR]...: one check per run, so
 * the caller can time it out and tell a crash from a failure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/compat.h" /* attributes only: the probe links no core/ code */
#include "platform/dynlib.h"
#include "probe/probe.h"

static const struct {
	const char *name;
	int (*run)(struct probe *p);
} checks[] = {
	{"cuda", check_cuda},         {"cublas", check_cublas}, {"cublaslt", check_cublaslt},
	{"cusparse", check_cusparse}, {"cufft", check_cufft},   {"nvml", check_nvml},
	{"cudnn", check_cudnn},
};

int main(int argc, char **argv)
{
	struct probe p;
	size_t i;
	int a;

	/* Before any library is loaded: a crash in one must end the probe at once. */
	cfa_dl_crash_ends_process();
	memset(&p, 0, sizeof(p));
	/* As many folders as given: never fewer than the caller asked for. */
	if (!(p.dirs = calloc((size_t)argc, sizeof(*p.dirs)))) {
		fprintf(stderr, "cfapkg-probe: out of memory\n");
		return 2;
	}
	for (a = 2; a < argc; a++) {
		if (strcmp(argv[a], "--only-dirs") == 0)
			p.only_dirs = 1;
		else if (strcmp(argv[a], "--lib-dir") == 0 && a + 1 < argc)
			p.dirs[p.ndirs++] = argv[++a];
		else
			break;
	}
	/* Every check but the driver's own needs the driver, so its absence
	 * there reads as SKIPPED, not as the checked library missing. */
	p.for_other = argc > 1 && strcmp(argv[1], "cuda") != 0;
	/* Every word after the library must have been read as an option above;
	 * a word left over is a usage error, as is an unknown library. */
	for (i = 0; argc > 1 && a == argc && i < sizeof(checks) / sizeof(checks[0]); i++)
		if (strcmp(argv[1], checks[i].name) == 0)
			break;
	if (i < sizeof(checks) / sizeof(checks[0]) && argc > 1 && a == argc) {
		int rc = checks[i].run(&p);
		free(p.cuda_file);
		free(p.lib_file);
		free(p.dirs);
		return rc;
	}
	free(p.dirs);
	fprintf(stderr, "usage: cfapkg-probe cuda|cublas|cublaslt|cusparse|cufft|nvml|cudnn "
	        "[--lib-dir DIR]... [--only-dirs]\n");
	return 2;
}
