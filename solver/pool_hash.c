/*
 * pool_hash.c - libsolv's string hash sized for one plan, and kept across
 * pool_createwhatprovides.
 *
 * libsolv makes the hash at its first lookup with room for 2,047 strings
 * more (32 KiB), and a plan adds a hundred or so, scattered over every page
 * of the table.  It also drops the hash in pool_createwhatprovides, so the
 * first lookup after the build rehashes every string again.  A fresh page
 * costs a command more than its lookups do.  The string pool's fields are
 * libsolv's public ones (strpool.h); the relation hash is not, and is left
 * to libsolv.
 */
#include <solv/hash.h>
#include <solv/pool.h>
#include <solv/util.h>

#include "solver/solver.h"

/* A table of mask + 1 slots holding the pool's strings, placed as
 * libsolv's own resize places them (hash.h's chain), so that its lookups
 * find them. */
static Hashtable rehash(const Stringpool *ss, Hashval mask)
{
	Hashtable t = solv_calloc((size_t)mask + 1, sizeof(Id));
	int i;

	for (i = 1; i < ss->nstrings; i++) {
		Hashval h = strhash(ss->stringspace + ss->strings[i]) & mask, hh = HASHCHAIN_START;
		while (t[h])
			h = HASHCHAIN_NEXT(h, hh, mask);
		t[h] = i;
	}
	return t;
}

void cfa_pool_size_hashes(Pool *pool, size_t nversions)
{
	Stringpool *ss = &pool->ss;
	/* Measured on the shipped recipes: about three new strings per
	 * version.  A guess short of the mark costs only the growth libsolv
	 * would have done anyway (it grows the table once it is half full). */
	size_t more = nversions < 1u << 20 ? nversions : 1u << 20;
	Hashval mask = mkmask((unsigned)((size_t)ss->nstrings + 4 * more + 64));

	if (ss->stringhashtbl)
		return;
	ss->stringhashtbl = rehash(ss, mask);
	ss->stringhashmask = mask;
}

void cfa_pool_index_providers(Pool *pool)
{
	/* Taken out while it runs and put back after: it adds no ids, so the
	 * table still holds exactly the pool's strings. */
	Hashtable strings = pool->ss.stringhashtbl;
	Hashval mask = pool->ss.stringhashmask;

	pool->ss.stringhashtbl = NULL;
	pool->ss.stringhashmask = 0;
	pool_createwhatprovides(pool);
	pool->ss.stringhashtbl = strings;
	pool->ss.stringhashmask = mask;
}
