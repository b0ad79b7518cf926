/*
 * test_version.c - version parsing and order (Debian spellings included),
 * checked against libsolv's own comparison in both orderings it can be
 * built with (dpkg and rpm), the EVR spellings, store folder names of
 * versions, and constraint matching.
 */
#include <string.h>

#include <solv/evr.h>
#include <solv/pool.h>

#include "check.h"
#include "core/dep.h"
#include "core/layout.h"
#include "core/mem.h"
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
	static const char *const bad[] = {
		"", "v6", "6-", "6-preview.69.x", "1..2", "1.2.3.4.5.6.7", "1000000000", "6.banana.1",
		"6banana", "2.3.0+", "2.3.0+cu 118", "-1", ":1", "1:", "1:2:3", "1000000000:1",
		"2.0~1", "2.0~foo1", "1.0-1-2", "1.0--1", "1.0-~1", "1.0-1_2", "1.0-1000000000",
		"2.3.0+-1", "2.3.0++a", "1.0-rc1x",
		"1.0-12345678901234567890123456789012345678901234567890123456789012345"};
	struct cfa_ver v;
	const char *why;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		CHECK(!cfa_ver_parse(bad[i], strlen(bad[i]), &v, &why) && why, "\"%s\" refused",
		      bad[i]);
	}
}

static void check_fields(const char *text, uint32_t epoch, uint8_t nrel, uint8_t rank,
                         uint32_t prenum, const char *label, const char *rev)
{
	struct cfa_ver v;

	CHECK(cfa_ver_parse(text, strlen(text), &v, NULL), "parse %s", text);
	CHECK(v.epoch == epoch && v.nrel == nrel && v.rank == rank && v.prenum == prenum,
	      "%s: epoch %u, %u segments, rank %u, number %u", text, (unsigned)v.epoch,
	      (unsigned)v.nrel, (unsigned)v.rank, (unsigned)v.prenum);
	CHECK(v.labellen == strlen(label) && memcmp(v.label ? v.label : "", label, v.labellen) == 0,
	      "%s: label %.*s", text, (int)v.labellen, v.label ? v.label : "");
	CHECK(v.revlen == strlen(rev) && memcmp(v.rev ? v.rev : "", rev, v.revlen) == 0,
	      "%s: revision %.*s", text, (int)v.revlen, v.rev ? v.rev : "");
}

/* Where a '-' starts a tag and where a revision. */
static void check_debian_parts(void)
{
	check_fields("1.0-rc.2", 0, 2, CFA_RANK_RC, 2, "", "");
	check_fields("1.0-rc-2", 0, 2, CFA_RANK_RC, 2, "", "");
	check_fields("2.0~rc-1", 0, 2, CFA_RANK_RC, 0, "", "1");
	check_fields("2.0~rc1-1", 0, 2, CFA_RANK_RC, 1, "", "1");
	check_fields("6.4.43483.60401-83~24.04", 0, 4, CFA_RANK_FINAL, 0, "", "83~24.04");
	check_fields("1:2.3-1", 1, 2, CFA_RANK_FINAL, 0, "", "1");
	check_fields("5.3.0+dfsg+1-2", 0, 3, CFA_RANK_FINAL, 0, "dfsg+1", "2");
	check_fields("1.0-ubuntu1", 0, 2, CFA_RANK_FINAL, 0, "", "ubuntu1");
	check_fields("6-banana.1", 0, 1, CFA_RANK_FINAL, 0, "", "banana.1");
}

static void check_evr_text(const char *text, const char *want)
{
	char evr[CFA_VER_EVR_MAX];
	struct cfa_ver v;

	CHECK(cfa_ver_parse(text, strlen(text), &v, NULL) && cfa_ver_evr(&v, evr, sizeof(evr)) &&
	          strcmp(evr, want) == 0,
	      "EVR of %s is %s", text, want);
}

/* The spellings libsolv sees, the longest ones fitting CFA_VER_EVR_MAX,
 * and a buffer too small getting nothing rather than a cut spelling. */
