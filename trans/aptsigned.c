/*
 * aptsigned.c - the index an APT source followed by its key reads: the
 * InRelease fetched (or, offline, the one accepted last) and checked
 * (aptrelease.c), refused when older than the one accepted before, and
 * the index's files taken from its SHA256 list.  apt prefers a compressed
 * index and so does cfapkg: .xz, then .gz, then .bz2, then the plain
 * file, each the InRelease lists tried in turn until one is served.  Where the InRelease says Acquire-By-Hash,
 * the index is fetched first under its hash (dists/.../by-hash/SHA256/
 * HEX), which a mirror never replaces while it updates, then by name.
 */
#include <string.h>
#include <time.h>

#include "core/channel.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "trans/apttrust.h"

/* Debian's InRelease for sid is about 200 kB. */
#define INRELEASE_MAX (16u * 1024u * 1024u)
/* The bound of a pinned index too (aptsource.c). */
#define INDEX_MAX (512u * 1024u * 1024u)

static char *dists_url(const struct cfapkg_apt_source *a, const char *path)
{
	size_t n = strlen(a->repository);

	return cfa_aprintf("%s%sdists/%s/%s", a->repository,
	                   n && a->repository[n - 1] == '/' ? "" : "/", a->suite, path);
}

/* The InRelease's bytes: fetched, or the copy accepted last (offline). */
static enum cfapkg_err inrelease_bytes(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                       const char *url, const struct cfapkg_fetch_opts *opts,
                                       char **data, size_t *len)
{
	char *kept = NULL;
	enum cfapkg_err e;

	/* Offline, the copy accepted last is checked again like a fetched one:
	 * its signature and its Valid-Until still decide. */
	if (!opts || !opts->offline)
		return cfa_apt_fetch_small(ctx, url, INRELEASE_MAX, opts, data, len);
	if ((e = cfa_apt_state_inrelease(ctx, a, &kept)))
		return e;
	if (!kept)
		return cfa_fail(ctx, CFAPKG_E_OFFLINE, "%s: offline, and no InRelease of this "
		                "repository and suite was accepted before; install once online",
		                url);
	e = cfa_read_file(ctx, kept, data, len);
	cfa_free(kept);
	return e;
}

/* Checks data; a key fetched by URL that has expired is fetched once
 * more, as its publisher may have extended it under the same
 * fingerprint (AMD has, several times). */
static enum cfapkg_err check(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                             const char *url, const struct cfapkg_fetch_opts *opts,
                             const char *data, size_t len, struct cfa_apt_release *out)
{
	struct cfa_apt_check c = {url, NULL, a->key_fingerprint, a->suite, (int64_t)time(NULL)};
	enum cfa_gpg_verdict v;
	char *keyring = NULL;
	enum cfapkg_err e = cfa_apt_keyring(ctx, a, false, opts, &keyring);

	c.keyring = keyring;
	/* Only an expired key fetched by URL is fetched again, and never
	 * offline: a system keyring is the system's to update. */
	if (!e && (e = cfa_apt_release_check(ctx, &c, data, len, out, &v)) &&
	    v == CFA_GPG_KEY_EXPIRED && a->key_url && !(opts && opts->offline)) {
		cfapkg_ctx_clear_error(ctx);
		CFA_FREE(keyring);
		if (!(e = cfa_apt_keyring(ctx, a, true, opts, &keyring))) {
			c.keyring = keyring;
			e = cfa_apt_release_check(ctx, &c, data, len, out, NULL);
		}
	}
	cfa_free(keyring);
	return e;
}

static enum cfapkg_err not_replayed(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                    const char *url, const struct cfa_release *r)
{
	char got[32], had[32];
	int64_t before = 0;
	enum cfapkg_err e = cfa_apt_state_date(ctx, a, &before);

	/* An equal Date is the same file again, or one made in the same second,
	 * which is no replay. */
	if (e || r->date >= before)
		return e;
	cfa_utc_format(r->date, got);
	cfa_utc_format(before, had);
	return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: refused: its Date, %s, is older than %s, the "
	                "Date of the InRelease accepted before (an old file served again, which "
	                "would hide later fixes); nothing was changed", url, got, had);
}

/* path, when the InRelease lists it, as the next file to try (which owns
 * path then). */
