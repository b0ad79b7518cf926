/*
 * cuda.c - the CUDA driver API: init, devices, a context, memory round
 * trips, and a PTX vector add JIT-compiled and launched.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"

/* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR and _MINOR in cuda.h; the
 * probe carries no CUDA headers, so the numbers are spelt here. */
#define ATTR_CC_MAJOR 75
#define ATTR_CC_MINOR 76

/* out[i] = a[i] + b[i] for i < n; any sm_50 or newer target JITs it. */
static const char vadd_ptx[] =
	".version 6.0\n.target sm_50\n.address_size 64\n"
	".visible .entry vadd(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u32 pn)\n"
	"{\n .reg .pred p;\n .reg .b32 r<5>;\n .reg .f32 f<4>;\n .reg .b64 rd<11>;\n"
	" ld.param.u64 rd1, [pa];\n ld.param.u64 rd2, [pb];\n ld.param.u64 rd3, [pc];\n"
	" ld.param.u32 r1, [pn];\n mov.u32 r2, %ctaid.x;\n mov.u32 r3, %ntid.x;\n"
	" mov.u32 r4, %tid.x;\n mad.lo.s32 r2, r2, r3, r4;\n setp.ge.u32 p, r2, r1;\n"
	" @p bra DONE;\n cvta.to.global.u64 rd4, rd1;\n cvta.to.global.u64 rd5, rd2;\n"
	" cvta.to.global.u64 rd6, rd3;\n mul.wide.u32 rd7, r2, 4;\n add.s64 rd8, rd4, rd7;\n"
	" add.s64 rd9, rd5, rd7;\n add.s64 rd10, rd6, rd7;\n ld.global.f32 f1, [rd8];\n"
	" ld.global.f32 f2, [rd9];\n add.f32 f3, f1, f2;\n st.global.f32 [rd10], f3;\n"
	"DONE:\n ret;\n}\n";

