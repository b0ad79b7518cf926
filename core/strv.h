/*
 * strv.h - a growable list of owned strings: char **v, its count and its
 * capacity, kept by the caller.
 */
#ifndef CFA_STRV_H
#define CFA_STRV_H

#include <stdbool.h>
#include <stddef.h>

/* Appends a copy of s to a growable list of strings; false when out of
 * memory (the list is left as it was). */
bool cfa_strv_push(char ***v, size_t *n, size_t *cap, const char *s);
/* Frees each string and the list. */
void cfa_strv_free(char **v, size_t n);

#endif