static void listed(struct cfa_apt_pinned_index *ix, char *path)
{
	struct cfa_apt_index_file *f = &ix->file[ix->nfiles];
	uint64_t size = 0;

	if (path && cfa_release_find(&ix->release.rel, path, f->sha256, &size)) {
		f->path = path;
		/* A size past the bound is marked, not dropped, so that pick
		 * can say why the index is refused. */
		f->size = size > INDEX_MAX ? -1 : (int64_t)size;
		ix->nfiles++;
		return;
	}
	cfa_free(path);
}

/* The recipe's index (a path under dists/SUITE/), else those of
 * COMPONENT/binary-ARCH/Packages.xz, .gz, .bz2 and Packages listed. */
static void choose(const struct cfapkg_apt_source *a, struct cfa_apt_pinned_index *ix)
{
	static const char *const suffixes[CFA_APT_INDEX_FILES] = {".xz", ".gz", ".bz2", ""};
	size_t n = strlen("dists/") + strlen(a->suite) + 1, i;

	if (a->index) {
		/* A recipe's index must lie under this suite's folder: the
		 * InRelease lists paths relative to it and pins nothing
		 * else. */
		if (strncmp(a->index, "dists/", 6) == 0 && strncmp(a->index + 6, a->suite,
		                                                   strlen(a->suite)) == 0 &&
		    a->index[n - 1] == '/')
			listed(ix, cfa_strdup(a->index + n));
		return;
	}
	for (i = 0; i < CFA_APT_INDEX_FILES; i++)
		listed(ix, cfa_aprintf("%s/binary-%s/Packages%s", a->component, a->arch, suffixes[i]));
}

/* A file's URLs: under its hash first when the InRelease offers that. */
static enum cfapkg_err file_urls(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                 bool by_hash, struct cfa_apt_index_file *f)
{
	const char *slash = strrchr(f->path, '/');
	char *hashed = by_hash && slash ? cfa_aprintf("%.*s/by-hash/SHA256/%s",
	                                              (int)(slash - f->path), f->path, f->sha256)
	                                : NULL;

	/* The by-hash name first: a mirror never replaces that file while it
	 * updates, so it cannot change under a download. */
	if (hashed && (f->urls[f->nurls] = dists_url(a, hashed)) != NULL)
		f->nurls++;
	cfa_free(hashed);
	if (!(f->urls[f->nurls] = dists_url(a, f->path)))
		return cfa_nomem(ctx);
	f->nurls++;
	return CFAPKG_E_OK;
}

static enum cfapkg_err pick(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                            const char *url, struct cfa_apt_pinned_index *ix)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	choose(a, ix);
	if (!ix->nfiles)
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s lists no %s%s%s%s index (nor a .xz, .gz "
		                "or .bz2 of it): check the recipe's component, arch and index", url,
		                a->index ? a->index : a->component, a->index ? "" : "/binary-",
		                a->index ? "" : a->arch, a->index ? "" : "/Packages");
	for (i = 0; i < ix->nfiles && !e; i++) {
		if (ix->file[i].size < 0)
			return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: its %s is listed bigger than "
			                "cfapkg reads as an index; refused", url, ix->file[i].path);
		e = file_urls(ctx, a, ix->release.rel.by_hash, &ix->file[i]);
	}
	return e;
}

enum cfapkg_err cfa_apt_trusted_index(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                      const struct cfapkg_fetch_opts *opts,
                                      struct cfa_apt_pinned_index *out)
{
	char *url = dists_url(a, "InRelease"), *data = NULL;
	size_t len = 0;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if (!url)
		return cfa_nomem(ctx);
	/* The replay check comes after the signature's: a Date is believed only
	 * once the file is known to be the repository's. */
	if (!(e = inrelease_bytes(ctx, a, url, opts, &data, &len)) &&
	    !(e = check(ctx, a, url, opts, data, len, &out->release)) &&
	    !(e = not_replayed(ctx, a, url, &out->release.rel)))
		e = pick(ctx, a, url, out);
	if (e)
		cfa_apt_pinned_index_free(out);
	cfa_free(data);
	cfa_free(url);
	return e;
}

void cfa_apt_pinned_index_free(struct cfa_apt_pinned_index *ix)
{
	size_t i, k;

	for (i = 0; i < ix->nfiles; i++) {
		for (k = 0; k < ix->file[i].nurls; k++)
			CFA_FREE(ix->file[i].urls[k]);
		CFA_FREE(ix->file[i].path);
	}
	ix->nfiles = 0;
	cfa_apt_release_free(&ix->release);
}
