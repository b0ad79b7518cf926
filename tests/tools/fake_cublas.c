/*
 * fake_cublas.c - a stand-in cuBLAS (libcublas.so.11 / cublas64_11.dll)
 * computing SGEMM on the CPU over the fake driver's host-memory "device"
 * pointers; FAKE_CUDA_MODE=wrong perturbs the result.
 */
#include <stdlib.h>
#include <string.h>

int cublasCreate_v2(void **h);
int cublasCreate_v2(void **h)
{
	static int token;
	*h = &token;
	return 0;
}

int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
                   const float *a, int lda, const float *b, int ldb, const float *beta, float *c,
                   int ldc);
int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
                   const float *a, int lda, const float *b, int ldb, const float *beta, float *c,
                   int ldc)
{
	const char *mode = getenv("FAKE_CUDA_MODE");
	int i, j, l;

	(void)h;
	if (ta || tb)
		return 7; /* CUBLAS_STATUS_INVALID_VALUE: only N, N here */
	for (j = 0; j < n; j++)
		for (i = 0; i < m; i++) {
			float s = 0;
			for (l = 0; l < k; l++)
				s += a[i + l * lda] * b[l + j * ldb];
			c[i + j * ldc] = *alpha * s + *beta * c[i + j * ldc];
		}
	if (mode && strcmp(mode, "wrong") == 0)
		c[0] += 0.5f;
	return 0;
}
