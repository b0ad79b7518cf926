/*
 * lazy_solvext.c - libsolvext's one function cfapkg calls (writing a
 * solver testcase), bound on first use (lazylib.h): libsolvext brings
 * librpm, Lua and SQLite, which only 'plan --testcase' needs.
 */
#include <solv/testcase.h>

#include "platform/lazylib.h"

static const char *const names[] = {"testcase_write", NULL};

#ifndef CFA_SONAME_SOLVEXT
#define CFA_SONAME_SOLVEXT "libsolvext.so.1"
#endif
CFA_LAZYLIB(CFA_SONAME_SOLVEXT, names, 1)

int testcase_write(Solver *solv, const char *dir, int resultflags, const char *testcasename,
                   const char *resultname)
{
	int (*fn)(Solver *, const char *, int, const char *, const char *) =
	    (int (*)(Solver *, const char *, int, const char *, const char *))lazy_fn(0);

	return fn(solv, dir, resultflags, testcasename, resultname);
}
