/*
 * arena.c - chunked bump allocation.  Large requests get a chunk of their
 * own so that one big string does not waste the rest of a chunk.
 */
#include "core/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "core/mem.h"

#define CHUNK_SIZE (64u * 1024u)

struct cfa_arena_chunk {
	struct cfa_arena_chunk *next;
	size_t size;
	alignas(max_align_t) unsigned char data[];
};

void cfa_arena_init(struct cfa_arena *a)
{
	memset(a, 0, sizeof(*a));
}

void cfa_arena_fini(struct cfa_arena *a)
{
	struct cfa_arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		cfa_free(c);
	}
	memset(a, 0, sizeof(*a));
}

static struct cfa_arena_chunk *chunk_new(size_t size)
{
	struct cfa_arena_chunk *c = cfa_malloc(sizeof(*c) + size);

	if (c)
		c->size = size;
	return c;
}

void *cfa_arena_alloc(struct cfa_arena *a, size_t n)
{
	const size_t align = alignof(max_align_t);
	struct cfa_arena_chunk *c;
	void *p;

	if (n > SIZE_MAX - align)
		return NULL;
	n = (n + align - 1) & ~(align - 1);
	if (n > CHUNK_SIZE / 4) {
		/* A private chunk, linked behind the head so the head stays open. */
		c = chunk_new(n);
		if (!c)
			return NULL;
		if (a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = NULL;
			a->head = c;
			a->used = n;
		}
		memset(c->data, 0, n);
		a->total += n;
		return c->data;
	}
	if (!a->head || a->used + n > a->head->size) {
		c = chunk_new(CHUNK_SIZE);
		if (!c)
			return NULL;
		c->next = a->head;
		a->head = c;
		a->used = 0;
	}
	p = a->head->data + a->used;
	a->used += n;
	a->total += n;
	memset(p, 0, n);
	return p;
}

void cfa_arena_adopt(struct cfa_arena *dst, struct cfa_arena *src)
{
	struct cfa_arena_chunk *last = src->head;

	if (!last)
		return;
	while (last->next)
		last = last->next;
	if (dst->head) {
		/* Behind dst's head, which stays the chunk being filled. */
		last->next = dst->head->next;
		dst->head->next = src->head;
	} else {
		dst->head = src->head;
		dst->used = src->used;
	}
	dst->total += src->total;
	cfa_arena_init(src);
}

char *cfa_arena_strndup(struct cfa_arena *a, const char *s, size_t n)
{
	char *d = cfa_arena_alloc(a, n + 1);

	if (d)
		memcpy(d, s, n);
	return d;
}

char *cfa_arena_strdup(struct cfa_arena *a, const char *s)
{
	return cfa_arena_strndup(a, s, strlen(s));
}
