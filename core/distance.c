/*
 * distance.c - how far one name is from another (Levenshtein), for the
 * "did you mean" of recipe names and GPU lookups.
 */
#include <string.h>

#include "core/gpus.h"

/* Names are compared on their first NORM_MAX bytes: longer text is no
 * name a user meant, and the rows stay on the stack. */
#define NORM_MAX 128

/* Edit distance from a to b; with part, from a to the closest part of b,
 * so that an almost right partial name scores low. */
unsigned cfa_edit_distance_part(const char *a, const char *b, bool part)
{
	unsigned prev[NORM_MAX + 1], cur[NORM_MAX + 1], best;
	size_t la = strlen(a), lb = strlen(b), i, j;

	la = la > NORM_MAX ? NORM_MAX : la;
	lb = lb > NORM_MAX ? NORM_MAX : lb;
	/* For a part, starting anywhere in b costs nothing (the first row is
	 * 0), and ending anywhere is the minimum over the last row below. */
	for (j = 0; j <= lb; j++)
		prev[j] = part ? 0 : (unsigned)j;
	for (i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			unsigned sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		/* Two rows are all the table needs: each row is made from the
		 * one above. */
		memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
	}
	best = prev[lb];
	for (j = 0; part && j < lb; j++)
		best = prev[j] < best ? prev[j] : best;
	return best;
}

unsigned cfa_edit_distance(const char *a, const char *b)
{
	return cfa_edit_distance_part(a, b, false);
}
