/*
 * main.c - cfapkg-probe LIBRARY [--lib-dir DIR]...: one check per run, so
 * the caller can time it out and tell a crash from a failure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "platform/dynlib.h"
#include "probe/probe.h"

static const char *const linux_names[][5] = {
	{"cuda", "libcuda.so.1", NULL},
	{"cublas", "libcublas.so.11", "libcublas.so.12", "libcublas.so.13", NULL},
	{"cublaslt", "libcublasLt.so.11", "libcublasLt.so.12", "libcublasLt.so.13", NULL},
	{"cusparse", "libcusparse.so.11", "libcusparse.so.12", "libcusparse.so.10", NULL},
	{"cufft", "libcufft.so.10", "libcufft.so.11", "libcufft.so.12", NULL},
	{"nvml", "libnvidia-ml.so.1", NULL},
	{"cudnn", "libcudnn.so.9", "libcudnn.so.8", NULL},
};
static const char *const windows_names[][5] = {
	{"cuda", "nvcuda.dll", NULL},
	{"cublas", "cublas64_11.dll", "cublas64_12.dll", "cublas64_13.dll", NULL},
	{"cublaslt", "cublasLt64_11.dll", "cublasLt64_12.dll", "cublasLt64_13.dll", NULL},
	{"cusparse", "cusparse64_11.dll", "cusparse64_12.dll", "cusparse64_10.dll", NULL},
	{"cufft", "cufft64_10.dll", "cufft64_11.dll", "cufft64_12.dll", NULL},
	{"nvml", "nvml.dll", NULL},
	{"cudnn", "cudnn64_9.dll", "cudnn64_8.dll", NULL},
};

const char *const *probe_names(const char *lib)
{
	const char *const(*t)[5] = strcmp(cfa_dl_os(), "windows") == 0 ? windows_names : linux_names;
	size_t i;

	for (i = 0; i < sizeof(linux_names) / sizeof(linux_names[0]); i++)
		if (strcmp(t[i][0], lib) == 0)
			return &t[i][1];
	return NULL;
}

void probe_step(const char *call)
{
	const char *field = strrchr(call, '>'); /* "p->cuMemAlloc" is cuMemAlloc */

	printf("STEP %s\n", field ? field + 1 : call);
	fflush(stdout);
}

int probe_ok(const char *file, const char *fmt, ...)
{
	va_list ap;

	printf("RESULT OK %s ", file);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 0;
}

static int driver_missing; /* what the check needs is missing, not what it checks */

int probe_missing(const char *const *names, const char *why)
{
	size_t i;

	printf("RESULT %s %s", driver_missing ? "SKIPPED" : "MISSING", names[0]);
	for (i = 1; names[i]; i++)
		printf("%s%s", i == 1 ? " (or " : ", ", names[i]);
	printf("%s%s%s\n", names[1] ? ")" : "", why && *why ? ": " : "", why ? why : "");
	return 0;
}

int probe_failed(const char *file, const char *call, long code)
{
	printf("RESULT FAILED %s %s returned %ld\n", file, call, code);
	return 0;
}

int probe_wrong(const char *file, const char *what, double max_error)
{
	printf("RESULT WRONG %s %s: max error %.3g\n", file, what, max_error);
	return 0;
}

void *probe_load(struct probe *p, const char *const *names, char *loaded, size_t len)
{
	char path[1024], why[512] = "", first_why[1600] = "";
	size_t i, d;
	void *h;

	for (i = 0; names[i]; i++) {
		for (d = 0; d < p->ndirs; d++) {
			snprintf(path, sizeof(path), "%s/%s", p->dirs[d], names[i]);
			if (!cfa_dl_exists(path))
				continue;
			if ((h = cfa_dl_open(path, why, sizeof(why)))) {
				snprintf(loaded, len, "%s", path);
				return h;
			}
			if (!first_why[0])
				snprintf(first_why, sizeof(first_why), "%s: %s", path, why);
		}
		if (!p->only_dirs && (h = cfa_dl_open(names[i], why, sizeof(why)))) {
			snprintf(loaded, len, "%s", names[i]);
			return h;
		}
	}
	/* A file that exists but does not load (a missing dependency) says so. */
	driver_missing = p->for_other && names == probe_names("cuda");
	probe_missing(names, first_why[0] ? first_why : "not found");
	return NULL;
}

void *probe_sym(void *lib, const char *file, const char *name)
{
	void *s = cfa_dl_sym(lib, name);

	if (!s)
		printf("RESULT FAILED %s does not export %s\n", file, name);
	return s;
}

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
	for (a = 2; a < argc; a++) {
		if (strcmp(argv[a], "--only-dirs") == 0)
			p.only_dirs = 1;
		else if (strcmp(argv[a], "--lib-dir") == 0 && a + 1 < argc && p.ndirs < PROBE_MAX_DIRS)
			p.dirs[p.ndirs++] = argv[++a];
		else
			break;
	}
	p.for_other = argc > 1 && strcmp(argv[1], "cuda") != 0;
	for (i = 0; argc > 1 && a == argc && i < sizeof(checks) / sizeof(checks[0]); i++)
		if (strcmp(argv[1], checks[i].name) == 0)
			return checks[i].run(&p);
	fprintf(stderr, "usage: cfapkg-probe cuda|cublas|cublaslt|cusparse|cufft|nvml|cudnn "
	        "[--lib-dir DIR]... [--only-dirs]\n");
	return 2;
}
