/*
 * report.c - what every check of cfapkg-probe shares: the library file
 * names per OS, loading the first that opens from the given folders or the
 * system's order, and the STEP and RESULT lines the caller reads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/compat.h" /* attributes only: the probe links no core/ code */
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

/* The names after the table's key, the first being the one a CUDA 11.8 program
 * links (probe.h); NULL for a library not in the table. */
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

	/* Flushed at once, so that the caller has the line even when the call
	 * that follows hangs or kills the process. */
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

/* Formatted text in a new allocation (free), or NULL: paths from the
 * command line have no length limit. */
static char *dup_printf(const char *fmt, ...) CFA_PRINTF(1, 2);
static char *dup_printf(const char *fmt, ...)
{
	va_list ap;
	char *out;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(out = malloc((size_t)n + 1)))
		return NULL;
	/* Measured by the first pass: the same text fits exactly. */
	va_start(ap, fmt);
	if (vsnprintf(out, (size_t)n + 1, fmt, ap) != n) {
		free(out);
		out = NULL;
	}
	va_end(ap);
	return out;
}

/* dir/name when it is a file: loaded (h) or not (the first failure's
 * reason kept in *first_why); NULL path when out of memory. */
static void *load_in(const char *dir, const char *name, char **path, char **first_why)
{
	char why[1024] = "";
	void *h = NULL;

	/* Only a file that is there is opened, so that a name missing from one
	 * folder is not told as a failure to load. */
	if (!(*path = dup_printf("%s/%s", dir, name)) || !cfa_dl_exists(*path))
		return NULL;
	if (!(h = cfa_dl_open(*path, why, sizeof(why))) && !*first_why)
		*first_why = dup_printf("%s: %s", *path, why);
	return h;
}

void *probe_load(struct probe *p, const char *const *names, char **loaded)
{
	char *first_why = NULL, why[1024] = "";
	size_t i, d;
	void *h = NULL;
	int nomem = 0;

	/* Each name in every given folder, then by the system's order, before
	 * the next name: the first name is the one a program would load
	 * first. */
	for (i = 0; names[i] && !h && !nomem; i++) {
		for (d = 0; d < p->ndirs && !h && !nomem; d++) {
			char *path = NULL;
			h = load_in(p->dirs[d], names[i], &path, &first_why);
			nomem = !path;
			if (h)
				*loaded = path;
			else
				free(path);
		}
		if (!h && !nomem && !p->only_dirs && (h = cfa_dl_open(names[i], why, sizeof(why))))
			nomem = !(*loaded = dup_printf("%s", names[i]));
	}
	if (h && !nomem) {
		free(first_why);
		return h;
	}
	/* A file that exists but does not load (a missing dependency) says so. */
	driver_missing = p->for_other && names == probe_names("cuda");
	probe_missing(names, nomem ? "out of memory" : first_why ? first_why : "not found");
	free(first_why);
	return NULL;
}

void *probe_sym(void *lib, const char *file, const char *name)
{
	void *s = cfa_dl_sym(lib, name);

	if (!s)
		printf("RESULT FAILED %s does not export %s\n", file, name);
	return s;
}
