/*
 * debclosure.c - the set of packages some roots need, read from the
 * indexes' Depends and Pre-Depends, as apt would install them into an
 * empty system with a target release: each requirement is met by the
 * first index (in the order given) that can meet it, with its newest
 * version that fits.  An alternative ("a | b") takes the first that can be
 * met; a name no package has may be met by a package's Provides.
 *
 * The walk stops at the C library: requirements on it (libc6 (>= 2.38))
 * are not followed but gathered into one floor, the highest, which the
 * caller turns into a requirement on the machine's glibc, as conda's
 * __glibc is.  Conflicts and Breaks are not read: the set is unpacked
 * into a folder of its own, not a system, and two versions of one name
 * are refused outright.
 */
#include <stdlib.h>
#include <string.h>

#include "core/debindex.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "core/version.h"

enum rel_op { OP_ANY, OP_LT, OP_LE, OP_EQ, OP_GE, OP_GT };

/* One alternative of a clause: "libfoo:any (>= 1.2)". */
struct rel {
	char name[128];
	enum rel_op op;
	char version[128];
};

struct walk {
	struct cfapkg_ctx *ctx;
	const struct cfa_deb_index *const *idx;
	size_t nidx;
	const char *floor;              /* the C library's package: "libc6" */
	struct cfa_deb_closure *out;
	size_t cap;
	struct cfa_arena *arena;
};

static bool space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_space(const char *s, const char *end)
{
	while (s < end && space(*s))
		s++;
	return s;
}

static enum rel_op parse_op(const char **s, const char *end)
{
	static const struct {
		const char *text;
		enum rel_op op;
	} ops[] = {{"<<", OP_LT}, {"<=", OP_LE}, {">=", OP_GE}, {">>", OP_GT},
	           {"=", OP_EQ},  {"<", OP_LE},  {">", OP_GE}}; /* "<" ">": old spellings */
	size_t i;

	/* The two-character operators first, so that "<<" is never read as "<"
	 * followed by a stray one. */
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i].text);
		if ((size_t)(end - *s) >= n && memcmp(*s, ops[i].text, n) == 0) {
			*s += n;
			return ops[i].op;
		}
	}
	return OP_ANY;
}

static bool copy_word(char *dst, size_t size, const char *s, size_t n)
{
	/* Too long is refused, not cut: a cut name could be another
	 * package's. */
	if (n == 0 || n >= size)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

/* "name[:arch] [(op version)]" with any "[arch list]" or "<profile>"
 * after it ignored (binary indexes do not carry them). */
static bool parse_rel(const char *s, const char *end, struct rel *r)
{
	const char *n0, *v0;

	memset(r, 0, sizeof(*r));
	s = skip_space(s, end);
	for (n0 = s; s < end && !space(*s) && *s != '(' && *s != ':' && *s != '[' && *s != '<'; s++)
		;
	if (!copy_word(r->name, sizeof(r->name), n0, (size_t)(s - n0)))
		return false;
	while (s < end && *s != '(' && *s != '[' && *s != '<')
		s++; /* ":any", ":native" */
	if (s == end || *s != '(')
		return true;
	s = skip_space(s + 1, end);
	if ((r->op = parse_op(&s, end)) == OP_ANY)
		return false;
	s = skip_space(s, end);
	for (v0 = s; s < end && !space(*s) && *s != ')'; s++)
		;
	return copy_word(r->version, sizeof(r->version), v0, (size_t)(s - v0)) && s < end;
}

static bool version_fits(const char *have, const struct rel *r)
{
	int c;

	if (r->op == OP_ANY)
		return true;
	c = cfa_deb_ver_cmp(have, r->version);
	switch (r->op) {
	case OP_LT:
		return c < 0;
	case OP_LE:
		return c <= 0;
	case OP_EQ:
		return c == 0;
	case OP_GE:
		return c >= 0;
	default:
		return c > 0;
	}
}

/* Whether p's Provides offers r ("name" meets only an unversioned need,
 * "name (= v)" any need v fits). */
static bool provides(const struct cfa_deb_pkg *p, const struct rel *r)
{
	const char *s = p->provides, *end, *comma;
	struct rel pr;

	if (!s)
		return false;
	for (end = s + strlen(s); s < end; s = comma + 1) {
		if (!(comma = memchr(s, ',', (size_t)(end - s))))
			comma = end;
		if (!parse_rel(s, comma, &pr) || strcmp(pr.name, r->name) != 0)
			continue;
		if (r->op == OP_ANY || (pr.op == OP_EQ && version_fits(pr.version, r)))
			return true;
	}
	return false;
}

static bool meets(const struct cfa_deb_pkg *p, const struct rel *r)
{
	return (strcmp(p->name, r->name) == 0 && version_fits(p->version, r)) || provides(p, r);
}

static const struct cfa_deb_pkg *chosen(const struct walk *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->out->n; i++)
		if (strcmp(w->out->pkgs[i]->name, name) == 0)
			return w->out->pkgs[i];
	return NULL;
}

