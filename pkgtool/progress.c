/*
 * progress.c - download progress: on a terminal one line per active
 * download (bytes, speed, time left) and a total, redrawn in place at most
 * ten times a second; with --json one event per line on standard error;
 * otherwise nothing until the result lines.
 */
#include <stdio.h>
#include <string.h>

#include "progress.h"
#include "render.h"

void progress_init(struct progress *p, const struct cli *cli, struct cfapkg_fetch_item *items,
                   size_t n)
{
	memset(p, 0, sizeof(*p));
	p->items = items;
	p->n = n < PROGRESS_MAX ? n : PROGRESS_MAX;
	p->json = cli->json;
	p->tty = !cli->quiet && !cli->json && cfapkg_is_terminal(stderr);
	p->start = cfapkg_monotonic_seconds();
}

/* "zluda  12.0 MiB / 31.4 MiB  45.2 MiB/s  0:01 left" */
static void draw_item(const struct progress *p, size_t i)
{
	double secs = cfapkg_monotonic_seconds() - p->started[i];
	double rate = secs > 0.2 ? (double)(p->done[i] - p->base[i]) / secs : 0;
	char a[32], b[32], c[32], eta[32] = "";

	if (rate > 0 && p->total[i] > p->done[i]) {
		unsigned long left = (unsigned long)((double)(p->total[i] - p->done[i]) / rate);
		snprintf(eta, sizeof(eta), "%lu:%02lu left", left / 60, left % 60);
	}
	fprintf(stderr, "\033[2K  %-24.24s %10s / %-10s %10s/s  %s\n", p->items[i].label,
	        human_size((int64_t)p->done[i], a, sizeof(a)),
	        p->total[i] ? human_size((int64_t)p->total[i], b, sizeof(b)) : "?",
	        human_size((int64_t)rate, c, sizeof(c)), eta);
}

static void draw(struct progress *p)
{
	double elapsed = cfapkg_monotonic_seconds() - p->start;
	uint64_t done = 0, total = 0;
	char a[32], b[32], c[32];
	size_t i;

	if (p->lines)
		fprintf(stderr, "\033[%zuA", p->lines);
	p->lines = 0;
	for (i = 0; i < p->n; i++) {
		done += p->done[i];
		total += p->total[i];
		if (!p->active[i])
			continue;
		draw_item(p, i);
		p->lines++;
	}
	fprintf(stderr, "\033[2K  total %s of %s, %s/s\n", human_size((int64_t)done, a, sizeof(a)),
	        total ? human_size((int64_t)total, b, sizeof(b)) : "?",
	        human_size(elapsed > 0 ? (int64_t)((double)done / elapsed) : 0, c, sizeof(c)));
	p->lines++;
	fflush(stderr);
}

void progress_update(void *arg, const struct cfapkg_fetch_progress *ev)
{
	struct progress *p = arg;
	size_t i = (size_t)(ev->item - p->items);
	double t = cfapkg_monotonic_seconds();

	if (i >= p->n)
		return;
	if (!p->active[i] && !ev->finished && p->started[i] == 0) {
		p->started[i] = t;
		p->base[i] = ev->done;
	}
	p->done[i] = ev->done;
	p->total[i] = ev->total;
	p->active[i] = !ev->finished;
	if (p->json && (ev->finished || t - p->last_json[i] >= 0.5)) {
		fprintf(stderr, "{\"event\": \"%s\", \"label\": \"%s\", \"done\": %llu, \"total\": %llu}\n",
		        ev->finished ? "finished" : "progress", p->items[i].label,
		        (unsigned long long)ev->done, (unsigned long long)ev->total);
		p->last_json[i] = t;
	}
	if (p->tty && (ev->finished || t - p->last_draw >= 0.1)) {
		draw(p);
		p->last_draw = t;
	}
}

void progress_end(struct progress *p)
{
	if (p->tty && p->lines)
		draw(p);
}
