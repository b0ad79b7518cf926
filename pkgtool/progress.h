/*
 * progress.h - download progress for the fetching commands.
 */
#ifndef CFAPKG_PROGRESS_H
#define CFAPKG_PROGRESS_H

#include "cfapkg.h"
#include "opts.h"

/* One download's line; rows are added as downloads report, so there is
 * no limit on how many a transfer has. */
struct progress_row {
	const struct cfapkg_fetch_item *item;
	double last_json, started;  /* started: when its first bytes came */
	uint64_t base;              /* bytes it had then (a resumed part) */
	uint64_t done, total;
	bool active;
	bool said;                  /* its plain "done" line is printed */
};

struct progress {
	struct progress_row *rows;
	size_t n, cap, lines;
	bool tty, json;
	bool plain;  /* a terminal without escapes: a line per finished download */
	double start, last_draw;
};

void progress_init(struct progress *p, const struct cli *cli);
/* The cfapkg_fetch_opts progress callback (arg: the struct progress). */
void progress_update(void *arg, const struct cfapkg_fetch_progress *ev);
/* Draws the last state and frees the rows. */
void progress_end(struct progress *p);

#endif
