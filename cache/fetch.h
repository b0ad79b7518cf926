/*
 * fetch.h - one transfer's state, shared by the download loop (fetch.c)
 * and its .part file (part.c).
 */
#ifndef CFA_FETCH_H
#define CFA_FETCH_H

#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdio.h>

#include "cache/cache.h"

/* Why a transfer was cut short by cfapkg rather than by the network.
 * STOP_RANGE: a 206 that does not continue the kept bytes. */
enum stop { STOP_NONE, STOP_OVERFLOW, STOP_IO, STOP_STALL, STOP_RANGE };

struct xfer {
	struct cfapkg_ctx *ctx;
	struct cfapkg_fetch_item *item;
	struct cfa_stream *stream;       /* unpacking while downloading, or NULL */
	struct cfa_stream_set *set;      /* the set the archive is one of (fetch_set.c), or NULL */
	size_t member;                   /* which of the set's archives */
	bool stream_tried;               /* one chance: the first body only */
	uint64_t streamed_upto;          /* the bytes the stream was told of */
	const struct cfapkg_fetch_opts *opts;
	struct cfa_mutex *progress_lock; /* progress calls come from several threads */
	CURL *h;
	struct curl_slist *headers;
	char **urls;                     /* what to try, in order (mirrors.c) */
	size_t nurls;
	size_t nlocal;                   /* urls[0..nlocal) may be file:// (a rule's, or the user's):
	                                    read by body.c, never by libcurl */
	size_t url;                      /* the one being tried */
	bool mismatch;                   /* a URL served other bytes than pinned */
	unsigned url_attempts;           /* attempts at this URL in all */
	unsigned no_progress;            /* failed attempts in a row that added no bytes */
	uint64_t have_at_start;          /* the part's bytes when this attempt began */
	uint64_t attempt_base;           /* of have, the bytes this attempt did not bring
	                                    (0 once a 200 started the part over) */
	double last_byte_at;             /* when this attempt last received anything */
	FILE *part;
	char *iobuf;                     /* the part's stdio buffer: large writes */
	EVP_MD_CTX *md;
	uint64_t have;
	bool body_started, active, done;
	bool deferred;                   /* verified but left as its .part: the
	                                    streamed unpack is the copy that must
	                                    last (cfa_part_stream_end) */
	char hex[65];                    /* the verified SHA-256 */
	bool boot_id;                    /* the system names its boots: the cache
	                                    flushes no download (cachefile.c) */
	bool shares_thread;              /* other downloads run in its thread: it
	                                    reads and writes in smaller steps */
	enum stop stop;
	int io_err;                      /* why the part could not be written (STOP_IO) */
	double not_before;
	char *part_path, *meta_path;     /* heap: a path is never cut to fit */
	const char *final_dir;           /* ROOT/downloads, the caller's */
	/* An ETag or Last-Modified longer than this is not kept: without a
	 * validator a download starts over rather than resume. */
	char validator[256], new_validator[256];
	/* Where this response's Content-Range says its body starts; -1 when
	 * it sent none. */
	int64_t range_start;
	char want[65];                   /* the expected SHA-256 in lower case, "" if any */
	/* The most bytes the body may bring: the declared size, else the cap
	 * (an explicit --max-size, else the recipe's max_size, else the
	 * default), and what set it, for the message that says how to raise it. */
	uint64_t cap;
	const char *cap_from;
	char curl_err[CURL_ERROR_SIZE];
};

/* fetch_deal.c: the downloads' threads, each with its own multi handle
 * and at most parallel of its xs at once. */
#define CFA_FETCH_MAX_PARALLEL 16
struct fetch_group {
	struct xfer *xs;
	size_t n;
	unsigned parallel;
};
/* Reorders xs into at most min(processors, parallel) contiguous slices
 * (groups[0..return)), largest downloads dealt out first. */
size_t cfa_fetch_deal(struct xfer *xs, size_t n, unsigned parallel, struct fetch_group *groups);

