/*
 * part.c - a download in progress: NAME.part holds a prefix of the
 * artifact, NAME.part.meta the validator (ETag or Last-Modified) of the
 * response it came from, so that a resume asks for the rest of the same
 * bytes (If-Range) and anything else starts over.  And the unpack that
 * reads the part while it grows (stream.c; stream_set.c for one archive
 * of a set).
 */
#include <string.h>

#include "cache/fetch.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* The validator saved with a .part, "" when there is none (or one longer
 * than cfapkg keeps: not its own, and a cut one would name other bytes). */
static void read_meta(struct xfer *x)
{
	FILE *f = cfa_plat_fopen(x->meta_path, "rb");
	size_t n;

	x->validator[0] = '\0';
	if (!f)
		return;
	n = fread(x->validator, 1, sizeof(x->validator), f);
	/* A file that fills the whole buffer holds more than any validator
	 * kept: it counts as none, and the part starts over. */
	x->validator[n < sizeof(x->validator) ? n : 0] = '\0';
	fclose(f);
}

void cfa_part_forget_meta(struct xfer *x)
{
	cfa_plat_remove(x->meta_path);
	x->validator[0] = '\0';
}

void cfa_part_write_meta(struct xfer *x)
{
	FILE *f;

	if (!x->new_validator[0])
		return;
	/* Not flushed: a validator lost or torn in a crash only makes the
	 * download start over, and a flush per download costs a journal
	 * commit each (hundreds for many small files). */
	f = cfa_plat_fopen(x->meta_path, "wb");
	if (f) {
		fputs(x->new_validator, f);
		fclose(f);
	}
}

/* Few, large writes: stdio's default buffer would mean a system call per
 * few kilobytes.  Smaller ones for a download that shares its thread (see
 * setup_handle). */
static void set_buffer(struct xfer *x)
{
	size_t size = x->shares_thread ? (size_t)128 << 10 : (size_t)1 << 20;

	/* The buffer is made once and lives as long as the transfer: a restart
	 * closes the old stream before the new one takes it.  Out of memory,
	 * stdio keeps its own, smaller one. */
	if (x->part && (x->iobuf || (x->iobuf = cfa_malloc(size))))
		setvbuf(x->part, x->iobuf, _IOFBF, size);
}

bool cfa_part_restart(struct xfer *x)
{
	if (x->part)
		fclose(x->part);
	/* Truncated in place rather than removed: the name stays the one a
	 * later run looks for. */
	x->part = cfa_plat_fopen(x->part_path, "wb+");
	if (!x->part)
		x->io_err = cfa_plat_write_errno();
	set_buffer(x);
	x->have = 0;
	x->item->resumed_from = 0;
	return x->part && EVP_DigestInit_ex(x->md, EVP_sha256(), NULL) == 1;
}

bool cfa_part_open(struct xfer *x)
{
	unsigned char buf[1 << 14]; /* transfers run in several threads */
	size_t n;

	read_meta(x);
	if (!x->validator[0])
		return cfa_part_restart(x); /* without a validator a resume is not safe */
	/* Append mode: every write lands at the end whatever the read position,
	 * so the kept prefix is read back and hashed through the same stream. */
	x->part = cfa_plat_fopen(x->part_path, "ab+");
	if (!x->part)
		x->io_err = cfa_plat_write_errno();
	if (!x->part || EVP_DigestInit_ex(x->md, EVP_sha256(), NULL) != 1)
		return false;
	set_buffer(x);
	fseek(x->part, 0, SEEK_SET);
	x->have = 0;
	/* The digest's state is not saved between runs: the kept bytes are
	 * hashed again, so the final hash covers the whole file. */
	while ((n = fread(buf, 1, sizeof(buf), x->part)) > 0) {
		if (EVP_DigestUpdate(x->md, buf, n) != 1)
			return false;
		x->have += n;
	}
	/* A kept part that cannot be read back whole cannot be resumed: its
	 * hash would cover only what was read. */
	if (ferror(x->part))
		return cfa_part_restart(x);
	/* C requires a seek between reading and writing one stream. */
	fseek(x->part, 0, SEEK_END);
	/* Longer than the declared size: not a prefix of this artifact. */
	if (x->item->size >= 0 && x->have > (uint64_t)x->item->size)
		return cfa_part_restart(x);
	x->item->resumed_from = x->have;
	return true;
}

