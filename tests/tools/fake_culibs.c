/*
 * fake_culibs.c - the rest of a usable stand-in CUDA stack for the doctor
 * tests: cuBLASLt (a matmul), cuSPARSE (CSR SpMV), cuFFT (a C2C DFT),
 * NVML and cuDNN (handles).  One source built under each library's name
 * into fakes/full, so that the fake driver and cuBLAS make a stack the
 * doctor finds usable without reaching a real CUDA library the machine
 * may have.  As with the fake driver, "device" pointers are host memory.
 * Nothing is allocated here, and the buffers a call is given stay
 * referenced (as a real handle or plan keeps them): the probe never frees
 * its device memory, and a sanitizer build's leak check would otherwise
 * fail it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OBJECTS 8

static bool wrong(void)
{
	const char *m = getenv("FAKE_CUDA_MODE");
	return m && strcmp(m, "wrong") == 0;
}

static int token;
static const void *volatile held[3]; /* the buffers of the last call */

/* cuBLASLt: column-major layouts, D = alpha * A * B + beta * C. */
struct layout {
	unsigned long long rows, cols;
	long long ld;
};
static struct layout layouts[MAX_OBJECTS];
static size_t nlayouts;

int cublasLtCreate(void **h);
int cublasLtCreate(void **h)
{
	*h = &token;
	return 0;
}

int cublasLtMatmulDescCreate(void **desc, int compute, int scale);
int cublasLtMatmulDescCreate(void **desc, int compute, int scale)
{
	(void)compute;
	(void)scale;
	*desc = &token;
	return 0;
}

int cublasLtMatrixLayoutCreate(void **l, int type, unsigned long long rows,
                               unsigned long long cols, long long ld);
int cublasLtMatrixLayoutCreate(void **l, int type, unsigned long long rows,
                               unsigned long long cols, long long ld)
{
	(void)type;
	if (nlayouts == MAX_OBJECTS)
		return 3; /* CUBLAS_STATUS_ALLOC_FAILED */
	layouts[nlayouts] = (struct layout){rows, cols, ld};
	*l = &layouts[nlayouts++];
	return 0;
}

int cublasLtMatmul(void *h, void *desc, const void *alpha, const void *a, void *la,
                   const void *b, void *lb, const void *beta, const void *c, void *lc, void *d,
                   void *ld, const void *algo, void *ws, size_t wss, void *stream);
int cublasLtMatmul(void *h, void *desc, const void *alpha, const void *a, void *la,
                   const void *b, void *lb, const void *beta, const void *c, void *lc, void *d,
                   void *ld, const void *algo, void *ws, size_t wss, void *stream)
{
	const struct layout *A = la, *B = lb, *C = lc, *D = ld;
	const float *fa = a, *fb = b, *fc = c, al = *(const float *)alpha,
	            be = *(const float *)beta;
	float *fd = d;
	unsigned long long i, j, l;

	(void)h, (void)desc, (void)algo, (void)wss, (void)stream;
	held[0] = ws;
	if (A->cols != B->rows || A->rows != D->rows || B->cols != D->cols)
		return 7; /* CUBLAS_STATUS_INVALID_VALUE */
	for (j = 0; j < D->cols; j++)
		for (i = 0; i < D->rows; i++) {
			float s = 0;
			for (l = 0; l < A->cols; l++)
				s += fa[i + l * (unsigned long long)A->ld] *
				     fb[l + j * (unsigned long long)B->ld];
			fd[i + j * (unsigned long long)D->ld] =
				al * s + be * fc[i + j * (unsigned long long)C->ld];
		}
	if (wrong())
		fd[0] += 0.5f;
	return 0;
}

/* cuSPARSE: one CSR matrix (32-bit indices, floats) times a vector. */
struct csr {
	long long rows;
	const int *offsets, *cols;
	const float *vals;
};
struct dnvec {
	long long size;
	float *vals;
};
static struct csr mats[MAX_OBJECTS];
static struct dnvec vecs[MAX_OBJECTS];
static size_t nmats, nvecs;

int cusparseCreate(void **h);
int cusparseCreate(void **h)
{
	*h = &token;
	return 0;
}

int cusparseCreateCsr(void **m, long long rows, long long cols, long long nnz, void *offsets,
                      void *colind, void *vals, int otype, int ctype, int base, int vtype);
