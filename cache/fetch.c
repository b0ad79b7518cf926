/*
 * fetch.c - downloads into the content-addressed cache with libcurl's multi
 * interface: several at once, verified while the bytes arrive.
 *
 * States of one artifact (ROOT/downloads):
 *   absent -> NAME.part (+ NAME.part.meta: the validator of the bytes in
 *   it) while downloading -> <sha256> once the size and hash matched.
 * Invariants: a file named by a SHA-256 always has that hash (it is renamed
 * there only after verification, after fsync); a .part holds a prefix of
 * the artifact named by its .meta validator, so a resume asks for the rest
 * with If-Range and a changed file on the server restarts from zero.
 * Transfers: retries with backoff for timeouts, stalls, dropped
 * connections, 5xx and 429 (retry.c: the budget counts attempts that added
 * no bytes); other errors, and a body that does not match its pin, move to
 * the next URL (the mirror rules' rewrites come first: mirrors.c); a
 * transfer that exceeds its declared size (or the cap for unknown sizes) is
 * cut and discarded; a failed transfer that kept no bytes leaves no .part
 * behind.  file:// URLs are read by body.c, not by libcurl.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/fetch.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "platform/platform.h"


/* The .part could not be opened, written or flushed: why, and where (a
 * full disk says so: the bytes kept resume once there is room). */
static void write_failed(struct xfer *x, const char *what)
{
	cfa_item_fail(x, CFAPKG_E_IO, "%s: cannot %s %s: %s", x->item->label, what, x->part_path,
	          cfa_plat_strerror(x->io_err));
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	struct xfer *x = arg;

	(void)ultotal, (void)ulnow;
	/* The stall check, here rather than curl's LOW_SPEED options: those
	 * judge a speed averaged over the last seconds, so the cut came several
	 * seconds after the stated time.  curl calls this at least once a
	 * second even when nothing arrives. */
	/* A non-zero return makes libcurl abort the transfer with
	 * CURLE_ABORTED_BY_CALLBACK; x->stop tells retry.c it was a stall. */
	if (cfa_plat_now() - x->last_byte_at >= (double)x->opts->stall_secs) {
		x->stop = STOP_STALL;
		return 1;
	}
	/* Without a declared size, what the server announces for this
	 * transfer plus what was kept from before. */
	cfa_fetch_progress(x, false,
	                dltotal <= 0 ? 0
	                : x->have >= (uint64_t)dlnow ? x->have - (uint64_t)dlnow + (uint64_t)dltotal
	                                              : (uint64_t)dltotal);
	return 0;
}

/* libcurl speaks http(s) only, redirects included: a file:// URL is read
 * by body.c, where a rule or the command line named it.  A download to be
 * trusted on first use is redirected over https only (its own URL passed
 * cfa_url_secure: https, or http to this machine). */