static void check_evr(void)
{
	static const char *const longest[] = {
		"999999999:999999999.999999999.999999999.999999999.999999999.999999999-preview."
		"999999999+zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz-"
		"z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+z+",
		"1+zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz-"
		"1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+",
		"1-z+++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++",
		"1-999999999.999999999.999999999.999999999.999999999.999999999.9999"};
	char evr[CFA_VER_EVR_MAX], small[16];
	struct cfa_ver v;
	size_t i;

	check_evr_text("2.3.0+cu118", "2.3.0.0.0.0.6.0-99.117.49.49.56");
	check_evr_text("1:2.3-1", "1:2.3.0.0.0.0.6.0-1.2.1.2");
	check_evr_text("5.3.0+dfsg-2", "5.3.0.0.0.0.6.0-100.102.115.103.1.2.2.2");
	check_evr_text("1.0-1~bpo1", "1.0.0.0.0.0.6.0-1.2.1.1.100.114.113.2.1.2");
	for (i = 0; i < sizeof(longest) / sizeof(longest[0]); i++) {
		CHECK(cfa_ver_parse(longest[i], strlen(longest[i]), &v, NULL), "parse %s", longest[i]);
		CHECK(cfa_ver_evr(&v, evr, sizeof(evr)), "EVR of %s fits", longest[i]);
		CHECK(!cfa_ver_evr(&v, small, sizeof(small)) && small[0] == '\0',
		      "a cut EVR of %s is refused", longest[i]);
	}
}

static void check_store_names(void)
{
	static const char sha[] = "0123456789abcdef";
	char *a = cfa_store_name("rocm", "1:2.3-1", sha);
	char *b = cfa_store_name("rocm", "1.0-1~bpo1@", sha);
	char *c = cfa_store_name("rocm", "2.3.0+cu118_x", sha);

	CHECK(a && strcmp(a, "rocm-1@3A2.3-1-01234567") == 0, "store name %s", a ? a : "-");
	CHECK(b && strcmp(b, "rocm-1.0-1@7Ebpo1@40-01234567") == 0, "store name %s", b ? b : "-");
	CHECK(c && strcmp(c, "rocm-2.3.0+cu118_x-01234567") == 0, "store name %s", c ? c : "-");
	cfa_free(a);
	cfa_free(b);
	cfa_free(c);
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

/* A constraint naming no label and no revision ignores both; naming one
 * compares everything. */
static void check_debian_ranges(void)
{
	CHECK(matches("5.2.3-2", "rocm==5.2.3"), "no revision matches any revision");
	CHECK(matches("5.3.0+dfsg-2", "rocm==5.3.0"), "nor label nor revision");
	CHECK(matches("5.2.3-2", "rocm == 5.2.3-2"), "exact revision");
	CHECK(!matches("5.2.3-3", "rocm==5.2.3-2"), "other revision");
	CHECK(!matches("5.2.3", "rocm==5.2.3-2"), "missing revision");
	CHECK(!matches("5.3.0+dfsg-2", "rocm==5.3.0-2"), "a revision compares the label too");
	CHECK(matches("5.2.3-10", "rocm>=5.2.3-2"), "revision order");
	CHECK(matches("5.2.3", "rocm<5.2.3-2") && matches("5.2.3-1~bpo1", "rocm<5.2.3-1"),
	      "below a revision");
	CHECK(!matches("5.2.3-2", "rocm>5.2.3"), "a revision is not above its release");
	CHECK(matches("1:2.3-1", "rocm>=5") && !matches("1:2.3-1", "rocm==2.3-1"), "epochs");
	CHECK(matches("1:2.3-1", "rocm==1:2.*") && !matches("2.3-1", "rocm==1:2.*"),
	      "wildcard with an epoch");
	CHECK(matches("2.0~rc1-1", "p>=2.0-rc1,<2.0"), "tilde tag");
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
	check_debian_ranges();
}

static void check_bad_ranges(void)
{
	static const char *const bad[] = {"", ">=1", "zluda>>1", "zluda==", "zluda==1;", "zluda 1",
	                                  "zluda==1.*.2", "zluda>=1.*", "zluda==1,,<2",
	                                  "rocm==5.2.3-2.*", "rocm==5.2.3+dfsg.*"};
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
	check_debian_parts();
	check_evr();
	check_store_names();
	check_ranges();
	check_bad_ranges();
	return check_report();
}
