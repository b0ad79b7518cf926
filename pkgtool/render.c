/*
 * render.c - text for people: human sizes and aligned tables.
 */
#include "render.h"
#include "opts.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library's cfapkg_fit_text does the cutting: a text too long ends in
 * "..." and the result is false.  A zero-size buffer fits nothing. */
bool cli_vfit(char *dst, size_t size, const char *fmt, va_list ap)
{
	return size > 0 && cfapkg_fit_text(dst, size, fmt, ap);
}

/* cli_snprintf is cli_fit whose result must be used (render.h). */
bool cli_fit(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	bool whole;

	va_start(ap, fmt);
	whole = cli_vfit(dst, size, fmt, ap);
	va_end(ap);
	return whole;
}

bool cli_fit_add(char *dst, size_t size, const char *fmt, ...)
{
	size_t used = strlen(dst);
	va_list ap;
	bool whole;

	/* Already full (or cut, ending in "..."): nothing more goes in. */
	if (used + 1 >= size)
		return false;
	va_start(ap, fmt);
	whole = cli_vfit(dst + used, size - used, fmt, ap);
	va_end(ap);
	return whole;
}

const char *or_else(const char *text, const char *none)
{
	return text ? text : none;
}

/* Powers of 1024 with binary unit names, one decimal; sizes below 1 KiB are
 * shown in bytes, exactly. */
const char *human_size(int64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;

	/* A negative size is "not known" (a recipe that records none). */
	if (bytes < 0) {
		cli_fit(buf, len, "?");
		return buf;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		cli_fit(buf, len, "%lld B", (long long)bytes);
	else
		cli_fit(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

/* A table keeps a copy of each cell, so callers may pass buffers they reuse
 * for the next row.  Plain strings rather than a JSON tree: a plan's text
 * output then needs no cJSON, which is loaded on first use. */
void table_init(struct table *t, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols < TABLE_COLS ? ncols : TABLE_COLS;
}

/* Room for one more row; false (counted) for want of memory. */
static bool room_for_row(struct table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 16 * t->ncols;
	char **grown;

	if (t->ncells + t->ncols <= t->cap)
		return true;
	if (!(grown = realloc(t->cells, cap * sizeof(*grown)))) {
		output_alloc_failed();
		return false;
	}
	t->cells = grown;
	t->cap = cap;
	return true;
}

void table_row(struct table *t, const char *const *cells)
{
	size_t i;

	if (!t->ncols || !room_for_row(t))
		return;
	for (i = 0; i < t->ncols; i++) {
		const char *c = cells[i] ? cells[i] : "";
		size_t n = strlen(c);
		char *copy = malloc(n + 1);
		/* Widths are counted in bytes: a name with multi-byte
		 * characters is padded short. */
		if (n > t->width[i])
			t->width[i] = n;
		if (copy)
			memcpy(copy, c, n + 1);
		else
			output_alloc_failed();
		t->cells[t->ncells++] = copy;
	}
}

void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->ncells = t->cap = 0;
}

/* Columns are separated by two spaces, each as wide as its widest cell. */
void table_print(struct table *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++) {
		const char *cell = t->cells[i] ? t->cells[i] : "";
		size_t col = i % t->ncols;
		/* The last column is not padded: no trailing blanks. */
		if (col + 1 < t->ncols)
			printf("%-*s  ", (int)t->width[col], cell);
		else
			printf("%s\n", cell);
	}
	table_free(t);
}
