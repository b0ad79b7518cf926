/*
 * dynlib.h - loading shared libraries by file name.  Kept apart from the
 * rest of platform/ so that the CUDA probe (probe/) builds with nothing
 * but a C compiler and the system's loader.
 */
#ifndef CFA_DYNLIB_H
#define CFA_DYNLIB_H

#include <stddef.h>

/* "windows" or "linux": which library names the probe looks for. */
const char *cfa_dl_os(void);
/* Loads a library by path or bare name (then the system's search order
 * applies).  NULL on failure, with a reason in why (may be NULL). */
void *cfa_dl_open(const char *path, char *why, size_t len);
void *cfa_dl_sym(void *lib, const char *name);
/* Whether path names an existing file. */
int cfa_dl_exists(const char *path);
/* The path list separator of the library search variables. */
char cfa_dl_path_sep(void);
/* From now on a crash in any thread (a library's bad access, say) ends
 * this process at once with the crash's code as its exit status: no error
 * dialog, no debugger, no core file.  The caller then sees the death
 * promptly instead of waiting out its time limit. */
void cfa_dl_crash_ends_process(void);

#endif
