/*
 * hasher.c - SHA-256 of the files an unpack writes, on a thread of its own,
 * so that hashing overlaps inflating and writing.  Files are hashed in the
 * order they end; the k-th end_file is file k.  Where no thread can be
 * started the bytes are hashed in the caller's thread instead.
 */
#include <openssl/evp.h>
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "platform/platform.h"

#define CHUNKS 8
#define CHUNK_SIZE (512u * 1024u)

struct cfa_hasher {
	struct cfa_chunkq *q;      /* NULL: hashing inline */
	struct cfa_thread *thread;
	EVP_MD_CTX *md;            /* the thread's, or the caller's when inline */
	char (*hex)[65];           /* one digest per ended file */
	size_t nhex, cap;
	bool failed;
};

/* Closes the current file's digest and starts the next one. */
static void file_done(struct cfa_hasher *h)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned len = 0;

	if (cfa_grow((void **)&h->hex, &h->cap, h->nhex + 1, sizeof(*h->hex)) != 0 ||
	    EVP_DigestFinal_ex(h->md, digest, &len) != 1 ||
	    EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
		h->failed = true;
		return;
	}
	cfa_sha256_hex(digest, h->hex[h->nhex++]);
}

static void hasher_main(void *arg)
{
	struct cfa_hasher *h = arg;
	const void *data;
	size_t len;
	bool end;

	while (cfa_chunkq_next(h->q, &data, &len, &end)) {
		if (!h->failed && EVP_DigestUpdate(h->md, data, len) != 1)
			h->failed = true;
		if (end && !h->failed)
			file_done(h);
	}
}

struct cfa_hasher *cfa_hasher_new(void)
{
	struct cfa_hasher *h = cfa_calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	if (!(h->md = EVP_MD_CTX_new()) || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
		cfa_hasher_free(h);
		return NULL;
	}
	if (cfa_plat_cpu_count() > 1 && (h->q = cfa_chunkq_new(CHUNKS, CHUNK_SIZE)) &&
	    cfa_plat_thread_start(hasher_main, h, &h->thread) != 0) {
		cfa_chunkq_free(h->q);
		h->q = NULL;
	}
	return h;
}

bool cfa_hasher_add(struct cfa_hasher *h, const void *data, size_t n)
{
	if (h->q)
		return cfa_chunkq_write(h->q, data, n);
	return EVP_DigestUpdate(h->md, data, n) == 1;
}

bool cfa_hasher_end_file(struct cfa_hasher *h)
{
	if (h->q)
		return cfa_chunkq_end_unit(h->q);
	file_done(h);
	return !h->failed;
}

bool cfa_hasher_finish(struct cfa_hasher *h)
{
	if (h->q) {
		cfa_chunkq_close(h->q);
		cfa_plat_thread_join(h->thread);
		h->thread = NULL;
	}
	return !h->failed;
}

const char *cfa_hasher_hex(const struct cfa_hasher *h, size_t k)
{
	return k < h->nhex ? h->hex[k] : NULL;
}

void cfa_hasher_free(struct cfa_hasher *h)
{
	if (!h)
		return;
	if (h->thread)
		cfa_hasher_finish(h);
	cfa_chunkq_free(h->q);
	EVP_MD_CTX_free(h->md);
	cfa_free(h->hex);
	cfa_free(h);
}
