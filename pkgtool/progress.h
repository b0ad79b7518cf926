/*
 * progress.h - download progress for the fetching commands, what
 * --verbose says about each URL, and Ctrl-C during a download.
 */
#ifndef CFAPKG_PROGRESS_H
#define CFAPKG_PROGRESS_H

#include "cfapkg.h"
#include "opts.h"

/* One download's line; rows are added as downloads report, so there is
 * no limit on how many a transfer has. */
struct progress_row {
	const struct cfapkg_fetch_item *item;
	double last_json;
	double started;             /* when this attempt first reported */
	unsigned attempt;           /* the attempt that did */
	uint64_t base;              /* bytes it started with (a resumed part) */
	uint64_t brought;           /* bytes earlier attempts of this run brought */
	double first_seen;          /* when the download first reported */
	uint64_t done, total;
	bool active, finished, resumed;
};

struct progress {
	struct progress_row *rows;
	size_t n, cap;
	unsigned lines;             /* the terminal lines drawn below the cursor */
	bool tty, json;
	bool plain;                 /* lines, no escapes: a pipe, NO_COLOR, TERM=dumb */
	bool quiet;
	unsigned verbose;
	double start, last_draw, last_plain, interval;
};

/* Sets up the display for cli (terminal, plain lines, JSON events or
 * nothing) and attaches it to o: its progress and, with --verbose, event
 * callbacks, and the flag a Ctrl-C sets, which stops the downloads. */
void progress_init(struct progress *p, const struct cli *cli, struct cfapkg_fetch_opts *o);
/* From now until progress_end, a Ctrl-C sets that flag instead of ending
 * cfapkg (a second one still does).  Not while cfapkg asks a question. */
void progress_catch_interrupt(void);
/* The cfapkg_fetch_opts progress callback (arg: the struct progress). */
void progress_update(void *arg, const struct cfapkg_fetch_progress *ev);
/* Clears the bars, prints the summary line, frees the rows and puts the
 * default Ctrl-C back. */
void progress_end(struct progress *p);
/* Whether a Ctrl-C stopped the downloads. */
bool progress_interrupted(void);
/* After an interrupted fetch: what the .part files keep for a resume,
 * named per download; returns the exit status of an interrupt (130). */
int report_interrupted(struct cfapkg_ctx *ctx, const struct cfapkg_fetch_item *items,
                       size_t n);

#endif