#define CALL(p, fn, args)                                           \
	do {                                                        \
		CUresult rc_;                                       \
		probe_step(#fn);                                    \
		if ((rc_ = fn args) != 0) {                         \
			probe_failed((p)->cuda_file, #fn, rc_);     \
			return 1;                                   \
		}                                                   \
	} while (0)

#define SYM(p, var, name)                                                       \
	do {                                                                    \
		if (!(*(void **)&(var) = probe_sym((p)->cuda, (p)->cuda_file, name))) \
			return 1;                                               \
	} while (0)

int probe_context(struct probe *p)
{
	CUresult (*cuInit)(unsigned);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUcontext ctx;
	CUdevice dev;
	char name[256] = "";
	int count = 0, major = 0, minor = 0;

	if (!(p->cuda = probe_load(p, probe_names("cuda"), &p->cuda_file)))
		return 1;
	SYM(p, cuInit, "cuInit");
	SYM(p, cuDeviceGetCount, "cuDeviceGetCount");
	SYM(p, cuDeviceGet, "cuDeviceGet");
	SYM(p, cuDeviceGetName, "cuDeviceGetName");
	SYM(p, cuDeviceGetAttribute, "cuDeviceGetAttribute");
	SYM(p, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(p, cuCtxSetCurrent, "cuCtxSetCurrent");
	/* The _v2 entry points are the ones cuda.h's macros call since CUDA
	 * 3.2; the plain names are the old 32-bit-size versions. */
	SYM(p, p->cuMemAlloc, "cuMemAlloc_v2");
	SYM(p, p->cuMemFree, "cuMemFree_v2");
	SYM(p, p->cuMemcpyHtoD, "cuMemcpyHtoD_v2");
	SYM(p, p->cuMemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(p, p->cuCtxSynchronize, "cuCtxSynchronize");
	/* cuInit's flags must be 0. */
	CALL(p, cuInit, (0));
	CALL(p, cuDeviceGetCount, (&count));
	if (count < 1) {
		probe_failed(p->cuda_file, "cuDeviceGetCount (no device)", count);
		return 1;
	}
	/* Only device 0 is named and used: the probe checks that the stack
	 * works, not every GPU. */
	CALL(p, cuDeviceGet, (&dev, 0));
	CALL(p, cuDeviceGetName, (name, (int)sizeof(name) - 1, dev));
	CALL(p, cuDeviceGetAttribute, (&major, ATTR_CC_MAJOR, dev));
	CALL(p, cuDeviceGetAttribute, (&minor, ATTR_CC_MINOR, dev));
	/* The primary context is the one the runtime API uses, and with it
	 * cuBLAS and the other libraries. */
	CALL(p, cuDevicePrimaryCtxRetain, (&ctx, dev));
	CALL(p, cuCtxSetCurrent, (ctx));
	/* The name is bounded to 200 bytes, so the summary fits detail[256]. */
	if (snprintf(p->detail, sizeof(p->detail), "%d device%s, 0: %.200s, compute %d.%d", count,
	             count == 1 ? "" : "s", name, major, minor) >= (int)sizeof(p->detail))
		p->detail[0] = '\0';
	return 0;
}

int probe_upload(struct probe *p, CUdeviceptr *d, const void *host, size_t bytes)
{
	CALL(p, p->cuMemAlloc, (d, bytes));
	if (host)
		CALL(p, p->cuMemcpyHtoD, (*d, host, bytes));
	return 0;
}

int probe_download(struct probe *p, void *host, CUdeviceptr d, size_t bytes)
{
	/* Kernel launches are asynchronous: an error in one shows up only at
	 * the next synchronising call, which is this one. */
	CALL(p, p->cuCtxSynchronize, ());
	CALL(p, p->cuMemcpyDtoH, (host, d, bytes));
	return 0;
}

/* A multiple of the 256-thread block, so N / 256 blocks cover it exactly; the
 * kernel's bound check is then never taken. */
#define N (1 << 20)

static int vector_add(struct probe *p, float *a, float *b, float *c)
{
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	                           unsigned, unsigned, void *, void **, void **);
	CUdeviceptr da, db, dc;
	CUmodule mod;
	CUfunction fn;
	unsigned n = N;
	void *args[4];

	SYM(p, cuModuleLoadData, "cuModuleLoadData");
	SYM(p, cuModuleGetFunction, "cuModuleGetFunction");
	SYM(p, cuLaunchKernel, "cuLaunchKernel");
	if (probe_upload(p, &da, a, N * 4) || probe_upload(p, &db, b, N * 4) ||
	    probe_upload(p, &dc, NULL, N * 4))
		return 1;
	CALL(p, cuModuleLoadData, (&mod, vadd_ptx));
	CALL(p, cuModuleGetFunction, (&fn, mod, "vadd"));
	/* cuLaunchKernel takes the address of each argument, in the order of
	 * the PTX entry's parameters. */
	args[0] = &da;
	args[1] = &db;
	args[2] = &dc;
	args[3] = &n;
	/* No shared memory, the default stream (NULL), arguments by
	 * kernelParams rather than extra. */
	CALL(p, cuLaunchKernel, (fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	if (probe_download(p, c, dc, N * 4))
		return 1;
	p->cuMemFree(da);
	p->cuMemFree(db);
	p->cuMemFree(dc);
	return 0;
}

int check_cuda(struct probe *p)
{
	float *a = malloc(N * 4), *b = malloc(N * 4), *c = malloc(N * 4), *back = malloc(N * 4);
	CUdeviceptr d;
	double err = 0;
	int i, rc = 1;

	if (!a || !b || !c || !back) {
		printf("RESULT FAILED - out of memory\n");
		goto out;
	}
	for (i = 0; i < N; i++) {
		/* Halves and small integers: every sum is exact in float, so
		 * any difference from the CPU is a wrong result, not
		 * rounding. */
		a[i] = (float)(i % 1000) * 0.5f;
		b[i] = (float)(i % 7) - 3.0f;
	}
	if (probe_context(p) || probe_upload(p, &d, a, N * 4) || probe_download(p, back, d, N * 4))
		goto out;
	p->cuMemFree(d);
	/* Bytes must come back unchanged before a kernel's result can be
	 * trusted. */
	if (memcmp(a, back, N * 4) != 0) {
		rc = probe_wrong(p->cuda_file, "memory round trip", 1);
		goto out;
	}
	if (vector_add(p, a, b, c))
		goto out;
	for (i = 0; i < N; i++)
		err = fmax(err, fabs((double)c[i] - ((double)a[i] + (double)b[i])));
	rc = err > 1e-6 ? probe_wrong(p->cuda_file, "vector add", err)
	                : probe_ok(p->cuda_file, "%s; 4 MiB round trip and PTX vector add of %d "
	                           "floats exact", p->detail, N);
out:
	free(a);
	free(b);
	free(c);
	free(back);
	return rc;
}
