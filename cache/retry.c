/*
 * retry.c - after a failed attempt: the same URL again after a pause, the
 * next mirror, or the end, with a message that names the URL and says what
 * to do.
 *
 * The retry budget counts attempts that got nowhere: opts->attempts failed
 * attempts in a row that added no bytes to the .part end a URL, and one
 * that added bytes starts the count again, so a server that drops the
 * connection every megabyte still delivers the file (each attempt resumes
 * where the last one stopped).  MAX_ATTEMPTS_PER_URL bounds the whole: a
 * server that sends a byte per connection cannot keep a download going
 * forever.  A stall is retried like a timeout.  attempts == 1 turns
 * retries off altogether, progress or not.  A body that does not match
 * its pin is not retried at that URL: the next one is tried (a mirror may
 * serve another file under the right name), and each URL given up is
 * noted in the item's "tried".
 */
#include <string.h>

#include "cache/fetch.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* The most attempts at one URL, progress or not (see above). */
#define MAX_ATTEMPTS_PER_URL 100

static bool retryable(CURLcode rc, long code)
{
	/* What a later attempt may not meet again: the network, or the server's
	 * load.  CURLE_PARTIAL_FILE is a connection closed before the announced
	 * length: the next attempt resumes.  A 4xx other than 408 (timeout) and
	 * 429 (too many requests) says the request itself is wrong. */
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_COULDNT_CONNECT:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
		return true;
	case CURLE_HTTP_RETURNED_ERROR:
		return code >= 500 || code == 429 || code == 408;
	default:
		return false;
	}
}

static bool may_retry(const struct xfer *x, CURLcode rc, long code)
{
	/* A body over its bound would be over it again. */
	if (x->stop == STOP_OVERFLOW || x->opts->attempts <= 1)
		return false;
	/* A 416 to a resume: the kept part was as long as the file or longer
	 * (killed before it was checked).  It is gone now, and the same URL is
	 * asked again from the first byte, with no range to refuse. */
	if ((code == 416 && x->have_at_start > 0) || x->stop == STOP_RANGE)
		return x->url_attempts < MAX_ATTEMPTS_PER_URL;
	/* A stall ends as CURLE_ABORTED_BY_CALLBACK (on_progress cut it), which
	 * retryable does not list. */
	if (x->stop != STOP_STALL && !retryable(rc, code))
		return false;
	return x->no_progress < x->opts->attempts && x->url_attempts < MAX_ATTEMPTS_PER_URL;
}

/* Soon after an attempt that got further (the server is there); doubling
 * with each one in a row that did not, up to 4 s. */
static double backoff(unsigned no_progress)
{
	double delay;

	if (no_progress == 0)
		return 0.1;
	/* 0.5 s, 1 s, 2 s, then 4 s; the shift is bounded before the delay is. */
	delay = 0.25 * (double)(1u << (no_progress < 5 ? no_progress : 5));
	return delay > 4 ? 4 : delay;
}

/* "2 MiB" for a whole number of a unit, else bytes: at most 20 digits and
 * a unit, which buf (32 bytes) holds; false if it ever did not. */
static bool size_text(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;

	while (u < 4 && n >= 1024 && n % 1024 == 0)
		n /= 1024, u++;
	return cfa_snprintf(buf, len, "%llu %s", (unsigned long long)n, units[u]);
}

/* curl's own words are at most CURL_ERROR_SIZE; the rest are short. */
static bool describe(const struct xfer *x, CURLcode rc, long code, char *why, size_t len)
{
	char cap[32];

	if (x->stop == STOP_OVERFLOW && x->item->size >= 0)
		return cfa_snprintf(why, len, "the server sent more than the declared %lld bytes",
		                    (long long)x->item->size);
	if (x->stop == STOP_OVERFLOW)
		return size_text(x->cap, cap, sizeof(cap)) &&
		       cfa_snprintf(why, len, "more than the %s allowed for a download of unknown "
		                    "size (%s)", cap, x->cap_from);
	if (x->stop == STOP_STALL)
		return cfa_snprintf(why, len, "nothing arrived for %u s (--stall-timeout)",
		                    x->opts->stall_secs);
	if (x->stop == STOP_RANGE)
		return cfa_snprintf(why, len, "asked to resume at byte %llu, the server sent "
		                    "bytes from %lld", (unsigned long long)x->have,
		                    (long long)x->range_start);
	if (rc == CURLE_HTTP_RETURNED_ERROR)
		return cfa_snprintf(why, len, "HTTP %ld", code);
	return cfa_snprintf(why, len, "%s", x->curl_err[0] ? x->curl_err : curl_easy_strerror(rc));
}

