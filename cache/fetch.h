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

enum stop { STOP_NONE, STOP_OVERFLOW, STOP_IO, STOP_STALL };

struct xfer {
	struct cfapkg_ctx *ctx;
	struct cfapkg_fetch_item *item;
	struct cfa_stream *stream;       /* unpacking while downloading, or NULL */
	bool stream_tried;               /* one chance: the first body only */
	uint64_t streamed_upto;          /* the bytes the stream was told of */
	const struct cfapkg_fetch_opts *opts;
	struct cfa_mutex *progress_lock; /* progress calls come from several threads */
	CURL *h;
	struct curl_slist *headers;
	size_t url;
	unsigned url_attempts;           /* attempts at this URL in all */
	unsigned no_progress;            /* failed attempts in a row that added no bytes */
	uint64_t have_at_start;          /* the part's bytes when this attempt began */
	double last_byte_at;             /* when this attempt last received anything */
	FILE *part;
	char *iobuf;                     /* the part's stdio buffer: large writes */
	EVP_MD_CTX *md;
	uint64_t have;
	bool body_started, active, done;
	enum stop stop;
	int io_err;                      /* why the part could not be written (STOP_IO) */
	double not_before;
	char *part_path, *meta_path;     /* heap: a path is never cut to fit */
	const char *final_dir;           /* ROOT/downloads, the caller's */
	/* An ETag or Last-Modified longer than this is not kept: without a
	 * validator a download starts over rather than resume. */
	char validator[256], new_validator[256];
	char want[65];                   /* the expected SHA-256 in lower case, "" if any */
	char curl_err[CURL_ERROR_SIZE];
};

/* retry.c: after a failed attempt, try again later, move to the next
 * mirror, or give up with a message that names the URL and what to do. */
void cfa_fetch_failed(struct xfer *x, CURLcode rc, long code);

/* part.c: the .part file of a transfer and its validator (.part.meta). */
/* Writes the validator of the response now being saved. */
void cfa_part_write_meta(struct xfer *x);
/* Starts the part over: nothing kept, hash reset. */
bool cfa_part_restart(struct xfer *x);
/* Opens the part for appending and hashes what it already holds (starts
 * over without a validator, or when it is longer than the artifact). */
bool cfa_part_open(struct xfer *x);
void cfa_part_discard(struct xfer *x);
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
