/*
 * rocm.h - the ROCm side of a resolved runtime: which HIP runtime the
 * environment brings, the GPU programs see, and the variables people set
 * by hand for targets ROCm does not cover.
 */
#ifndef CFA_RUNTIME_ROCM_H
#define CFA_RUNTIME_ROCM_H

#include "cfapkg.h"

/* Room resolve.c leaves in a runtime's variables for cfa_rocm_settle. */
#define CFA_ROCM_EXTRA_VARS 8

/* Adds HIP_PATH/ROCM_PATH, the ROCm library folder first on the path and
 * other ROCm folders taken off it, HIP_VISIBLE_DEVICES,
 * HSA_OVERRIDE_GFX_VERSION and DISABLE_ADDMM_CUDA_LT to a resolved rt. */
enum cfapkg_err cfa_rocm_settle(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt,
                                const struct cfapkg_machine *m, int gpu_index);

/* The value of one of rt's variables, NULL when it sets none. */
const char *cfa_rocm_var(const struct cfapkg_runtime *rt, const char *name);

/* Whether the user's environment sets name to something. */
bool cfa_rocm_user_set(const char *name);

/* Whether dir holds a file whose name starts with head and ends with tail
 * (any case). */
bool cfa_rocm_dir_has(const char *dir, const char *head, const char *tail);

/* The first name in dir that starts with head and ends with tail (any
 * case), or NULL: owned, cfa_free. */
char *cfa_rocm_dir_find(const char *dir, const char *head, const char *tail);

/* hipBLASLt's kernel folder for rt: its HIPBLASLT_TENSILE_LIBPATH, else
 * prefix's lib/hipblaslt/library (bin/ on Windows); NULL without either.
 * Owned: cfa_free. */
char *cfa_rocm_hipblaslt_dir(const struct cfapkg_runtime *rt, const char *prefix);
/* 1 with *file (cfa_free) a kernel file for gfx in dir, 0 when dir has
 * none, -1 when there is no such folder. */
int cfa_rocm_hipblaslt_kernel(const char *dir, const char *gfx, char **file);

/* The separator of folders in the paths of this host. */
char cfa_rocm_sep(void);

#endif
