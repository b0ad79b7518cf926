/*
 * render.h - output helpers: human sizes, aligned tables, JSON printing,
 * and the one-sentence rendering of problem records.
 */
#ifndef CFAPKG_RENDER_H
#define CFAPKG_RENDER_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfapkg.h"
#include "cfapkg_frontend.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PRINTF_LIKE(fmt, args)
#endif

#if defined(__GNUC__)
#define MUST_USE __attribute__((warn_unused_result))
#else
#define MUST_USE
#endif

/* The command line's snprintf, in two kinds (scripts/check-seams refuses
 * a bare snprintf whose result is dropped):
 * cli_snprintf for paths, names and values: false when the text did not
 * fit, and the caller then fails naming it, never goes on with a
 * shortened one.  cli_fit for text only shown to people (a label, a
 * column, a message): a text too long ends in "..." so the cut shows;
 * cli_fit_add appends the same way to what dst holds.  Both false when
 * cut. */
bool cli_fit(char *dst, size_t size, const char *fmt, ...) PRINTF_LIKE(3, 4);
static inline MUST_USE bool cli_checked(bool whole)
{
	return whole;
}
#define cli_snprintf(...) cli_checked(cli_fit(__VA_ARGS__))
bool cli_fit_add(char *dst, size_t size, const char *fmt, ...) PRINTF_LIKE(3, 4);
bool cli_vfit(char *dst, size_t size, const char *fmt, va_list ap) PRINTF_LIKE(3, 0);

/* "2.5 GiB", "31.4 MiB", "-" for negative sizes.  Writes into buf. */
const char *human_size(int64_t bytes, char *buf, size_t len);

#define TABLE_COLS 8
struct table {
	size_t ncols;
	size_t width[TABLE_COLS];
	char **cells;          /* ncols per row, each a copy */
	size_t ncells, cap;
};
void table_init(struct table *t, size_t ncols);
void table_row(struct table *t, const char *const *cells);
void table_print(struct table *t);   /* prints and frees */
void table_free(struct table *t);

/* Counts a failed allocation of text output as cJSON's are counted: the
 * command then ends in an error rather than with a table missing rows. */
void output_alloc_failed(void);

/* Counts cJSON's failed allocations from here on (main calls it first). */
void json_count_failures(void);
/* Whether a JSON document of this run may have lost a member: main then
 * exits with an error whatever the command returned. */
bool json_output_failed(void);
/* Prints a JSON value with a newline and frees it; prints nothing but an
 * error when memory ran out while it was built. */
void json_print(cJSON *v);
/* contract.c: the envelope of every document.  json_stamp puts
 * "format": 1 first in an object (json_print calls it); json_print_list
 * prints {"format": 1, KEY: items}; json_print_error prints the error
 * document of a failed command that printed none. */
void json_stamp(cJSON *doc);
void json_print_list(const char *key, cJSON *items);
void json_print_error(int status);
/* A text field as shown: what it holds, or what stands for nothing (a
 * machine's or facts' NULL: not known). */
const char *or_else(const char *text, const char *none);
/* cJSON helpers that accept NULL strings. */
void json_str(cJSON *o, const char *key, const char *v);

/* plot.c: the bench figure: the metric, when there is one, and wall
 * time; what was compared at its foot. */
struct bench_plot {
	const char *names[2];       /* the environments A and B */
	const char *metric_name;    /* NULL: wall time only */
	const char *const *args;    /* the program's command line, for the subtitle */
	size_t nargs;
	const char *own[2];         /* each one's parts the other lacks or has at another
	                               version: "zluda 6-preview.69" */
	const char *shared;         /* the parts both have alike */
	const char *gpu;            /* "AMD Radeon RX 9060 XT (gfx1200)" */
	const char *os;             /* "linux-x86_64, Debian GNU/Linux 12" */
	const char *date;           /* "2025-12-01 20:41 UTC" */
	const char *version;        /* cfapkg's */
};
/* Writes the figure as SVG, and as PNG too when png is not NULL (a build
 * with cairo: png_available()); 0, or -1 when a file was not written. */
int write_plots(const char *svg, const char *png, const struct bench_plot *p,
                const struct cfapkg_bench_run *runs, size_t n);

/* explain_text.c: one sentence per problem record, written into buf. */
const char *problem_text(const struct cfapkg_problem *p, const struct cfapkg_facts *f,
                         char *buf, size_t len);
const char *problem_kind_name(enum cfapkg_problem_kind k);

#endif