/* The package that meets r: one already chosen, else the first index's
 * newest fitting version, else a package providing it. */
static const struct cfa_deb_pkg *candidate(const struct walk *w, const struct rel *r)
{
	size_t i, j, n;

	/* A package already in the set is preferred, so that two needs of one
	 * name settle on one version whenever one version meets both. */
	for (i = 0; i < w->out->n; i++)
		if (meets(w->out->pkgs[i], r))
			return w->out->pkgs[i];
	for (i = 0; i < w->nidx; i++) {
		const struct cfa_deb_pkg *p = cfa_deb_index_first(w->idx[i], r->name, &n);
		for (j = 0; p && j < n; j++)
			if (version_fits(p[j].version, r))
				return &p[j];
	}
	/* A virtual name: the first provider, by index order then name. */
	for (i = 0; i < w->nidx; i++)
		for (j = 0; j < w->idx[i]->n; j++)
			if (provides(&w->idx[i]->pkgs[j], r))
				return &w->idx[i]->pkgs[j];
	return NULL;
}

static enum cfapkg_err add(struct walk *w, const struct cfa_deb_pkg *p)
{
	const struct cfa_deb_pkg **more;
	const struct cfa_deb_pkg *same = chosen(w, p->name);

	if (same == p)
		return CFAPKG_E_OK;
	if (same)
		return cfa_fail(w->ctx, CFAPKG_E_NOTFOUND, "the set would need %s both at %s and at "
		                "%s (%s and %s): one folder holds one version of a package",
		                p->name, same->version, p->version, same->index->label,
		                p->index->label);
	if (w->out->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		if (!(more = cfa_arena_alloc(w->arena, cap * sizeof(*more))))
			return cfa_nomem(w->ctx);
		if (w->out->n)
			memcpy(more, w->out->pkgs, w->out->n * sizeof(*more));
		w->out->pkgs = more;
		w->cap = cap;
	}
	w->out->pkgs[w->out->n++] = p;
	return CFAPKG_E_OK;
}

/* A requirement on the C library: its version joins the floor. */
static enum cfapkg_err floor_rel(struct walk *w, const struct cfa_deb_pkg *by,
                                 const struct rel *r)
{
	struct cfa_deb_closure *c = w->out;

	if (r->op == OP_ANY)
		return CFAPKG_E_OK;
	if (r->op != OP_GE && r->op != OP_GT && r->op != OP_EQ)
		return cfa_fail(w->ctx, CFAPKG_E_UNSUPPORTED, "%s %s needs %s (%s an upper bound): "
		                "the C library is the machine's, and only a floor can be asked of it",
		                by->name, by->version, w->floor, r->version);
	if (!c->floor || cfa_deb_ver_cmp(r->version, c->floor) > 0) {
		if (!(c->floor = cfa_arena_strdup(w->arena, r->version)))
			return cfa_nomem(w->ctx);
		c->floor_by = by;
	}
	return CFAPKG_E_OK;
}

