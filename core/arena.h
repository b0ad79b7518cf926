/*
 * arena.h - a bump allocator for data that lives as long as its owner:
 * recipes, versions and strings loaded for one context.  Freed at once.
 */
#ifndef CFA_ARENA_H
#define CFA_ARENA_H

#include <stddef.h>

struct cfa_arena_chunk;
struct cfa_arena {
	struct cfa_arena_chunk *head;
	size_t used;   /* bytes used in head */
	size_t total;  /* bytes handed out, for reports */
};

void cfa_arena_init(struct cfa_arena *a);
void cfa_arena_fini(struct cfa_arena *a);
/* Zeroed, aligned for any type; NULL when out of memory. */
void *cfa_arena_alloc(struct cfa_arena *a, size_t n);
/* The same, not zeroed: for memory a read fills whole at once. */
void *cfa_arena_alloc_raw(struct cfa_arena *a, size_t n);
/* Moves every chunk of src into dst; src is left empty. */
void cfa_arena_adopt(struct cfa_arena *dst, struct cfa_arena *src);
char *cfa_arena_strndup(struct cfa_arena *a, const char *s, size_t n);
char *cfa_arena_strdup(struct cfa_arena *a, const char *s);

#endif
