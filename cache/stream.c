/*
 * stream.c - unpacking while downloading.  The download's body bytes go
 * into a queue of chunks as they arrive; a thread unpacks from it into a
 * staging folder.  Nothing reaches the store before the download's hash
 * and size are verified: finish(keep) commits the staging folder only
 * then.  Any trouble (a format that cannot be read front to back, a
 * restarted transfer) makes the stream give up quietly; the caller then
 * unpacks the verified file as before.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define CHUNKS 8
#define CHUNK_SIZE (1u << 20)

struct cfa_stream {
	struct cfapkg_ctx *ctx;     /* the thread's own: errors stay apart */
	struct unpacker *u;
	struct cfa_thread *thread;
	struct cfa_chunkq *q;       /* the body bytes, from the download */
	char format[16];
	unsigned strip;
	enum cfapkg_err result;     /* the thread's outcome */
	bool failed;                /* the writer saw the reader give up */
};

/* Unpacks from the queue.  After success it reads on to the end (a tar
 * archive ends before its padding, a zip's entries before its central
 * directory); after a failure it lets the download go on without it. */
static void stream_main(void *arg)
{
	struct cfa_stream *s = arg;
	const void *data;
	size_t len;
	bool end;

	s->result = cfa_unpack_extract(s->u, s->q, s->format, s->strip);
	if (s->result)
		cfa_chunkq_abandon(s->q);
	else
		while (cfa_chunkq_next(s->q, &data, &len, &end))
			;
}

static void stream_free(struct cfa_stream *s)
{
	cfa_unpack_close(s->u);
	cfa_chunkq_free(s->q);
	cfapkg_ctx_free(s->ctx);
	cfa_free(s);
}

enum cfapkg_err cfa_stream_start(struct cfapkg_ctx *ctx, const char *format, const char *name,
                                 unsigned strip, uint64_t size, struct cfa_stream **out)
{
	struct cfapkg_unpack_opts uo = {strip, 0, 0, true}; /* committed only once verified */
	struct cfa_stream *s;
	bool existed = false;

	*out = NULL;
	if (!cfa_unpack_streamable(format) || !(s = cfa_calloc(1, sizeof(*s))))
		return CFAPKG_E_UNSUPPORTED;
	cfa_snprintf(s->format, sizeof(s->format), "%s", format);
	s->strip = strip;
	if (!(s->ctx = cfapkg_ctx_new()) || cfapkg_ctx_set_root(s->ctx, cfapkg_ctx_root(ctx)) ||
	    cfa_unpack_open(s->ctx, name, "the download", size, &uo, &s->u, &existed) || existed ||
	    !(s->q = cfa_chunkq_new(CHUNKS, CHUNK_SIZE)) ||
	    cfa_plat_thread_start(stream_main, s, &s->thread) != 0) {
		stream_free(s);
		return CFAPKG_E_UNSUPPORTED;
	}
	*out = s;
	return CFAPKG_E_OK;
}

bool cfa_stream_feed(struct cfa_stream *s, const void *data, size_t n)
{
	if (!s->failed && !cfa_chunkq_write(s->q, data, n))
		s->failed = true;
	return !s->failed;
}

enum cfapkg_err cfa_stream_finish(struct cfa_stream *s, bool keep,
                                  struct cfapkg_unpack_result *out)
{
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	cfa_chunkq_close(s->q); /* the end of the archive for the thread */
	cfa_plat_thread_join(s->thread);
	e = s->result ? s->result : s->failed ? CFAPKG_E_IO : CFAPKG_E_OK;
	if (!e && keep)
		e = cfa_unpack_commit(s->u, out);
	stream_free(s);
	return keep ? e : CFAPKG_E_OK;
}

/* What did not stream is unpacked from the verified file. */
void cfa_unpack_fetched(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *it)
{
	struct cfapkg_unpack_opts uo = {it->unpack_strip, 0, 0, it->sha256 != NULL};
	enum cfapkg_err e;

	if (it->err || it->unpacked || !it->unpack_format || !it->unpack_name)
		return;
	e = cfapkg_unpack(ctx, it->path, it->unpack_format, it->unpack_name, &uo, &it->unpack);
	if (e) {
		it->err = e;
		cfa_snprintf(it->error, sizeof(it->error), "%s", cfapkg_ctx_error(ctx));
		cfapkg_ctx_clear_error(ctx);
	} else {
		it->unpacked = true;
	}
}
