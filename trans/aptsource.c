/*
 * aptsource.c - an APT source's packages, turned into the archives a lock
 * records.  The index the recipe pins (its SHA-256 and size) is fetched
 * into the download cache like any artifact, so a second install reads it
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

static enum cfapkg_err fetch_index(struct cfapkg_ctx *ctx, const struct cfapkg_locked *p,
                                   const char *url, const struct cfapkg_fetch_opts *opts)
{
	const char *urls[1] = {url};
	struct cfapkg_fetch_item it;

	memset(&it, 0, sizeof(it));
	it.label = p->name;
	it.urls = urls;
	it.nurls = 1;
	it.sha256 = p->apt->index_sha256;
	it.size = p->apt->index_size;
	return cfapkg_fetch(ctx, &it, 1, opts);
}

/* "NAME=VERSION" split in the arena. */
static bool split_wants(struct cfa_arena *arena, const struct cfapkg_apt_source *a,
                        struct cfa_deb_want *want)
{
	size_t i;

	for (i = 0; i < a->npackages; i++) {
		const char *eq = strchr(a->packages[i], '=');
		want[i].name = cfa_arena_strndup(arena, a->packages[i], (size_t)(eq - a->packages[i]));
		want[i].version = eq + 1;
		if (!want[i].name)
			return false;
	}
	return true;
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
		arts[i].sha256 = found[i].sha256;
		arts[i].size = found[i].size;
		arts[i].format = "deb";
	}
	return CFAPKG_E_OK;
}

static enum cfapkg_err read_index(struct cfapkg_ctx *ctx, struct cfapkg_lock *lock,
                                  struct cfapkg_locked *p, const char *url)
{
	const struct cfapkg_apt_source *a = p->apt;
	struct cfa_deb_want *want = cfa_arena_alloc(lock->arena, a->npackages * sizeof(*want));
	struct cfa_deb_found *found = cfa_arena_alloc(lock->arena, a->npackages * sizeof(*found));
	struct cfapkg_artifact *arts = cfa_arena_alloc(lock->arena, a->npackages * sizeof(*arts));
	char *file = cfa_cache_path(ctx, a->index_sha256), *text = NULL;
	enum cfapkg_err e;
	size_t len;

	if (!want || !found || !arts || !file || !split_wants(lock->arena, a, want)) {
		cfa_free(file);
		return file ? cfa_nomem(ctx) : ctx->err_code;
	}
	e = cfa_read_decompressed(ctx, file, url, INDEX_MAX, &text, &len);
	if (!e)
		e = cfa_deb_index_find(ctx, url, text, len, a->arch, want, a->npackages, lock->arena,
		                       found);
	if (!e)
		e = to_artifacts(ctx, lock->arena, a, found, arts);
	if (!e)
		e = cfa_lock_set_artifacts(ctx, lock, p, arts, a->npackages);
	cfa_free(text);
	cfa_free(file);
	return e;
}

enum cfapkg_err cfapkg_lock_resolve(struct cfapkg_ctx *ctx, struct cfapkg_lock *lock,
                                    const struct cfapkg_fetch_opts *opts)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < lock->nparts && !e; i++) {
		/* The lock owns its parts; the public view of them is read-only. */
		struct cfapkg_locked *p = (struct cfapkg_locked *)&lock->parts[i];
		char *url;
		if (!p->apt || p->nartifacts)
			continue;
		if (!(url = cfa_apt_index_url(p->apt)))
			return cfa_nomem(ctx);
		e = fetch_index(ctx, p, url, opts);
		if (!e)
			e = read_index(ctx, lock, p, url);
		cfa_free(url);
	}
	return e;
}
