/*
 * body.c - the bytes of one transfer: response headers (the validator a
 * resume needs), the body into the .part file and its hash (cut at the
 * declared size), progress, and file:// URLs, which cfapkg reads itself
 * with the same checks: a libcurl built for HTTP only has no file://, and
 * a file is read only where a mirror rule or the command line named it.
 */
#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/fetch.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* A file:// URL is read a MiB at a time, each block handed to the same body
 * callback libcurl calls. */
#define LOCAL_BLOCK (1u << 20)

/* "Content-Range: bytes START-END/TOTAL": START is kept, so that a 206
 * is appended to the part only where it really continues it. */
static void note_range(struct xfer *x, const char *data, size_t n)
{
	static const char key[] = "content-range:";
	size_t i, kl = sizeof(key) - 1, digits;
	uint64_t start = 0;

	for (i = 0; i < kl && i < n && (data[i] | 0x20) == key[i]; i++)
		;
	if (i < kl)
		return;
	while (i < n && (data[i] == ' ' || data[i] == '\t'))
		i++;
	if (n - i < 6 || strncmp(data + i, "bytes ", 6) != 0)
		return;
	for (i += 6, digits = 0; i + digits < n && data[i + digits] >= '0' && data[i + digits] <= '9';)
		digits++;
	/* A start past 2^62 is no file cfapkg would keep: left unknown. */
	if (i + digits < n && data[i + digits] == '-' &&
	    cfa_parse_u64(data + i, digits, (uint64_t)1 << 62, &start))
		x->range_start = (int64_t)start;
}

size_t cfa_fetch_on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;
	const char *keys[] = {"etag:", "last-modified:"};
	size_t k;

	/* Headers count as arriving bytes for the stall check: a slow server
	 * that is still answering is not cut. */
	x->last_byte_at = cfa_plat_now();
	if (n > 5 && strncmp(data, "HTTP/", 5) == 0) {
		x->new_validator[0] = '\0'; /* a new response (after a redirect) */
		x->range_start = -1;
	}
	note_range(x, data, n);
	/* libcurl passes one whole header line per call, its CRLF included.  An
	 * ETag is preferred: it replaces a Last-Modified seen before it, and a
	 * Last-Modified is taken only while no validator is held. */
	for (k = 0; k < 2; k++) {
		size_t kl = strlen(keys[k]), i;
		if (n <= kl)
			continue;
		/* Header names are case-insensitive: | 0x20 folds ASCII letters
		 * to lower case. */
		for (i = 0; i < kl && (data[i] | 0x20) == keys[k][i]; i++)
			;
		if (i == kl && (k == 0 || !x->new_validator[0])) {
			const char *v = data + kl;
			size_t vl = n - kl;
			while (vl && (*v == ' ' || *v == '\t'))
				v++, vl--;
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
				vl--;
			/* A cut validator would name other bytes: one that does not fit is
			 * not kept (see fetch.h). */
			if (vl < sizeof(x->new_validator)) {
				memcpy(x->new_validator, v, vl);
				x->new_validator[vl] = '\0';
			}
		}
	}
	return n;
}

/* The first body bytes decide: 206 continues the part, 200 replaces it. */
bool cfa_fetch_start_body(struct xfer *x)
{
	long code = 0;

	if (x->h) /* none for a file read here: a whole file, as a 200 */
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	x->body_started = true;
	cfa_part_stream_drop(x); /* a second body: the file is unpacked afterwards */
	/* A 206 from the first byte is the whole file (as a 200 is); one from
	 * anywhere else than the end of the kept bytes (a proxy or server that
	 * mishandles ranges) would splice two parts of the file together. */
	if (code == 206 && x->range_start == 0)
		code = 200;
	if (code == 206 && x->range_start != (int64_t)x->have) {
		x->stop = STOP_RANGE;
		return false;
	}
	/* Any answer but 206 to a range request is the whole file (the
	 * validator no longer matched, or the server ignores ranges): the kept
	 * bytes go. */
	if (code != 206 && x->have > 0 && !cfa_part_restart(x))
		return false;
	if (code != 206) {
		x->attempt_base = 0; /* the part started over: every byte is this attempt's */
		/* The old validator named the bytes just dropped: with no new one
		 * it must go, or the next attempt would resume these bytes with
		 * it and append another file's tail. */
		if (!x->new_validator[0])
			cfa_part_forget_meta(x);
	}
	/* Before the first byte: a run killed in the middle of the body finds
	 * the validator its bytes need to resume. */
	cfa_part_write_meta(x);
	cfa_part_stream_start(x);
	return true;
}

/* The whole file as this response announces it (what is kept plus its
 * Content-Length), 0 when it does not say. */
static uint64_t announced_total(struct xfer *x)
{
	curl_off_t len = -1;

	/* Asked only as a body begins, when have is what this answer continues:
	 * 0 after a 200, the kept prefix after a 206. */
	if (!x->h ||
	    curl_easy_getinfo(x->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len) != CURLE_OK || len < 0)
		return 0;
	return x->have + (uint64_t)len;
}

