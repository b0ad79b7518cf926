/*
 * libs.c - cuSPARSE (a sparse matrix-vector product), cuFFT (a transform
 * with a known answer), NVML (init and device count) and cuDNN (a handle).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "probe/probe.h"

#define SN 1000
/* cudaDataType's CUDA_R_32F and cusparseIndexType_t's CUSPARSE_INDEX_32I,
 * spelt out since the probe is built without CUDA headers. */
#define CUDA_R_32F 0
#define INDEX_32I 2

/* The tridiagonal (-1, 2, -1) matrix in CSR form, and x = 1..n. */
struct csr {
	int rows[SN + 1], cols[3 * SN];
	float vals[3 * SN], x[SN], y[SN], ref[SN];
	int nnz;
};

/* Static: the arrays are too large to put on the stack comfortably. */
static struct csr s;

static void csr_inputs(void)
{
	int i, k = 0;

	for (i = 0; i < SN; i++) {
		/* CSR: rows[i] is where row i's entries start in cols and
		 * vals; rows[SN] is their count. */
		s.rows[i] = k;
		s.x[i] = (float)(i + 1);
		s.ref[i] = 0;
		if (i > 0) {
			s.cols[k] = i - 1;
			s.vals[k++] = -1.0f;
			s.ref[i] -= s.x[i - 1];
		}
		s.cols[k] = i;
		s.vals[k++] = 2.0f;
		s.ref[i] += 2.0f * s.x[i];
		if (i + 1 < SN) {
			s.cols[k] = i + 1;
			s.vals[k++] = -1.0f;
			/* x[i + 1], the right neighbour, not yet filled at
			 * this point of the loop. */
			s.ref[i] -= (float)(i + 2);
		}
	}
	s.rows[SN] = k;
	s.nnz = k;
}

int check_cusparse(struct probe *p)
{
	int (*create)(void **);
	int (*csrCreate)(void **, long long, long long, long long, void *, void *, void *, int, int,
	                 int, int);
	int (*vecCreate)(void **, long long, void *, int);
	int (*bufSize)(void *, int, const void *, void *, void *, const void *, void *, int, int,
	               size_t *);
	int (*spmv)(void *, int, const void *, void *, void *, const void *, void *, int, int, void *);
	CUdeviceptr dr, dc, dv, dx, dy, dbuf = 0;
	const float alpha = 1.0f, beta = 0.0f;
	void *lib, *h, *mat, *vx, *vy;
	size_t size = 0;
	const char *file;
	double err = 0;
	int i;

	csr_inputs();
	if (probe_context(p) || !(lib = probe_load(p, probe_names("cusparse"), &p->lib_file)))
		return 1;
	file = p->lib_file;
	LIBSYM(lib, file, create, "cusparseCreate");
	LIBSYM(lib, file, csrCreate, "cusparseCreateCsr");
	LIBSYM(lib, file, vecCreate, "cusparseCreateDnVec");
	LIBSYM(lib, file, bufSize, "cusparseSpMV_bufferSize");
	LIBSYM(lib, file, spmv, "cusparseSpMV");
	if (probe_upload(p, &dr, s.rows, sizeof(s.rows)) ||
	    probe_upload(p, &dc, s.cols, sizeof(s.cols)) ||
	    probe_upload(p, &dv, s.vals, sizeof(s.vals)) || probe_upload(p, &dx, s.x, sizeof(s.x)) ||
	    probe_upload(p, &dy, NULL, sizeof(s.y)))
		return 1;
	LIBCALL(file, create, (&h));
	/* Both index arrays 32-bit, base 0 (the 0), values float. */
	LIBCALL(file, csrCreate, (&mat, SN, SN, s.nnz, DEV(dr), DEV(dc), DEV(dv), INDEX_32I,
	                          INDEX_32I, 0, CUDA_R_32F));
	LIBCALL(file, vecCreate, (&vx, SN, DEV(dx), CUDA_R_32F));
	LIBCALL(file, vecCreate, (&vy, SN, DEV(dy), CUDA_R_32F));
	/* Operation 0 is no transpose and algorithm 0 the default one. */
	LIBCALL(file, bufSize, (h, 0, &alpha, mat, vx, &beta, vy, CUDA_R_32F, 0, &size));
	/* A size of 0 needs no buffer: dbuf then stays 0, a NULL pointer. */
	if (size && probe_upload(p, &dbuf, NULL, size))
		return 1;
	LIBCALL(file, spmv, (h, 0, &alpha, mat, vx, &beta, vy, CUDA_R_32F, 0, DEV(dbuf)));
	if (probe_download(p, s.y, dy, sizeof(s.y)))
		return 1;
	for (i = 0; i < SN; i++)
		err = fmax(err, fabs((double)s.y[i] - s.ref[i]));
	return err > 1e-3 ? probe_wrong(file, "SpMV against the CPU", err)
	                  : probe_ok(file, "SpMV of a %dx%d tridiagonal matrix matches the CPU", SN,
	                             SN);
}

