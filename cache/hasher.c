/*
 * hasher.c - the SHA-256 of each file an unpack writes, on a thread of its
 * own: the unpack names each file once it is closed and goes on; the
 * thread reads it back while its pages are still in memory.  The unpack
 * never waits for hashing, and hashing costs it nothing.  Where no thread
 * can be started each file is hashed when it is named.  Several unpacks
 * (the archives of a set, each on its thread) may share one hasher.
 */
#include <openssl/evp.h>
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "platform/platform.h"

/* One buffer per hasher (h->buf). */
#define READ_SIZE (1u << 20)

struct cfa_hasher {
	struct cfa_mutex *m;
	struct cfa_cond *changed;
	struct cfa_thread *thread;  /* NULL: hashing in the caller's thread */
	char **paths;               /* files named, in order; NULL once hashed */
	size_t npaths, paths_cap;
	char (*hex)[65];            /* digests, in the same order */
	size_t nhex, hex_cap;
	bool closed, failed;
	EVP_MD_CTX *md;
	unsigned char *buf;
};

/* Hashes one file into the next digest; false when it cannot be read.
 * Read, never mapped: the archives of a set are unpacked at once, and one
 * may rewrite a path (the duplicate the set is then refused for) while
 * this reads it; a map past a file cut short would kill the process
 * (SIGBUS), where a read only ends early. */
static bool hash_file(struct cfa_hasher *h, const char *path)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	FILE *f;
	size_t n;
	bool ok = true;

	/* The digest's slot is made before the file is read: a file hashed
	 * always gets its place. */
	if (cfa_grow((void **)&h->hex, &h->hex_cap, h->nhex + 1, sizeof(*h->hex)) != 0 ||
	    EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1)
		return false;
	if (!(f = cfa_plat_fopen(path, "rb")))
		return false;
	/* Unbuffered: the reads are a MiB each already, and stdio's buffer
	 * would only add a copy. */
	setvbuf(f, NULL, _IONBF, 0);
	while (ok && (n = fread(h->buf, 1, READ_SIZE, f)) > 0)
		ok = EVP_DigestUpdate(h->md, h->buf, n) == 1;
	ok = ok && !ferror(f);
	fclose(f);
	if (!ok || EVP_DigestFinal_ex(h->md, digest, &len) != 1)
		return false;
	cfa_sha256_hex(digest, h->hex[h->nhex++]);
	return true;
}

static void hasher_main(void *arg)
{
	struct cfa_hasher *h = arg;
	size_t next = 0;
	char *path;

	for (;;) {
		cfa_plat_mutex_lock(h->m);
		while (next == h->npaths && !h->closed)
			cfa_plat_cond_wait(h->changed, h->m);
		path = next < h->npaths ? h->paths[next] : NULL;
		/* Taken out under the lock: another thread's cfa_grow may move
		 * the array meanwhile. */
		if (path)
			h->paths[next++] = NULL;
		cfa_plat_mutex_unlock(h->m);
		if (!path)
			return;
		/* Outside the lock: h->hex, nhex and failed are this thread's
		 * alone until cfa_hasher_finish has joined it.  After a failure
		 * the rest are only freed: the unpack fails as a whole. */
		if (!h->failed && !hash_file(h, path))
			h->failed = true;
		cfa_free(path);
	}
}

struct cfa_hasher *cfa_hasher_new(void)
{
	struct cfa_hasher *h = cfa_calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	if (!(h->md = EVP_MD_CTX_new()) || !(h->buf = cfa_malloc(READ_SIZE)) ||
	    !(h->m = cfa_plat_mutex_new()) || !(h->changed = cfa_plat_cond_new())) {
		cfa_hasher_free(h);
		return NULL;
	}
	/* On one processor each file is hashed as it is named, as it is where
	 * no thread can be started: a failed start is no error. */
	if (cfa_plat_cpu_count() > 1 && cfa_plat_thread_start(hasher_main, h, &h->thread) != 0)
		h->thread = NULL;
	return h;
}

bool cfa_hasher_add_file(struct cfa_hasher *h, const char *path, size_t *k)
{
	char *copy;
	bool ok;

	/* Under the lock in both ways: the unpacks of a set's archives name
	 * their files to one hasher from several threads. */
	if (!h->thread) {
		cfa_plat_mutex_lock(h->m);
		*k = h->nhex;
		if (!h->failed && !hash_file(h, path))
			h->failed = true;
		ok = !h->failed;
		cfa_plat_mutex_unlock(h->m);
		return ok;
	}
	if (!(copy = cfa_strdup(path)))
		return false;
	cfa_plat_mutex_lock(h->m);
	ok = cfa_grow((void **)&h->paths, &h->paths_cap, h->npaths + 1, sizeof(*h->paths)) == 0;
	if (ok) {
		/* The file's place in the order: the thread hashes in that
		 * order, so its digest will be h->hex[k]. */
		*k = h->npaths;
		h->paths[h->npaths++] = copy;
		cfa_plat_cond_broadcast(h->changed);
	}
	cfa_plat_mutex_unlock(h->m);
	if (!ok)
		cfa_free(copy);
	return ok;
}

bool cfa_hasher_finish(struct cfa_hasher *h)
{
	if (!h)
		return false;
	if (h->thread) {
		cfa_plat_mutex_lock(h->m);
		/* The thread hashes what is queued, then returns. */
		h->closed = true;
		cfa_plat_cond_broadcast(h->changed);
		cfa_plat_mutex_unlock(h->m);
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
	size_t i;

	if (!h)
		return;
	cfa_hasher_finish(h);
	/* The thread set what it took to NULL; only paths never hashed are
	 * left. */
	for (i = 0; i < h->npaths; i++)
		cfa_free(h->paths[i]);
	cfa_free(h->paths);
	cfa_free(h->hex);
	cfa_plat_cond_free(h->changed);
	cfa_plat_mutex_free(h->m);
	EVP_MD_CTX_free(h->md);
	cfa_free(h->buf);
	cfa_free(h);
}
