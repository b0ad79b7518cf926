/*
 * fetch_deal.c - how downloads are spread over threads.  Each thread has a
 * multi handle and a contiguous slice of the downloads, dealt out largest
 * first like cards, so that two large downloads never share a thread
 * while another idles; the limit on downloads at once is shared out too.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/fetch.h"
#include "core/mem.h"
#include "platform/platform.h"

static int larger_first(const void *a, const void *b)
{
	int64_t x = ((const struct xfer *)a)->item->size, y = ((const struct xfer *)b)->item->size;

	/* An unknown size (-1) sorts last. */
	return x == y ? 0 : x > y ? -1 : 1;
}

/* Downloads slice k (of ng) takes: the k-th of every ng, largest first. */
static size_t slice_len(size_t n, size_t ng, size_t k)
{
	/* How many j < n have j % ng == k: ceil((n - k) / ng). */
	return (n - k + ng - 1) / ng;
}

/* xs reordered so that slice k holds the k-th of every ng, largest
 * first; left as it came when there is one slice or no memory. */
static void deal(struct xfer *xs, size_t n, size_t ng)
{
	struct xfer *dealt = ng > 1 ? cfa_calloc(n, sizeof(*dealt)) : NULL;
	size_t j, k, start[CFA_FETCH_MAX_PARALLEL];

	if (!dealt)
		return;
	qsort(xs, n, sizeof(*xs), larger_first);
	for (k = 0, start[0] = 0; k + 1 < ng; k++)
		start[k + 1] = start[k] + slice_len(n, ng, k);
	/* The j-th largest goes to slice j % ng, at its (j / ng)-th place. */
	for (j = 0; j < n; j++)
		dealt[start[j % ng] + j / ng] = xs[j];
	memcpy(xs, dealt, n * sizeof(*xs));
	cfa_free(dealt);
}

size_t cfa_fetch_deal(struct xfer *xs, size_t n, unsigned parallel, struct fetch_group *groups)
{
	size_t k, ng = cfa_plat_cpu_count(), at = 0;

	/* No more threads than processors, downloads, or downloads at once. */
	ng = ng < n ? ng : n;
	ng = ng < parallel ? ng : parallel;
	ng = ng ? ng : 1;
	deal(xs, n, ng);
	for (k = 0; k < ng; k++) {
		size_t j;
		groups[k].xs = xs + at;
		groups[k].n = slice_len(n, ng, k);
		/* parallel shared out: the first slices take the remainder, and
		 * each gets at least one, since ng <= parallel. */
		groups[k].parallel = (unsigned)((parallel + ng - 1 - k) / ng);
		/* A download with others in its thread takes smaller steps, so
		 * that a large one's throttled writes do not hold the rest up. */
		for (j = 0; j < groups[k].n; j++)
			xs[at + j].shares_thread = groups[k].n > 1 && groups[k].parallel > 1;
		at += groups[k].n;
	}
	return ng;
}
