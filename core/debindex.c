/*
 * debindex.c - one pass over a Debian Packages index.  The index is a list
 * of stanzas separated by blank lines; each line is "Field: value", and a
 * line starting with a blank continues the field above (only Description
 * and the like use that, and none of the fields read here).  Field names
 * are case-insensitive.  libsolv's Debian reader was the first choice, but
 * it does not keep the Size field, which is what bounds each download.
 * Two readers share the pass: one finding a few wanted packages (an APT
 * source at install), one keeping every package of an architecture (the
 * closure walker, debclosure.c).
 */
#include "core/debindex.h"

#include <stdlib.h>
#include <string.h>

#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/version.h"

/* A piece of the index text, not terminated: spans point into the caller's
 * buffer until copied into the arena. */
struct span {
	const char *s;
	size_t n;
};

enum field { F_PACKAGE, F_VERSION, F_ARCH, F_FILENAME, F_SIZE, F_SHA256, F_DEPENDS, F_PREDEPENDS,
	     F_PROVIDES, F_GPU_ARCH, F_COUNT };

/* In enum field's order.  X-Rocm-Gpu-Architecture is AMD's own field in its
 * ROCm repositories, naming the GPU targets a package was built for. */
static const char *const field_names[F_COUNT] = {
	"Package", "Version", "Architecture", "Filename", "Size", "SHA256", "Depends",
	"Pre-Depends", "Provides", "X-Rocm-Gpu-Architecture",
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

/* Exact, case-sensitive: for values (package names, architectures), unlike
 * field names. */
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

/* '\r' counts as blank so that an index with CRLF line ends reads like one
 * without. */
static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Hands one field to fns->field: the name before the colon, the value with
 * the blanks around it trimmed.  A continued value keeps its inner line
 * breaks. */
static bool flush_field(const struct cfa_deb_scan_fns *fns, const char *line, const char *colon,
                        const char *end)
{
	const char *v = colon + 1;

	while (v < end && blank(*v))
		v++;
	while (end > v && (blank(end[-1]) || end[-1] == '\n'))
		end--;
	return fns->field(fns->arg, line, (size_t)(colon - line), v, (size_t)(end - v));
}

void cfa_deb_scan(const char *text, size_t len, const struct cfa_deb_scan_fns *fns)
{
	const char *line = NULL, *colon = NULL, *vend = NULL;
	size_t pos = 0;
	bool go = true;

	while (pos < len && go) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
		const char *at = text + pos;
		if (n && at[n - 1] == '\r')
			n--;
		/* A continuation only extends the field it follows; one
		 * after a line without a colon belongs to nothing and is
		 * dropped. */
		if (n && blank(at[0]) && colon) {
			vend = at + n; /* a continuation line */
		} else {
			if (colon)
				go = flush_field(fns, line, colon, vend);
			colon = NULL;
			/* An empty line ends the stanza; several in a row
			 * call end once per line, which the readers take as
			 * empty stanzas. */
			if (go && n == 0)
				go = fns->end(fns->arg);
			/* A line without a colon is no field and is skipped,
			 * not an error: an index is read for a few fields
			 * only. */
			else if (go && !blank(at[0]) && (colon = memchr(at, ':', n)) != NULL) {
				line = at;
				vend = at + n;
			}
		}
		/* Past the newline; at the text's end this steps past len and
		 * ends the loop. */
		pos = end + 1;
	}
	if (go && colon)
		go = flush_field(fns, line, colon, vend);
	/* The text need not end with a blank line: the last stanza is ended
	 * here.  After a final blank line this is one more empty stanza,
	 * which the readers ignore. */
	if (go)
		fns->end(fns->arg);
}

/* "Field: value" into the stanza when the field is one we read. */
static bool take_field(struct stanza *st, const char *name, size_t nlen, const char *v,
                       size_t vlen)
{
	size_t k;

	/* A field given twice keeps the later value; the rest are of no
	 * interest here and ignored. */
	for (k = 0; k < F_COUNT; k++)
		if (cfa_deb_field_is(name, nlen, field_names[k])) {
			st->f[k].s = v;
			st->f[k].n = vlen;
			break;
		}
	/* Reading one field never stops the scan. */
	return true;
}

static enum cfapkg_err bad_entry(struct cfapkg_ctx *ctx, const char *index_name,
                                 const char *name, const char *version, const char *what)
{
	/* A package named alone has no version to name. */
	return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: %s%s%s: %s; the index is not what the "
	                "recipe was written against", index_name, name, version ? " " : "",
	                version ? version : "", what);
}

/* The download of a stanza: Filename, Size and SHA256, checked. */
static enum cfapkg_err take_download(struct cfapkg_ctx *ctx, const char *index_name,
                                     const struct stanza *st, const char *name,
                                     const char *version, struct cfa_arena *arena,
                                     struct cfa_deb_found *out)
{
	uint64_t size;
	char *file, *sha;

