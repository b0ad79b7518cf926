/*
 * sysfs.h - the pieces of the Linux detection backend (sysfs.c: GPUs,
 * sysfs_rocm.c: OS, driver and ROCm) and the file reading they share
 * (sysfs_files.c).  Everything is read below a root folder.
 */
#ifndef CFA_DETECT_SYSFS_H
#define CFA_DETECT_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/compat.h"
#include "detect/detect.h"

/* One detection pass below a root.  Paths are built whole on the heap
 * (entry names come from the tree, of any length); running out of memory
 * is sticky and ends the pass in CFAPKG_E_NOMEM. */
struct cfa_sys {
	struct cfapkg_machine *m;
	const char *root;
	bool nomem;
};

/* A warning on the machine; running out of memory for it is sticky too. */
void cfa_sys_warn(struct cfa_sys *s, const char *fmt, ...) CFA_PRINTF(2, 3);

/* root + the formatted part below it; NULL when out of memory. */
char *cfa_sys_path(struct cfa_sys *s, const char *fmt, ...) CFA_PRINTF(2, 3);

/* Reads a small file whole; 0 or an errno-style code (EFBIG when it does
 * not fit: its end could hold what is looked for). */
int cfa_sys_read_quiet(const char *path, char *buf, size_t len);
/* The same; a file that exists but cannot be read gets a warning naming it
 * (a missing one is common: not every tree has every file).  A NULL path
 * (no memory for it) reads as ENOMEM. */
int cfa_sys_read(struct cfa_sys *s, const char *path, char *buf, size_t len);
/* The same for a file at root + rel. */
int cfa_sys_read_rel(struct cfa_sys *s, const char *rel, char *buf, size_t len);

/* A folder's entry names, as many as there are; with prefix set before
 * the listing, only those that start with it (a library folder holds a
 * thousand names, of which a look for one library wants a few). */
struct cfa_names {
	char **items;
	size_t n, cap;
	const char *prefix;
};
int cfa_sys_collect_name(const char *name, void *arg);
void cfa_sys_names_free(struct cfa_names *ns);
/* Orders for qsort: by name, and numbers by value (2 before 10). */
int cfa_sys_cmp_name(const void *a, const void *b);
int cfa_sys_cmp_numeric_name(const void *a, const void *b);
/* The names in a folder, sorted by cmp: 0, or why the folder could not be
 * listed (ENOENT: it does not exist). */
int cfa_sys_list(struct cfa_sys *s, const char *path, struct cfa_names *ns,
                 int (*cmp)(const void *, const void *));
/* The same for a folder at root + rel. */
int cfa_sys_list_rel(struct cfa_sys *s, const char *rel, struct cfa_names *ns,
                     int (*cmp)(const void *, const void *));

/* sysfs.c: the GPUs, from the KFD topology and the DRM nodes. */
void cfa_sys_detect_gpus(struct cfa_sys *s);
/* sysfs_rocm.c */
void cfa_sys_detect_os(struct cfa_sys *s);
void cfa_sys_detect_driver(struct cfa_sys *s);
void cfa_sys_detect_rocm(struct cfa_sys *s);
/* sysfs_libc.c: the C library's version. */
void cfa_sys_detect_glibc(struct cfa_sys *s);

#endif
