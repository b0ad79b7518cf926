/*
 * fuzz_version.c - versions and constraints (core/version.c, core/dep.c).
 * The input is up to three lines: versions A, B and C (Debian spellings
 * too: epochs, '~', revisions), the last line also tried as a constraint.
 * Properties, beyond not crashing:
 *   - the order is antisymmetric, reflexive and transitive, and the
 *     order without labels and revisions decides whenever it is not a tie;
 *   - libsolv orders the canonical EVR spellings the same way, in both
 *     the dpkg and the rpm orders, and equal versions spell the same;
 *   - the public cfapkg_version_compare agrees;
 *   - the EVR spelling fits CFA_VER_EVR_MAX;
 *   - "p OP A" parses and matches B exactly when B OP A holds (ignoring
 *     label and revision when A names neither), and "p==A.*" matches B
 *     exactly when B has A's epoch and starts with A's segments;
 *   - a constraint's canonical text parses to the same constraint.
 */
#include <solv/evr.h>
#include <solv/pool.h>
#include <stdio.h>
#include <string.h>

#include "cfapkg.h"
#include "core/dep.h"
#include "core/version.h"
#include "tests/fuzz/fuzz.h"

static Pool *orders[2]; /* dpkg, rpm */

struct parsed {
	char text[512];
	struct cfa_ver v;
	bool ok;
};

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

static void check_libsolv(const struct parsed *a, const struct parsed *b, int r)
{
	char ea[CFA_VER_EVR_MAX], eb[CFA_VER_EVR_MAX];
	int i;

	FUZZ_CHECK(cfa_ver_evr(&a->v, ea, sizeof(ea)) && cfa_ver_evr(&b->v, eb, sizeof(eb)),
	           "%s or %s: EVR does not fit", a->text, b->text);
	FUZZ_CHECK((strcmp(ea, eb) == 0) == (r == 0), "%s vs %s: EVR %s vs %s", a->text, b->text,
	           ea, eb);
	for (i = 0; i < 2; i++)
		FUZZ_CHECK(sign(pool_evrcmp_str(orders[i], ea, eb, EVRCMP_COMPARE)) == r,
		           "%s order: %s vs %s gives %d, cfapkg says %d (EVR %s vs %s)",
		           i ? "rpm" : "dpkg", a->text, b->text,
		           pool_evrcmp_str(orders[i], ea, eb, EVRCMP_COMPARE), r, ea, eb);
}

static bool holds(enum cfa_op op, int r)
{
	static const bool table[6][3] = {/* r = -1, 0, 1 */
	                                 {false, true, false}, {true, false, true},
	                                 {false, true, true},  {true, true, false},
	                                 {false, false, true}, {true, false, false}};
	return table[op][r + 1];
}

static bool prefix_equal(const struct cfa_ver *b, const struct cfa_ver *a)
{
	unsigned i;

	if (b->epoch != a->epoch)
		return false;
	for (i = 0; i < a->nrel; i++)
		if (b->rel[i] != a->rel[i])
			return false;
	return true;
}

/* "p OP A" against B, and "p==A.*" when A is plain numbers. */
static void check_ranges(const struct parsed *a, const struct parsed *b)
{
	static const char *const ops[] = {"==", "!=", ">=", "<=", ">", "<"};
	int r = a->v.labellen || a->v.revlen ? cfa_ver_cmp(&b->v, &a->v)
	                                     : cfa_ver_cmp_nolabel(&b->v, &a->v);
	struct cfa_arena arena;
	struct cfa_range range;
	const char *why = NULL;
	char text[600];
	int op;

	cfa_arena_init(&arena);
	for (op = 0; op < 6; op++) {
		snprintf(text, sizeof(text), "p%s%s", ops[op], a->text);
		FUZZ_CHECK(cfa_range_parse(&arena, text, &range, &why), "%s refused: %s", text, why);
		FUZZ_CHECK(cfa_range_match(&range, &b->v) == holds((enum cfa_op)op, r),
		           "%s against %s", text, b->text);
	}
	if (a->v.rank == CFA_RANK_FINAL && !a->v.labellen && !a->v.revlen) {
		snprintf(text, sizeof(text), "p==%s.*", a->text);
		FUZZ_CHECK(cfa_range_parse(&arena, text, &range, &why), "%s refused: %s", text, why);
		FUZZ_CHECK(cfa_range_match(&range, &b->v) == prefix_equal(&b->v, &a->v),
		           "%s against %s", text, b->text);
	}
	cfa_arena_fini(&arena);
}

