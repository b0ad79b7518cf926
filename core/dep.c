/*
 * dep.c - parsing and matching of version constraints.
 */
#include "core/dep.h"
#include "cfapkg.h"

#include <string.h>

#include "core/strbuf.h"

/* Indexed by enum cfa_op. */
static const char *const op_texts[] = {[CFA_OP_EQ] = "==", [CFA_OP_NE] = "!=", [CFA_OP_GE] = ">=",
                                       [CFA_OP_LE] = "<=", [CFA_OP_GT] = ">", [CFA_OP_LT] = "<"};

const char *cfa_op_text(enum cfa_op op)
{
	return op_texts[op];
}

/* A name starts with a letter or digit, so that it is never taken for an option
 * or the start of an operator. */
static bool is_name_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return !first && (c == '.' || c == '_' || c == '-' || c == '+');
}

/* A name ends at the first space or operator character, which no name may
 * hold. */
size_t cfapkg_spec_name_len(const char *spec)
{
	return strcspn(spec, " <>=!");
}

bool cfapkg_spec_names(const char *spec, const char *name)
{
	size_t n = cfapkg_spec_name_len(spec);

	return n == strlen(name) && strncmp(spec, name, n) == 0;
}

bool cfa_name_valid(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > CFA_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!is_name_char(s[i], i == 0))
			return false;
	return true;
}

static size_t skip_space(const char *s, size_t i)
{
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	return i;
}

static bool parse_op(const char *s, size_t *i, enum cfa_op *op)
{
	static const struct {
		const char *text;
		enum cfa_op op;
	} ops[] = {{"==", CFA_OP_EQ}, {"!=", CFA_OP_NE}, {">=", CFA_OP_GE}, {"<=", CFA_OP_LE},
	           {">", CFA_OP_GT},  {"<", CFA_OP_LT},  {"=", CFA_OP_EQ}};
	size_t k;

	/* The two-character operators are tried first, so that ">=" is never
	 * read as ">" and then "="; a lone "=" is read as "==". */
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t n = strlen(ops[k].text);
		if (strncmp(s + *i, ops[k].text, n) == 0) {
			*op = ops[k].op;
			*i += n;
			return true;
		}
	}
	return false;
}

/* "==2.3.*": at least 2.3 (pre-releases included), below 2.4. */
static bool expand_wildcard(struct cfa_clause *c, const char *v, size_t n, const char **why)
{
	struct cfa_ver lo;

	if (c[0].op != CFA_OP_EQ || n < 3 || v[n - 1] != '*' || v[n - 2] != '.') {
		*why = "'*' is allowed only as the last segment of an == version (==6.4.*)";
		return false;
	}
	if (!cfa_ver_parse(v, n - 2, &lo, why))
		return false;
	if (lo.rank != CFA_RANK_FINAL || lo.labellen || lo.revlen) {
		*why = "a wildcard version must be plain numbers (==6.4.*)";
		return false;
	}
	/* Both bounds take the lowest rank there is: the series' own
	 * pre-releases are inside (2.3.0.dev1), the next series' are not
	 * (2.4.0rc1). */
	lo.rank = CFA_RANK_DEV;
	c[0].op = CFA_OP_GE;
	c[0].ver = lo;
	c[1].op = CFA_OP_LT;
	c[1].ver = lo;
	c[1].ver.rel[lo.nrel - 1]++;
	return true;
}

static bool parse_clauses(const char *s, size_t i, struct cfa_clause *c, unsigned *n,
                          const char **why)
{
	for (;;) {
		size_t start, end;
		i = skip_space(s, i);
		/* Room for two is asked, as a wildcard becomes two clauses. */
		if (*n + 2 > CFA_RANGE_CLAUSES_MAX) {
			*why = "too many clauses";
			return false;
		}
		if (!parse_op(s, &i, &c[*n].op)) {
			*why = "expected an operator (==, !=, >=, <=, >, <)";
			return false;
		}
		i = skip_space(s, i);
		if (strchr("<>=!", s[i]) && s[i]) {
			*why = "two operators in a row";
			return false;
		}
		start = i;
		while (s[i] && s[i] != ',' && s[i] != ' ' && s[i] != '\t')
			i++;
		end = i;
		if (end > start && s[end - 1] == '*') {
			if (!expand_wildcard(&c[*n], s + start, end - start, why))
				return false;
			*n += 2;
		} else {
			if (!cfa_ver_parse(s + start, end - start, &c[*n].ver, why))
				return false;
			(*n)++;
		}
		i = skip_space(s, i);
		if (s[i] == '\0')
			return true;
		if (s[i] != ',') {
			*why = "clauses must be separated by commas";
			return false;
		}
		i++;
	}
}

