/*
 * render.c - text for people: human sizes and aligned tables.
 */
#include "render.h"
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *human_size(int64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;

	if (bytes < 0) {
		snprintf(buf, len, "?");
		return buf;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lld B", (long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

void table_init(struct table *t, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols < TABLE_COLS ? ncols : TABLE_COLS;
	t->rows = cJSON_CreateArray();
}

void table_row(struct table *t, const char *const *cells)
{
	cJSON *row = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < t->ncols; i++) {
		const char *c = cells[i] ? cells[i] : "";
		size_t n = strlen(c);
		if (n > t->width[i])
			t->width[i] = n;
		cJSON_AddItemToArray(row, cJSON_CreateString(c));
	}
	cJSON_AddItemToArray(t->rows, row);
}

void table_print(struct table *t)
{
	const cJSON *row, *cell;

	cJSON_ArrayForEach(row, t->rows)
	{
		size_t i = 0;
		cJSON_ArrayForEach(cell, row)
		{
			/* The last column is not padded: no trailing blanks. */
			if (i + 1 < t->ncols)
				printf("%-*s  ", (int)t->width[i], cell->valuestring);
			else
				printf("%s", cell->valuestring);
			i++;
		}
		printf("\n");
	}
	cJSON_Delete(t->rows);
	t->rows = NULL;
}
