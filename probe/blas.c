/*
 * blas.c - cuBLAS (SGEMM) and cuBLASLt (a matmul), each against a CPU
 * reference.  Inputs are multiples of 1/4 in [-1, 1] so that the exact
 * product is representable even with TF32 inputs: any error is a bug.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "probe/probe.h"

#define M 256
#define K 192
#define NC 128
#define CUDA_R_32F 0
/* cublasComputeType_t's CUBLAS_COMPUTE_32F: float inputs and float
 * accumulation. */
#define CUBLAS_COMPUTE_32F 68

struct gemm {
	float a[M * K], b[K * NC], c[M * NC], ref[M * NC];
	CUdeviceptr da, db, dc;
};

/* Static: over half a MiB of matrices, too much for the stack. */
static struct gemm g;

/* Column-major inputs and C = A * B computed on the CPU. */
static void gemm_inputs(void)
{
	int i, j, l;

	for (i = 0; i < M * K; i++)
		/* Values -1..1 in steps of 1/4: products are multiples of
		 * 1/16 and sums of 192 of them stay exact in float and in
		 * TF32's inputs. */
		g.a[i] = (float)((i * 7) % 9 - 4) / 4.0f;
	for (i = 0; i < K * NC; i++)
		g.b[i] = (float)((i * 5) % 9 - 4) / 4.0f;
	for (j = 0; j < NC; j++)
		for (i = 0; i < M; i++) {
			double s = 0;
			for (l = 0; l < K; l++)
				s += (double)g.a[i + l * M] * g.b[l + j * K];
			g.ref[i + j * M] = (float)s;
		}
}

/* The largest difference from the CPU's product: with inputs this exact,
 * anything past rounding is a wrong result, not noise. */
static double gemm_error(void)
{
	double err = 0;
	int i;

	for (i = 0; i < M * NC; i++)
		err = fmax(err, fabs((double)g.c[i] - g.ref[i]));
	return err;
}

/* Shared by both checks, so that cuBLAS and cuBLASLt are judged on one product
 * and one reference. */
static int gemm_setup(struct probe *p)
{
	gemm_inputs();
	if (probe_context(p) || probe_upload(p, &g.da, g.a, sizeof(g.a)) ||
	    probe_upload(p, &g.db, g.b, sizeof(g.b)) || probe_upload(p, &g.dc, NULL, sizeof(g.c)))
		return 1;
	return 0;
}

int check_cublas(struct probe *p)
{
	int (*cublasCreate)(void **);
	int (*cublasSgemm)(void *, int, int, int, int, int, const float *, const void *, int,
	                   const void *, int, const float *, void *, int);
	const char *file;
	const float alpha = 1.0f, beta = 0.0f;
	void *lib, *h;
	double err;

	if (gemm_setup(p) || !(lib = probe_load(p, probe_names("cublas"), &p->lib_file)))
		return 1;
	file = p->lib_file;
	/* The _v2 names are the ones cublas_v2.h's macros call. */
	LIBSYM(lib, file, cublasCreate, "cublasCreate_v2");
	LIBSYM(lib, file, cublasSgemm, "cublasSgemm_v2");
	LIBCALL(file, cublasCreate, (&h));
	/* No transposes (0, 0), column-major with leading dimensions equal to
	 * the row counts; alpha and beta on the host, cuBLAS's default
	 * pointer mode. */
	LIBCALL(file, cublasSgemm, (h, 0, 0, M, NC, K, &alpha, DEV(g.da), M,
	                            DEV(g.db), K, &beta, DEV(g.dc), M));
	if (probe_download(p, g.c, g.dc, sizeof(g.c)))
		return 1;
	err = gemm_error();
	return err > 1e-3 ? probe_wrong(file, "SGEMM against the CPU", err)
	                  : probe_ok(file, "SGEMM %dx%dx%d matches the CPU (max error %.1g)", M, NC,
	                             K, err);
}

int check_cublaslt(struct probe *p)
{
	int (*ltCreate)(void **);
	int (*descCreate)(void **, int, int);
	int (*layoutCreate)(void **, int, unsigned long long, unsigned long long, long long);
	int (*matmul)(void *, void *, const void *, const void *, void *, const void *, void *,
	              const void *, const void *, void *, void *, void *, const void *, void *,
	              size_t, void *);
	const float alpha = 1.0f, beta = 0.0f;
	void *lib, *h, *desc, *la, *lb, *lc;
	CUdeviceptr ws;
	const char *file;
	double err;

	/* A 4 MiB workspace for cuBLASLt's kernels; without one it may only
	 * pick those that need none. */
	if (gemm_setup(p) || probe_upload(p, &ws, NULL, 4u << 20) ||
	    !(lib = probe_load(p, probe_names("cublaslt"), &p->lib_file)))
		return 1;
	file = p->lib_file;
	LIBSYM(lib, file, ltCreate, "cublasLtCreate");
	LIBSYM(lib, file, descCreate, "cublasLtMatmulDescCreate");
	LIBSYM(lib, file, layoutCreate, "cublasLtMatrixLayoutCreate");
	LIBSYM(lib, file, matmul, "cublasLtMatmul");
	LIBCALL(file, ltCreate, (&h));
	LIBCALL(file, descCreate, (&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	LIBCALL(file, layoutCreate, (&la, CUDA_R_32F, M, K, M));
	LIBCALL(file, layoutCreate, (&lb, CUDA_R_32F, K, NC, K));
	LIBCALL(file, layoutCreate, (&lc, CUDA_R_32F, M, NC, M));
	/* C and D are the same buffer (beta is 0), no algorithm given (NULL)
	 * so cuBLASLt picks one, and the default stream. */
	LIBCALL(file, matmul, (h, desc, &alpha, DEV(g.da), la, DEV(g.db), lb,
	                       &beta, DEV(g.dc), lc, DEV(g.dc), lc, NULL,
	                       DEV(ws), 4u << 20, NULL));
	if (probe_download(p, g.c, g.dc, sizeof(g.c)))
		return 1;
	err = gemm_error();
	return err > 1e-3 ? probe_wrong(file, "matmul against the CPU", err)
	                  : probe_ok(file, "matmul %dx%dx%d matches the CPU (max error %.1g)", M, NC,
	                             K, err);
}
