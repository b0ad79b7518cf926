/*
 * fetch_set.c - downloads that are the archives of one set (the .debs of
 * an APT source), each unpacked as it arrives into the set's one store
 * folder (stream_set.c).  An archive already in the cache streams from
 * its file at once.  A set is committed only when every archive of it was
 * verified and unpacked whole; its .parts, which nothing else needs once
 * the store folder is there, are deleted before the folder is flushed, so
 * their pages are never written.  Any other outcome publishes them in the
 * cache like any download, and cfapkg_unpack_set unpacks them from there.
 */
#include <string.h>

#include "cache/fetch.h"
#include "core/mem.h"
#include "core/strbuf.h"

static bool set_item(const struct cfapkg_fetch_item *it)
{
	/* Pinned and sized: nothing is committed unverified, and the set's
	 * total is known before a byte arrives. */
	return it->unpack_set && it->unpack_name && it->unpack_format && it->sha256 &&
	       it->size >= 0;
}

static bool same_set(const struct cfapkg_fetch_item *a, const struct cfapkg_fetch_item *b)
{
	/* Sets are told apart by the store folder they unpack into. */
	return set_item(b) && strcmp(a->unpack_name, b->unpack_name) == 0;
}

/* An archive in the cache already: its stream reads the whole file now. */
static void start_cached(struct xfer *x)
{
	struct cfapkg_fetch_item *it = x->item;
	char *label = cfa_unpack_label(it);

	/* Its one chance, as for a download: the file is read once, whole. */
	x->stream_tried = true;
	if (label)
		x->stream = cfa_stream_set_start(x->set, x->member, it->unpack_format,
		                                 it->unpack_strip, label, it->size_out, it->path);
	/* All of it is there: readable and ended at once. */
	if (x->stream)
		cfa_stream_feed(x->stream, it->size_out, true);
	cfa_free(label);
}

/* The first item of a set opens it for all of them. */
static struct cfa_stream_set *open_set(struct cfapkg_ctx *ctx, struct xfer *xs, size_t n,
                                       size_t first)
{
	const struct cfapkg_fetch_item *it = xs[first].item;
	struct cfa_stream_set *set = NULL;
	uint64_t total = 0;
	size_t count = 0, j, k = 0;

	for (j = 0; j < first; j++)
		if (same_set(it, xs[j].item))
			return NULL; /* not its first item: tried already */
	for (j = first; j < n; j++)
		if (same_set(it, xs[j].item)) {
			total += (uint64_t)xs[j].item->size;
			count++;
		}
	/* A store folder that exists already opens no set: the archives are
	 * only fetched, and cfapkg_unpack_set finds the folder. */
	if (cfa_stream_set_open(ctx, it->unpack_name, it->label ? it->label : it->unpack_name,
	                        total, count, &set) || !set)
		return NULL;
	for (j = first; j < n; j++)
		if (same_set(it, xs[j].item)) {
			xs[j].set = set;
			/* Numbered in the items' order, the order the set seals
			 * them in. */
			xs[j].member = k++;
			if (xs[j].done && xs[j].item->from_cache)
				start_cached(&xs[j]);
		}
	return set;
}

void cfa_fetch_sets_open(struct cfapkg_ctx *ctx, struct xfer *xs, size_t n,
                         struct cfa_stream_set **sets, size_t *nsets)
{
	size_t i;

	*nsets = 0;
	/* Before the threads deal xs out (cfa_fetch_deal): set and member
	 * travel with each xfer when it is moved. */
	for (i = 0; i < n; i++)
		if (set_item(xs[i].item) && !xs[i].set && (sets[*nsets] = open_set(ctx, xs, n, i)))
			(*nsets)++;
}

/* After the commit (r: what it made, or NULL when there was none): each
 * archive is in the store, or keeps the error of the commit. */
static void settle(struct xfer *xs, size_t n, struct cfa_stream_set *set,
                   const struct cfapkg_unpack_result *r, enum cfapkg_err e, const char *why)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct cfapkg_fetch_item *it = xs[i].item;
		if (xs[i].set != set)
			continue;
		xs[i].stream = NULL; /* the set's, closed with it */
		xs[i].set = NULL;
		/* The set gave up before its commit: its archives are in the
		 * cache for cfapkg_unpack_set, and the set's trouble is not
		 * theirs. */
		if (!r)
			continue;
		if (e && !it->err) {
			it->err = e;
			cfa_item_error(it, "%s", why);
		} else if (!e) {
			it->unpacked = true;
			/* One read from the cache was unpacked, not streamed
			 * from a download. */
			it->streamed = !it->from_cache;
			/* Every member names the one folder: each item owns a copy. */
			it->unpack = *r;
			if (r->path && !(it->unpack.path = cfa_strdup(r->path))) {
				it->err = CFAPKG_E_NOMEM;
				cfa_item_error(it, "out of memory");
			}
		}
	}
}

/* Before the flush, or, when the set is given up, into the cache (a
 * stream still reading one follows the rename). */
static void drop_or_publish(struct xfer *xs, size_t n, struct cfa_stream_set *set, bool drop)
{
	size_t i;

	for (i = 0; i < n; i++) {
		/* Not deferred: kept (and published already), or read from the
		 * cache. */
		if (xs[i].set != set || !xs[i].deferred)
			continue;
		if (drop) {
			cfa_part_discard(&xs[i]);
			cfa_free(xs[i].item->path);
			xs[i].item->path = NULL;
			xs[i].deferred = false;
		} else {
			cfa_fetch_publish(&xs[i]);
		}
	}
}

void cfa_fetch_sets_end(struct xfer *xs, size_t n, struct cfa_stream_set **sets, size_t nsets)
{
	size_t s;

	for (s = 0; s < nsets; s++) {
		struct cfapkg_unpack_result r = {0};
		enum cfapkg_err e = cfa_stream_set_seal(sets[s]);

		/* Sealed: the .parts go before the move flushes the folder.
		 * Else they become cache files, for an unpack from there. */
		drop_or_publish(xs, n, sets[s], !e);
		if (!e) {
			e = cfa_stream_set_move(sets[s], &r);
			settle(xs, n, sets[s], &r, e, cfa_stream_set_error(sets[s]));
			cfapkg_unpack_result_clear(&r);
		} else {
			settle(xs, n, sets[s], NULL, e, NULL);
		}
		/* The set's streams go with it; settle cleared each x->stream. */
		cfa_stream_set_close(sets[s]);
	}
}
