/*
 * fake_cuda.c - a stand-in CUDA driver library for the probe tests, built
 * as libcuda.so.1 / nvcuda.dll.  "Device" memory is host memory and the
 * PTX vector add runs on the CPU.  FAKE_CUDA_MODE picks a behaviour:
 * works (default), error (cuInit fails), hang, crash, wrong (the kernel
 * adds one too many).  Built with FAKE_NO_MODULE it lacks cuModuleLoadData.
 */
#include <stdlib.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;

static const char *mode(void)
{
	const char *m = getenv("FAKE_CUDA_MODE");
	return m ? m : "works";
}

int cuInit(unsigned flags);
int cuInit(unsigned flags)
{
	(void)flags;
	if (strcmp(mode(), "error") == 0)
		return 100; /* CUDA_ERROR_NO_DEVICE */
	if (strcmp(mode(), "hang") == 0)
		for (;;)
			;
	if (strcmp(mode(), "crash") == 0) {
		volatile int *p = NULL;
		*p = 1;
	}
	return 0;
}

int cuDeviceGetCount(int *n);
int cuDeviceGetCount(int *n)
{
	*n = 1;
	return 0;
}

int cuDeviceGet(int *d, int i);
int cuDeviceGet(int *d, int i)
{
	*d = i;
	return 0;
}

int cuDeviceGetName(char *name, int len, int d);
int cuDeviceGetName(char *name, int len, int d)
{
	(void)d;
	strncpy(name, "Fake CUDA device", (size_t)len);
	return 0;
}

int cuDeviceGetAttribute(int *v, int attr, int d);
int cuDeviceGetAttribute(int *v, int attr, int d)
{
	(void)d;
	*v = attr == 75 ? 8 : 6;
	return 0;
}

int cuDevicePrimaryCtxRetain(void **ctx, int d);
int cuDevicePrimaryCtxRetain(void **ctx, int d)
{
	static int token;
	(void)d;
	*ctx = &token;
	return 0;
}

int cuCtxSetCurrent(void *ctx);
int cuCtxSetCurrent(void *ctx)
{
	(void)ctx;
	return 0;
}

int cuCtxSynchronize(void);
int cuCtxSynchronize(void)
{
	return 0;
}

int cuMemAlloc_v2(CUdeviceptr *p, size_t n);
int cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	void *m = calloc(1, n);
	*p = (CUdeviceptr)(size_t)m;
	return m ? 0 : 2;
}

int cuMemFree_v2(CUdeviceptr p);
int cuMemFree_v2(CUdeviceptr p)
{
	free((void *)(size_t)p);
	return 0;
}

int cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n);
int cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
	memcpy((void *)(size_t)d, h, n);
	return 0;
}

int cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n);
int cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n)
{
	memcpy(h, (const void *)(size_t)d, n);
	return 0;
}

#ifndef FAKE_NO_MODULE
int cuModuleLoadData(void **mod, const void *image);
int cuModuleLoadData(void **mod, const void *image)
{
	static int token;
	*mod = &token;
	return strstr(image, ".entry vadd") ? 0 : 218; /* CUDA_ERROR_INVALID_PTX */
}
#endif

int cuModuleGetFunction(void **fn, void *mod, const char *name);
int cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	*fn = mod;
	return strcmp(name, "vadd") == 0 ? 0 : 500; /* CUDA_ERROR_NOT_FOUND */
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	const float *a = (const float *)(size_t) * (CUdeviceptr *)params[0];
	const float *b = (const float *)(size_t) * (CUdeviceptr *)params[1];
	float *c = (float *)(size_t) * (CUdeviceptr *)params[2];
	unsigned n = *(unsigned *)params[3], i;
	float extra_one = strcmp(mode(), "wrong") == 0 ? 1.0f : 0.0f;

	(void)f, (void)gy, (void)gz, (void)by, (void)bz, (void)shmem, (void)stream, (void)extra;
	for (i = 0; i < n && i < gx * bx; i++)
		c[i] = a[i] + b[i] + extra_one;
	return 0;
}