	if (!st->f[F_FILENAME].n || !st->f[F_SIZE].n || !st->f[F_SHA256].n)
		return bad_entry(ctx, index_name, name, version,
		                 "listed without a Filename, a Size or a SHA256");
	/* The Size is what bounds the download, so a stanza without a usable
	 * one is refused rather than fetched unbounded. */
	if (!cfa_parse_u64(st->f[F_SIZE].s, st->f[F_SIZE].n, (uint64_t)INT64_MAX, &size))
		return bad_entry(ctx, index_name, name, version, "its Size is not a number");
	file = cfa_arena_strndup(arena, st->f[F_FILENAME].s, st->f[F_FILENAME].n);
	sha = cfa_arena_strndup(arena, st->f[F_SHA256].s, st->f[F_SHA256].n);
	if (!file || !sha)
		return cfa_nomem(ctx);
	/* The Filename is joined to the repository's URL: "../" or an
	 * absolute path would reach outside it. */
	if (!cfa_safe_relative(file))
		return bad_entry(ctx, index_name, name, version,
		                 "its Filename is not a path inside the repository");
	if (!cfa_valid_sha256(sha))
		return bad_entry(ctx, index_name, name, version, "its SHA256 is not 64 hex digits");
	out->version = cfa_arena_strndup(arena, st->f[F_VERSION].s, st->f[F_VERSION].n);
	if (!out->version)
		return cfa_nomem(ctx);
	out->filename = file;
	out->size = (int64_t)size;
	out->sha256 = sha;
	out->depends = st->f[F_DEPENDS].n
	                       ? cfa_arena_strndup(arena, st->f[F_DEPENDS].s, st->f[F_DEPENDS].n)
	                       : NULL;
	return CFAPKG_E_OK;
}

/* "all" packages hold no machine code and install on every architecture. */
static bool arch_fits(const struct stanza *st, const char *arch)
{
	return span_is(st->f[F_ARCH], arch) || span_is(st->f[F_ARCH], "all");
}

/* Whether the stanza is the one to take for want w, given what was found
 * so far: the first of a wanted version (apt takes the first of identical
 * entries), or for a name alone a newer version than found. */
static bool takes(const struct stanza *st, const struct cfa_deb_want *w,
                  const struct cfa_deb_found *found)
{
	if (!span_is(st->f[F_PACKAGE], w->name))
		return false;
	/* A pinned version takes the first matching stanza only; the same
	 * version listed again (another pocket) is not looked at. */
	if (w->version)
		return !found->filename && span_is(st->f[F_VERSION], w->version);
	/* A name alone takes the newest version in dpkg's order, wherever in
	 * the index it comes. */
	return st->f[F_VERSION].n &&
	       (!found->filename || cfa_deb_version_cmp(st->f[F_VERSION].s, st->f[F_VERSION].n,
	                                                found->version,
	                                                strlen(found->version)) > 0);
}

static void find_in_stanza(struct finder *fd, const struct stanza *st)
{
	size_t i;

	/* After the first error the rest of the scan is ignored: the error
	 * stays the one reported. */
	if (fd->err || !st->f[F_PACKAGE].n || !arch_fits(st, fd->arch))
		return;
	/* One stanza may satisfy several wants (the same package asked for
	 * twice). */
	for (i = 0; i < fd->n && !fd->err; i++)
		if (takes(st, &fd->want[i], &fd->found[i]))
			fd->err = take_download(fd->ctx, fd->index_name, st, fd->want[i].name,
			                        fd->want[i].version, fd->arena, &fd->found[i]);
}

struct find_scan {
	struct finder *fd;
	struct stanza st;
};

static bool find_field(void *arg, const char *name, size_t nlen, const char *v, size_t vlen)
{
	return take_field(&((struct find_scan *)arg)->st, name, nlen, v, vlen);
}

static bool find_end(void *arg)
{
	struct find_scan *fs = arg;

	find_in_stanza(fs->fd, &fs->st);
	/* Fields must not leak into the next stanza: one that lacks a Depends
	 * would inherit the previous one's. */
	memset(&fs->st, 0, sizeof(fs->st));
	return !fs->fd->err;
}

enum cfapkg_err cfa_deb_index_find(struct cfapkg_ctx *ctx, const char *index_name,
                                   const char *text, size_t len, const char *arch,
                                   const struct cfa_deb_want *want, size_t n,
                                   struct cfa_arena *arena, struct cfa_deb_found *found)
{
	struct finder fd = {ctx, index_name, arch, want, n, arena, found, CFAPKG_E_OK};
	struct find_scan fs = {&fd, {{{NULL, 0}}}};
	const struct cfa_deb_scan_fns fns = {find_field, find_end, &fs};
	size_t i;

	/* takes() reads a found entry's filename as "found so far", so all
	 * start empty. */
	memset(found, 0, n * sizeof(*found));
	cfa_deb_scan(text, len, &fns);
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
		/* Borrowed from packages[i], not copied: the want list must
		 * not outlive the strings it was made from. */
		want[i].version = eq ? eq + 1 : NULL;
		if (!want[i].name)
			return false;
	}
	return true;
}

