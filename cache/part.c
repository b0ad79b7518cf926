/*
 * part.c - a download in progress: NAME.part holds a prefix of the
 * artifact, NAME.part.meta the validator (ETag or Last-Modified) of the
 * response it came from, so that a resume asks for the rest of the same
 * bytes (If-Range) and anything else starts over.
 */
#include <string.h>

#include "cache/fetch.h"
#include "core/mem.h"
#include "platform/platform.h"

/* The validator saved with a .part, "" when there is none. */
static void read_meta(struct xfer *x)
{
	FILE *f = cfa_plat_fopen(x->meta_path, "rb");
	size_t n;

	x->validator[0] = '\0';
	if (!f)
		return;
	n = fread(x->validator, 1, sizeof(x->validator) - 1, f);
	x->validator[n] = '\0';
	fclose(f);
}

void cfa_part_write_meta(struct xfer *x)
{
	FILE *f;

	if (!x->new_validator[0])
		return;
	f = cfa_plat_fopen(x->meta_path, "wb");
	if (f) {
		fputs(x->new_validator, f);
		cfa_plat_fsync(f);
		fclose(f);
	}
}

#define IOBUF (1u << 20)

/* Few, large writes: stdio's default buffer would mean a system call per
 * few kilobytes. */
static void set_buffer(struct xfer *x)
{
	if (x->part && (x->iobuf || (x->iobuf = cfa_malloc(IOBUF))))
		setvbuf(x->part, x->iobuf, _IOFBF, IOBUF);
}

bool cfa_part_restart(struct xfer *x)
{
	if (x->part)
		fclose(x->part);
	x->part = cfa_plat_fopen(x->part_path, "wb+");
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
	x->part = cfa_plat_fopen(x->part_path, "ab+");
	if (!x->part || EVP_DigestInit_ex(x->md, EVP_sha256(), NULL) != 1)
		return false;
	set_buffer(x);
	fseek(x->part, 0, SEEK_SET);
	x->have = 0;
	while ((n = fread(buf, 1, sizeof(buf), x->part)) > 0) {
		EVP_DigestUpdate(x->md, buf, n);
		x->have += n;
	}
	fseek(x->part, 0, SEEK_END);
	if (x->item->size >= 0 && x->have > (uint64_t)x->item->size)
		return cfa_part_restart(x);
	x->item->resumed_from = x->have;
	return true;
}

void cfa_part_discard(struct xfer *x)
{
	cfa_plat_remove(x->part_path);
	cfa_plat_remove(x->meta_path);
}
