/*
 * fetchlock.c - a locked set's packages into the store: each package the
 * store lacks becomes one download (its URL, then its mirrors), verified
 * and unpacked into ROOT/store/NAME-VERSION-SHA8.  No caps: as many items
 * and mirrors as the lock has.  A damaged folder named to replace is
 * fetched and unpacked beside the old one, which keeps its place until
 * the new one is whole (cfapkg_unpack_opts.replace).
 */
#include <string.h>

#include "cache/cache.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"
#include "trans/trans.h"

/* A store folder counts only with its manifest (.cfapkg/manifest.json):
 * a folder without one is not taken for a whole package. */
bool cfapkg_store_has(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *part)
{
	char *dir = part->store ? cfa_root_path(ctx, CFA_STORE, part->store) : NULL;
	struct cfa_buf manifest;
	bool has;

	if (!dir) {
		cfapkg_ctx_clear_error(ctx);
		return false;
	}
	cfa_buf_init(&manifest, 1u << 16);
	cfa_buf_printf(&manifest, "%s/.cfapkg/manifest.json", dir);
	has = !manifest.failed && cfa_plat_is_file(manifest.data);
	cfa_buf_fini(&manifest);
	cfa_free(dir);
	return has;
}

/* Whether the download cache holds a file under sha256's name; a NULL
 * hash is never there. */
bool cfa_in_cache(struct cfapkg_ctx *ctx, const char *sha256)
{
	char *file = sha256 ? cfa_cache_path(ctx, sha256) : NULL;
	bool in = file && cfa_plat_is_file(file);

	if (!file)
		cfapkg_ctx_clear_error(ctx);
	cfa_free(file);
	return in;
}

/* The SHA-256 decides what is accepted: a download needs its URL and
 * hash (a size, when known, bounds it; else a cap does).  An APT source
 * must have been resolved (its index read). */
static enum cfapkg_err check_fetchable(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p)
{
	if (p->apt && !p->nartifacts)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s %s: its APT index was not read "
		                "(cfapkg_lockfile_resolve)", p->name, p->version);
	if (p->nartifacts || (p->sha256 && p->url))
		return CFAPKG_E_OK;
	return cfa_fail(ctx, CFAPKG_E_UNSUPPORTED, "%s %s cannot be installed: the lockfile gives "
	                "its download %s; a download is fetched only when its URL and SHA-256 are "
	                "recorded", p->name, p->version, !p->url ? "no URL" : "no SHA-256");
}

/* The URL list is allocated here and freed by cfapkg_lockfile_fetch_free; the
 * strings in it stay the lock's. */
static bool fill_item(struct cfapkg_fetch_item *it, const char *label, const char *url,
                      const char *const *mirrors, size_t nmirrors, const char *sha256,
                      int64_t size)
{
	const char **urls = cfa_calloc(nmirrors + 1, sizeof(*urls));
	size_t k;

	if (!urls)
		return false;
	urls[0] = url;
	for (k = 0; k < nmirrors; k++)
		urls[k + 1] = mirrors[k];
	it->label = label;
	it->urls = urls;
	it->nurls = nmirrors + 1;
	it->sha256 = sha256;
	it->size = size;
	return true;
}

/* What a fetch of a lock works from: the lock, and the store folders
 * it replaces though they are there. */
struct fetch_job {
	struct cfapkg_ctx *ctx;
	const struct cfapkg_lockfile *lock;
	const char *const *replace;
	size_t nreplace;
};

/* A folder named to replace is fetched again even though it is there (repair
 * of a damaged one). */
static bool replaced(const struct fetch_job *j, const struct cfapkg_lockfile_part *p)
{
	size_t i;

	for (i = 0; p->store && i < j->nreplace; i++)
		if (strcmp(j->replace[i], p->store) == 0)
			return true;
	return false;
}

