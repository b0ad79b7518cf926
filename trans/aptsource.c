/*
 * aptsource.c - an APT source's packages, turned into the archives a lock
 * records.  The index the recipe pins (its SHA-256 and size), or the one
 * the repository's signed InRelease pins (aptsigned.c), is fetched into
 * the download cache like any artifact, so a second install reads it
 * from there; each wanted "NAME=VERSION" is looked up in it, and the .deb
 * it names becomes one archive of the part's set, fetched in parallel with
 * the rest and unpacked with the others into one store folder.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/debindex.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "trans/apttrust.h"
#include "trans/trans.h"

/* An uncompressed index of all of Debian main is about 50 MB. */
#define INDEX_MAX (512u * 1024u * 1024u)

char *cfa_apt_index_url(const struct cfapkg_apt_source *a)
{
	size_t n = strlen(a->repository);
	const char *sep = n && a->repository[n - 1] == '/' ? "" : "/";

	if (a->index)
		return cfa_aprintf("%s%s%s", a->repository, sep, a->index);
	return cfa_aprintf("%s%sdists/%s/%s/binary-%s/Packages", a->repository, sep, a->suite,
	                   a->component, a->arch);
}

/* Where an index comes from and what it must hash to: the recipe's pin,
 * or the one a signed InRelease gives. */
struct index_pin {
	const char *const *urls;
	size_t nurls;
	const char *sha256;
	int64_t size;
};

static enum cfapkg_err fetch_index(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p,
                                   const struct index_pin *pin,
                                   const struct cfapkg_fetch_opts *opts)
{
	struct cfapkg_fetch_item it;
	enum cfapkg_err e;

	memset(&it, 0, sizeof(it));
	it.label = p->name;
	it.urls = pin->urls;
	it.nurls = pin->nurls;
	it.sha256 = pin->sha256;
	it.size = pin->size;
	/* Only into the cache: the index is read from there by its hash. */
	e = cfapkg_fetch(ctx, &it, 1, opts);
	cfapkg_fetch_item_clear(&it);
	return e;
}

static enum cfapkg_err to_artifacts(struct cfapkg_ctx *ctx, struct cfa_arena *arena,
                                    const struct cfapkg_apt_source *a,
                                    const struct cfa_deb_found *found,
                                    struct cfapkg_artifact *arts)
{
	size_t i, n = strlen(a->repository);
	const char *sep = n && a->repository[n - 1] == '/' ? "" : "/";

	for (i = 0; i < a->npackages; i++) {
		char *url = cfa_aprintf("%s%s%s", a->repository, sep, found[i].filename);
		memset(&arts[i], 0, sizeof(arts[i]));
		arts[i].url = url ? cfa_arena_strdup(arena, url) : NULL;
		cfa_free(url);
		if (!arts[i].url)
			return cfa_nomem(ctx);
		/* The .deb's hash and size are the index's, which its own pin
		 * vouches for: each archive is checked against them as it
		 * downloads. */
		arts[i].sha256 = found[i].sha256;
		arts[i].size = found[i].size;
		arts[i].format = "deb";
	}
	return CFAPKG_E_OK;
}

/* The wanted packages from the index itself, kept as a lookup for the
 * next time unless asked not to. */
static enum cfapkg_err find_in_index(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                                     const struct cfapkg_apt_source *a,
                                     const struct index_pin *pin, bool keep,
                                     const struct cfa_deb_want *want, struct cfa_deb_found *found)
{
	/* The last URL is the by-name one, which is what a message should name:
	 * a by-hash URL says nothing to a person. */
	const char *url = pin->urls[pin->nurls - 1];
	char *file = cfa_cache_path(ctx, pin->sha256), *text = NULL;
	enum cfapkg_err e;
	size_t len;

	if (!file)
		return ctx->err_code;
	e = cfa_read_decompressed(ctx, file, url, INDEX_MAX, &text, &len);
	if (!e)
		e = cfa_deb_index_find(ctx, url, text, len, a->arch, want, a->npackages, lock->arena,
		                       found);
	/* The answer is kept under the index's hash, so that the next install
	 * need not decompress and read the whole index again. */
	if (!e && keep)
		cfa_apt_lookup_store(ctx, pin->sha256, pin->size, a->arch, want, found,
		                     a->npackages);
	cfa_free(text);
	cfa_free(file);
	return e;
}

/* fetch: the index is to be fetched into the download cache first, unless
 * a lookup kept before answers (it was written from that very index). */