#define FN 256
/* cufftType's CUFFT_C2C and the forward direction's sign, from cufft.h. */
#define CUFFT_C2C 0x29
#define CUFFT_FORWARD (-1)

/* cos(2 pi 3 n / N) transforms to N/2 at bins 3 and N-3, zero elsewhere. */
int check_cufft(struct probe *p)
{
	int (*plan1d)(int *, int, int, int);
	int (*exec)(int, void *, void *, int);
	static float in[2 * FN], out[2 * FN];
	CUdeviceptr din, dout;
	const char *file;
	double err = 0;
	void *lib;
	int plan, i;

	for (i = 0; i < FN; i++) {
		/* Interleaved complex: the real part here, the imaginary part
		 * 0. */
		in[2 * i] = (float)cos(2 * 3.14159265358979323846 * 3 * i / FN);
		in[2 * i + 1] = 0;
	}
	if (probe_context(p) || !(lib = probe_load(p, probe_names("cufft"), &p->lib_file)))
		return 1;
	file = p->lib_file;
	LIBSYM(lib, file, plan1d, "cufftPlan1d");
	LIBSYM(lib, file, exec, "cufftExecC2C");
	if (probe_upload(p, &din, in, sizeof(in)) || probe_upload(p, &dout, NULL, sizeof(out)))
		return 1;
	/* One transform (batch 1); cuFFT's forward transform is unnormalised,
	 * hence the N/2 peaks. */
	LIBCALL(file, plan1d, (&plan, FN, CUFFT_C2C, 1));
	LIBCALL(file, exec, (plan, DEV(din), DEV(dout), CUFFT_FORWARD));
	if (probe_download(p, out, dout, sizeof(out)))
		return 1;
	for (i = 0; i < FN; i++) {
		double want = (i == 3 || i == FN - 3) ? FN / 2.0 : 0.0;
		err = fmax(err, fabs(out[2 * i] - want) + fabs(out[2 * i + 1]));
	}
	return err > 1e-2 ? probe_wrong(file, "FFT of a cosine", err)
	                  : probe_ok(file, "%d-point C2C transform of a cosine is exact to %.1g", FN,
	                             err);
}

int check_nvml(struct probe *p)
{
	int (*init)(void);
	int (*count)(unsigned *);
	int (*shutdown)(void);
	unsigned n = 0;
	const char *file;
	void *lib;

	if (!(lib = probe_load(p, probe_names("nvml"), &p->lib_file)))
		return 1;
	file = p->lib_file;
	/* The _v2 names are those nvml.h's macros call; NVML needs no CUDA
	 * context. */
	LIBSYM(lib, file, init, "nvmlInit_v2");
	LIBSYM(lib, file, count, "nvmlDeviceGetCount_v2");
	LIBSYM(lib, file, shutdown, "nvmlShutdown");
	LIBCALL(file, init, ());
	LIBCALL(file, count, (&n));
	LIBCALL(file, shutdown, ());
	return probe_ok(file, "init, %u device%s", n, n == 1 ? "" : "s");
}

int check_cudnn(struct probe *p)
{
	int (*create)(void **);
	size_t (*version)(void);
	int (*destroy)(void *);
	const char *file;
	void *lib, *h;

	/* cudnnCreate needs a current CUDA context, so the driver is checked
	 * first. */
	if (probe_context(p) || !(lib = probe_load(p, probe_names("cudnn"), &p->lib_file)))
		return 1;
	file = p->lib_file;
	LIBSYM(lib, file, create, "cudnnCreate");
	LIBSYM(lib, file, version, "cudnnGetVersion");
	LIBSYM(lib, file, destroy, "cudnnDestroy");
	LIBCALL(file, create, (&h));
	LIBCALL(file, destroy, (h));
	/* cudnnGetVersion encodes the version as a number (8902 for 8.9.2,
	 * 90100 for 9.1.0). */
	return probe_ok(file, "handle created (version %zu)", version());
}