bool cfa_part_name(struct xfer *x, const char *dir)
{
	const struct cfapkg_fetch_item *it = x->item;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	char hex[65];

	/* A pinned part is named by its hash, so any URL of the artifact, and
	 * the next run, find it; an unpinned one by 16 hex digits of its first
	 * URL's hash. */
	if (x->want[0]) {
		x->part_path = cfa_aprintf("%s/%s.part", dir, x->want);
	} else {
		EVP_Digest(it->urls[0], strlen(it->urls[0]), md, &mdlen, EVP_sha256(), NULL);
		cfa_sha256_hex(md, hex);
		x->part_path = cfa_aprintf("%s/url-%.16s.part", dir, hex);
	}
	x->meta_path = x->part_path ? cfa_aprintf("%s.meta", x->part_path) : NULL;
	x->final_dir = dir;
	return x->meta_path != NULL;
}

void cfa_part_discard(struct xfer *x)
{
	/* Either file may be absent (a part that never got a validator): errors
	 * are of no interest here. */
	cfa_plat_remove(x->part_path);
	cfa_plat_remove(x->meta_path);
}

/* A body that starts at byte 0 of a pinned artifact may also be unpacked
 * as it arrives; a second body (a retry, a resume) ends that: the file is
 * unpacked after. */
void cfa_part_stream_start(struct xfer *x)
{
	const struct cfapkg_fetch_item *it = x->item;
	uint64_t size = x->cap;
	struct cfapkg_unpack_opts uo = {it->unpack_strip, 0, 0, true, NULL, false};
	char *label;

	/* A set's archive that cannot stream from its first byte gives the
	 * set up at once: the others stop, and it is unpacked from the cache. */
	if (x->set && (x->stream_tried || x->have > 0)) {
		cfa_stream_set_drop(x->set, x->member);
		return;
	}
	if (x->stream_tried || x->have > 0 || !it->unpack_format || !it->unpack_name || !it->sha256)
		return;
	/* One chance only: a stream that stopped cannot take up the bytes of a
	 * later body again. */
	x->stream_tried = true;
	x->streamed_upto = 0;
	/* Out of memory: no stream, and the file is unpacked afterwards. */
	if (!(label = cfa_unpack_label(it)))
		return;
	uo.label = label; /* copied by the unpacker */
	uo.replace = it->unpack_replace;
	if (x->set)
		x->stream = cfa_stream_set_start(x->set, x->member, it->unpack_format, it->unpack_strip,
		                                 label, size, x->part_path);
	else
		cfa_stream_start(x->ctx, it->unpack_format, it->unpack_name, &uo, size, x->part_path,
		                 &x->stream);
	cfa_free(label);
}

/* Every MiB the unpack may read what is written so far. */
bool cfa_part_stream_feed(struct xfer *x)
{
	/* A flush per MiB, not per write: the unpack only needs to keep up, and
	 * each flush is a system call. */
	if (x->have - x->streamed_upto < (1u << 20))
		return true;
	/* The unpack reads the file through its own handle (stream.c), so it
	 * may be told only of bytes stdio has handed to the system. */
	if (fflush(x->part) != 0) {
		x->io_err = cfa_plat_write_errno();
		return false;
	}
	x->streamed_upto = x->have;
	cfa_stream_feed(x->stream, x->have, false);
	return true;
}

void cfa_part_stream_drop(struct xfer *x)
{
	struct cfapkg_unpack_result ignored;

	if (x->stream && x->set)
		cfa_stream_set_drop(x->set, x->member); /* the set's stream, and the set with it */
	else if (x->stream)
		cfa_stream_finish(x->stream, false, NULL, false, &ignored); /* keeps nothing */
	x->stream = NULL;
}

/* After the transfers: an unpack that streamed a verified download is
 * committed into the store; any other is dropped. */
void cfa_part_stream_end(struct xfer *x)
{
	struct cfapkg_fetch_item *it = x->item;

	if (x->set) { /* committed with its set, or not (cfa_fetch_sets_end) */
		if (!x->done || it->err)
			cfa_part_stream_drop(x);
		return;
	}
	if (!x->stream || !x->done || it->err)
		cfa_part_stream_drop(x);
	/* A deferred archive never took its cache name: the commit is given
	 * its .part, and removes it (drop) before the store folder is synced. */
	else if (cfa_stream_finish(x->stream, true, x->deferred ? x->part_path : it->path,
	                           x->deferred, &it->unpack) == CFAPKG_E_OK)
		it->unpacked = it->streamed = true;
	x->stream = NULL;
	if (!x->deferred)
		return;
	/* The store folder is the lasting copy now: the archive goes.  When
	 * the stream gave up, the archive is made durable and unpacked from
	 * the cache as any other. */
	if (it->unpacked) {
		cfa_part_discard(x);
		cfa_free(it->path);
		it->path = NULL;
		x->deferred = false;
	} else {
		cfa_fetch_publish(x);
	}
}
