/*
 * progress.c - download progress, in one of four forms:
 * - a terminal: a bar per download in progress (name, bar, percent,
 *   bytes, this attempt's speed, time left), each fitted to the width of
 *   the terminal as it is now and redrawn in place at most ten times a
 *   second; a finished download leaves one line, the bars go when the
 *   downloads end, and one summary line says what came;
 * - plain lines, no escapes (standard error a pipe or a file, NO_COLOR,
 *   TERM=dumb): each download's state every few seconds, a line when one
 *   finishes, and the summary;
 * - --json: one event per line on standard error;
 * - --quiet: nothing.
 * --verbose adds a line per attempt at a URL and how it ended.  A Ctrl-C
 * during the downloads stops them (the library keeps the .part files),
 * and the command says what was kept.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "progress.h"
#include "render.h"

#define REDRAW_S 0.1    /* a terminal is redrawn at most this often */
#define PLAIN_S 5.0     /* plain lines this often (CFAPKG_PROGRESS_INTERVAL) */
#define NAME_MAX_COLS 32
#define BAR_MAX_COLS 30

static volatile sig_atomic_t interrupt_flag;

/* The first Ctrl-C stops the downloads; a second one ends cfapkg at once,
 * as if there were no handler (signal() may be called in a handler). */
static void on_interrupt(int sig)
{
	interrupt_flag = 1;
	signal(sig, SIG_DFL);
}

bool progress_interrupted(void)
{
	return interrupt_flag != 0;
}

/* no-color.org: NO_COLOR with any value but "" turns escapes off; a dumb
 * terminal cannot move its cursor. */
static bool escapes_allowed(void)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

	return !(no_color && *no_color) && !(term && strcmp(term, "dumb") == 0);
}

/* CFAPKG_PROGRESS_INTERVAL=SECONDS: how often the plain lines come. */
static double plain_interval(void)
{
	const char *v = getenv("CFAPKG_PROGRESS_INTERVAL");
	unsigned long long s;

	return v && cli_number(v, 3600, &s) && s > 0 ? (double)s : PLAIN_S;
}

/* --verbose: each URL tried, and why it failed. */
static void on_event(void *arg, const struct cfapkg_fetch_event *ev);

void progress_init(struct progress *p, const struct cli *cli, struct cfapkg_fetch_opts *o)
{
	bool shown = !cli->quiet && !cli->json;
	bool terminal = shown && cfapkg_is_terminal(stderr);

	memset(p, 0, sizeof(*p));
	p->json = cli->json;
	p->quiet = cli->quiet;
	p->verbose = cli->quiet ? 0 : cli->verbose;
	p->tty = terminal && escapes_allowed();
	p->plain = shown && !p->tty;
	p->start = p->last_plain = cfapkg_monotonic_seconds();
	p->interval = plain_interval();
	o->progress = progress_update;
	o->progress_arg = p;
	o->event = p->verbose ? on_event : NULL;
	o->interrupt = &interrupt_flag;
	interrupt_flag = 0;
}

void progress_catch_interrupt(void)
{
	interrupt_flag = 0;
	signal(SIGINT, on_interrupt);
}