static const char *suites(const struct walk *w)
{
	struct cfa_buf b;
	const char *out;
	size_t i;

	cfa_buf_init(&b, 4096);
	for (i = 0; i < w->nidx; i++)
		cfa_buf_printf(&b, "%s%s", i ? ", " : "", w->idx[i]->label);
	out = b.failed ? NULL : cfa_arena_strdup(w->arena, cfa_buf_str(&b));
	cfa_buf_fini(&b);
	return out ? out : "the indexes";
}

/* One clause: the first alternative that the C library, the set or an
 * index can meet. */
static enum cfapkg_err clause(struct walk *w, const struct cfa_deb_pkg *by, const char *s,
                              const char *end)
{
	const char *bar, *all = s;
	struct rel r;

	for (; s < end; s = bar + 1) {
		const struct cfa_deb_pkg *p;
		if (!(bar = memchr(s, '|', (size_t)(end - s))))
			bar = end;
		if (!parse_rel(s, bar, &r))
			return cfa_fail(w->ctx, CFAPKG_E_INTEGRITY, "%s: %s %s: its Depends \"%.*s\" "
			                "cannot be read", by->index->label, by->name, by->version,
			                (int)(end - s), s);
		if (strcmp(r.name, w->floor) == 0)
			return floor_rel(w, by, &r);
		/* The first alternative that can be met is taken, as apt takes
		 * it, even when a later one would cost nothing more. */
		if ((p = candidate(w, &r)) != NULL)
			return add(w, p);
		if (bar == end)
			break;
	}
	all = skip_space(all, end);
	return cfa_fail(w->ctx, CFAPKG_E_NOTFOUND, "%s %s (%s) depends on \"%.*s\", which no "
	                "package of %s meets", by->name, by->version, by->index->label,
	                (int)(end - all), all, suites(w));
}

static enum cfapkg_err follow(struct walk *w, const struct cfa_deb_pkg *p, const char *field)
{
	const char *s = field, *end, *comma;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (!s)
		return CFAPKG_E_OK;
	for (end = s + strlen(s); s < end && !e; s = comma + 1) {
		if (!(comma = memchr(s, ',', (size_t)(end - s))))
			comma = end;
		/* An empty clause (a trailing comma) asks for nothing. */
		if (skip_space(s, comma) < comma)
			e = clause(w, p, s, comma);
	}
	return e;
}

/* "NAME" or "NAME=VERSION", from the first index that has it. */
static enum cfapkg_err root(struct walk *w, const char *spec)
{
	const char *eq = strchr(spec, '=');
	struct rel r;

	memset(&r, 0, sizeof(r));
	if (!copy_word(r.name, sizeof(r.name), spec, eq ? (size_t)(eq - spec) : strlen(spec)) ||
	    (eq && !copy_word(r.version, sizeof(r.version), eq + 1, strlen(eq + 1))))
		return cfa_fail(w->ctx, CFAPKG_E_USAGE, "\"%s\" is not NAME or NAME=VERSION", spec);
	r.op = eq ? OP_EQ : OP_ANY;
	{
		const struct cfa_deb_pkg *p = candidate(w, &r);
		/* A root must be a package of that very name: a provider of a
		 * virtual name is not what was asked for. */
		if (!p || strcmp(p->name, r.name) != 0)
			return cfa_fail(w->ctx, CFAPKG_E_NOTFOUND, "no package %s%s%s in %s; apt-cache "
			                "policy %s shows what the archive has", r.name, eq ? " " : "",
			                eq ? r.version : "", suites(w), r.name);
		return add(w, p);
	}
}

