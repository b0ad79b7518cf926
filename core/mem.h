/*
 * mem.h - every allocation of the library goes through here, so that a test
 * can make the Nth one fail (cfapkg_debug_fail_alloc) and check that each
 * caller reports CFAPKG_E_NOMEM instead of crashing.
 */
#ifndef CFA_MEM_H
#define CFA_MEM_H

#include <stddef.h>

void *cfa_malloc(size_t n);
void *cfa_calloc(size_t count, size_t n);
void *cfa_realloc(void *p, size_t n);
char *cfa_strdup(const char *s);
char *cfa_strndup(const char *s, size_t n);
void cfa_free(void *p);

/* Frees and clears a pointer variable. */
#define CFA_FREE(p)            \
	do {                   \
		cfa_free(p);   \
		(p) = NULL;    \
	} while (0)

/* Grows *arr (of *cap elements of size elem) to hold at least need. */
int cfa_grow(void **arr, size_t *cap, size_t need, size_t elem);
/* Room for one more element of a list held as an array and its count,
 * with no capacity kept (public structs keep none): *arr grows to n + 1
 * elements, one realloc each, as such lists are short.  -1 when out of
 * memory, *arr kept for its owner to free. */
int cfa_grow_one(void **arr, size_t n, size_t elem);

#endif
