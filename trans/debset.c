/*
 * debset.c - a set of Debian packages read from a repository folder in
 * Debian's layout (dists/SUITE/InRelease, dists/SUITE/COMPONENT/binary-
 * ARCH/Packages[.xz|.gz], as apt's lists or a mirror keep them): each
 * suite's index is tied to its InRelease by the SHA-256 and size the
 * InRelease lists for it, then the closure of the roots is walked over
 * the indexes in the order given (core/debclosure.c).  What comes back is
 * what a recipe pins: each .deb by pool path, SHA-256 and size, the suite
 * and InRelease Date it was seen in, and the C library floor.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/debindex.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"
#include "trans/trans.h"

/* Debian's whole uncompressed main index is about 65 MB. */
#define INDEX_MAX (512u * 1024u * 1024u)
#define RELEASE_MAX (16u * 1024u * 1024u)

/* One read of a repository folder: everything it finds is kept in the set's
 * arena, so freeing the set frees it all. */
struct reading {
	struct cfapkg_ctx *ctx;
	struct cfapkg_deb_set *set;
	const char *dir, *component, *arch;
	struct cfa_deb_index *idx;
};

/* dists/SUITE/InRelease, else its Release. */
static enum cfapkg_err read_release(struct reading *r, const char *suite,
                                    struct cfa_deb_release *rel)
{
	char *path = cfa_aprintf("%s/dists/%s/InRelease", r->dir, suite), *text = NULL;
	enum cfapkg_err e;
	size_t len = 0;

	/* InRelease is tried first: it is what apt keeps when the repository
	 * has one. */
	if (path && !cfa_plat_is_file(path)) {
		cfa_free(path);
		path = cfa_aprintf("%s/dists/%s/Release", r->dir, suite);
	}
	if (!path)
		return cfa_nomem(r->ctx);
	if (!cfa_plat_is_file(path))
		e = cfa_fail(r->ctx, CFAPKG_E_NOTFOUND, "%s: no such file; the folder is not a "
		             "repository in Debian's layout with the suite %s", path, suite);
	else
		e = cfa_read_decompressed(r->ctx, path, path, RELEASE_MAX, &text, &len);
	if (!e)
		e = cfa_deb_release_read(r->ctx, path, text, len, r->set->arena, rel);
	cfa_free(text);
	cfa_free(path);
	return e;
}

/* The index file on disk, the first of Packages, .xz, .gz that is there,
 * and the path the Release lists it under.
 * The uncompressed index is tried first: apt keeps its lists decompressed, and
 * a mirror may keep only the compressed forms. */
static char *index_file(struct reading *r, const char *suite, const char **listed)
{
	static const char *const ends[] = {"", ".xz", ".gz"};
	size_t i;

	for (i = 0; i < 3; i++) {
		char *rel = cfa_aprintf("%s/binary-%s/Packages%s", r->component, r->arch, ends[i]);
		char *path = rel ? cfa_aprintf("%s/dists/%s/%s", r->dir, suite, rel) : NULL;
		if (path && cfa_plat_is_file(path)) {
			*listed = cfa_arena_strdup(r->set->arena, rel);
			cfa_free(rel);
			return *listed ? path : (cfa_free(path), NULL);
		}
		cfa_free(rel);
		cfa_free(path);
	}
	*listed = NULL;
	return NULL;
}

/* The index file must be one its Release lists, byte for byte. */
static enum cfapkg_err tie_index(struct reading *r, const char *path, const char *listed,
                                 const struct cfa_deb_release *rel,
                                 struct cfapkg_deb_suite_info *info)
{
	char hex[65], want[65];
	uint64_t size = 0, want_size = 0;
	bool found = cfa_release_find(&rel->fields, listed, want, &want_size);
	enum cfapkg_err e = cfapkg_sha256_file(r->ctx, path, hex, &size);

	if (e)
		return e;
	/* An index that is not the one the Release lists may be from another
	 * day: pins read from it would not match what the Release vouches
	 * for. */
	if (!found || strcmp(want, hex) != 0 || want_size != size)
		return cfa_fail(r->ctx, CFAPKG_E_INTEGRITY, "%s is not the index its Release lists "
		                "as %s (%s): fetch the two together (apt-get update)", path, listed,
		                found ? "another SHA-256 or size" : "not listed at all");
	info->index_path = listed;
	info->index_size = (int64_t)size;
	return (info->index_sha256 = cfa_arena_strdup(r->set->arena, hex)) ? CFAPKG_E_OK
	                                                                    : cfa_nomem(r->ctx);
}

/* Suite k: its Release's fields into the set's suite info, then its index,
 * tied to that Release, parsed into r->idx[k]. */
static enum cfapkg_err read_suite(struct reading *r, const char *suite, size_t k)
{
	struct cfapkg_deb_suite_info *info = (struct cfapkg_deb_suite_info *)&r->set->suites[k];
	struct cfa_deb_release rel;
	const char *listed = NULL;
	char *path = NULL, *text = NULL;
	enum cfapkg_err e = read_release(r, suite, &rel);
	size_t len = 0;

	if (e)
		return e;
	info->suite = cfa_arena_strdup(r->set->arena, suite);
	info->archive_suite = rel.suite;
	info->codename = rel.codename;
	info->date = rel.date;
	info->valid_until = rel.valid_until;
	info->clearsigned = rel.clearsigned;
	if (!info->suite)
		return cfa_nomem(r->ctx);
	if (!(path = index_file(r, suite, &listed)))
		return cfa_fail(r->ctx, CFAPKG_E_NOTFOUND, "%s/dists/%s/%s/binary-%s: no Packages "
		                "index there", r->dir, suite, r->component, r->arch);
	e = tie_index(r, path, listed, &rel, info);
	if (!e)
		e = cfa_read_decompressed(r->ctx, path, path, INDEX_MAX, &text, &len);
	if (!e)
		e = cfa_deb_index_read(r->ctx, info->suite, text, len, r->arch, r->set->arena,
		                       &r->idx[k]);
	cfa_free(text);
	cfa_free(path);
	return e;
}