static int by_name(const void *a, const void *b)
{
	const struct cfa_deb_pkg *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

enum cfapkg_err cfa_deb_closure(struct cfapkg_ctx *ctx, const struct cfa_deb_index *const *idx,
                                size_t nidx, const char *const *roots, size_t nroots,
                                const char *floor, struct cfa_arena *arena,
                                struct cfa_deb_closure *out)
{
	struct walk w = {ctx, idx, nidx, floor, out, 0, arena};
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < nroots && !e; i++)
		e = root(&w, roots[i]);
	/* Breadth first: the list grows behind the cursor until it holds. */
	for (i = 0; i < out->n && !e; i++) {
		/* Pre-Depends are followed as Depends are: the set is unpacked,
		 * never configured, so the two differ only in what apt would do
		 * first. */
		e = follow(&w, out->pkgs[i], out->pkgs[i]->pre_depends);
		if (!e)
			e = follow(&w, out->pkgs[i], out->pkgs[i]->depends);
	}
	if (e)
		return e;
	/* By name, so that the set does not depend on the order the walk met
	 * its packages in. */
	qsort(out->pkgs, out->n, sizeof(*out->pkgs), by_name);
	return CFAPKG_E_OK;
}

/* A pin as the walker's package, for meets(). */
static void pin_pkg(const struct cfapkg_deb_pin *pin, struct cfa_deb_pkg *p)
{
	memset(p, 0, sizeof(*p));
	p->name = pin->name;
	p->version = pin->version;
	p->provides = pin->provides;
}

/* Whether one clause is met by the set or is on the floor package (whose
 * highest version asked lands in floor). */
static bool pins_meet(const struct cfapkg_deb_pin *pins, size_t n, const char *floor_pkg,
                      const char *s, const char *end, char *floor, size_t flen)
{
	const char *bar;
	struct cfa_deb_pkg p;
	struct rel r;
	size_t i;

	for (; s < end; s = bar + 1) {
		if (!(bar = memchr(s, '|', (size_t)(end - s))))
			bar = end;
		if (!parse_rel(s, bar, &r))
			return false;
		if (strcmp(r.name, floor_pkg) == 0) {
			if (r.op != OP_ANY && (!floor[0] || cfa_deb_ver_cmp(r.version, floor) > 0) &&
			    !cfa_snprintf(floor, flen, "%s", r.version))
				return false;
			return true;
		}
		for (i = 0; i < n; i++) {
			pin_pkg(&pins[i], &p);
			if (meets(&p, &r))
				return true;
		}
		if (bar == end)
			break;
	}
	return false;
}

/* The walk's rules, checked on a set already pinned: a recipe's set must still
 * hold what each member depends on, whoever wrote it. */
bool cfa_deb_pins_closed(const struct cfapkg_deb_pin *pins, size_t n, const char *floor_pkg,
                         char *floor, size_t flen, char *why, size_t wlen)
{
	size_t i;

	floor[0] = '\0';
	for (i = 0; i < n; i++) {
		const char *s = pins[i].depends, *end, *comma;
		for (end = s ? s + strlen(s) : s; s && s < end; s = comma + 1) {
			if (!(comma = memchr(s, ',', (size_t)(end - s))))
				comma = end;
			s = skip_space(s, comma);
			if (s == comma || pins_meet(pins, n, floor_pkg, s, comma, floor, flen))
				continue;
			/* Only a message: cut, it still names the package. */
			cfa_fit_text(why, wlen, "%s %s depends on \"%.*s\", which no package of the "
			             "set meets", pins[i].name, pins[i].version, (int)(comma - s), s);
			return false;
		}
	}
	return true;
}

bool cfa_deb_depends_each(const char *depends, bool (*fn)(const char *name, void *arg), void *arg)
{
	const char *s = depends, *end, *sep;
	struct rel r;

	for (end = s ? s + strlen(s) : s; s && s < end; s = sep + 1) {
		/* Cut at '|' as well as ',', so that every alternative's name
		 * is offered. */
		sep = s + strcspn(s, ",|");
		if (parse_rel(s, sep, &r) && !fn(r.name, arg))
			return false;
		if (sep >= end)
			break;
	}
	return true;
}
