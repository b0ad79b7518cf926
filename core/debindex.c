/*
 * debindex.c - one pass over a Debian Packages index.  The index is a list
 * of stanzas separated by blank lines; each line is "Field: value", and a
 * line starting with a blank continues the field above (only Description
 * and the like use that, and none of the fields read here).  Field names
 * are case-insensitive.  libsolv's Debian reader was the first choice, but
 * it does not keep the Size field, which is what bounds each download.
 */
#include "core/debindex.h"

#include <string.h>

#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/version.h"

struct span {
	const char *s;
	size_t n;
};

enum field { F_PACKAGE, F_VERSION, F_ARCH, F_FILENAME, F_SIZE, F_SHA256, F_DEPENDS, F_COUNT };

static const char *const field_names[F_COUNT] = {
	"Package", "Version", "Architecture", "Filename", "Size", "SHA256", "Depends",
};

struct stanza {
	struct span f[F_COUNT];
};

struct finder {
	struct cfapkg_ctx *ctx;
	const char *index_name, *arch;
	const struct cfa_deb_want *want;
	size_t n;
	struct cfa_arena *arena;
	struct cfa_deb_found *found;
	enum cfapkg_err err;
};

static bool span_is(struct span sp, const char *s)
{
	return sp.n == strlen(s) && memcmp(sp.s, s, sp.n) == 0;
}

bool cfa_deb_field_is(const char *a, size_t n, const char *name)
{
	size_t i;

	if (n != strlen(name))
		return false;
	for (i = 0; i < n; i++) {
		char c = a[i], d = name[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (d >= 'A' && d <= 'Z')
			d = (char)(d - 'A' + 'a');
		if (c != d)
			return false;
	}
	return true;
}

/* "Field: value" into the stanza when the field is one we read. */
static void take_line(struct stanza *st, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	size_t k, name_len;

	if (!colon)
		return;
	name_len = (size_t)(colon - line);
	for (k = 0; k < F_COUNT; k++) {
		if (cfa_deb_field_is(line, name_len, field_names[k])) {
			const char *v = colon + 1, *end = line + len;
			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
				end--;
			st->f[k].s = v;
			st->f[k].n = (size_t)(end - v);
			return;
		}
	}
}

static enum cfapkg_err bad_entry(struct finder *fd, const struct cfa_deb_want *w,
                                 const char *what)
{
	/* A package named alone has no version to name. */
	return cfa_fail(fd->ctx, CFAPKG_E_INTEGRITY, "%s: %s%s%s: %s; the index is not what the "
	                "recipe was written against", fd->index_name, w->name, w->version ? " " : "",
	                w->version ? w->version : "", what);
}

static enum cfapkg_err record(struct finder *fd, const struct stanza *st,
                              const struct cfa_deb_want *w, struct cfa_deb_found *out)
{
	uint64_t size;
	char *file, *sha;

	if (!st->f[F_FILENAME].n || !st->f[F_SIZE].n || !st->f[F_SHA256].n)
		return bad_entry(fd, w, "listed without a Filename, a Size or a SHA256");
	if (!cfa_parse_u64(st->f[F_SIZE].s, st->f[F_SIZE].n, (uint64_t)INT64_MAX, &size))
		return bad_entry(fd, w, "its Size is not a number");
	file = cfa_arena_strndup(fd->arena, st->f[F_FILENAME].s, st->f[F_FILENAME].n);
	sha = cfa_arena_strndup(fd->arena, st->f[F_SHA256].s, st->f[F_SHA256].n);
	if (!file || !sha)
		return cfa_nomem(fd->ctx);
	if (!cfa_safe_relative(file))
		return bad_entry(fd, w, "its Filename is not a path inside the repository");
	if (!cfa_valid_sha256(sha))
		return bad_entry(fd, w, "its SHA256 is not 64 hex digits");
	out->version = cfa_arena_strndup(fd->arena, st->f[F_VERSION].s, st->f[F_VERSION].n);
	if (!out->version)
		return cfa_nomem(fd->ctx);
	out->filename = file;
	out->size = (int64_t)size;
	out->sha256 = sha;
	out->depends = st->f[F_DEPENDS].n
	                       ? cfa_arena_strndup(fd->arena, st->f[F_DEPENDS].s, st->f[F_DEPENDS].n)
	                       : NULL;
	return CFAPKG_E_OK;
}

/* Whether the stanza is the one to take for want w, given what was found
 * so far: the first of a wanted version (apt takes the first of identical
 * entries), or for a name alone a newer version than found. */
static bool takes(const struct stanza *st, const struct cfa_deb_want *w,
                  const struct cfa_deb_found *found)
{
	if (!span_is(st->f[F_PACKAGE], w->name))
		return false;
	if (w->version)
		return !found->filename && span_is(st->f[F_VERSION], w->version);
	return st->f[F_VERSION].n &&
	       (!found->filename || cfa_deb_version_cmp(st->f[F_VERSION].s, st->f[F_VERSION].n,
	                                                found->version,
	                                                strlen(found->version)) > 0);
}

static void end_stanza(struct finder *fd, const struct stanza *st)
{
	size_t i;

	if (fd->err || !st->f[F_PACKAGE].n)
		return;
	if (!span_is(st->f[F_ARCH], fd->arch) && !span_is(st->f[F_ARCH], "all"))
		return;
	for (i = 0; i < fd->n && !fd->err; i++)
		if (takes(st, &fd->want[i], &fd->found[i]))
			fd->err = record(fd, st, &fd->want[i], &fd->found[i]);
}

static void scan(struct finder *fd, const char *text, size_t len)
{
	struct stanza st;
	size_t pos = 0;

	memset(&st, 0, sizeof(st));
	while (pos < len && !fd->err) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
		if (n && text[pos + n - 1] == '\r')
			n--;
		if (n == 0) {
			end_stanza(fd, &st);
			memset(&st, 0, sizeof(st));
		} else if (text[pos] != ' ' && text[pos] != '\t') {
			take_line(&st, text + pos, n);
		}
		pos = end + 1;
	}
	end_stanza(fd, &st);
}

