/*
 * mem.c - allocation wrappers with a failure hook for tests.
 */
#include "core/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"

/* 0: no failure planned; otherwise the allocation that brings it to 0 fails,
 * once. */
static unsigned long fail_countdown;

unsigned long cfapkg_debug_fail_alloc(unsigned long nth)
{
	unsigned long left = fail_countdown;

	fail_countdown = nth;
	return left;
}

static int should_fail(void)
{
	if (fail_countdown == 0)
		return 0;
	return --fail_countdown == 0;
}

void *cfa_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	/* malloc(0) may return NULL, which callers would take for out of
	 * memory; a one-byte request gets a pointer of its own. */
	return malloc(n ? n : 1);
}

void *cfa_calloc(size_t count, size_t n)
{
	if (should_fail())
		return NULL;
	/* calloc checks count * n for overflow itself. */
	return calloc(count ? count : 1, n ? n : 1);
}

void *cfa_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	/* realloc(p, 0) may free p and return NULL, which the caller would
	 * read as a failure that kept p. */
	return realloc(p, n ? n : 1);
}

char *cfa_strndup(const char *s, size_t n)
{
	char *d = cfa_malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *cfa_strdup(const char *s)
{
	return cfa_strndup(s, strlen(s));
}

void cfa_free(void *p)
{
	free(p);
}

/* Doubles from 8 so that appending one element at a time costs amortised
 * constant time. */
int cfa_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 8;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		/* Doubling must leave ncap * elem representable. */
		if (ncap > SIZE_MAX / 2 / elem)
			return -1;
		ncap *= 2;
	}
	n = cfa_realloc(*arr, ncap * elem);
	/* On failure *arr and *cap are unchanged, so the caller still owns
	 * and can free the old array. */
	if (!n)
		return -1;
	*arr = n;
	*cap = ncap;
	return 0;
}

int cfa_grow_one(void **arr, size_t n, size_t elem)
{
	void *p;

	if (n >= SIZE_MAX / elem - 1 || !(p = cfa_realloc(*arr, (n + 1) * elem)))
		return -1;
	*arr = p;
	return 0;
}
