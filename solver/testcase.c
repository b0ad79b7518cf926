/*
 * testcase.c - exports a solved plan as a libsolv testcase, so the same
 * problem can be replayed with libsolv's own testsolv (bench/ compares the
 * two) or attached to a bug report.
 */
#include <solv/testcase.h>

#include "platform/platform.h"
#include "solver/solver.h"

enum cfapkg_err cfapkg_plan_write_testcase(struct cfapkg_ctx *ctx, const struct cfapkg_plan *plan,
                                           const char *dir)
{
	int rc = cfa_plat_mkdir_p(dir);

	if (rc)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create: %s", dir, cfa_plat_strerror(rc));
	/* With the answer and the problems written too, so that a replay can be
	 * compared with what cfapkg got. */
	if (!testcase_write(plan->solv, dir, TESTCASE_RESULT_TRANSACTION | TESTCASE_RESULT_PROBLEMS,
	                    NULL, NULL))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: libsolv could not write the testcase", dir);
	return CFAPKG_E_OK;
}