enum cfapkg_err cfa_deb_index_find(struct cfapkg_ctx *ctx, const char *index_name,
                                   const char *text, size_t len, const char *arch,
                                   const struct cfa_deb_want *want, size_t n,
                                   struct cfa_arena *arena, struct cfa_deb_found *found)
{
	struct finder fd = {ctx, index_name, arch, want, n, arena, found, CFAPKG_E_OK};
	size_t i;

	memset(found, 0, n * sizeof(*found));
	scan(&fd, text, len);
	if (fd.err)
		return fd.err;
	for (i = 0; i < n; i++)
		if (!found[i].filename)
			return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s does not list %s%s%s for %s; check the "
			                "package's name and version in the recipe (apt-cache policy %s "
			                "shows what a repository has)", index_name, want[i].name,
			                want[i].version ? " " : "", want[i].version ? want[i].version : "",
			                arch, want[i].name);
	return CFAPKG_E_OK;
}

bool cfa_deb_wants(struct cfa_arena *arena, const char *const *packages, size_t n,
                   struct cfa_deb_want *want)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *eq = strchr(packages[i], '='); /* the recipe parser checked them */
		size_t len = eq ? (size_t)(eq - packages[i]) : strlen(packages[i]);
		want[i].name = cfa_arena_strndup(arena, packages[i], len);
		want[i].version = eq ? eq + 1 : NULL;
		if (!want[i].name)
			return false;
	}
	return true;
}

bool cfa_deb_name_valid(const char *s, size_t n)
{
	size_t i;

	if (n < 2 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
		      s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* A version's three parts: the epoch's digits (none: 0), the upstream
 * part, the revision after the last hyphen ("" when none). */
struct deb_parts {
	uint64_t epoch;
	const char *up, *rev;
	size_t nup, nrev;
};

static void deb_split(const char *s, size_t n, struct deb_parts *p)
{
	const char *colon = memchr(s, ':', n), *dash = NULL, *c;

	p->epoch = 0;
	if (colon && !cfa_parse_u64(s, (size_t)(colon - s), UINT64_MAX, &p->epoch))
		p->epoch = 0;
	p->up = colon ? colon + 1 : s;
	for (c = p->up; c < s + n; c++)
		if (*c == '-')
			dash = c;
	p->nup = (size_t)((dash ? dash : s + n) - p->up);
	p->rev = dash ? dash + 1 : s + n;
	p->nrev = (size_t)(s + n - p->rev);
}

int cfa_deb_version_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	struct deb_parts x, y;
	int r;

	deb_split(a, na, &x);
	deb_split(b, nb, &y);
	if (x.epoch != y.epoch)
		return x.epoch < y.epoch ? -1 : 1;
	if ((r = cfa_ver_rev_cmp(x.up, x.nup, y.up, y.nup)) != 0)
		return r;
	return cfa_ver_rev_cmp(x.rev, x.nrev, y.rev, y.nrev);
}

static bool deb_char(char c, const char *extra)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       strchr(extra, c);
}

bool cfa_deb_version_valid(const char *s)
{
	const char *colon = strchr(s, ':'), *up = s, *dash = strrchr(s, '-'), *p;

	if (colon) {
		for (p = s; p < colon; p++)
			if (*p < '0' || *p > '9')
				return false;
		if (p == s)
			return false;
		up = colon + 1;
	}
	if (*up < '0' || *up > '9')
		return false;
	/* The revision follows the last hyphen; the upstream part may hold
	 * hyphens only when a revision is there. */
	for (p = up; *p && (!dash || p < dash); p++)
		if (!deb_char(*p, ".+~-:"))
			return false;
	if (dash) {
		if (!dash[1])
			return false;
		for (p = dash + 1; *p; p++)
			if (!deb_char(*p, ".+~"))
				return false;
	}
	return true;
}
