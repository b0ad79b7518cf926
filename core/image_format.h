/*
 * image_format.h - what the writer (recipe_image.c) and the reader
 * (image_read.c) of recipe images agree on: the table's entries, the
 * alignment, the header line and the checksums.  Private to the two.
 */
#ifndef CFA_IMAGE_FORMAT_H
#define CFA_IMAGE_FORMAT_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_MAGIC "cfapkg-recipe-image"
#define IMAGE_FORMAT 2
#define BYTE_ORDER_MARK UINT64_C(0x0102030405060708)
/* Far above any recipe: a larger size in a table is damage. */
#define BLOCK_MAX (64u << 20)
/* Every block starts, and every block's data ends, on this boundary
 * from its region's start. */
#define STRUCT_ALIGN alignof(max_align_t)

/* A block: where it starts, its size, its slot list's length and its
 * checksum.  A recipe's entry is its region's: its block and slots,
 * then (at a STRUCT_ALIGN boundary) the entries of its versions' details
 * blocks, then those blocks, span bytes in all; the region's checksum
 * covers its details table too. */
struct entry {
	uint64_t offset, size, nslots, sum, ndetails, span;
};

/* FNV-1a over 8-byte words, going on from h (the first: FNV_START). */
#define FNV_START UINT64_C(0xcbf29ce484222325)
uint64_t cfa_image_checksum(const unsigned char *p, size_t n, uint64_t h);
/* A block's checksum: its data, then its slot list. */
uint64_t cfa_image_block_sum(const unsigned char *data, size_t size, const uint32_t *slots,
                             size_t nslots);
/* The header line of an image of n recipes for key, in buf. */
bool cfa_image_header(char *buf, size_t len, const char key[65], size_t n);

#endif
