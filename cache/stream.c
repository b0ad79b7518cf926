/*
 * stream.c - unpacking while downloading.  The download goes on writing its
 * .part file; a thread reads the file behind it, never past what the
 * writer has said is there, and unpacks into a staging folder.  The writer
 * never waits for the unpack (a slow stretch, such as thousands of small
 * files, reads from the page cache later), and memory stays one buffer.
 * Nothing reaches the store before the download's hash and size are
 * verified: finish(keep) commits the staging folder only then.  Any
 * trouble (a format that cannot be read front to back, a restarted
 * transfer) makes the stream give up quietly; the caller then unpacks the
 * verified file as before.  A stream may also be one archive of a set
 * (stream_set.c): it has no thread of its own then but is run by one of
 * the set's few workers, and its tree joins the set's, not the store.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* One read of the .part at most, and the stream's only buffer. */
#define READ_SIZE (1u << 20)

struct cfa_stream {
	struct cfapkg_ctx *ctx;     /* the thread's own: errors stay apart */
	struct unpacker *u;
	struct cfa_thread *thread;
	struct cfa_mutex *m;
	struct cfa_cond *more;
	FILE *in;                   /* the .part, read behind the writer */
	unsigned char *buf;
	uint64_t readable, pos;     /* bytes the writer has flushed; bytes read */
	bool ended, cancelled;      /* no more bytes will come; stop now */
	char format[16];
	unsigned strip;
	enum cfapkg_err result;     /* the thread's outcome */
};

/* libarchive's source: the next bytes of the .part once they are there. */
static la_ssize_t read_part(struct archive *a, void *arg, const void **out)
{
	struct cfa_stream *s = arg;
	uint64_t avail;
	size_t n;
	bool cancelled;

	(void)a;
	cfa_plat_mutex_lock(s->m);
	/* The lock guards readable, ended and cancelled only: pos and the file
	 * are the reading thread's alone, so the read itself is done unlocked. */
	while (s->pos == s->readable && !s->ended && !s->cancelled)
		cfa_plat_cond_wait(s->more, s->m);
	cancelled = s->cancelled;
	avail = s->readable - s->pos;
	cfa_plat_mutex_unlock(s->m);
	if (cancelled)
		return -1;
	/* Ended and all read: libarchive's end of input. */
	if (!avail)
		return 0;
	n = fread(s->buf, 1, avail < READ_SIZE ? (size_t)avail : READ_SIZE, s->in);
	if (!n)
		return -1; /* the file is shorter than the writer said: it was replaced */
	s->pos += n;
	*out = s->buf;
	return (la_ssize_t)n;
}

/* The unpack, in the stream's thread or in a worker of its set. */
static void stream_body(struct cfa_stream *s)
{
	/* The buffer only while unpacking: a set's archives wait their turn. */
	if (!(s->buf = cfa_malloc(READ_SIZE)))
		s->result = CFAPKG_E_NOMEM;
	else
		s->result = cfa_unpack_extract(s->u, read_part, s, NULL, s->format, s->strip);
	/* Closed as soon as the unpack ends: a set's archive keeps its stream
	 * until the set is sealed, and its .part need not stay open that long. */
	fclose(s->in);
	s->in = NULL;
	CFA_FREE(s->buf);
}

static void stream_main(void *arg)
{
	stream_body(arg);
}

/* Frees a stream whose thread has ended or never started; the staging folder
 * goes with the unpacker (cfa_unpack_close). */
static void stream_free(struct cfa_stream *s)
{
	if (s->in)
		fclose(s->in);
	cfa_unpack_close(s->u);
	cfa_plat_cond_free(s->more);
	cfa_plat_mutex_free(s->m);
	cfapkg_ctx_free(s->ctx);
	cfa_free(s->buf);
	cfa_free(s);
}

/* A stream of format over the file part, its unpacker not yet open. */
static struct cfa_stream *stream_new(struct cfapkg_ctx *ctx, const char *format,
                                     const struct cfapkg_unpack_opts *opts, const char *part)
{
	struct cfa_stream *s;

	if (!cfa_unpack_streamable(format) || strlen(format) >= sizeof(s->format) ||
	    !(s = cfa_calloc(1, sizeof(*s))))
		return NULL;
	memcpy(s->format, format, strlen(format) + 1); /* fits: checked above */
	s->strip = opts->strip;
	/* A context of its own, so that the thread's errors do not race the
	 * caller's.  The part is opened so as to let the writer write, rename
	 * and remove it meanwhile (Windows needs that said). */
	if (!(s->ctx = cfapkg_ctx_new()) || cfapkg_ctx_set_root(s->ctx, cfapkg_ctx_root(ctx)) ||
	    !(s->m = cfa_plat_mutex_new()) || !(s->more = cfa_plat_cond_new()) ||
	    !(s->in = cfa_plat_fopen_shared(part))) {
		stream_free(s);
		return NULL;
	}
	setvbuf(s->in, NULL, _IONBF, 0); /* reads go straight to the file */
	return s;
}

