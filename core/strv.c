/*
 * strv.c - a growable list of strings, each a copy the list owns (the
 * requests, pins and folders a transaction or a store check gathers).
 */
#include "core/mem.h"
#include "core/strv.h"

bool cfa_strv_push(char ***v, size_t *n, size_t *cap, const char *s)
{
	/* The copy is made before the list grows: a failure either way leaves
	 * the list as it was, and the caller's string is never the list's. */
	char *copy = cfa_strdup(s);

	if (!copy || cfa_grow((void **)v, cap, *n + 1, sizeof(**v)) != 0) {
		cfa_free(copy);
		return false;
	}
	(*v)[(*n)++] = copy;
	return true;
}

/* n counts the strings: the list has no NULL end to stop at. */
void cfa_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cfa_free(v[i]);
	cfa_free(v);
}
