/*
 * venv.h - what the runtime room's Python-environment files share: the
 * CUDA library names a torch build loads, by family.
 */
#ifndef CFA_VENV_H
#define CFA_VENV_H

#include <stdbool.h>

/* The family of a CUDA library file name ("cublas" for cublas64_11.dll
 * on Windows, libcublas.so.13 on Linux) and the version in its name, or
 * NULL for any other file.  ZLUDA stands in for these families only:
 * cudart, curand, cusolver and NCCL stay NVIDIA's. */
const char *cfa_venv_family(const char *name, bool windows, unsigned *major);
/* Whether two file names are the same file on that system (Windows
 * ignores case). */
bool cfa_venv_same_name(const char *a, const char *b, bool windows);

/* dir as the list of staged venvs spells it: absolute, without a
 * trailing separator (*out, free: the platform's allocation). */
int cfa_venv_abs(const char *dir, char **out);

/* probe/torch_probe.py, built in (cmake/embed.cmake writes it at build
 * time, so the file in the tree is the one that runs). */
extern const char cfa_torch_probe_py[];

#endif
