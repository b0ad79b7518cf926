/*
 * render.h - output helpers: human sizes, aligned tables, JSON printing,
 * and the one-sentence rendering of problem records.
 */
#ifndef CFAPKG_RENDER_H
#define CFAPKG_RENDER_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "cfapkg.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PRINTF_LIKE(fmt, args)
#endif

/* "2.5 GiB", "31.4 MiB", "-" for negative sizes.  Writes into buf. */
const char *human_size(int64_t bytes, char *buf, size_t len);

#define TABLE_COLS 8
struct table {
	size_t ncols;
	size_t width[TABLE_COLS];
	cJSON *rows;           /* array of arrays of strings */
};
void table_init(struct table *t, size_t ncols);
void table_row(struct table *t, const char *const *cells);
void table_print(struct table *t);   /* prints and frees */

/* Counts cJSON's failed allocations from here on (main calls it first). */
void json_count_failures(void);
/* Whether a JSON document of this run may have lost a member: main then
 * exits with an error whatever the command returned. */
bool json_output_failed(void);
/* Prints a JSON value with a newline and frees it; prints nothing but an
 * error when memory ran out while it was built. */
void json_print(cJSON *v);
/* cJSON helpers that accept NULL strings. */
void json_str(cJSON *o, const char *key, const char *v);

/* plot.c: an SVG of the runs of two environments (the metric when one was
 * asked for, else wall time), medians as lines.  0 on success. */
int write_svg(const char *path, const char *const names[2], const char *metric,
              const struct cfapkg_bench_run *runs, size_t n);

/* explain_text.c: one sentence per problem record, written into buf. */
const char *problem_text(const struct cfapkg_problem *p, const struct cfapkg_facts *f,
                         char *buf, size_t len);
const char *problem_kind_name(enum cfapkg_problem_kind k);

#endif