/* "Pre-Depends, Depends" as one list, for the recipe.
 * Pre-Depends comes first: dpkg needs those before it even unpacks. */
static const char *all_depends(struct cfa_arena *a, const struct cfa_deb_pkg *p)
{
	if (p->pre_depends && p->depends) {
		char *both = cfa_aprintf("%s, %s", p->pre_depends, p->depends);
		const char *kept = both ? cfa_arena_strdup(a, both) : NULL;
		cfa_free(both);
		return kept;
	}
	return p->pre_depends ? p->pre_depends : p->depends ? p->depends : "";
}

/* The floor's upstream part: "2.38" of "2.38-3" or "2.38~".
 * An epoch ("1:") is dropped: the floor is compared with the machine's glibc
 * version, which has none. */
static const char *glibc_of(struct cfa_arena *a, const char *deb)
{
	const char *colon = strchr(deb, ':'), *s = colon ? colon + 1 : deb;

	return cfa_arena_strndup(a, s, strspn(s, "0123456789."));
}

/* The closure's packages as members, in the closure's order; each borrows its
 * strings from the index, which the set's arena holds. */
static enum cfapkg_err members(struct reading *r, const struct cfa_deb_closure *c)
{
	struct cfapkg_deb_set *set = r->set;
	struct cfapkg_deb_member *m = cfa_arena_alloc(set->arena, (c->n + 1) * sizeof(*m));
	size_t i;

	if (!m)
		return cfa_nomem(r->ctx);
	for (i = 0; i < c->n; i++) {
		const struct cfa_deb_pkg *p = c->pkgs[i];
		m[i] = (struct cfapkg_deb_member){p->name, p->version, p->index->label, p->filename,
		                                  p->sha256, p->size, all_depends(set->arena, p),
		                                  p->provides, p->gpu_arch};
		if (!m[i].depends)
			return cfa_nomem(r->ctx);
	}
	set->members = m;
	set->nmembers = c->n;
	/* The highest libc6 floor becomes the set's glibc, with the package
	 * that asked for it, so the recipe can say which machines the set
	 * needs. */
	if (c->floor) {
		char *by = cfa_aprintf("%s %s", c->floor_by->name, c->floor_by->version);
		set->glibc = glibc_of(set->arena, c->floor);
		set->glibc_by = by ? cfa_arena_strdup(set->arena, by) : NULL;
		cfa_free(by);
		if (!set->glibc || !set->glibc_by)
			return cfa_nomem(r->ctx);
	}
	return CFAPKG_E_OK;
}

static enum cfapkg_err read_set(struct reading *r, const char *const *suites, size_t nsuites,
                                const char *const *roots, size_t nroots)
{
	const struct cfa_deb_index **order;
	struct cfa_deb_closure c;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	r->set->suites = cfa_arena_alloc(r->set->arena, nsuites * sizeof(*r->set->suites));
	r->idx = cfa_arena_alloc(r->set->arena, nsuites * sizeof(*r->idx));
	order = cfa_arena_alloc(r->set->arena, nsuites * sizeof(*order));
	if (!r->set->suites || !r->idx || !order)
		return cfa_nomem(r->ctx);
	r->set->nsuites = nsuites;
	for (i = 0; i < nsuites && !e; i++) {
		e = read_suite(r, suites[i], i);
		/* The suites are searched in the order given: a requirement is
		 * met from the first suite that can. */
		order[i] = &r->idx[i];
	}
	if (!e)
		/* The walk stops at libc6: the C library is the machine's,
		 * never a part of the set. */
		e = cfa_deb_closure(r->ctx, order, nsuites, roots, nroots, "libc6", r->set->arena, &c);
	return e ? e : members(r, &c);
}

/* The InRelease's signature is not checked here: apt checked it when it
 * fetched the lists.  Owned: cfapkg_deb_set_free. */
enum cfapkg_err cfapkg_deb_set_read(struct cfapkg_ctx *ctx, const char *repo_dir,
                                    const char *component, const char *arch,
                                    const char *const *suites, size_t nsuites,
                                    const char *const *roots, size_t nroots,
                                    struct cfapkg_deb_set **out)
{
	struct cfapkg_deb_set *set;
	struct reading r;
	enum cfapkg_err e;

	*out = NULL;
	if (nsuites == 0 || nroots == 0)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "a set needs a suite and at least one package");
	if (!(set = cfa_calloc(1, sizeof(*set))) ||
	    !(set->arena = cfa_calloc(1, sizeof(*set->arena)))) {
		cfa_free(set);
		return cfa_nomem(ctx);
	}
	cfa_arena_init(set->arena);
	r = (struct reading){ctx, set, repo_dir, component ? component : "main",
	                     arch ? arch : "amd64", NULL};
	e = read_set(&r, suites, nsuites, roots, nroots);
	if (e) {
		cfapkg_deb_set_free(set);
		return e;
	}
	*out = set;
	return CFAPKG_E_OK;
}

void cfapkg_deb_set_free(struct cfapkg_deb_set *set)
{
	if (!set)
		return;
	cfa_arena_fini(set->arena);
	cfa_free(set->arena);
	cfa_free(set);
}