/* Columns a UTF-8 string takes (one per character). */
static size_t cols(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* The bytes of s's first max characters. */
static size_t bytes_of(const char *s, size_t max)
{
	size_t i = 0, n = 0;

	while (s[i] && n < max) {
		i++;
		while (((unsigned char)s[i] & 0xC0) == 0x80)
			i++;
		n++;
	}
	return i;
}

/* This attempt's speed: resumed bytes came in an earlier run. */
static double rate_of(const struct progress_row *r, double now)
{
	double secs = now - r->started;

	/* Under a fifth of a second a rate is noise, so none is shown yet. */
	return secs > 0.2 && r->done > r->base ? (double)(r->done - r->base) / secs : 0;
}

static void time_text(double secs, char *buf, size_t len)
{
	/* Capped at 99:59:59, so that a stalled download's estimate keeps the
	 * field's width instead of growing without end. */
	unsigned long s = secs < 0 ? 0 : secs > 359999 ? 359999 : (unsigned long)(secs + 0.5);

	if (s >= 3600)
		cli_fit(buf, len, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		cli_fit(buf, len, "%lu:%02lu", s / 60, s % 60);
}

/* A download's fields, each dropped when the line does not fit. */
struct fields {
	char pct[8], bytes[80], speed[48], eta[48];
	const char *name;
	size_t name_cols;
	unsigned bar;               /* its width, 0: none */
	unsigned filled;            /* of bar */
};

static void fill_fields(const struct progress_row *r, double now, struct fields *f)
{
	double rate = rate_of(r, now);
	char a[32], b[32];

	memset(f, 0, sizeof(*f));
	f->name = r->item->label;
	f->name_cols = cols(f->name) < NAME_MAX_COLS ? cols(f->name) : NAME_MAX_COLS;
	human_size((int64_t)r->done, a, sizeof(a));
	if (r->total) {
		cli_fit(f->pct, sizeof(f->pct), "%3u%%",
		        (unsigned)(r->done >= r->total ? 100 : r->done * 100 / r->total));
		cli_fit(f->bytes, sizeof(f->bytes), "%s / %s", a,
		        human_size((int64_t)r->total, b, sizeof(b)));
	} else {
		cli_fit(f->bytes, sizeof(f->bytes), "%s", a);
	}
	if (rate > 0) {
		cli_fit(f->speed, sizeof(f->speed), "%s/s", human_size((int64_t)rate, a, sizeof(a)));
		if (r->total > r->done) {
			time_text((double)(r->total - r->done) / rate, a, sizeof(a));
			cli_fit(f->eta, sizeof(f->eta), "%s left", a);
		}
	}
}

/* The columns of the line the fields make. */
static size_t width_of(const struct fields *f)
{
	size_t w = 2 + f->name_cols;

	w += f->bar ? f->bar + 4 : 0;
	w += f->pct[0] ? strlen(f->pct) + 2 : 0;
	w += 2 + strlen(f->bytes);
	w += f->speed[0] ? strlen(f->speed) + 2 : 0;
	w += f->eta[0] ? strlen(f->eta) + 2 : 0;
	return w;
}

/* Fits the fields into width columns: the bar takes what is left (up to
 * BAR_MAX_COLS); short of room, the total goes from the bytes (the
 * percent says it), then time left, the name's end, the speed, the
 * percent. */
static void fit(struct fields *f, size_t width, uint64_t done, uint64_t total)
{
	char *of = strstr(f->bytes, " / ");
	size_t rest;

	f->bar = 0;
	if (width_of(f) > width && of)
		*of = '\0';
	if (width_of(f) > width)
		f->eta[0] = '\0';
	while (width_of(f) > width && f->name_cols > 12)
		f->name_cols--;
	if (width_of(f) > width)
		f->speed[0] = '\0';
	if (width_of(f) > width)
		f->pct[0] = '\0';
	rest = width > width_of(f) + 4 ? width - width_of(f) - 4 : 0;
	if (total && rest >= 8)
		f->bar = (unsigned)(rest < BAR_MAX_COLS ? rest : BAR_MAX_COLS);
	if (f->bar)
		f->filled = (unsigned)(done >= total ? f->bar : (double)done * f->bar / (double)total);
}

/* One bar, at most width columns; the caller ends the line. */
static void draw_row(FILE *out, const struct progress_row *r, double now, size_t width)
{
	char line[512], bar[BAR_MAX_COLS + 3];
	struct fields f;
	size_t n;

	fill_fields(r, now, &f);
	fit(&f, width, r->done, r->total);
	memset(bar, '#', f.filled);
	memset(bar + f.filled, '-', f.bar - f.filled);
	bar[f.bar] = '\0';
	n = (size_t)snprintf(line, sizeof(line), "  %.*s%s%s%s%s%s  %s%s%s%s%s",
	                     (int)bytes_of(f.name, f.name_cols), f.name, f.bar ? "  [" : "", bar,
	                     f.bar ? "]" : "", f.pct[0] ? "  " : "", f.pct, f.bytes,
	                     f.speed[0] ? "  " : "", f.speed, f.eta[0] ? "  " : "", f.eta);
	/* Never past the width: a line the terminal wraps would break the
	 * count of lines to move up. */
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	fprintf(out, "%.*s", (int)bytes_of(line, width), line);
}

/* Moves back to the first line drawn and clears from there down. */
static void clear_drawn(struct progress *p)
{
	if (p->lines)
		fprintf(stderr, "\r\033[%uA", p->lines);
	fputs("\r\033[J", stderr);
	p->lines = 0;
}

/* The columns a line may take on the terminal now: the last one is left
 * free, as writing there wraps on some terminals and not on others. */
static size_t line_room(void)
{
	unsigned width = cfapkg_terminal_columns(stderr);

	return width > 10 ? width - 1 : 9;
}

static void draw(struct progress *p)
{
	size_t i, width = line_room();
	double now = cfapkg_monotonic_seconds();

	clear_drawn(p);
	for (i = 0; i < p->n; i++) {
		if (!p->rows[i].active)
			continue;
		draw_row(stderr, &p->rows[i], now, width);
		fputc('\n', stderr);
		p->lines++;
	}
	fflush(stderr);
}

/* Where to end a line of text that goes on past n bytes: after the last
 * ", " or "; " before n, else before " in " or " (", else at a space (a
 * word longer than the line, a URL, is cut into pieces). */
static size_t line_break(const char *text, size_t n)
{
	size_t i, clause = 0, phrase = 0, space = 0;

	for (i = 1; i <= n && text[i]; i++) {
		if (text[i] != ' ')
			continue;
		if (text[i - 1] == ',' || text[i - 1] == ';')
			clause = i;
		else if (strncmp(text + i, " in ", 4) == 0 || strncmp(text + i, " (", 2) == 0)
			phrase = i;
		else
			space = i;
	}
	return clause ? clause : phrase ? phrase : space ? space : n;
}

/* text on lines of at most width columns, later ones indented. */
static void print_fitted(const char *text, size_t width)
{
	bool first = true;

	while (*text) {
		size_t room = first ? width : width - 4, n = bytes_of(text, room);
		size_t cut = text[n] ? line_break(text, n) : n;
		fprintf(stderr, "%s%.*s\n", first ? "" : "    ", (int)cut, text);
		text += cut;
		text += strspn(text, " ");
		first = false;
	}
}

/* A line that stays (a finished download, a verbose note): above the
 * bars, which are drawn again below it. */
static void say(struct progress *p, const char *text)
{
	if (p->tty) {
		clear_drawn(p);
		print_fitted(text, line_room());
		draw(p);
	} else {
		fprintf(stderr, "%s\n", text);
		fflush(stderr);
	}
}

/* "  zluda 6-preview.69: 12.0 MiB of 31.4 MiB (38%), 13.1 MiB/s, 0:02 left" */
static void plain_row(const struct progress_row *r, double now, char *buf, size_t len)
{
	struct fields f;
	char *of, bytes[sizeof(f.bytes) + 4];

	fill_fields(r, now, &f);
	cli_fit(bytes, sizeof(bytes), "%s", f.bytes);
	if ((of = strstr(f.bytes, " / ")) != NULL) /* "12.0 MiB of 31.4 MiB" */
		cli_fit(bytes, sizeof(bytes), "%.*s of %s", (int)(of - f.bytes), f.bytes, of + 3);
	cli_fit(buf, len, "  %s: %s%s%s%s%s%s%s", f.name, bytes, f.pct[0] ? " (" : "",
	        f.pct[0] ? f.pct + strspn(f.pct, " ") : "", f.pct[0] ? ")" : "",
	        f.speed[0] ? ", " : "", f.speed, f.eta[0] ? ", " : "");
	if (f.eta[0])
		cli_fit_add(buf, len, "%s", f.eta);
}

static void plain_tick(struct progress *p, double now)
{
	char line[1024];
	size_t i;

	if (now - p->last_plain < p->interval)
		return;
	p->last_plain = now;
	for (i = 0; i < p->n; i++)
		if (p->rows[i].active) {
			plain_row(&p->rows[i], now, line, sizeof(line));
			say(p, line);
		}
}

/* "  zluda 6-preview.69: 31.4 MiB, done in 2.1 s (15.0 MiB/s)" */
static void finished_line(struct progress *p, const struct progress_row *r, double now)
{
	double secs = now - r->first_seen;
	uint64_t brought = r->brought + (r->done > r->base ? r->done - r->base : 0);
	char line[1024], a[32], b[32];

	human_size((int64_t)r->done, a, sizeof(a));
	human_size(secs > 0.001 ? (int64_t)((double)brought / secs) : (int64_t)brought, b,
	           sizeof(b));
	cli_fit(line, sizeof(line), "  %s: %s, done in %.1f s (%s/s%s)", r->item->label, a, secs, b,
	        r->resumed ? ", resumed" : "");
	say(p, line);
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
	p->rows[p->n].first_seen = cfapkg_monotonic_seconds();
	return &p->rows[p->n++];
}

/* A new attempt (the first, or a retry): its speed is measured afresh,
 * from the bytes it started with. */
static void track_attempt(struct progress_row *r, const struct cfapkg_fetch_progress *ev,
                          double now)
{
	if (r->started != 0 && r->attempt == ev->attempt)
		return;
	if (r->started != 0 && r->done > r->base)
		r->brought += r->done - r->base;
	r->started = now;
	r->attempt = ev->attempt;
	r->base = ev->resumed;
	r->resumed = r->resumed || (ev->resumed > 0 && r->brought == 0);
}

static void json_event(struct progress_row *r, const struct cfapkg_fetch_progress *ev, double t)
{
	cJSON *label;
	char *text;

	/* At most two progress events a second for each download; a finish is
	 * always sent, so that a reader never misses the end. */
	if (!ev->finished && t - r->last_json < 0.5)
		return;
	/* The label is a package name and a URL: cJSON escapes what JSON
	 * cannot hold as it is. */
	label = cJSON_CreateString(r->item->label ? r->item->label : "");
	text = label ? cJSON_PrintUnformatted(label) : NULL;
	fprintf(stderr, "{\"event\": \"%s\", \"label\": %s, \"done\": %llu, \"total\": %llu}\n",
	        ev->finished ? "finished" : "progress", text ? text : "\"\"",
	        (unsigned long long)ev->done, (unsigned long long)ev->total);
	cJSON_free(text);
	cJSON_Delete(label);
	r->last_json = t;
}

void progress_update(void *arg, const struct cfapkg_fetch_progress *ev)
{
	struct progress *p = arg;
	struct progress_row *r = row_of(p, ev->item);
	double t = cfapkg_monotonic_seconds();

	if (!r)
		return;
	if (!ev->finished)
		track_attempt(r, ev, t);
	r->done = ev->done;
	r->total = ev->total;
	r->active = !ev->finished;
	if (p->json)
		json_event(r, ev, t);
	if (ev->finished && !r->finished && (p->tty || p->plain) && ev->item->err == CFAPKG_E_OK)
		finished_line(p, r, t);
	r->finished = r->finished || ev->finished;
	if (p->plain)
		plain_tick(p, t);
	if (p->tty && (ev->finished || t - p->last_draw >= REDRAW_S)) {
		draw(p);
		p->last_draw = t;
	}
}

/* How a failed attempt goes on: "trying it again in 0.5 s", ... */
static void next_step(const struct cfapkg_fetch_event *ev, char *buf, size_t len)
{
	if (ev->retry_in > 0)
		cli_fit(buf, len, "trying it again in %.1f s", ev->retry_in);
	else
		cli_fit(buf, len, "%s", ev->next_url ? "trying the next URL" : "giving up");
}

static void on_event(void *arg, const struct cfapkg_fetch_event *ev)
{
	struct progress *p = arg;
	char line[2048], size[32], then[64];
	const char *label = ev->item->label;

	size[0] = '\0';
	if (ev->from)
		cli_fit(size, sizeof(size), ", resuming after %s",
		        human_size((int64_t)ev->from, then, sizeof(then)));
	if (ev->kind == CFAPKG_FETCH_CACHED) {
		cli_fit(line, sizeof(line), "  %s: in the download cache", label);
	} else if (ev->kind == CFAPKG_FETCH_TRYING) {
		cli_fit(line, sizeof(line), "  %s: trying %s (attempt %u%s)", label, ev->url,
		        ev->attempt, size);
	} else if (ev->kind == CFAPKG_FETCH_VERIFIED) {
		cli_fit(line, sizeof(line), "  %s: %s served it%s", label, ev->url,
		        ev->item->sha256 ? "; its SHA-256 is the pinned one" : "");
	} else {
		next_step(ev, then, sizeof(then));
		cli_fit(line, sizeof(line), "  %s: %s failed: %s; %s", label, ev->url,
		        ev->why ? ev->why : "?", then);
	}
	say(p, line);
}

/* "Downloaded 2 files, 2.5 GiB in 1:45 (24.3 MiB/s)". */
static void summary(struct progress *p)
{
	double secs = cfapkg_monotonic_seconds() - p->start;
	uint64_t bytes = 0;
	size_t i, files = 0, resumed = 0;
	char a[32], b[32], t[32], line[256];

	for (i = 0; i < p->n; i++) {
		const struct progress_row *r = &p->rows[i];
		if (!r->finished || r->item->err)
			continue;
		files++;
		resumed += r->resumed;
		bytes += r->brought + (r->done > r->base ? r->done - r->base : 0);
	}
	/* Nothing came (all from the cache, or all failed): there is nothing to
	 * sum up. */
	if (!files)
		return;
	time_text(secs, t, sizeof(t));
	human_size((int64_t)bytes, a, sizeof(a));
	human_size(secs > 0.001 ? (int64_t)((double)bytes / secs) : (int64_t)bytes, b, sizeof(b));
	cli_fit(line, sizeof(line), "Downloaded %lu file%s, %s in %s (%s/s)", (unsigned long)files,
	        files == 1 ? "" : "s", a, t, b);
	if (resumed)
		cli_fit_add(line, sizeof(line), "; %lu resumed",
		            (unsigned long)resumed);
	if (p->tty)
		print_fitted(line, line_room());
	else
		fprintf(stderr, "%s\n", line);
}

void progress_end(struct progress *p)
{
	/* The handler goes first: from here on a Ctrl-C ends cfapkg at once, as
	 * the downloads it could stop are over. */
	signal(SIGINT, SIG_DFL);
	if (p->tty)
		clear_drawn(p);
	/* No summary after an interrupt: report_interrupted says what was kept,
	 * and a total of what came would read as if it had all come. */
	if ((p->tty || p->plain) && !interrupt_flag)
		summary(p);
	fflush(stderr);
	free(p->rows);
	p->rows = NULL;
	p->n = p->cap = 0;
}

int report_interrupted(struct cfapkg_ctx *ctx, const struct cfapkg_fetch_item *items, size_t n)
{
	char a[32], b[32];
	size_t i, kept = 0;

	cli_error("interrupted (Ctrl-C): nothing was installed or changed\n");
	for (i = 0; i < n; i++)
		if (items[i].kept) {
			fprintf(stderr, "  kept for a resume: %s, %s%s%s\n", items[i].label,
			        human_size((int64_t)items[i].kept, a, sizeof(a)),
			        items[i].size > 0 ? " of " : "",
			        items[i].size > 0 ? human_size(items[i].size, b, sizeof(b)) : "");
			kept++;
		}
	if (kept)
		fprintf(stderr, "The partial downloads (.part files) are in %s/downloads: run the same "
		        "command again to resume them.\n", cfapkg_ctx_root(ctx));
	else
		fprintf(stderr, "No partial download was kept.\n");
	return EXIT_INTERRUPTED;
}
