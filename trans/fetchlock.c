/*
 * fetchlock.c - a locked set's packages into the store: each package the
 * store lacks becomes one download (its URL, then its mirrors), verified
 * and unpacked into ROOT/store/NAME-VERSION-SHA8.  No caps: as many items
 * and mirrors as the lock has.
 */
#include <string.h>

#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"
#include "trans/trans.h"

bool cfapkg_store_has(struct cfapkg_ctx *ctx, const struct cfapkg_locked *part)
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

bool cfa_in_cache(struct cfapkg_ctx *ctx, const char *sha256)
{
	char *file = sha256 ? cfa_root_path(ctx, CFA_DOWNLOADS, sha256) : NULL;
	bool in = file && cfa_plat_is_file(file);

	if (!file)
		cfapkg_ctx_clear_error(ctx);
	cfa_free(file);
	return in;
}

/* A size is what bounds a download: only a lockfile written by hand
 * lacks one. */
static enum cfapkg_err check_fetchable(struct cfapkg_ctx *ctx, const struct cfapkg_locked *p)
{
	if (p->size >= 0 && p->sha256 && p->url)
		return CFAPKG_E_OK;
	return cfa_fail(ctx, CFAPKG_E_UNSUPPORTED, "%s %s cannot be installed: the lockfile gives "
	                "its download %s; a download is fetched only when its URL, SHA-256 and "
	                "size are recorded (the size that 'cfapkg prefetch URL' prints)", p->name,
	                p->version, !p->url ? "no URL" : !p->sha256 ? "no SHA-256" : "no size");
}

static bool make_item(struct cfapkg_fetch_item *it, const struct cfapkg_locked *p)
{
	const char **urls = cfa_calloc(p->nmirrors + 1, sizeof(*urls));
	size_t k;

	if (!urls)
		return false;
	urls[0] = p->url;
	for (k = 0; k < p->nmirrors; k++)
		urls[k + 1] = p->mirrors[k];
	it->label = p->name;
	it->urls = urls;
	it->nurls = p->nmirrors + 1;
	it->sha256 = p->sha256;
	it->size = p->size;
	it->unpack_format = p->format;
	it->unpack_name = p->store;
	it->unpack_strip = p->strip;
	return true;
}

void cfapkg_lock_fetch_free(struct cfapkg_fetch_item *items, size_t n)
{
	size_t i;

	for (i = 0; items && i < n; i++)
		cfa_free((void *)items[i].urls);
	cfa_free(items);
}

enum cfapkg_err cfapkg_lock_fetch(struct cfapkg_ctx *ctx, const struct cfapkg_lock *lock,
                                  const struct cfapkg_fetch_opts *opts,
                                  struct cfapkg_fetch_item **items, size_t *n)
{
	struct cfapkg_fetch_item *list = cfa_calloc(lock->nparts + 1, sizeof(*list));
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, k = 0;

	*items = NULL;
	*n = 0;
	if (!list)
		return cfa_nomem(ctx);
	for (i = 0; i < lock->nparts && !e; i++) {
		const struct cfapkg_locked *p = &lock->parts[i];
		if (p->kind != CFAPKG_KIND_PACKAGE || cfapkg_store_has(ctx, p))
			continue;
		if (!(e = check_fetchable(ctx, p)) && !make_item(&list[k++], p))
			e = cfa_nomem(ctx);
	}
	*items = list;
	*n = k;
	if (!e && k)
		e = cfapkg_fetch(ctx, list, k, opts);
	return e;
}