static enum cfapkg_err read_index(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                                  struct cfapkg_lockfile_part *p, const struct index_pin *pin,
                                  const struct cfapkg_fetch_opts *opts, bool fetch)
{
	const struct cfapkg_apt_source *a = p->apt;
	struct cfa_deb_want *want = cfa_arena_alloc(lock->arena, a->npackages * sizeof(*want));
	struct cfa_deb_found *found = cfa_arena_alloc(lock->arena, a->npackages * sizeof(*found));
	struct cfapkg_artifact *arts = cfa_arena_alloc(lock->arena, a->npackages * sizeof(*arts));
	bool keep = !(opts && opts->no_index_cache);
	enum cfapkg_err e = CFAPKG_E_OK;

	if (!want || !found || !arts || !cfa_deb_wants(lock->arena, a->packages, a->npackages, want))
		return cfa_nomem(ctx);
	if (!keep || !cfa_apt_lookup_load(ctx, pin->sha256, pin->size, a->arch, want,
	                                  a->npackages, lock->arena, found)) {
		if (fetch)
			e = fetch_index(ctx, p, pin, opts);
		if (!e)
			e = find_in_index(ctx, lock, a, pin, keep, want, found);
	}
	if (!e)
		e = to_artifacts(ctx, lock->arena, a, found, arts);
	if (!e)
		e = cfa_lock_set_artifacts(ctx, lock, p, arts, a->npackages);
	return e;
}

static enum cfapkg_err resolve_pinned(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                                      struct cfapkg_lockfile_part *p,
                                      const struct cfapkg_fetch_opts *opts)
{
	char *url = cfa_apt_index_url(p->apt);
	const char *urls[1] = {url};
	struct index_pin pin = {urls, 1, p->apt->index_sha256, p->apt->index_size};
	enum cfapkg_err e;

	if (!url)
		return cfa_nomem(ctx);
	e = read_index(ctx, lock, p, &pin, opts, true);
	cfa_free(url);
	return e;
}

/* A mismatch names the InRelease it was judged by. */
static enum cfapkg_err index_refused(struct cfapkg_ctx *ctx, enum cfapkg_err e,
                                     const struct cfa_apt_index_file *f)
{
	char *detail = cfa_strdup(cfapkg_ctx_error(ctx));

	if (e != CFAPKG_E_INTEGRITY || !detail) {
		cfa_free(detail);
		return e;
	}
	cfapkg_ctx_clear_error(ctx);
	e = cfa_fail(ctx, e, "%s: refused: it is not the index the signed InRelease pins (%s); "
	             "nothing was changed", f->path, detail);
	cfa_free(detail);
	return e;
}

/* The first file of the index the repository serves; one that is served
 * but does not match its pin is refused, not passed over. */
static enum cfapkg_err fetch_listed(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p,
                                    const struct cfa_apt_pinned_index *ix,
                                    const struct cfapkg_fetch_opts *opts, struct index_pin *pin)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < ix->nfiles; i++) {
		const struct cfa_apt_index_file *f = &ix->file[i];
		*pin = (struct index_pin){(const char *const *)f->urls, f->nurls, f->sha256, f->size};
		if (!(e = fetch_index(ctx, p, pin, opts)))
			return CFAPKG_E_OK;
		if (e == CFAPKG_E_INTEGRITY || i + 1 == ix->nfiles)
			return index_refused(ctx, e, f);
		cfapkg_ctx_clear_error(ctx);
	}
	return e;
}

/* An APT source followed by its key: the index the verified InRelease
 * pins, and the InRelease recorded once its index matched and listed
 * every package. */
static enum cfapkg_err resolve_signed(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                                      struct cfapkg_lockfile_part *p,
                                      const struct cfapkg_fetch_opts *opts)
{
	struct cfa_apt_pinned_index ix;
	struct index_pin pin;
	enum cfapkg_err e = cfa_apt_trusted_index(ctx, p->apt, opts, &ix);

	if (e)
		return e;
	/* read_index is told not to fetch: fetch_listed has just put the index
	 * in the cache. */
	if (!(e = fetch_listed(ctx, p, &ix, opts, &pin)))
		e = read_index(ctx, lock, p, &pin, opts, false);
	/* The InRelease is recorded only now, once its index matched and listed
	 * every package: one whose index cannot be used must not raise the Date
	 * floor. */
	if (!e)
		e = cfa_apt_release_accept(ctx, p->apt, &ix.release);
	cfa_apt_pinned_index_free(&ix);
	return e;
}

enum cfapkg_err cfapkg_lockfile_resolve(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                                    const struct cfapkg_fetch_opts *opts)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < lock->nparts && !e; i++) {
		/* The lock owns its parts; the public view of them is read-only. */
		struct cfapkg_lockfile_part *p = (struct cfapkg_lockfile_part *)&lock->parts[i];
		/* A part whose archives are known already (a lock read from a
		 * file) needs no index read. */
		if (!p->apt || p->nartifacts)
			continue;
		if (p->apt->key_fingerprint || p->apt->keyring)
			e = resolve_signed(ctx, lock, p, opts);
		else
			e = resolve_pinned(ctx, lock, p, opts);
	}
	return e;
}