static void set_protocols(struct xfer *x)
{
	bool tls = x->item->https_only;
	/* From 7.85.0 the text forms: the bit masks are deprecated there, and
	 * newer headers warn of them (warnings are errors). */
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(x->h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(x->h, CURLOPT_REDIR_PROTOCOLS_STR, tls ? "https" : "http,https");
#else
	curl_easy_setopt(x->h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(x->h, CURLOPT_REDIR_PROTOCOLS,
	                 tls ? (long)CURLPROTO_HTTPS : (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

static bool setup_handle(struct xfer *x)
{
	const struct cfapkg_fetch_opts *o = x->opts;
	char range[64];

	x->h = curl_easy_init();
	if (!x->h)
		return false;
	curl_easy_setopt(x->h, CURLOPT_URL, x->urls[x->url]);
	set_protocols(x);
	curl_easy_setopt(x->h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(x->h, CURLOPT_MAXREDIRS, 8L);
	/* Alone, few large reads and writes are fastest.  Beside others in
	 * one thread, each write of a large download can be held up while the
	 * kernel throttles dirty pages, and every transfer of the thread waits
	 * with it: small steps keep the others moving (2 x 1 GiB + 200 x 1 MiB
	 * took 1.5 times as long with the large ones). */
	curl_easy_setopt(x->h, CURLOPT_BUFFERSIZE, x->shares_thread ? 128L * 1024L : 512L * 1024L);
	/* An HTTP status of 400 or more ends the transfer as
	 * CURLE_HTTP_RETURNED_ERROR before its body: an error page never
	 * reaches the part. */
	curl_easy_setopt(x->h, CURLOPT_FAILONERROR, 1L);
	/* HTTP/2 where TLS can offer it, HTTP/1.1 for plain http. */
	curl_easy_setopt(x->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	/* Only the connect has a time limit: a long download has none, the
	 * stall check stands in. */
	curl_easy_setopt(x->h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, cfa_fetch_on_body);
	curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->h, CURLOPT_HEADERFUNCTION, cfa_fetch_on_header);
	curl_easy_setopt(x->h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(x->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(x->h, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(x->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(x->h, CURLOPT_ERRORBUFFER, x->curl_err);
	/* How run_transfers finds the transfer of a handle that ended. */
	curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->h, CURLOPT_USERAGENT, "cfapkg/" CFAPKG_VERSION);
	if (o->ca_bundle)
		curl_easy_setopt(x->h, CURLOPT_CAINFO, o->ca_bundle);
	if (o->proxy) /* else libcurl reads https_proxy and the others itself */
		curl_easy_setopt(x->h, CURLOPT_PROXY, o->proxy);
	if (o->no_proxy)
		curl_easy_setopt(x->h, CURLOPT_NOPROXY, o->no_proxy);
	if (x->have > 0) {
		/* The rest of the same file, or all of a changed one.  Both fit:
		 * a number, and a validator of at most 255 bytes. */
		char hdr[sizeof(x->validator) + 16];
		if (!cfa_snprintf(range, sizeof(range), "%llu-", (unsigned long long)x->have) ||
		    !cfa_snprintf(hdr, sizeof(hdr), "If-Range: %s", x->validator) ||
		    !(x->headers = curl_slist_append(NULL, hdr)))
			return false;
		/* "N-": from byte N to the end.  A server that ignores it
		 * answers 200, and the part starts over (cfa_fetch_start_body). */
		curl_easy_setopt(x->h, CURLOPT_RANGE, range);
		curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, x->headers);
	}
	return true;
}

/* Ends an attempt, whatever became of it; safe on one never started or already
 * closed (run_group closes them all at the end).  The part's bytes stay. */
static void close_attempt(struct xfer *x, CURLM *multi)
{
	if (x->h) {
		curl_multi_remove_handle(multi, x->h);
		curl_easy_cleanup(x->h);
		x->h = NULL;
	}
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	if (x->part) {
		fclose(x->part);
		x->part = NULL;
	}
	x->active = false;
}

static void on_done(struct xfer *x, CURLM *multi, CURLcode rc);
static void finish(struct xfer *x);

/* True when the attempt is in flight; a file:// URL is read to its end
 * here (a local disk holds up the other transfers only briefly). */
static bool start_attempt(struct xfer *x, CURLM *multi)
{
	bool is_file = strncmp(x->urls[x->url], "file:", 5) == 0;
	bool whole;

	x->item->attempts++;
	x->body_started = false;
	x->stop = STOP_NONE;
	x->curl_err[0] = '\0';
	x->new_validator[0] = '\0';
	x->range_start = -1;
	x->io_err = 0;
	/* Each attempt opens the part again and hashes it: what it holds may
	 * have changed since the last one (a 416 or a mismatch deletes it). */
	if (!cfa_part_open(x)) {
		close_attempt(x, multi);
		if (!x->io_err)
			x->io_err = ENOMEM;
		write_failed(x, "write");
		return false;
	}
	whole = x->have > 0 && x->item->size >= 0 && x->have == (uint64_t)x->item->size;
	if (!whole && !is_file &&
	    (!setup_handle(x) || curl_multi_add_handle(multi, x->h) != CURLM_OK)) {
		close_attempt(x, multi);
		if (!x->io_err)
			x->io_err = ENOMEM; /* the part opened: curl could not start */
		write_failed(x, "write");
		return false;
	}
	/* retry.c judges progress against have_at_start. */
	x->have_at_start = x->attempt_base = x->have;
	x->last_byte_at = cfa_plat_now();
	x->active = true;
	if (!whole)
		cfa_fetch_event(x, CFAPKG_FETCH_TRYING, NULL, 0, false);
	if (whole) {
		/* All the bytes were there already (a run stopped before the
		 * store folder they were waiting for was committed): checked as
		 * if they had just arrived, with no request. */
		finish(x);
		close_attempt(x, multi);
	} else if (!is_file) {
		return true;
	} else {
		on_done(x, multi, cfa_fetch_read_local(x));
	}
	if (x->done)
		cfa_fetch_progress(x, true, x->have);
	return false;
}

/* Archives unpacked while they download are not kept (nor made durable:
 * the store folder is) unless asked to, for a mirror or offline use. */
static bool keep_archive(const struct xfer *x)
{
	return !x->stream || x->opts->keep_archives;
}

/* A complete body: verify, then move into the cache under its hash, or,
 * when the unpack streamed it and it is not kept, leave it as the .part
 * until the store folder is committed. */
static void finish(struct xfer *x)
{
	struct cfapkg_fetch_item *it = x->item;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	bool keep = keep_archive(x);

	/* Written out to the system only: whether it is flushed to the disk
	 * is the cache's choice (cfa_fetch_publish). */
	if (!x->part || (fflush(x->part) != 0 && (x->io_err = cfa_plat_write_errno()) != 0) ||
	    EVP_DigestFinal_ex(x->md, md, &mdlen) != 1) {
		if (!x->io_err)
			x->io_err = x->part ? ENOMEM : EBADF;
		write_failed(x, "finish writing");
		return;
	}
	fclose(x->part);
	x->part = NULL;
	cfa_sha256_hex(md, x->hex);
	/* A body short of its declared size ended cleanly as far as libcurl
	 * knows; it is a mismatch like a wrong hash. */
	if ((it->size >= 0 && x->have != (uint64_t)it->size) ||
	    (x->want[0] && strcmp(x->hex, x->want) != 0)) {
		cfa_part_stream_drop(x);
		cfa_part_discard(x);
		cfa_fetch_mismatch(x, x->hex);
		return;
	}
	/* The unpack reading behind the download goes on to the end by itself:
	 * other transfers of this thread need not wait for it. */
	if (x->stream)
		cfa_stream_feed(x->stream, x->have, true);
	/* A deferred part takes no cache name now: it is removed once the store
	 * folder is committed, or published then (cfa_part_stream_end, or
	 * cfa_fetch_sets_end for a set's archive). */
	x->deferred = !keep;
	if (keep && !cfa_fetch_publish(x))
		return;
	if (x->done)
		return;
	memcpy(it->sha256_out, x->hex, sizeof(x->hex));
	it->size_out = x->have;
	it->err = CFAPKG_E_OK;
	x->done = true;
	cfa_fetch_event(x, CFAPKG_FETCH_VERIFIED, NULL, 0, false);
}

static void on_done(struct xfer *x, CURLM *multi, CURLcode rc)
{
	long code = 0;

	if (x->h) /* none for a file:// URL */
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	/* An empty body never called the body callback: it is started here, so
	 * that a part with old bytes is emptied. */
	if (rc == CURLE_OK && x->stop == STOP_NONE) {
		if (!x->body_started && !cfa_fetch_start_body(x)) {
			close_attempt(x, multi);
			write_failed(x, "write");
			return;
		}
		if (x->h)
			curl_multi_remove_handle(multi, x->h);
		finish(x);
		close_attempt(x, multi);
		return;
	}
	close_attempt(x, multi);
	cfa_part_stream_drop(x); /* before the part may be removed or restarted */
	if (x->stop == STOP_IO)
		write_failed(x, "write");
	else
		cfa_fetch_failed(x, rc, code);
	/* A .part with bytes is kept for a resume; an empty one is of no use. */
	if (x->done && x->item->err && x->have == 0)
		cfa_part_discard(x);
}

/* An artifact whose hash is known and whose file is in the cache. */
static bool cached(struct xfer *x)
{
	struct cfapkg_fetch_item *it = x->item;
	char *path = NULL;
	long long size;

	/* The cache is keyed by hash: without a pin there is nothing to look
	 * up.  A cache that cannot be read is no error: the file is downloaded
	 * again. */
	if (!x->want[0] || cfa_cache_find(x->ctx, x->want, it->size, &path) || !path) {
		cfapkg_ctx_clear_error(x->ctx);
		return false;
	}
	if ((size = cfa_plat_file_size(path)) < 0) {
		cfa_free(path);
		return false;
	}
	cfa_free(it->path);
	it->path = path;
	memcpy(it->sha256_out, x->want, 65);
	it->size_out = (uint64_t)size;
	it->from_cache = true;
	it->err = CFAPKG_E_OK;
	x->done = true;
	cfa_fetch_event(x, CFAPKG_FETCH_CACHED, NULL, 0, false);
	return true;
}

static enum cfapkg_err prepare(struct cfapkg_ctx *ctx, struct xfer *x, const char *dir,
                               struct cfapkg_mirrors **m)
{
	struct cfapkg_fetch_item *it = x->item;
	char boot[9];
	enum cfapkg_err e;

	x->ctx = ctx;
	/* Only whether the system names its boots matters here: the name itself
	 * is the cache's (cfa_cache_unsynced_name). */
	x->boot_id = cfa_plat_boot_id(boot);
	it->err = CFAPKG_E_OK;
	/* What an earlier call left in the item's outputs is freed first. */
	cfapkg_fetch_item_clear(it);
	it->attempts = 0;
	it->from_cache = false;
	it->unpacked = it->streamed = false;
	if (it->sha256 && !cfa_valid_sha256(it->sha256))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s: a SHA-256 is 64 hex digits", it->label);
	if (it->sha256) {
		size_t i;
		for (i = 0; i < 64; i++)
			x->want[i] = (char)(it->sha256[i] | 0x20); /* hex digits: lower case */
		x->want[64] = '\0';
	}
	if (cached(x))
		return CFAPKG_E_OK;
	if (it->nurls == 0) {
		cfa_item_fail(x, CFAPKG_E_NOTFOUND, "%s: no URL to download from", it->label);
		return CFAPKG_E_OK;
	}
	if (x->opts->offline) {
		cfa_item_fail(x, CFAPKG_E_OFFLINE, "%s is not in the download cache and --offline forbids "
		          "fetching %s", it->label, it->urls[0]);
		return CFAPKG_E_OK;
	}
	if ((e = cfa_fetch_urls(ctx, x, m)))
		return e;
	if (x->nurls == 0) { /* https_only left none */
		cfa_item_fail(x, CFAPKG_E_UNSUPPORTED, "%s: %s is not an https:// URL, and a first "
		          "download is trusted only over HTTPS (or http:// to this machine: 127.0.0.1, "
		          "[::1], localhost)", it->label, it->urls[0]);
		return CFAPKG_E_OK;
	}
	if (!cfa_part_name(x, dir))
		return cfa_nomem(ctx);
	x->md = EVP_MD_CTX_new();
	return x->md ? CFAPKG_E_OK : cfa_nomem(ctx);
}

static bool interrupted(const struct cfapkg_fetch_opts *o)
{
	return o->interrupt && *o->interrupt;
}

/* Every transfer not done stops where it is: its .part keeps what came
 * (one that kept nothing is removed), and it fails as interrupted. */
static void stop_all(struct xfer *xs, size_t n, CURLM *multi)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct xfer *x = &xs[i];
		if (x->done)
			continue;
		close_attempt(x, multi);
		cfa_part_stream_drop(x);
		cfa_item_fail(x, CFAPKG_E_INTERRUPTED, "%s: interrupted%s", x->item->label,
		          x->have ? "; the bytes received are kept: run the command again to resume"
		                  : "");
		if (x->have == 0 && x->part_path)
			cfa_part_discard(x);
	}
}

static void run_transfers(struct xfer *xs, size_t n, CURLM *multi, unsigned parallel)
{
	for (;;) {
		size_t i, active = 0, pending = 0, ended;
		CURLMsg *msg;
		int left, running = 0;

		if (interrupted(xs[0].opts)) {
			stop_all(xs, n, multi);
			return;
		}
		for (i = 0; i < n; i++) {
			active += xs[i].active;
			pending += !xs[i].done && !xs[i].active;
		}
		/* In xs order; a transfer in its backoff waits its turn. */
		for (i = 0; i < n && active < parallel; i++)
			if (!xs[i].done && !xs[i].active && cfa_plat_now() >= xs[i].not_before &&
			    start_attempt(&xs[i], multi))
				active++;
		if (active == 0 && pending == 0)
			return;
		if (active == 0) {
			cfa_plat_sleep_ms(50); /* every transfer waits for its backoff */
			continue;
		}
		/* Moves every transfer of the thread on as far as it can go
		 * without blocking; the callbacks run inside it. */
		curl_multi_perform(multi, &running);
		ended = 0;
		while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
			struct xfer *x = NULL;
			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			on_done(x, multi, msg->data.result);
			ended++;
			if (x->done)
				cfa_fetch_progress(x, true, x->have);
		}
		/* After a download ended the loop goes round at once: a freed slot
		 * takes the next download, and the last one ends the loop.  Waiting
		 * here would cost each wave of small files, and every run's end, the
		 * poll's timeout. */
		/* At most 100 ms, so that the interrupt flag and backoffs that
		 * ran out are looked at that often. */
		if (!ended)
			curl_multi_poll(multi, NULL, 0, 100, NULL);
	}
}

static void run_group(void *arg)
{
	struct fetch_group *g = arg;
	/* A multi handle per thread: libcurl's handles may not be used by two
	 * threads at once. */
	CURLM *multi = curl_multi_init();
	size_t i;

	for (i = 0; !multi && i < g->n; i++)
		if (!g->xs[i].done)
			cfa_item_fail(&g->xs[i], CFAPKG_E_NOMEM, "%s: out of memory", g->xs[i].item->label);
	if (!multi)
		return;
	run_transfers(g->xs, g->n, multi, g->parallel);
	for (i = 0; i < g->n; i++)
		close_attempt(&g->xs[i], multi);
	curl_multi_cleanup(multi);
}

static void run_groups(struct xfer *xs, size_t n, unsigned parallel)
{
	struct fetch_group groups[CFA_FETCH_MAX_PARALLEL];
	size_t ng = cfa_fetch_deal(xs, n, parallel, groups);

	cfa_plat_parallel(run_group, groups, sizeof(groups[0]), ng);
}

static bool keep_archives_asked(void)
{
	char buf[8];
	const char *v = cfa_plat_getenv("CFAPKG_KEEP_ARCHIVES", buf, sizeof(buf));

	/* Any value but empty or "0" asks; one too long for buf is taken as
	 * unset. */
	return v && *v && strcmp(v, "0") != 0;
}

static void fill_defaults(const struct cfapkg_fetch_opts *in, struct cfapkg_fetch_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (in)
		*o = *in;
	if (!o->parallel)
		o->parallel = 4;
	if (o->parallel > CFA_FETCH_MAX_PARALLEL)
		o->parallel = CFA_FETCH_MAX_PARALLEL;
	if (!o->attempts)
		o->attempts = 5;
	if (!o->stall_secs)
		o->stall_secs = 30;
	if (!o->max_unknown_size)
		o->max_unknown_size = CFAPKG_MAX_UNKNOWN_SIZE;
	/* The environment can only turn keeping on: a caller's choice of it
	 * stands. */
	if (!o->keep_archives)
		o->keep_archives = keep_archives_asked();
}

/* ROOT/downloads exists. */
static enum cfapkg_err downloads_ready(struct cfapkg_ctx *ctx, const char *dir)
{
	int rc;

	if ((rc = cfa_plat_mkdir_p(dir)) != 0)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create: %s (set --root or CFAPKG_ROOT)",
		                dir, cfa_plat_strerror(rc));
	return CFAPKG_E_OK;
}

/* An item's failure as the context's one line: its last URL's, and why
 * the URLs before it were given up (a mirror that served another file). */
static enum cfapkg_err fail_item(struct cfapkg_ctx *ctx, const struct cfapkg_fetch_item *it)
{
	const char *why = it->error ? it->error : cfapkg_strerror(it->err);
	char *tried, *c;
	enum cfapkg_err e;

	if (!it->tried || !(tried = cfa_strdup(it->tried)))
		return cfa_fail(ctx, it->err, "%s", why);
	/* One line for the context: the URLs' lines joined. */
	while ((c = strchr(tried, '\n')) != NULL)
		*c = ';';
	e = cfa_fail(ctx, it->err, "%s; tried before it: %s", why, tried);
	cfa_free(tried);
	return e;
}

/* What bounds a body: its declared size, else a cap the caller chose (the
 * user's --max-size), the recipe's own max_size, or the default, in that
 * order: a user who raises the cap means it for every download. */
static void set_cap(struct xfer *x, const struct cfapkg_fetch_opts *given)
{
	const struct cfapkg_fetch_item *it = x->item;

	x->cap_from = NULL;
	if (it->size >= 0) {
		x->cap = (uint64_t)it->size;
	} else if (given && given->max_unknown_size) {
		x->cap = given->max_unknown_size;
		x->cap_from = "the cap given (--max-size)";
	} else if (it->max_size) {
		x->cap = it->max_size;
		x->cap_from = "the recipe's max_size";
	} else {
		x->cap = x->opts->max_unknown_size;
		x->cap_from = "the default cap";
	}
}

enum cfapkg_err cfapkg_fetch(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *items, size_t n,
                             const struct cfapkg_fetch_opts *opts)
{
	struct cfapkg_fetch_opts o;
	struct cfapkg_mirrors *mirrors = NULL;
	struct xfer *xs;
	struct cfa_mutex *progress_lock = NULL;
	struct cfa_stream_set **sets = NULL;
	size_t nsets = 0;
	char *dir;
	enum cfapkg_err e;
	size_t i;
	bool ran, curl_up = false;

	fill_defaults(opts, &o);
	if (!(dir = cfa_root_path(ctx, CFA_DOWNLOADS, NULL)))
		return ctx->err_code;
	if ((e = downloads_ready(ctx, dir)) || !(xs = cfa_calloc(n ? n : 1, sizeof(*xs)))) {
		cfa_free(dir);
		return e ? e : cfa_nomem(ctx);
	}
	for (i = 0; i < n && !e; i++) {
		xs[i].item = &items[i];
		xs[i].opts = &o;
		set_cap(&xs[i], opts);
		e = prepare(ctx, &xs[i], dir, &mirrors);
	}
	if (!e && !(curl_up = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)) /* before any thread */
		e = cfa_nomem(ctx);
	if (!e && !(progress_lock = cfa_plat_mutex_new()))
		e = cfa_nomem(ctx);
	/* The transfers' threads start after this: one lock, shared by all,
	 * then only read. */
	for (i = 0; i < n && !e; i++)
		xs[i].progress_lock = progress_lock;
	if (!e && !(sets = cfa_calloc(n ? n : 1, sizeof(*sets))))
		e = cfa_nomem(ctx);
	if (!e)
		cfa_fetch_sets_open(ctx, xs, n, sets, &nsets);
	if ((ran = !e))
		run_groups(xs, n, o.parallel);
	/* Every stream ends (its archive published or dropped) before any
	 * item is unpacked: xs is in the threads' order, not the items'. */
	for (i = 0; i < n; i++)
		cfa_part_stream_end(&xs[i]);
	cfa_fetch_sets_end(xs, n, sets, nsets);
	cfa_free(sets);
	for (i = 0; i < n; i++) {
		/* What a failed download leaves for the next run to resume. */
		long long kept = items[i].err && xs[i].part_path ? cfa_plat_file_size(xs[i].part_path)
		                                                 : 0;
		items[i].kept = kept > 0 ? (uint64_t)kept : 0;
		EVP_MD_CTX_free(xs[i].md);
		cfa_free(xs[i].iobuf);
		cfa_free(xs[i].part_path);
		cfa_free(xs[i].meta_path);
		cfa_free(xs[i].urls);
		if (ran) /* else nothing was fetched, and items after a failure not prepared */
			cfa_unpack_fetched(ctx, &items[i], o.keep_archives);
		if (!e && items[i].err)
			e = fail_item(ctx, &items[i]);
	}
	cfa_plat_mutex_free(progress_lock);
	/* Each init is paired with one cleanup, whatever failed after it. */
	if (curl_up)
		curl_global_cleanup();
	cfapkg_mirrors_free(mirrors);
	cfa_free(xs);
	cfa_free(dir);
	return e;
}