/* Whether p's folder is to be unpacked: missing, or replaced. */
static bool wanted(const struct fetch_job *j, const struct cfapkg_lockfile_part *p)
{
	return p->kind == CFAPKG_KIND_PACKAGE && (replaced(j, p) || !cfapkg_store_has(j->ctx, p));
}

/* One item per archive, each unpacked as it arrives: a single archive
 * into its store folder, the archives of a set together into theirs; a
 * set that could not be unpacked so is unpacked from the cache
 * (unpack_sets). */
static bool make_items(struct cfapkg_fetch_item *list, const struct cfapkg_lockfile_part *p,
                       bool replace, size_t *made)
{
	size_t i;

	*made = 0;
	if (!p->nartifacts) {
		if (!fill_item(list, p->name, p->url, p->mirrors, p->nmirrors, p->sha256, p->size))
			return false;
		/* The recipe's cap only bounds a download whose size is not
		 * known; a known size is a bound of its own. */
		list->max_size = p->size < 0 && p->max_size > 0 ? (uint64_t)p->max_size : 0;
		list->unpack_format = p->format;
		list->unpack_name = p->store;
		list->unpack_strip = p->strip;
		list->unpack_replace = replace;
		*made = 1;
		return true;
	}
	for (i = 0; i < p->nartifacts; i++, (*made)++) {
		const struct cfapkg_artifact *a = &p->artifacts[i];
		if (!fill_item(&list[i], p->name, a->url, a->mirrors, a->nmirrors, a->sha256, a->size))
			return false;
		list[i].unpack_format = a->format;
		list[i].unpack_name = p->store;
		list[i].unpack_strip = a->strip;
		list[i].unpack_set = true;
	}
	return true;
}

/* The bytes the download cache lacks for p: its archives that are not
 * in the cache, by their recorded sizes. */
uint64_t cfa_bytes_to_fetch(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p)
{
	uint64_t total = 0;
	size_t i;

	if (!p->nartifacts)
		return p->size > 0 && !cfa_in_cache(ctx, p->sha256) ? (uint64_t)p->size : 0;
	for (i = 0; i < p->nartifacts; i++)
		if (!cfa_in_cache(ctx, p->artifacts[i].sha256))
			total += (uint64_t)p->artifacts[i].size;
	return total;
}

uint64_t cfapkg_part_fetch_bytes(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *part)
{
	return cfapkg_store_has(ctx, part) ? 0 : cfa_bytes_to_fetch(ctx, part);
}

/* One item per archive: a set's artifacts each, or the single download. */
static size_t items_needed(const struct cfapkg_lockfile *lock)
{
	size_t i, n = 0;

	for (i = 0; i < lock->nparts; i++)
		n += lock->parts[i].nartifacts ? lock->parts[i].nartifacts : 1;
	return n;
}

void cfapkg_lockfile_fetch_free(struct cfapkg_fetch_item *items, size_t n)
{
	size_t i;

	for (i = 0; items && i < n; i++) {
		cfapkg_fetch_item_clear(&items[i]);
		cfa_free((void *)items[i].urls);
	}
	cfa_free(items);
}

/* The size of a download the recipe gave no size for, once it is known:
 * the download just made, else the same archive in the set before, else
 * the file in the download cache; -1 when none knows it. */
static int64_t learnt_size(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p,
                           const struct cfapkg_lockfile *before,
                           const struct cfapkg_fetch_item *items, size_t n)
{
	const struct cfapkg_lockfile_part *q = before ? cfapkg_lockfile_find(before, p->name) : NULL;
	char *path = NULL;
	int64_t size = -1;
	size_t i;

	for (i = 0; i < n; i++)
		if (!items[i].err && items[i].unpack_name && strcmp(items[i].unpack_name, p->store) == 0)
			return (int64_t)items[i].size_out;
	if (q && q->size >= 0 && q->sha256 && strcmp(q->sha256, p->sha256) == 0)
		return q->size;
	/* A lookup that fails only means the size stays unknown: the error is
	 * dropped. */
	if (!cfa_cache_find(ctx, p->sha256, -1, &path) && path)
		size = cfa_plat_file_size(path);
	cfapkg_ctx_clear_error(ctx);
	cfa_free(path);
	return size;
}

