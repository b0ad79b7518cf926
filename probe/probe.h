/*
 * probe.h - cfapkg-probe: checks one CUDA library per run by loading it
 * and doing small checked work.  No CUDA headers: the few types and entry
 * points it needs are declared here, by their documented ABI.  It prints
 * "STEP <call>" before each call (so a hang or crash can be placed) and
 * ends with one "RESULT <OK|MISSING|FAILED|WRONG|SKIPPED> <file> <detail>" line
 * (SKIPPED: the CUDA driver library, which the check needs, is missing).
 */
#ifndef CFA_PROBE_H
#define CFA_PROBE_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;

struct probe {
	const char **dirs;                 /* searched before the system's order, as
	                                      many as given (malloc) */
	size_t ndirs;
	int only_dirs;                     /* do not fall back to the system's order */
	int for_other;                     /* the driver is a prerequisite, not the check */
	void *cuda;                        /* the driver library, once loaded */
	char *cuda_file;                   /* its file (malloc: a path of any length) */
	char *lib_file;                    /* the checked library's file (malloc) */
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuCtxSynchronize)(void);
	char detail[256];                  /* device summary from the context step */
};

/* Output. Each returns 0 so a check can 'return probe_ok(...)'. */
void probe_step(const char *call);
int probe_ok(const char *file, const char *fmt, ...);
int probe_missing(const char *const *names, const char *why);
int probe_failed(const char *file, const char *call, long code);
int probe_wrong(const char *file, const char *what, double max_error);

/* Loads the first of names found in the probe's folders, then by the
 * system's search order.  The file goes to *loaded (p->cuda_file or
 * p->lib_file, freed at the end).  NULL when none loads (and the names
 * are reported MISSING). */
void *probe_load(struct probe *p, const char *const *names, char **loaded);
/* A symbol, or NULL after reporting it FAILED ("no symbol X in FILE"). */
void *probe_sym(void *lib, const char *file, const char *name);

/* cuda.c: the driver library and a current context on device 0 (for the
 * other checks); non-zero when a RESULT was already printed. */
int probe_context(struct probe *p);
/* Device buffers filled from / read back to host arrays; 0 or a printed
 * RESULT. */
int probe_upload(struct probe *p, CUdeviceptr *d, const void *host, size_t bytes);
int probe_download(struct probe *p, void *host, CUdeviceptr d, size_t bytes);

int check_cuda(struct probe *p);
int check_cublas(struct probe *p);
int check_cublaslt(struct probe *p);
int check_cusparse(struct probe *p);
int check_cufft(struct probe *p);
int check_nvml(struct probe *p);
int check_cudnn(struct probe *p);

/* Library names per OS, the one a CUDA 11.8 program links first. */
const char *const *probe_names(const char *lib);

/* Calls a library entry point after a STEP line; a non-zero return is
 * reported FAILED with the call's name and ends the check. */
#define LIBCALL(file, fn, args)                                 \
	do {                                                    \
		int rc_;                                        \
		probe_step(#fn);                                \
		if ((rc_ = fn args) != 0) {                     \
			probe_failed(file, #fn, rc_);           \
			return 1;                               \
		}                                               \
	} while (0)

/* Looks up a symbol into a function pointer, or ends the check. */
#define LIBSYM(lib, file, var, name)                                  \
	do {                                                          \
		if (!(*(void **)&(var) = probe_sym(lib, file, name))) \
			return 1;                                     \
	} while (0)

#define DEV(d) ((void *)(size_t)(d))

#endif