static void check_pair(const struct parsed *a, const struct parsed *b)
{
	int r = cfa_ver_cmp(&a->v, &b->v), n = cfa_ver_cmp_nolabel(&a->v, &b->v);

	FUZZ_CHECK(r >= -1 && r <= 1 && r == -cfa_ver_cmp(&b->v, &a->v), "%s vs %s: %d", a->text,
	           b->text, r);
	FUZZ_CHECK(n == 0 || n == r, "%s vs %s: %d without labels, %d with", a->text, b->text, n,
	           r);
	FUZZ_CHECK(cfapkg_version_compare(a->text, b->text, NULL) == r, "public compare of %s, %s",
	           a->text, b->text);
	check_libsolv(a, b, r);
	check_ranges(a, b);
}

static void check_three(const struct parsed *a, const struct parsed *b, const struct parsed *c)
{
	int ab = cfa_ver_cmp(&a->v, &b->v), bc = cfa_ver_cmp(&b->v, &c->v);
	int ac = cfa_ver_cmp(&a->v, &c->v);

	FUZZ_CHECK(!(ab <= 0 && bc <= 0) || ac <= 0, "%s <= %s <= %s but not %s <= %s", a->text,
	           b->text, c->text, a->text, c->text);
	FUZZ_CHECK(!(ab >= 0 && bc >= 0) || ac >= 0, "%s >= %s >= %s but not %s >= %s", a->text,
	           b->text, c->text, a->text, c->text);
}

/* Any constraint that parses: its canonical text is the same constraint. */
static void check_constraint(const char *text, const struct parsed *v, size_t nv)
{
	struct cfa_range r1, r2;
	struct cfa_arena arena;
	const char *why = NULL;
	size_t i;

	cfa_arena_init(&arena);
	if (cfa_range_parse(&arena, text, &r1, &why)) {
		FUZZ_CHECK(r1.nclauses <= CFA_RANGE_CLAUSES_MAX && cfa_name_valid(r1.name,
		                                                                  strlen(r1.name)),
		           "%s: %u clauses", text, r1.nclauses);
		FUZZ_CHECK(cfa_range_parse(&arena, r1.text, &r2, &why), "canonical %s of %s refused: %s",
		           r1.text, text, why);
		FUZZ_CHECK(r2.nclauses == r1.nclauses && strcmp(r1.text, r2.text) == 0 &&
		               strcmp(r1.name, r2.name) == 0,
		           "%s and its canonical %s differ", text, r1.text);
		for (i = 0; i < nv; i++)
			FUZZ_CHECK(!v[i].ok || cfa_range_match(&r1, &v[i].v) == cfa_range_match(&r2, &v[i].v),
			           "%s and %s disagree on %s", text, r1.text, v[i].text);
	}
	cfa_arena_fini(&arena);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	orders[0] = pool_create();
	orders[1] = pool_create();
	if (pool_setdisttype(orders[0], DISTTYPE_DEB) < 0 ||
	    pool_setdisttype(orders[1], DISTTYPE_RPM) < 0)
		fuzz_fail("this libsolv cannot switch between the dpkg and rpm orders");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct parsed p[3];
	size_t i, n = 0, start = 0;

	memset(p, 0, sizeof(p));
	for (i = 0; i <= size && n < 3; i++) {
		if (i < size && data[i] != '\n')
			continue;
		/* Versions are C strings to the public API: a NUL ends them. */
		snprintf(p[n].text, sizeof(p[n].text), "%.*s", (int)(i - start), data + start);
		p[n].ok = cfa_ver_parse(p[n].text, strlen(p[n].text), &p[n].v, NULL);
		n++;
		start = i + 1;
	}
	for (i = 0; i < n; i++)
		if (p[i].ok)
			check_pair(&p[i], &p[i]);
	if (n >= 2 && p[0].ok && p[1].ok) {
		check_pair(&p[0], &p[1]);
		check_pair(&p[1], &p[0]);
	}
	if (n == 3 && p[0].ok && p[1].ok && p[2].ok)
		check_three(&p[0], &p[1], &p[2]);
	check_constraint(p[n - 1].text, p, n - 1);
	return 0;
}