static const char *advise(const struct xfer *x, long code, char *buf, size_t len)
{
	if (x->stop == STOP_OVERFLOW && x->item->size >= 0)
		return "the download was deleted; check the declared size";
	if (x->stop == STOP_OVERFLOW)
		return "the download was deleted: allow more with --max-size SIZE (or, in a "
		       "recipe, a larger \"max_size\" or its \"size\")";
	if (x->have > 0)
		return cfa_snprintf(buf, len, "the %llu bytes received are kept: run the command again "
		                    "to resume", (unsigned long long)x->have)
		           ? buf
		           : "the bytes received are kept: run the command again to resume";
	if (code >= 500 || code == 429 || code == 408)
		return "the server is failing or busy: try again later";
	if (code >= 400)
		return "check the URL";
	return "check the URL, the network and any proxy settings (https_proxy, http_proxy), then "
	       "run the command again";
}

static void give_up(struct xfer *x, const char *why, long code)
{
	struct cfapkg_fetch_item *it = x->item;
	char advice[160];

	/* Any URL that served other bytes than pinned makes this an integrity
	 * failure, even when the last URL failed for another reason. */
	it->err = x->stop == STOP_OVERFLOW || x->mismatch ? CFAPKG_E_INTEGRITY : CFAPKG_E_NETWORK;
	cfa_item_error(it, "%s: %s (after %u attempt%s%s); %s", x->urls[x->url], why,
	               it->attempts, it->attempts == 1 ? "" : "s",
	               x->url_attempts >= MAX_ATTEMPTS_PER_URL ? ", the most for one URL" : "",
	               advise(x, code, advice, sizeof(advice)));
	x->done = true;
}

/* On to the next URL, noting why this one was given up; false when it
 * was the last. */
static bool next_url(struct xfer *x, const char *why)
{
	if (x->url + 1 >= x->nurls)
		return false;
	cfa_item_tried(x->item, "%s: %s (after %u attempt%s)", x->urls[x->url], why,
	               x->url_attempts, x->url_attempts == 1 ? "" : "s");
	x->url++;
	/* Each URL has its own budget, and the new one is tried at once. */
	x->url_attempts = 0;
	x->no_progress = 0;
	x->not_before = 0;
	return true;
}

void cfa_fetch_mismatch(struct xfer *x, const char *hex)
{
	struct cfapkg_fetch_item *it = x->item;
	char why[256], size[64];
	bool fits;

	x->url_attempts++;
	x->mismatch = true;
	if (it->size >= 0)
		fits = cfa_snprintf(size, sizeof(size), "%lld bytes expected, %llu received",
		                    (long long)it->size, (unsigned long long)x->have);
	else
		fits = cfa_snprintf(size, sizeof(size), "%llu bytes", (unsigned long long)x->have);
	/* finish deleted the part: nothing is kept for the next URL. */
	x->have = 0;
	/* Two hashes and two numbers: the buffers hold them. */
	if (!fits || !cfa_snprintf(why, sizeof(why), "SHA-256 %s expected, %s received (%s); the "
	                           "download was deleted", x->want[0] ? x->want : "(any)", hex, size))
		memcpy(why, "other bytes than pinned", sizeof("other bytes than pinned"));
	cfa_fetch_event(x, CFAPKG_FETCH_FAILED, why, 0, x->url + 1 < x->nurls);
	if (next_url(x, why))
		return;
	it->err = CFAPKG_E_INTEGRITY;
	cfa_item_error(it, "%s: %s", x->urls[x->url], why);
	x->done = true;
}

void cfa_fetch_failed(struct xfer *x, CURLcode rc, long code)
{
	char why[CURL_ERROR_SIZE + 96];

	x->url_attempts++;
	/* An attempt that added bytes starts the count again. */
	x->no_progress = x->have > x->have_at_start ? 0 : x->no_progress + 1;
	if (!describe(x, rc, code, why, sizeof(why)))
		memcpy(why, "the transfer failed", sizeof("the transfer failed")); /* never: sized */
	x->mismatch |= x->stop == STOP_OVERFLOW; /* more than the pin: another file */
	if (x->stop == STOP_OVERFLOW || x->stop == STOP_RANGE || code == 416) {
		/* Bytes past the limit, or a range that no longer fits the file
		 * (or that the server does not honour): nothing kept is of use,
		 * and the next attempt asks for the whole file. */
		cfa_part_discard(x);
		x->have = 0;
	}
	if (may_retry(x, rc, code)) {
		/* The same URL after the pause: run_transfers starts no attempt
		 * before not_before. */
		cfa_fetch_event(x, CFAPKG_FETCH_FAILED, why, backoff(x->no_progress), false);
		x->not_before = cfa_plat_now() + backoff(x->no_progress);
		return;
	}
	cfa_fetch_event(x, CFAPKG_FETCH_FAILED, why, 0, x->url + 1 < x->nurls);
	if (!next_url(x, why))
		give_up(x, why, code);
}
