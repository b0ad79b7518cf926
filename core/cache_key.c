/*
 * cache_key.c - the keys caches are checked by: FNV-1a over what a cache
 * was made from, and that text's length (core/cache_key.h says why not
 * SHA-256).
 */
#include <string.h>

#include "core/cache_key.h"
#include "core/ctx.h"
#include "core/strbuf.h"

void cfa_key_start(struct cfa_key *k)
{
	k->sum = UINT64_C(14695981039346656037); /* FNV-1a's offset basis */
	k->len = 0;
}

void cfa_key_add(struct cfa_key *k, const void *data, size_t n)
{
	const unsigned char *p = data;

	k->len += n;
	for (; n; p++, n--)
		k->sum = (k->sum ^ *p) * UINT64_C(0x100000001b3);
}

void cfa_key_hex(const struct cfa_key *k, char key[65])
{
	if (!cfa_snprintf(key, 65, "%016llx-%llu", (unsigned long long)k->sum,
	                  (unsigned long long)k->len))
		key[0] = '\0';
}

void cfa_load_key_add(struct cfapkg_ctx *ctx, const char *part)
{
	if (!part)
		ctx->load_unkeyed = true;
	else
		cfa_key_add(&ctx->load_key, part, strlen(part) + 1);
}
