/*
 * chunkq.c - bytes handed from one thread to another in fixed chunks.
 *
 * A ring of n chunks.  The producer copies into the chunk after the last
 * published one and publishes it when full (or on flush/close); the
 * consumer reads published chunks in place and returns each by asking for
 * the next.  One copy, no system calls while both keep pace, and memory
 * bounded by n chunks: a producer ahead by n waits.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "platform/platform.h"

struct chunk {
	unsigned char *data;
	size_t len;
	bool end;        /* the producer's mark: the last chunk of a unit */
};

struct cfa_chunkq {
	struct cfa_mutex *m;
	struct cfa_cond *changed;
	struct chunk *ring;
	size_t n, size;
	size_t head;     /* the oldest published chunk (the consumer's) */
	size_t count;    /* published, not yet returned by the consumer */
	bool filling;    /* the producer holds chunk (head + count) % n */
	bool holding;    /* the consumer holds chunk head */
	bool closed, abandoned;
};

void cfa_chunkq_free(struct cfa_chunkq *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; q->ring && i < q->n; i++)
		cfa_free(q->ring[i].data);
	cfa_free(q->ring);
	cfa_plat_cond_free(q->changed);
	cfa_plat_mutex_free(q->m);
	cfa_free(q);
}

struct cfa_chunkq *cfa_chunkq_new(size_t n, size_t size)
{
	struct cfa_chunkq *q = cfa_calloc(1, sizeof(*q));
	size_t i;

	if (!q)
		return NULL;
	q->n = n;
	q->size = size;
	q->m = cfa_plat_mutex_new();
	q->changed = cfa_plat_cond_new();
	q->ring = cfa_calloc(n, sizeof(*q->ring));
	if (!q->m || !q->changed || !q->ring)
		goto fail;
	for (i = 0; i < n; i++)
		if (!(q->ring[i].data = cfa_malloc(size)))
			goto fail;
	return q;
fail:
	cfa_chunkq_free(q);
	return NULL;
}

static struct chunk *producing(struct cfa_chunkq *q)
{
	return &q->ring[(q->head + q->count) % q->n];
}

/* Under the lock: waits for a free chunk to fill; false when the consumer
 * went away. */
static bool claim(struct cfa_chunkq *q)
{
	while (!q->abandoned && q->count == q->n)
		cfa_plat_cond_wait(q->changed, q->m);
	if (q->abandoned)
		return false;
	if (!q->filling) {
		producing(q)->len = 0;
		producing(q)->end = false;
		q->filling = true;
	}
	return true;
}

/* Under the lock. */
static void publish(struct cfa_chunkq *q, bool end)
{
	producing(q)->end = end;
	q->filling = false;
	q->count++;
	cfa_plat_cond_broadcast(q->changed);
}

bool cfa_chunkq_write(struct cfa_chunkq *q, const void *data, size_t n)
{
	const unsigned char *p = data;
	bool ok = true;

	cfa_plat_mutex_lock(q->m);
	while (n && (ok = claim(q))) {
		struct chunk *c = producing(q);
		size_t take = q->size - c->len < n ? q->size - c->len : n;

		/* The chunk being filled is the producer's alone: copy unlocked. */
		cfa_plat_mutex_unlock(q->m);
		memcpy(c->data + c->len, p, take);
		cfa_plat_mutex_lock(q->m);
		c->len += take;
		p += take;
		n -= take;
		if (c->len == q->size)
			publish(q, false);
	}
	cfa_plat_mutex_unlock(q->m);
	return ok;
}

bool cfa_chunkq_end_unit(struct cfa_chunkq *q)
{
	bool ok;

	cfa_plat_mutex_lock(q->m);
	if ((ok = claim(q)))
		publish(q, true);
	cfa_plat_mutex_unlock(q->m);
	return ok;
}

void cfa_chunkq_close(struct cfa_chunkq *q)
{
	cfa_plat_mutex_lock(q->m);
	if (q->filling && producing(q)->len)
		publish(q, false);
	q->filling = false;
	q->closed = true;
	cfa_plat_cond_broadcast(q->changed);
	cfa_plat_mutex_unlock(q->m);
}

/* Under the lock: gives back the chunk the consumer held. */
static void give_back(struct cfa_chunkq *q)
{
	if (!q->holding)
		return;
	q->holding = false;
	q->head = (q->head + 1) % q->n;
	q->count--;
	cfa_plat_cond_broadcast(q->changed);
}

bool cfa_chunkq_next(struct cfa_chunkq *q, const void **data, size_t *len, bool *end)
{
	bool got;

	cfa_plat_mutex_lock(q->m);
	give_back(q);
	while (!q->count && !q->closed)
		cfa_plat_cond_wait(q->changed, q->m);
	if ((got = q->count > 0)) {
		q->holding = true;
		*data = q->ring[q->head].data;
		*len = q->ring[q->head].len;
		*end = q->ring[q->head].end;
	}
	cfa_plat_mutex_unlock(q->m);
	return got;
}

void cfa_chunkq_abandon(struct cfa_chunkq *q)
{
	cfa_plat_mutex_lock(q->m);
	give_back(q);
	q->abandoned = true;
	cfa_plat_cond_broadcast(q->changed);
	cfa_plat_mutex_unlock(q->m);
}