static enum cfapkg_err stream_run(struct cfa_stream *s, struct cfa_stream **out)
{
	/* No thread, no stream: the download is unpacked after it, as one that
	 * could not stream. */
	if (cfa_plat_thread_start(stream_main, s, &s->thread) != 0) {
		stream_free(s);
		return CFAPKG_E_UNSUPPORTED;
	}
	*out = s;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_stream_start(struct cfapkg_ctx *ctx, const char *format, const char *name,
                                 const struct cfapkg_unpack_opts *opts, uint64_t size,
                                 const char *part, struct cfa_stream **out)
{
	struct cfapkg_unpack_opts uo = *opts;
	struct cfa_stream *s = stream_new(ctx, format, opts, part);
	const char *label = opts->label ? opts->label : "the download";
	bool existed = false;

	*out = NULL;
	uo.hash_checked = true; /* committed only once its hash is verified */
	if (!s)
		return CFAPKG_E_UNSUPPORTED;
	/* A store folder that exists already needs no stream: the caller finds
	 * it when unpacking the file. */
	if (cfa_unpack_open(s->ctx, name, label, size, &uo, &s->u, &existed) || existed) {
		stream_free(s);
		return CFAPKG_E_UNSUPPORTED;
	}
	return stream_run(s, out);
}

struct cfa_stream *cfa_stream_member_new(struct cfapkg_ctx *ctx, struct unpacker *into,
                                         const char *format,
                                         const struct cfapkg_unpack_opts *opts, uint64_t size,
                                         const char *part)
{
	struct cfapkg_unpack_opts uo = *opts;
	struct cfa_stream *s = stream_new(ctx, format, opts, part);

	uo.hash_checked = true; /* joined only once its hash is verified */
	if (!s)
		return NULL;
	s->result = CFAPKG_E_UNSUPPORTED; /* until it runs */
	if (cfa_unpack_open_member(s->ctx, into, opts->label ? opts->label : part, size, &uo,
	                           &s->u)) {
		stream_free(s);
		return NULL;
	}
	return s;
}

void cfa_stream_member_run(struct cfa_stream *s)
{
	stream_body(s);
}

enum cfapkg_err cfa_stream_member_end(struct cfa_stream *s, bool keep)
{
	enum cfapkg_err e = s->result;

	if (!e && keep)
		e = cfa_unpack_join(s->u);
	stream_free(s);
	return e;
}

void cfa_stream_feed(struct cfa_stream *s, uint64_t readable, bool complete)
{
	cfa_plat_mutex_lock(s->m);
	s->readable = readable;
	/* readable only grows: the writer flushed these bytes before saying so
	 * (cfa_part_stream_feed). */
	s->ended = complete;
	cfa_plat_cond_broadcast(s->more);
	cfa_plat_mutex_unlock(s->m);
}

void cfa_stream_cancel(struct cfa_stream *s)
{
	cfa_plat_mutex_lock(s->m);
	/* ended too: a reader waiting for bytes wakes and sees the cancel. */
	s->cancelled = true;
	s->ended = true;
	cfa_plat_cond_broadcast(s->more);
	cfa_plat_mutex_unlock(s->m);
}

/* Waits for the thread; cancel makes it stop at its next read. */
static void stream_join(struct cfa_stream *s, bool cancel)
{
	if (!s->thread)
		return;
	cfa_plat_mutex_lock(s->m);
	s->cancelled = cancel;
	s->ended = true;
	cfa_plat_cond_broadcast(s->more);
	cfa_plat_mutex_unlock(s->m);
	cfa_plat_thread_join(s->thread);
	s->thread = NULL;
}

enum cfapkg_err cfa_stream_finish(struct cfa_stream *s, bool keep, const char *file,
                                  bool drop, struct cfapkg_unpack_result *out)
{
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	stream_join(s, !keep);
	e = s->result;
	/* A failed or cancelled unpack commits nothing; when not kept, its
	 * outcome is of no interest to the caller. */
	if (!e && keep)
		e = cfa_unpack_commit(s->u, file, drop, out);
	stream_free(s);
	return keep ? e : CFAPKG_E_OK;
}

char *cfa_unpack_label(const struct cfapkg_fetch_item *it)
{
	const char *url = it->nurls ? it->urls[0] : NULL;

	/* The package and where it comes from, not the cache's file name: a
	 * user can act on "zluda 7 from https://...", not on a hash. */
	if (it->label && url)
		return cfa_aprintf("%s from %s", it->label, url);
	return cfa_strdup(it->label ? it->label : url ? url : it->path);
}

/* What did not stream is unpacked from the verified file. */
void cfa_unpack_fetched(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *it, bool keep)
{
	/* The store trusts the hash only of a pinned download: it was verified
	 * against the pin. */
	struct cfapkg_unpack_opts uo = {it->unpack_strip, 0, 0, it->sha256 != NULL, NULL, false};
	char *label;
	enum cfapkg_err e;

	if (it->err || it->unpacked || it->unpack_set || !it->unpack_format || !it->unpack_name)
		return; /* a set's archives are cfapkg_unpack_set's */
	if (!(label = cfa_unpack_label(it))) {
		it->err = CFAPKG_E_NOMEM;
		cfa_item_error(it, "%s: out of memory", it->label ? it->label : "a download");
		return;
	}
	uo.label = label;
	uo.replace = it->unpack_replace;
	e = cfapkg_unpack(ctx, it->path, it->unpack_format, it->unpack_name, &uo, &it->unpack);
	cfa_free(label);
	if (e) {
		it->err = e;
		cfa_item_error(it, "%s", cfapkg_ctx_error(ctx));
		cfapkg_ctx_clear_error(ctx);
	} else {
		it->unpacked = true;
		/* A resumed download (a kill cut the first one short) is not
		 * streamed; kept only where a streamed one would have been. */
		if (!keep && !it->from_cache && !it->unpack.existed && it->sha256 &&
		    cfa_unpack_streamable(it->unpack_format) && cfa_plat_remove(it->path) == 0) {
			cfa_free(it->path);
			it->path = NULL;
		}
	}
}