int cusparseCreateCsr(void **m, long long rows, long long cols, long long nnz, void *offsets,
                      void *colind, void *vals, int otype, int ctype, int base, int vtype)
{
	(void)cols, (void)nnz, (void)otype, (void)ctype, (void)base, (void)vtype;
	if (nmats == MAX_OBJECTS)
		return 2; /* CUSPARSE_STATUS_ALLOC_FAILED */
	mats[nmats] = (struct csr){rows, offsets, colind, vals};
	*m = &mats[nmats++];
	return 0;
}

int cusparseCreateDnVec(void **v, long long size, void *vals, int type);
int cusparseCreateDnVec(void **v, long long size, void *vals, int type)
{
	(void)type;
	if (nvecs == MAX_OBJECTS)
		return 2;
	vecs[nvecs] = (struct dnvec){size, vals};
	*v = &vecs[nvecs++];
	return 0;
}

int cusparseSpMV_bufferSize(void *h, int op, const void *alpha, void *m, void *x,
                            const void *beta, void *y, int type, int alg, size_t *size);
int cusparseSpMV_bufferSize(void *h, int op, const void *alpha, void *m, void *x,
                            const void *beta, void *y, int type, int alg, size_t *size)
{
	(void)h, (void)op, (void)alpha, (void)m, (void)x, (void)beta, (void)y, (void)type;
	(void)alg;
	*size = 0;
	return 0;
}

int cusparseSpMV(void *h, int op, const void *alpha, void *m, void *x, const void *beta,
                 void *y, int type, int alg, void *buffer);
int cusparseSpMV(void *h, int op, const void *alpha, void *m, void *x, const void *beta,
                 void *y, int type, int alg, void *buffer)
{
	const struct csr *a = m;
	const struct dnvec *vx = x, *vy = y;
	const float al = *(const float *)alpha, be = *(const float *)beta;
	long long i;
	int k;

	(void)h, (void)op, (void)type, (void)alg, (void)buffer;
	for (i = 0; i < a->rows && i < vy->size; i++) {
		float s = 0;
		for (k = a->offsets[i]; k < a->offsets[i + 1]; k++)
			s += a->vals[k] * vx->vals[a->cols[k]];
		vy->vals[i] = al * s + be * vy->vals[i];
	}
	return 0;
}

/* cuFFT: a plain DFT.  The twiddles come from one small rotation, so no
 * maths library is needed. */
static int fft_size;

int cufftPlan1d(int *plan, int nx, int type, int batch);
int cufftPlan1d(int *plan, int nx, int type, int batch)
{
	(void)type, (void)batch;
	if (nx <= 0 || nx > 4096)
		return 4; /* CUFFT_INVALID_VALUE */
	fft_size = nx;
	*plan = 1;
	return 0;
}

int cufftExecC2C(int plan, void *in, void *out, int direction);
int cufftExecC2C(int plan, void *in, void *out, int direction)
{
	static double re[4096], im[4096];
	const float *x = in;
	float *y = out;
	double t = 2 * 3.14159265358979323846 / fft_size * (direction < 0 ? -1 : 1);
	double t2 = t * t, c = 1 - t2 / 2 * (1 - t2 / 12 * (1 - t2 / 30)),
	       s = t * (1 - t2 / 6 * (1 - t2 / 20));
	int n = fft_size, j, k;

	(void)plan;
	held[1] = in;
	held[2] = out;
	re[0] = 1;
	im[0] = 0;
	for (j = 1; j < n; j++) {
		re[j] = re[j - 1] * c - im[j - 1] * s;
		im[j] = re[j - 1] * s + im[j - 1] * c;
	}
	for (k = 0; k < n; k++) {
		double sr = 0, si = 0;
		for (j = 0; j < n; j++) {
			int w = (int)(((long long)j * k) % n);
			sr += x[2 * j] * re[w] - x[2 * j + 1] * im[w];
			si += x[2 * j] * im[w] + x[2 * j + 1] * re[w];
		}
		y[2 * k] = (float)sr;
		y[2 * k + 1] = (float)si;
	}
	return 0;
}

/* NVML and cuDNN: a device and a handle. */
int nvmlInit_v2(void);
int nvmlInit_v2(void)
{
	return 0;
}

int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = 1;
	return 0;
}

int nvmlShutdown(void);
int nvmlShutdown(void)
{
	return 0;
}

int cudnnCreate(void **h);
int cudnnCreate(void **h)
{
	*h = &token;
	return 0;
}

size_t cudnnGetVersion(void);
size_t cudnnGetVersion(void)
{
	return 90100;
}

int cudnnDestroy(void *h);
int cudnnDestroy(void *h)
{
	(void)h;
	return 0;
}
