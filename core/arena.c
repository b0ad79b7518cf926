/*
 * arena.c - chunked bump allocation.  Large requests get a chunk of their
 * own so that one big string does not waste the rest of a chunk.
 */
#include "core/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "core/mem.h"

/* Requests above a quarter of this get their own chunk (see cfa_arena_alloc),
 * so a chunk never loses more than a quarter of itself to a request that did
 * not fit. */
#define CHUNK_SIZE (64u * 1024u)

struct cfa_arena_chunk {
	struct cfa_arena_chunk *next;
	size_t size;
	/* Aligned like malloc's memory, so every offset rounded to
	 * max_align_t is fit for any type. */
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

/* A chunk with room for size bytes after its header; the caller links it
 * in. */
static struct cfa_arena_chunk *chunk_new(size_t size)
{
	struct cfa_arena_chunk *c = cfa_malloc(sizeof(*c) + size);

	if (c)
		c->size = size;
	return c;
}

/* n bytes aligned for any type, their contents left as they were. */
static void *take(struct cfa_arena *a, size_t n)
{
	const size_t align = alignof(max_align_t);
	struct cfa_arena_chunk *c;
	void *p;

	/* Rounding up below must not wrap to a small size. */
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
		a->total += n;
		return c->data;
	}
	/* The rest of the old head is abandoned; it is at most a quarter
	 * chunk's worth. */
	if (!a->head || a->used + n > a->head->size) {
		c = chunk_new(CHUNK_SIZE);
		if (!c)
			return NULL;
		c->next = a->head;
		a->head = c;
		a->used = 0;
	}
	p = a->head->data + a->used;
	/* n was rounded up, so the next allocation starts aligned as well. */
	a->used += n;
	a->total += n;
	return p;
}

void *cfa_arena_alloc(struct cfa_arena *a, size_t n)
{
	void *p = take(a, n);

	/* Zeroed: callers rely on it (cfa_arena_strndup's terminator, structs
	 * filled member by member). */
	if (p)
		memset(p, 0, n);
	return p;
}

void *cfa_arena_alloc_raw(struct cfa_arena *a, size_t n)
{
	return take(a, n);
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
	/* src's chunks now belong to dst: src is left empty and can be
	 * finished or reused. */
	cfa_arena_init(src);
}

char *cfa_arena_strndup(struct cfa_arena *a, const char *s, size_t n)
{
	char *d = cfa_arena_alloc(a, n + 1);

	if (d)
		/* No terminator to write: arena memory comes zeroed. */
		memcpy(d, s, n);
	return d;
}

char *cfa_arena_strdup(struct cfa_arena *a, const char *s)
{
	return cfa_arena_strndup(a, s, strlen(s));
}
