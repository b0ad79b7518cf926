/*
 * progress.h - download progress for the fetching commands.
 */
#ifndef CFAPKG_PROGRESS_H
#define CFAPKG_PROGRESS_H

#include "cfapkg.h"
#include "opts.h"

#define PROGRESS_MAX 64

struct progress {
	struct cfapkg_fetch_item *items;
	size_t n, lines;
	bool tty, json;
	double start, last_draw;
	double last_json[PROGRESS_MAX];
	double started[PROGRESS_MAX];   /* when the download's first bytes came */
	uint64_t base[PROGRESS_MAX];    /* bytes it had then (a resumed part) */
	uint64_t done[PROGRESS_MAX], total[PROGRESS_MAX];
	bool active[PROGRESS_MAX];
};

void progress_init(struct progress *p, const struct cli *cli, struct cfapkg_fetch_item *items,
                   size_t n);
/* The cfapkg_fetch_opts progress callback (arg: the struct progress). */
void progress_update(void *arg, const struct cfapkg_fetch_progress *ev);
void progress_end(struct progress *p);

#endif
