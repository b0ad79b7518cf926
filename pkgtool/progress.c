/*
 * progress.c - download progress: on a terminal one line per active
 * download (bytes, speed, time left) and a total, redrawn in place at most
 * ten times a second; with --json one event per line on standard error;
 * on a terminal that must get no escape sequences (NO_COLOR, TERM=dumb)
 * one plain line per finished download; otherwise nothing until the
 * result lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "render.h"

/* no-color.org: NO_COLOR with any value but "" turns escapes off; a dumb
 * terminal cannot move its cursor. */
static bool escapes_allowed(void)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

	return !(no_color && *no_color) && !(term && strcmp(term, "dumb") == 0);
}

void progress_init(struct progress *p, const struct cli *cli)
{
	bool terminal = !cli->quiet && !cli->json && cfapkg_is_terminal(stderr);

	memset(p, 0, sizeof(*p));
	p->json = cli->json;
	p->tty = terminal && escapes_allowed();
	p->plain = terminal && !p->tty;
	p->start = cfapkg_monotonic_seconds();
}

/* "zluda  12.0 MiB / 31.4 MiB  45.2 MiB/s  0:01 left" */
static void draw_item(const struct progress_row *r)
{
	double secs = cfapkg_monotonic_seconds() - r->started;
	double rate = secs > 0.2 ? (double)(r->done - r->base) / secs : 0;
	char a[32], b[32], c[32], eta[32] = "";

	if (rate > 0 && r->total > r->done) {
		unsigned long left = (unsigned long)((double)(r->total - r->done) / rate);
		snprintf(eta, sizeof(eta), "%lu:%02lu left", left / 60, left % 60);
	}
	fprintf(stderr, "\033[2K  %-24.24s %10s / %-10s %10s/s  %s\n", r->item->label,
	        human_size((int64_t)r->done, a, sizeof(a)),
	        r->total ? human_size((int64_t)r->total, b, sizeof(b)) : "?",
	        human_size((int64_t)rate, c, sizeof(c)), eta);
}

static void draw(struct progress *p)
{
	double elapsed = cfapkg_monotonic_seconds() - p->start;
	uint64_t done = 0, total = 0;
	char a[32], b[32], c[32];
	size_t i;

	if (p->lines)
		fprintf(stderr, "\033[%luA", (unsigned long)p->lines);
	p->lines = 0;
	for (i = 0; i < p->n; i++) {
		done += p->rows[i].done;
		total += p->rows[i].total;
		if (!p->rows[i].active)
			continue;
		draw_item(&p->rows[i]);
		p->lines++;
	}
	fprintf(stderr, "\033[2K  total %s of %s, %s/s\n", human_size((int64_t)done, a, sizeof(a)),
	        total ? human_size((int64_t)total, b, sizeof(b)) : "?",
	        human_size(elapsed > 0 ? (int64_t)((double)done / elapsed) : 0, c, sizeof(c)));
	p->lines++;
	fflush(stderr);
}

/* The row of a download, added the first time it reports; NULL when out
 * of memory (its progress is then not shown, nothing else changes). */
static struct progress_row *row_of(struct progress *p, const struct cfapkg_fetch_item *item)
{
	struct progress_row *grown;
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->rows[i].item == item)
			return &p->rows[i];
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		if (!(grown = realloc(p->rows, cap * sizeof(*grown))))
			return NULL;
		p->rows = grown;
		p->cap = cap;
	}
	memset(&p->rows[p->n], 0, sizeof(p->rows[p->n]));
	p->rows[p->n].item = item;
	return &p->rows[p->n++];
}

void progress_update(void *arg, const struct cfapkg_fetch_progress *ev)
{
	struct progress *p = arg;
	struct progress_row *r = row_of(p, ev->item);
	double t = cfapkg_monotonic_seconds();

	if (!r)
		return;
	if (!r->active && !ev->finished && r->started == 0) {
		r->started = t;
		r->base = ev->done;
	}
	r->done = ev->done;
	r->total = ev->total;
	r->active = !ev->finished;
	if (p->json && (ev->finished || t - r->last_json >= 0.5)) {
		fprintf(stderr, "{\"event\": \"%s\", \"label\": \"%s\", \"done\": %llu, "
		        "\"total\": %llu}\n", ev->finished ? "finished" : "progress", r->item->label,
		        (unsigned long long)ev->done, (unsigned long long)ev->total);
		r->last_json = t;
	}
	if (p->plain && ev->finished && !r->said) {
		char a[32];
		fprintf(stderr, "  %-24.24s %10s done\n", r->item->label,
		        human_size((int64_t)ev->done, a, sizeof(a)));
		r->said = true;
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
	free(p->rows);
	p->rows = NULL;
	p->n = p->cap = 0;
}
