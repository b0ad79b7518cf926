/*
 * check.h - the few assertion helpers the C tests share.  A failed check
 * prints where and what, and the test exits non-zero at the end.
 */
#ifndef CFAPKG_CHECK_H
#define CFAPKG_CHECK_H

#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		check_count++;                                                \
		if (!(cond)) {                                                \
			check_failures++;                                     \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, \
			        __LINE__, #cond);                             \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
		}                                                             \
	} while (0)

/* The closing line: "N passed, N failed". */
static int check_report(void)
{
	printf("%d passed, %d failed\n", check_count - check_failures, check_failures);
	return check_failures ? 1 : 0;
}

#endif