/* Sizes are learnt only for single downloads: a set's size is the sum
 * of its artifacts', which the lock records. */
void cfa_lock_learn_sizes(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                          const struct cfapkg_lockfile *before, const struct cfapkg_fetch_item *items,
                          size_t n)
{
	size_t i;

	for (i = 0; i < lock->nparts; i++) {
		/* The lock's parts are its own (arena), read-only only to callers. */
		struct cfapkg_lockfile_part *p = (struct cfapkg_lockfile_part *)&lock->parts[i];
		if (p->kind == CFAPKG_KIND_PACKAGE && !p->nartifacts && p->size < 0 && p->sha256 &&
		    p->store)
			p->size = learnt_size(ctx, p, before, items, n);
	}
}

/* The archives of each set, from the cache into one store folder. */
static enum cfapkg_err unpack_sets(const struct fetch_job *j)
{
	struct cfapkg_ctx *ctx = j->ctx;
	const struct cfapkg_lockfile *lock = j->lock;
	struct cfapkg_unpack_opts uo = {0};
	struct cfapkg_unpack_result r = {0};
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, k;

	/* Each archive was verified against its SHA-256 when it was fetched
	 * into the cache, so the unpack need not hash it again. */
	uo.hash_checked = true;
	for (i = 0; i < lock->nparts && !e; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		char **files;
		if (!p->nartifacts || !wanted(j, p))
			continue;
		uo.replace = replaced(j, p);
		if (!(files = cfa_calloc(p->nartifacts, sizeof(*files))))
			return cfa_nomem(ctx);
		for (k = 0; k < p->nartifacts && !e; k++)
			if (!(files[k] = cfa_cache_path(ctx, p->artifacts[k].sha256)))
				e = ctx->err_code;
		uo.label = p->name;
		if (!e)
			e = cfapkg_unpack_set(ctx, (const char *const *)files, p->artifacts,
			                      p->nartifacts, p->store, &uo, &r);
		cfapkg_unpack_result_clear(&r);
		for (k = 0; k < p->nartifacts; k++)
			cfa_free(files[k]);
		cfa_free(files);
	}
	return e;
}

/* *items is set even on failure, so the caller can name each download that
 * failed; it frees them with cfapkg_lockfile_fetch_free. */
enum cfapkg_err cfa_lock_fetch_replacing(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                         const struct cfapkg_fetch_opts *opts,
                                         const char *const *replace, size_t nreplace,
                                         struct cfapkg_fetch_item **items, size_t *n)
{
	struct cfapkg_fetch_item *list = cfa_calloc(items_needed(lock) + 1, sizeof(*list));
	const struct fetch_job j = {ctx, lock, replace, nreplace};
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, k = 0, made;

	*items = NULL;
	*n = 0;
	if (!list)
		return cfa_nomem(ctx);
	for (i = 0; i < lock->nparts && !e; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		if (!wanted(&j, p))
			continue;
		if ((e = check_fetchable(ctx, p)))
			break;
		if (!make_items(&list[k], p, replaced(&j, p), &made))
			e = cfa_nomem(ctx);
		k += made;
	}
	*items = list;
	*n = k;
	if (!e && k)
		e = cfapkg_fetch(ctx, list, k, opts);
	/* Sets are unpacked only after every download arrived: their archives
	 * go into one folder together. */
	return e ? e : unpack_sets(&j);
}

enum cfapkg_err cfapkg_lockfile_fetch(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                  const struct cfapkg_fetch_opts *opts,
                                  struct cfapkg_fetch_item **items, size_t *n)
{
	return cfa_lock_fetch_replacing(ctx, lock, opts, NULL, 0, items, n);
}
