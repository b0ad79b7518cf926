/*
 * mem.c - allocation wrappers with a failure hook for tests.
 */
#include "core/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"

static unsigned long fail_countdown;

void cfapkg_debug_fail_alloc(unsigned long nth)
{
	fail_countdown = nth;
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
	return malloc(n ? n : 1);
}

void *cfa_calloc(size_t count, size_t n)
{
	if (should_fail())
		return NULL;
	return calloc(count ? count : 1, n ? n : 1);
}

void *cfa_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
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

int cfa_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 8;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -1;
		ncap *= 2;
	}
	n = cfa_realloc(*arr, ncap * elem);
	if (!n)
		return -1;
	*arr = n;
	*cap = ncap;
	return 0;
}
