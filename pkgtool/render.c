/*
 * render.c - text tables and JSON output.
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

/* Every cJSON allocation of the process comes through here, so that one
 * check before output covers the commands' many builder calls: a document
 * that lost a member because memory ran out is never printed as whole. */
static unsigned long json_alloc_failures;

static void *json_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		json_alloc_failures++;
	return p;
}

void json_count_failures(void)
{
	cJSON_Hooks hooks = {json_malloc, free};

	cJSON_InitHooks(&hooks);
}

bool json_output_failed(void)
{
	return json_alloc_failures > 0;
}

void json_print(cJSON *v)
{
	char *s;

	json_stamp(v);
	s = json_alloc_failures ? NULL : cJSON_Print(v);

	if (s && !json_alloc_failures) {
		fputs(s, stdout);
		fputc('\n', stdout);
	} else {
		cli_error("out of memory while building the JSON output\n");
		json_alloc_failures++;
	}
	cJSON_free(s);
	cJSON_Delete(v);
}

void json_str(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}