/* The canonical text: name, then each clause as written but without
 * spaces.  Equal constraints get equal text (one synthetic name each). */
static char *canonical_text(struct cfa_arena *a, const char *name, const char *rest)
{
	struct cfa_buf b;
	char *out;
	const char *p;

	cfa_buf_init(&b, 4096);
	cfa_buf_adds(&b, name);
	for (p = rest; *p; p++)
		if (*p != ' ' && *p != '\t')
			cfa_buf_add(&b, p, 1);
	out = b.failed ? NULL : cfa_arena_strdup(a, cfa_buf_str(&b));
	cfa_buf_fini(&b);
	return out;
}

bool cfa_range_parse(struct cfa_arena *a, const char *text, struct cfa_range *r,
                     const char **why)
{
	struct cfa_clause tmp[CFA_RANGE_CLAUSES_MAX];
	size_t i = skip_space(text, 0), start = i;
	unsigned n = 0;
	char *rest;

	memset(r, 0, sizeof(*r));
	while (is_name_char(text[i], i == start))
		i++;
	if (!cfa_name_valid(text + start, i - start)) {
		*why = "expected a name (letters, digits, '.', '_', '-', '+')";
		return false;
	}
	r->name = cfa_arena_strndup(a, text + start, i - start);
	if (!r->name)
		goto nomem;
	/* Labels point into the spelling, which must outlive text. */
	rest = cfa_arena_strdup(a, text + skip_space(text, i));
	if (!rest)
		goto nomem;
	if (rest[0] != '\0' && !parse_clauses(rest, 0, tmp, &n, why))
		return false;
	r->text = canonical_text(a, r->name, rest);
	r->clauses = n ? cfa_arena_alloc(a, n * sizeof(*tmp)) : NULL;
	if (!r->text || (n && !r->clauses))
		goto nomem;
	if (n)
		memcpy(r->clauses, tmp, n * sizeof(*tmp));
	r->nclauses = n;
	return true;
nomem:
	/* A NULL reason is how the caller tells running out of memory from a
	 * constraint that does not parse. */
	*why = NULL;
	return false;
}

/* A clause that names no label and no revision ignores both ("==5.2.3"
 * matches 5.2.3-2 and 5.2.3+dfsg-2); naming either compares everything. */
static bool clause_match(const struct cfa_clause *c, const struct cfa_ver *v)
{
	int r = c->ver.labellen || c->ver.revlen ? cfa_ver_cmp(v, &c->ver)
	                                         : cfa_ver_cmp_nolabel(v, &c->ver);

	switch (c->op) {
	case CFA_OP_EQ:
		return r == 0;
	case CFA_OP_NE:
		return r != 0;
	case CFA_OP_GE:
		return r >= 0;
	case CFA_OP_LE:
		return r <= 0;
	case CFA_OP_GT:
		return r > 0;
	case CFA_OP_LT:
		return r < 0;
	}
	return false;
}

bool cfa_range_match(const struct cfa_range *r, const struct cfa_ver *v)
{
	unsigned i;

	for (i = 0; i < r->nclauses; i++)
		if (!clause_match(&r->clauses[i], v))
			return false;
	return true;
}

bool cfa_in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* An empty list means any: a dependency that names no OS or target applies on
 * every machine. */
bool cfa_dep_applies(const struct cfapkg_facts *f, const struct cfapkg_dep *d)
{
	return (d->nos == 0 || cfa_in_list(f->os, d->os, d->nos)) &&
	       (d->ngfx == 0 || cfa_in_list(f->gfx, d->gfx, d->ngfx));
}