/* Debian policy's package names: lower-case letters, digits, '+', '-' and
 * '.', at least two characters, starting with a letter or digit. */
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

/* The whole index: every package of the architecture (or "all"), its
 * fields copied, sorted by name for lookups. */
struct reader {
	struct cfapkg_ctx *ctx;
	struct cfa_deb_index *idx;
	struct cfa_arena *arena;
	size_t cap;
	struct stanza st;
	enum cfapkg_err err;
};

/* An absent or empty field is NULL, never an empty string. */
static const char *copy_span(struct reader *r, struct span sp)
{
	const char *c;

	if (!sp.n)
		return NULL;
	if (!(c = cfa_arena_strndup(r->arena, sp.s, sp.n)))
		r->err = cfa_nomem(r->ctx);
	return c;
}

/* The array lives in the arena: on growth the old one is left there, at most
 * as much again as the final array. */
static bool grow_pkgs(struct reader *r)
{
	struct cfa_deb_pkg *more;
	size_t cap = r->cap ? r->cap * 2 : 1024;

	if (r->idx->n < r->cap)
		return true;
	if (!(more = cfa_arena_alloc(r->arena, cap * sizeof(*more)))) {
		r->err = cfa_nomem(r->ctx);
		return false;
	}
	if (r->idx->n)
		memcpy(more, r->idx->pkgs, r->idx->n * sizeof(*more));
	r->idx->pkgs = more;
	r->cap = cap;
	return true;
}

static void read_stanza(struct reader *r)
{
	const struct stanza *st = &r->st;
	struct cfa_deb_pkg *p;
	struct cfa_deb_found dl;
	const char *name, *version;

	if (!st->f[F_PACKAGE].n || !st->f[F_VERSION].n || !arch_fits(st, r->idx->arch) ||
	    !grow_pkgs(r))
		return;
	p = &r->idx->pkgs[r->idx->n];
	/* Both spans are non-empty (checked above), so NULL here can only be
	 * out of memory, with r->err set. */
	if (!(name = copy_span(r, st->f[F_PACKAGE])) || !(version = copy_span(r, st->f[F_VERSION])))
		return;
	/* One stanza with a bad download fails the whole index rather than
	 * being skipped, and the error names the package. */
	r->err = take_download(r->ctx, r->idx->label, st, name, version, r->arena, &dl);
	if (r->err)
		return;
	p->name = name;
	p->version = version;
	p->filename = dl.filename;
	p->size = dl.size;
	p->sha256 = dl.sha256;
	p->depends = dl.depends;
	p->pre_depends = copy_span(r, st->f[F_PREDEPENDS]);
	p->provides = copy_span(r, st->f[F_PROVIDES]);
	p->gpu_arch = copy_span(r, st->f[F_GPU_ARCH]);
	p->index = r->idx;
	/* Counted only when complete, so an error leaves no half-filled entry
	 * in the index. */
	r->idx->n++;
}

static bool read_field(void *arg, const char *name, size_t nlen, const char *v, size_t vlen)
{
	return take_field(&((struct reader *)arg)->st, name, nlen, v, vlen);
}

static bool read_end(void *arg)
{
	struct reader *r = arg;

	/* Once an error is set the scan stops; this only skips work on the
	 * stanza it stopped in. */
	if (!r->err)
		read_stanza(r);
	memset(&r->st, 0, sizeof(r->st));
	return !r->err;
}

static int pkg_cmp(const void *a, const void *b)
{
	const struct cfa_deb_pkg *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	/* Newest first among versions of one name. */
	return c ? c : -cfa_deb_version_cmp(x->version, strlen(x->version), y->version,
	                                   strlen(y->version));
}

enum cfapkg_err cfa_deb_index_read(struct cfapkg_ctx *ctx, const char *label, const char *text,
                                   size_t len, const char *arch, struct cfa_arena *arena,
                                   struct cfa_deb_index *out)
{
	struct reader r;
	const struct cfa_deb_scan_fns fns = {read_field, read_end, &r};

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	out->label = label;
	out->arch = arch;
	r.ctx = ctx;
	r.idx = out;
	r.arena = arena;
	cfa_deb_scan(text, len, &fns);
	if (r.err)
		return r.err;
	if (out->n)
		/* cfa_deb_index_first relies on this order: one name's
		 * versions adjacent, newest first. */
		qsort(out->pkgs, out->n, sizeof(*out->pkgs), pkg_cmp);
	return CFAPKG_E_OK;
}

const struct cfa_deb_pkg *cfa_deb_index_first(const struct cfa_deb_index *idx, const char *name,
                                              size_t *count)
{
	size_t lo = 0, hi = idx->n, end;

	/* The lowest index whose name is not below name: the first of its
	 * versions, if any. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(idx->pkgs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < idx->n && strcmp(idx->pkgs[end].name, name) == 0; end++)
		;
	*count = end - lo;
	return *count ? &idx->pkgs[lo] : NULL;
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
	/* Debian policy: the upstream version starts with a digit. */
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