/* body.c: curl's header and body callbacks (arg: the xfer), the start of
 * a body (false: the part could not be started over), and progress. */
size_t cfa_fetch_on_header(char *data, size_t size, size_t nmemb, void *arg);
size_t cfa_fetch_on_body(char *data, size_t size, size_t nmemb, void *arg);
bool cfa_fetch_start_body(struct xfer *x);
void cfa_fetch_progress(struct xfer *x, bool finished, uint64_t announced);
/* An event for a verbose front end (opts->event), about x's current URL. */
void cfa_fetch_event(struct xfer *x, enum cfapkg_fetch_event_kind kind, const char *why,
                     double retry_in, bool next_url);
/* The file a file:// URL names, read through the body callback as a
 * download's bytes are; refused unless x->url < x->nlocal.  How it ended,
 * as libcurl would say (curl_err holds the words). */
CURLcode cfa_fetch_read_local(struct xfer *x);

/* mirrors.c: x->urls, what x tries in order: the rewrites the mirror
 * rules (*m, read when NULL) give the item's first URL, then its own;
 * x->nlocal of them may read files (cfa_free(x->urls) frees them all). */
enum cfapkg_err cfa_fetch_urls(struct cfapkg_ctx *ctx, struct xfer *x, struct cfapkg_mirrors **m);

/* retry.c: after a failed attempt, try again later, move to the next
 * mirror, or give up with a message that names the URL and what to do. */
void cfa_fetch_failed(struct xfer *x, CURLcode rc, long code);
/* The body did not match the pin (hex: its SHA-256): the download is
 * deleted, and the next URL tried when there is one. */
void cfa_fetch_mismatch(struct xfer *x, const char *hex);

/* fetch_item.c: a verified .part made durable and moved into the cache
 * under its hash (the item's path); false when that failed (the item says
 * why). */
bool cfa_fetch_publish(struct xfer *x);
/* The item failed with err: the text is kept, the transfer is done. */
void cfa_item_fail(struct xfer *x, enum cfapkg_err err, const char *fmt, ...) CFA_PRINTF(3, 4);

/* fetch_set.c: the items that are archives of one set (unpack_set, one
 * unpack_name) each given the set's stream before the transfers, when
 * their store folder is absent (sets: one to close per item at most,
 * *nsets of them); after them, a set every archive of which streamed is
 * committed, its archives' .parts dropped unless kept, and any other
 * given up, its archives published in the cache for cfapkg_unpack_set. */
void cfa_fetch_sets_open(struct cfapkg_ctx *ctx, struct xfer *xs, size_t n,
                         struct cfa_stream_set **sets, size_t *nsets);
void cfa_fetch_sets_end(struct xfer *xs, size_t n, struct cfa_stream_set **sets, size_t nsets);

/* part.c: the .part file of a transfer and its validator (.part.meta). */
/* Writes the validator of the response now being saved. */
void cfa_part_write_meta(struct xfer *x);
/* Drops the validator kept beside the part (its bytes were replaced). */
void cfa_part_forget_meta(struct xfer *x);
/* Starts the part over: nothing kept, hash reset. */
bool cfa_part_restart(struct xfer *x);
/* Opens the part for appending and hashes what it already holds (starts
 * over without a validator, or when it is longer than the artifact). */
bool cfa_part_open(struct xfer *x);
void cfa_part_discard(struct xfer *x);
/* Names the part after the artifact's hash, or after its first URL when
 * the hash is not known; false when out of memory. */
bool cfa_part_name(struct xfer *x, const char *dir);
/* The unpack that reads the part while it grows (stream.c): started with
 * the first body when it begins at byte 0 of a pinned archive, fed as
 * bytes are written (false: a write failed), dropped when the body ends
 * early or another starts, and, after the transfers, committed when the
 * download was verified (dropped otherwise). */
void cfa_part_stream_start(struct xfer *x);
bool cfa_part_stream_feed(struct xfer *x);
void cfa_part_stream_drop(struct xfer *x);
void cfa_part_stream_end(struct xfer *x);

#endif
