/*
 * test_version.c - version parsing and order, checked against libsolv's
 * own comparison in both orderings it can be built with (dpkg and rpm), and
 * constraint matching.
 */
#include <string.h>

#include <solv/evr.h>
#include <solv/pool.h>

#include "check.h"
#include "core/dep.h"
#include "core/version.h"

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

static int orders_checked; /* bit 1: dpkg, bit 2: rpm */

static void check_libsolv(int disttype, const char *name, const struct cfa_ver *a,
                          const struct cfa_ver *b, int want, const char *line)
{
	char ea[CFA_VER_EVR_MAX], eb[CFA_VER_EVR_MAX];
	Pool *pool = pool_create();

	if (pool_setdisttype(pool, disttype) < 0) {
		/* A libsolv built for one ordering only: that one is checked by the
		 * other call. */
		pool_free(pool);
		return;
	}
	orders_checked |= disttype == DISTTYPE_DEB ? 1 : 2;
	cfa_ver_evr(a, ea, sizeof(ea));
	cfa_ver_evr(b, eb, sizeof(eb));
	CHECK(sign(pool_evrcmp_str(pool, ea, eb, EVRCMP_COMPARE)) == want, "%s order: %s (%s vs %s)",
	      name, line, ea, eb);
	pool_free(pool);
}

static int relation(const char *op)
{
	if (strcmp(op, "<") == 0)
		return -1;
	if (strcmp(op, ">") == 0)
		return 1;
	return 0;
}

static void check_line(const char *line)
{
	char a[128], op[4], b[128];
	struct cfa_ver va, vb;
	int want;

	if (sscanf(line, "%127s %3s %127s", a, op, b) != 3)
		return;
	want = relation(op);
	CHECK(cfa_ver_parse(a, strlen(a), &va, NULL), "parse %s", a);
	CHECK(cfa_ver_parse(b, strlen(b), &vb, NULL), "parse %s", b);
	CHECK(sign(cfa_ver_cmp(&va, &vb)) == want, "cfapkg order: %s", line);
	CHECK(sign(cfa_ver_cmp(&vb, &va)) == -want, "cfapkg order reversed: %s", line);
	check_libsolv(DISTTYPE_DEB, "dpkg", &va, &vb, want, line);
	check_libsolv(DISTTYPE_RPM, "rpm", &va, &vb, want, line);
}

static void check_bad_versions(void)
{
	static const char *const bad[] = {"", "v6", "6-", "6-preview.69.x", "1..2", "1.2.3.4.5.6.7",
	                                  "1000000000", "6-banana.1", "2.3.0+", "2.3.0+cu 118",
	                                  "-1"};
	struct cfa_ver v;
	const char *why;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		CHECK(!cfa_ver_parse(bad[i], strlen(bad[i]), &v, &why) && why, "\"%s\" refused",
		      bad[i]);
	}
}

static bool matches(const char *version, const char *constraint)
{
	struct cfa_arena a;
	struct cfa_range r;
	struct cfa_ver v;
	const char *why = NULL;
	bool ok;

	cfa_arena_init(&a);
	ok = cfa_ver_parse(version, strlen(version), &v, NULL) &&
	     cfa_range_parse(&a, constraint, &r, &why) && cfa_range_match(&r, &v);
	cfa_arena_fini(&a);
	return ok;
}

static void check_ranges(void)
{
	CHECK(matches("2.3.0+cu118", "libtorch-cuda==2.3.0+cu118"), "exact label");
	CHECK(matches("2.3.0+cu118", "libtorch-cuda==2.3.0"), "no label matches any label");
	CHECK(!matches("2.3.0+cu121", "libtorch-cuda==2.3.0+cu118"), "other label");
	CHECK(!matches("2.3.0", "libtorch-cuda==2.3.0+cu118"), "missing label");
	CHECK(matches("2.3.0+cu118", "libtorch-cuda>=2.3,<2.4"), "range");
	CHECK(matches("2.3.0+cu118", "libtorch-cuda >= 2.3 , < 2.4"), "range with spaces");
	CHECK(!matches("2.4.0", "libtorch-cuda>=2.3,<2.4"), "upper bound");
	CHECK(matches("7-preview.10", "zluda==7-preview.10"), "preview exact");
	CHECK(!matches("7-preview.10", "zluda>=7"), "a preview is below its release");
	CHECK(matches("6.4.2", "hip-sdk==6.4.*"), "wildcard");
	CHECK(matches("6.4.0rc1", "hip-sdk==6.4.*"), "wildcard takes pre-releases");
	CHECK(!matches("6.5.0", "hip-sdk==6.4.*"), "wildcard upper");
	CHECK(!matches("6.5.0a1", "hip-sdk==6.4.*"), "wildcard excludes next pre-release");
	CHECK(matches("6", "zluda!=7-preview.10"), "not equal");
	CHECK(matches("1", "x"), "no constraint");
}

static void check_bad_ranges(void)
{
	static const char *const bad[] = {"", ">=1", "zluda>>1", "zluda==", "zluda==1;", "zluda 1",
	                                  "zluda==1.*.2", "zluda>=1.*", "zluda==1,,<2"};
	struct cfa_arena a;
	struct cfa_range r;
	size_t i;

	cfa_arena_init(&a);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *why = NULL;
		CHECK(!cfa_range_parse(&a, bad[i], &r, &why) && why, "\"%s\" refused", bad[i]);
	}
	cfa_arena_fini(&a);
}

int main(int argc, char **argv)
{
	char line[512];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: test_version version.data\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && line[0] != '\n')
			check_line(line);
	fclose(f);
	/* Debian's libsolv has both orders; a single-order build (the Windows
	 * one: rpm) must still agree in the order it has. */
	CHECK(orders_checked != 0, "libsolv accepted neither the dpkg nor the rpm order");
	printf("libsolv orders checked:%s%s\n", orders_checked & 1 ? " dpkg" : "",
	       orders_checked & 2 ? " rpm" : "");
	check_bad_versions();
	check_ranges();
	check_bad_ranges();
	return check_report();
}