size_t cfa_fetch_on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;
	uint64_t cap = x->cap;

	x->last_byte_at = cfa_plat_now();
	/* Returning fewer bytes than were given makes libcurl end the transfer
	 * with CURLE_WRITE_ERROR; x->stop says why, for retry.c. */
	if (!x->body_started) {
		if (!cfa_fetch_start_body(x)) {
			if (x->stop == STOP_NONE)
				x->stop = STOP_IO;
			return 0;
		}
		if (announced_total(x) > cap) { /* no need to receive it to know */
			x->stop = STOP_OVERFLOW;
			return 0;
		}
	}
	/* Cut as soon as the bound is passed, rather than kept to the end and
	 * refused. */
	if (x->have + n > cap) {
		x->stop = STOP_OVERFLOW;
		return 0;
	}
	if (fwrite(data, 1, n, x->part) != n) {
		x->io_err = cfa_plat_write_errno();
		x->stop = STOP_IO;
		return 0;
	}
	if (EVP_DigestUpdate(x->md, data, n) != 1) {
		x->io_err = ENOMEM;
		x->stop = STOP_IO;
		return 0;
	}
	x->have += n;
	if (x->stream && !cfa_part_stream_feed(x)) {
		x->stop = STOP_IO;
		return 0;
	}
	/* Every 8 MiB of a part that will be flushed: start the disk on it now
	 * rather than at the fsync.  Others are left to the page cache: one
	 * unpacked while it arrives and not kept is deleted before it would be
	 * written, and the cache flushes nothing where boots are named. */
	if (((x->have - n) >> 23) != (x->have >> 23) && !x->boot_id &&
	    (!x->stream || x->opts->keep_archives))
		cfa_plat_start_writeback(x->part);
	return n;
}

void cfa_fetch_progress(struct xfer *x, bool finished, uint64_t announced)
{
	struct cfapkg_fetch_progress p;

	if (!x->opts->progress)
		return;
	p.item = x->item;
	p.done = x->have;
	p.total = x->item->size > 0 ? (uint64_t)x->item->size : announced;
	p.finished = finished;
	p.attempt = x->item->attempts;
	/* A part cut back below what the attempt found (a mismatch empties it)
	 * resumed nothing. */
	p.resumed = x->attempt_base <= x->have ? x->attempt_base : 0;
	/* One lock for every thread of the run: the front end's callback need
	 * not be thread-safe. */
	cfa_plat_mutex_lock(x->progress_lock);
	x->opts->progress(x->opts->progress_arg, &p);
	cfa_plat_mutex_unlock(x->progress_lock);
}

void cfa_fetch_event(struct xfer *x, enum cfapkg_fetch_event_kind kind, const char *why,
                     double retry_in, bool next_url)
{
	struct cfapkg_fetch_event ev;

	if (!x->opts->event)
		return;
	ev.item = x->item;
	ev.kind = kind;
	ev.url = x->urls && x->url < x->nurls ? x->urls[x->url]
	         : x->item->nurls             ? x->item->urls[0]
	                                      : "";
	/* url_attempts counts the attempts that ended: the one now starting is
	 * the next. */
	ev.attempt = x->url_attempts + (kind == CFAPKG_FETCH_TRYING);
	ev.from = x->have;
	ev.why = why;
	ev.retry_in = retry_in;
	ev.next_url = next_url;
	/* Before the transfers start (the cache) there is one thread and no lock. */
	if (x->progress_lock)
		cfa_plat_mutex_lock(x->progress_lock);
	x->opts->event(x->opts->progress_arg, &ev);
	if (x->progress_lock)
		cfa_plat_mutex_unlock(x->progress_lock);
}

/* Why a file:// URL was not read, in curl's error field (text shown to
 * people: a long path shows its cut). */
static CURLcode local_failed(struct xfer *x, CURLcode rc, const char *what, const char *why)
{
	cfa_fit_text(x->curl_err, sizeof(x->curl_err), "%s%s%s", what ? what : "", what ? ": " : "",
	             why);
	return rc;
}

CURLcode cfa_fetch_read_local(struct xfer *x)
{
	const char *url = x->urls[x->url];
	char *path = NULL, *buf = NULL;
	FILE *f = NULL;
	CURLcode rc = CURLE_OK;
	size_t n;

	if (x->url >= x->nlocal)
		return local_failed(x, CURLE_UNSUPPORTED_PROTOCOL, NULL, "a file:// URL is read only "
		                    "where a mirror rule or the command line names it");
	if (!(path = cfa_file_url_path(url)))
		rc = local_failed(x, CURLE_URL_MALFORMAT, NULL, "not a file on this machine "
		                  "(file:///PATH)");
	else if (!(f = cfa_plat_fopen(path, "rb")))
		rc = local_failed(x, CURLE_FILE_COULDNT_READ_FILE, path, cfa_plat_strerror(errno));
	else if (!(buf = cfa_malloc(LOCAL_BLOCK)))
		rc = local_failed(x, CURLE_OUT_OF_MEMORY, path, "out of memory");
	/* Through the body callback, so that the cap, the hash, the part and
	 * the stream treat a file as they treat a download. */
	while (!rc && (n = fread(buf, 1, LOCAL_BLOCK, f)) > 0) {
		if (cfa_fetch_on_body(buf, 1, n, x) != n)
			rc = CURLE_WRITE_ERROR; /* x->stop says why */
		else
			cfa_fetch_progress(x, false, 0);
	}
	if (!rc && ferror(f))
		rc = local_failed(x, CURLE_READ_ERROR, path, "read error");
	if (f)
		fclose(f);
	cfa_free(buf);
	cfa_free(path);
	return rc;
}
