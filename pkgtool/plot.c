/*
 * plot.c - the bench figure, made to be pasted into a bug report or a
 * forum post (800 pixels wide): the metric above wall time (wall time
 * alone without a metric), every run at its place in the order run
 * (measured runs filled, warm-up runs hollow, failed runs as crosses, a
 * value past the axis as an arrow at its edge with the value beside it),
 * axes from zero, each environment's median as a dashed line labelled
 * outside the frame, a legend, the ratio B / A of the medians with the
 * spread of the per-round ratios in the titles, and what was compared
 * (each environment's parts, the GPU, the OS, the date, cfapkg's
 * version) at the foot.  Laid out once, drawn as SVG and, where the build
 * has cairo, as PNG.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "canvas.h"
#include "plot.h"
#include "render.h"

#define FIG_W 800.0
#define MARGIN 16.0
#define AXIS_LEFT 78.0   /* the y axis's tick labels and title */
#define PLOT_H 200.0
#define PANEL_H 282.0    /* from one panel's top to the next's: plot, x axis, title */
#define TITLE_SIZE 16.0
#define SMALL 11.0
#define FOOT_SIZE 10.5
#define PROGRAM_MAX 90   /* characters of the command line in the subtitle */
#define LINES_MAX 8

static const char *const colour[2] = {"#1f77b4", "#d62728"};
static const char *const letter[2] = {"A", "B"};
static const char *const grey = "#555555";

/* Lines of wrapped text and the buffer they point into. */
struct para {
	char buf[2048];
	const char *line[LINES_MAX];
	size_t n;
	double size;
};

struct layout {
	struct para title, sub[2], foot[4];
	size_t nfoot;
	double title_y, sub_y[2], legend_y, panel_top, foot_y, height; /* baselines, tops */
	double gutter;             /* right of the frames, the same for both panels */
	int panels;
};

/* A number to place: "inf" or "nan" (strtod reads them) has no place. */
static bool has_value(const struct cfapkg_bench_run *r, bool metric)
{
	return metric ? r->has_metric && isfinite(r->metric) : isfinite(r->wall_s);
}

/* Warm-up runs and failed runs are drawn, hollow or as crosses, but only the
 * others count towards a median. */
static bool counted(const struct cfapkg_bench_run *r, bool metric)
{
	return !r->warmup && r->status == 0 && has_value(r, metric);
}

static double value(const struct cfapkg_bench_run *r, bool metric)
{
	return metric ? r->metric : r->wall_s;
}

/* s after what buf holds. */
static void append(char *buf, size_t len, const char *s)
{
	size_t used = strlen(buf);

	cli_fit(buf + used, len - used, "%s", s);
}

/* Long: "seven / six = 1.75 (median ratio; per-round 1.2 to 2.67, 3
 * rounds)"; short, for a panel: "B / A = 1.75, per-round 1.2 to 2.67". */
static void ratio_text(char *buf, size_t len, const struct bench_plot *p, bool metric, bool shrt,
                       const struct cfapkg_bench_run *runs, size_t n)
{
	struct cfapkg_bench_ratio r;
	size_t used;

	cfapkg_bench_ratio(runs, n, metric, &r);
	append(buf, len, shrt ? "B" : p->names[1]);
	append(buf, len, " / ");
	append(buf, len, shrt ? "A" : p->names[0]);
	used = strlen(buf);
	if (r.of_medians == 0)
		cli_fit(buf + used, len - used, ": no ratio (an environment has no counted run)");
	else if (shrt)
		cli_fit(buf + used, len - used, " = %.3g, per-round %.3g to %.3g", r.of_medians, r.min,
		        r.max);
	else
		cli_fit(buf + used, len - used, " = %.3g (median ratio; per-round %.3g to %.3g, %lu "
		        "round%s)", r.of_medians, r.min, r.max, (unsigned long)r.rounds,
		        r.rounds == 1 ? "" : "s");
}

/* "TFLOPS: B / A = ...": the figure's title, and its <title> for tools. */
static void headline(char *buf, size_t len, const struct bench_plot *p,
                     const struct cfapkg_bench_run *runs, size_t n)
{
	cli_fit(buf, len, "%s: ", p->metric_name ? p->metric_name : "wall time");
	ratio_text(buf, len, p, p->metric_name != NULL, false, runs, n);
}

static void wrap(struct para *out, const char *text, double size, bool bold)
{
	out->size = size;
	out->n = wrap_text(text, size, bold, FIG_W - 2 * MARGIN, out->buf, sizeof(out->buf),
	                   out->line, LINES_MAX);
}

/* The title at 16 px on at most two lines, else smaller. */
static void fit_title(struct para *t, const char *text)
{
	double size;

	/* Smaller rather than on a third line, so that everything below the
	 * title keeps its place from one figure to the next. */
	for (size = TITLE_SIZE; size > 12; size -= 1) {
		wrap(t, text, size, true);
		if (t->n <= 2)
			return;
	}
	wrap(t, text, 12, true);
}

/* The command line, cut to fit one line, and how the runs were made. */
static void subtitle(struct layout *l, const struct bench_plot *p,
                     const struct cfapkg_bench_run *runs, size_t n)
{
	char text[1024] = "program:";
	size_t i, used = 0, warm = 0;

	/* Each argument is cut to what is left of PROGRAM_MAX, so that one long
	 * path cannot take the whole line. */
	for (i = 0; i < p->nargs && used < PROGRAM_MAX; i++) {
		size_t len = strlen(p->args[i]), room = PROGRAM_MAX - used;
		cli_fit_add(text, sizeof(text), " %.*s%s",
		            (int)(len < room ? len : room), p->args[i], len < room ? "" : "...");
		used += len + 1;
	}
	wrap(&l->sub[0], text, SMALL, false);
	for (i = 0; i < n; i++)
		warm += runs[i].warmup;
	/* The runs alternate between A and B, so each environment had half of
	 * them, warm-ups alike. */
	cli_fit(text, sizeof(text), "%lu runs each after %lu warm-up, A B alternating; ratio: "
	        "median B / median A; spread: per-round B / A, min to max",
	        (unsigned long)((n - warm) / 2), (unsigned long)(warm / 2));
	wrap(&l->sub[1], text, SMALL, false);
}

/* What was compared, for the foot: each environment's own parts, the
 * parts both have, and where and when it ran. */
static void about(struct layout *l, const struct bench_plot *p)
{
	char text[2048];
	unsigned k;

	l->nfoot = 0;
	for (k = 0; k < 2; k++) {
		cli_fit(text, sizeof(text), "%s %s: %s", letter[k], p->names[k],
		        p->own[k] && *p->own[k] ? p->own[k] : "nothing the other lacks");
		wrap(&l->foot[l->nfoot++], text, FOOT_SIZE, false);
	}
	if (p->shared && *p->shared) {
		cli_fit(text, sizeof(text), "in both: %s", p->shared);
		wrap(&l->foot[l->nfoot++], text, FOOT_SIZE, false);
	}
	cli_fit(text, sizeof(text), "GPU: %s; %s; %s; cfapkg %s", p->gpu ? p->gpu : "unknown",
	        p->os ? p->os : "OS unknown", p->date ? p->date : "", p->version ? p->version : "");
	wrap(&l->foot[l->nfoot++], text, FOOT_SIZE, false);
}

static double para_height(const struct para *p)
{
	return (double)p->n * p->size * 1.3;
}

static double gutter(bool metric, const struct cfapkg_bench_run *runs, size_t n);

static void lay_out(struct layout *l, const struct bench_plot *p,
                    const struct cfapkg_bench_run *runs, size_t n)
{
	char head[1024];
	double y;
	size_t i;

	memset(l, 0, sizeof(*l));
	headline(head, sizeof(head), p, runs, n);
	fit_title(&l->title, head);
	subtitle(l, p, runs, n);
	about(l, p);
	l->panels = p->metric_name ? 2 : 1;
	/* One gutter for both panels, the wider one's, so that their frames
	 * line up. */
	l->gutter = gutter(false, runs, n);
	if (p->metric_name && gutter(true, runs, n) > l->gutter)
		l->gutter = gutter(true, runs, n);
	l->title_y = MARGIN + l->title.size;
	l->sub_y[0] = l->title_y + para_height(&l->title) - l->title.size * 1.3 + 20;
	l->sub_y[1] = l->sub_y[0] + para_height(&l->sub[0]);
	l->legend_y = l->sub_y[1] + para_height(&l->sub[1]) + 12;
	/* Below the legend's two rows, room for the first panel's title. */
	l->panel_top = l->legend_y + 22 + 40;
	l->foot_y = l->panel_top + PANEL_H * (l->panels - 1) + PLOT_H + 38 + 26;
	for (i = 0, y = l->foot_y; i < l->nfoot; i++)
		y += para_height(&l->foot[i]);
	/* Whole pixels: the SVG's size and the PNG's are the same. */
	l->height = (double)(long)(y + MARGIN + 0.999);
}

static void draw_para(struct canvas *c, const struct para *p, double x, double y,
                      const char *fill, const char *cls, const char *id, bool bold)
{
	struct text_style t = {p->size, bold, ANCHOR_START, fill, false, false, cls, id};

	c->ops->text(c, &t, x, y, p->line, p->n);
}

static void legend(struct canvas *c, const struct layout *l, const struct bench_plot *p)
{
	struct text_style t = {12, false, ANCHOR_START, NULL, false, false, NULL, NULL};
	struct stroke hollow = {grey, 1.5, false}, dash = {grey, 1.5, true};
	double x = MARGIN, y = l->legend_y;
	char label[256];
	const char *one = label;
	unsigned k;

	for (k = 0; k < 2; k++) {
		char cls[32];
		cli_fit(cls, sizeof(cls), "legend env%u", k);
		cli_fit(label, sizeof(label), "%s: %s", letter[k], p->names[k]);
		c->ops->group(c, cls, NULL);
		c->ops->rect(c, colour[k], NULL, x, y - 10, 12, 12);
		c->ops->text(c, &t, x + 18, y, &one, 1);
		c->ops->group_end(c);
		x += 40 + text_width(label, 12, false);
	}
	x = MARGIN, y += 22;
	c->ops->group(c, "legend key", NULL);
	c->ops->circle(c, grey, NULL, x + 6, y - 4, 4.5);
	one = "measured";
	c->ops->text(c, &t, x + 16, y, &one, 1);
	x += 90;
	c->ops->circle(c, "#ffffff", &hollow, x + 6, y - 4, 4.5);
	one = "warm-up, not counted";
	c->ops->text(c, &t, x + 16, y, &one, 1);
	x += 160;
	c->ops->cross(c, grey, x + 6, y - 4);
	one = p->metric_name ? "failed or no metric, not counted" : "failed, not counted";
	c->ops->text(c, &t, x + 16, y, &one, 1);
	x += 28 + text_width(one, 12, false);
	c->ops->arrow(c, grey, x + 6, y - 4, true);
	one = "off the axis";
	c->ops->text(c, &t, x + 16, y, &one, 1);
	x += 28 + text_width(one, 12, false);
	c->ops->line(c, &dash, NULL, x, y - 4, x + 24, y - 4);
	one = "median";
	c->ops->text(c, &t, x + 30, y, &one, 1);
	c->ops->group_end(c);
}

/* The panel's y range: the counted runs, and the others not far past
 * them, so that a slow first run or a timeout does not flatten the rest
 * (those are drawn at the edge, marked). */
static void scale(struct panel *pn, bool metric, const struct cfapkg_bench_run *runs, size_t n)
{
	/* Room for every run bench allows: a thousand runs and a hundred
	 * warm-ups for each of the two environments. */
	double v[2 * 1100], top = 0;
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (counted(&runs[i], metric))
			top = value(&runs[i], metric) > top ? value(&runs[i], metric) : top;
	for (i = 0; i < n && k < sizeof(v) / sizeof(v[0]); i++)
		if (has_value(&runs[i], metric) &&
		    (counted(&runs[i], metric) || top == 0 || value(&runs[i], metric) <= 2 * top))
			v[k++] = value(&runs[i], metric);
	panel_scale(pn, v, k);
}

static void run_tooltip(char *buf, size_t len, const struct bench_plot *p, bool metric,
                        const struct cfapkg_bench_run *r)
{
	size_t used;

	cli_fit(buf, len, "run %u, %s: %s", r->index + 1, letter[r->env], p->names[r->env]);
	used = strlen(buf);
	if (has_value(r, metric))
		cli_fit(buf + used, len - used, ", %.6g%s", value(r, metric), metric ? "" : " s");
	else
		cli_fit(buf + used, len - used, ", metric not found");
	used = strlen(buf);
	if (r->status)
		cli_fit(buf + used, len - used, ", exit %d", r->status);
	append(buf, len, r->warmup ? ", warm-up" : "");
}

/* A value past the axis: an arrow at the edge, and the value beside it. */
static void off_axis(struct canvas *c, const struct panel *pn, double x, int side,
                     const char *col, double v, bool metric)
{
	struct text_style t = {9, false, ANCHOR_START, col, true, false, "offscale-label", NULL};
	double y = side > 0 ? pn->top + 7 : pn->top + pn->height - 7;
	char label[48];
	const char *one = label;

	c->ops->arrow(c, col, x, y, side > 0);
	cli_fit(label, sizeof(label), "%.4g%s", v, metric ? "" : " s");
	c->ops->text(c, &t, x + 7, y + 3, &one, 1);
}

/* One run's mark, in a group naming it: run number, environment, value,
 * and why it does not count. */
static void mark(struct canvas *c, const struct panel *pn, const struct bench_plot *p,
                 bool metric, const struct cfapkg_bench_run *r)
{
	bool ok = r->status == 0 && has_value(r, metric);
	double x = panel_x(pn, r->index + 1.0), y = pn->top + pn->height;
	int side = has_value(r, metric) ? panel_side(pn, value(r, metric)) : 0;
	struct stroke hollow = {colour[r->env], 1.5, false};
	char tip[512], cls[64];

	if (has_value(r, metric) && !side)
		y = panel_y(pn, value(r, metric));
	run_tooltip(tip, sizeof(tip), p, metric, r);
	cli_fit(cls, sizeof(cls), "run %s%s env%u%s", r->warmup ? "warmup" : "measured",
	        ok ? "" : " failed", r->env, side ? " offscale" : "");
	c->ops->group(c, cls, tip);
	/* A value off the axis shows as an arrow whatever else it is, so that
	 * no mark is drawn outside the frame; then a failure as a cross. */
	if (side)
		off_axis(c, pn, x, side, colour[r->env], value(r, metric), metric);
	else if (!ok)
		c->ops->cross(c, colour[r->env], x, y);
	else if (r->warmup)
		c->ops->circle(c, "#ffffff", &hollow, x, y, 4.5);
	else
		c->ops->circle(c, colour[r->env], NULL, x, y, 4.5);
	c->ops->group_end(c);
}

/* "B median 7", "A median 0.0248 s": what the gutter shows. */
static void median_label(char *buf, size_t len, unsigned k, bool metric, double median)
{
	cli_fit(buf, len, "%s median %.3g%s", letter[k], median, metric ? "" : " s");
}

/* The gutter right of the frame: as wide as the longer median label. */
static double gutter(bool metric, const struct cfapkg_bench_run *runs, size_t n)
{
	struct cfapkg_bench_stats s;
	double most = text_width("B median 0.000", SMALL, false);
	char label[64];
	unsigned k;

	for (k = 0; k < 2; k++) {
		cfapkg_bench_stats(runs, n, k, metric, &s);
		median_label(label, sizeof(label), k, metric, s.median);
		if (s.n && isfinite(s.median) && text_width(label, SMALL, false) > most)
			most = text_width(label, SMALL, false);
	}
	return most + 14;
}

/* Each environment's median: a dashed line across the plot, its value in
 * the gutter right of the frame (never over a run), the two labels kept
 * apart. */
static void medians(struct canvas *c, const struct panel *pn, bool metric,
                    const struct cfapkg_bench_run *runs, size_t n)
{
	struct text_style t = {SMALL, false, ANCHOR_START, NULL, false, false, NULL, NULL};
	struct cfapkg_bench_stats s[2];
	double y[2], at[2], right = pn->left + pn->width;
	char label[64], cls[32];
	const char *one = label;
	unsigned k;

	for (k = 0; k < 2; k++) {
		cfapkg_bench_stats(runs, n, k, metric, &s[k]);
		if (!isfinite(s[k].median) || panel_side(pn, s[k].median))
			s[k].n = 0;
		y[k] = at[k] = s[k].n ? panel_y(pn, s[k].median) + 4 : 0;
	}
	if (s[0].n && s[1].n && at[0] - at[1] < 14 && at[1] - at[0] < 14) {
		unsigned up = at[0] <= at[1] ? 0 : 1;
		double mid = (at[0] + at[1]) / 2;
		at[up] = mid - 7;
		at[!up] = mid + 7;
	}
	for (k = 0; k < 2; k++) {
		struct stroke dash = {colour[k], 1.5, true};
		if (!s[k].n)
			continue;
		cli_fit(cls, sizeof(cls), "median env%u", k);
		c->ops->line(c, &dash, cls, pn->left, y[k] - 4, right, y[k] - 4);
		cli_fit(cls, sizeof(cls), "median-label env%u", k);
		median_label(label, sizeof(label), k, metric, s[k].median);
		t.fill = colour[k];
		t.cls = cls;
		c->ops->text(c, &t, right + 6, at[k], &one, 1);
	}
}

/* The runs before the first measured one, shaded and named. */
static void warmup_band(struct canvas *c, const struct panel *pn,
                        const struct cfapkg_bench_run *runs, size_t n)
{
	struct text_style t = {10, false, ANCHOR_START, "#777777", false, false, NULL, NULL};
	const char *one = "warm-up";
	size_t w = 0;

	while (w < n && runs[w].warmup)
		w++;
	if (!w)
		return;
	c->ops->rect(c, "#f0f0f0", NULL, pn->left, pn->top, panel_x(pn, (double)w + 0.5) - pn->left,
	             pn->height);
	/* At the foot: an arrow for a slow first run is at the top. */
	c->ops->text(c, &t, pn->left + 3, pn->top + pn->height - 4, &one, 1);
}

static void panel(struct canvas *c, const struct layout *l, const struct bench_plot *p,
                  double top, bool metric, const struct cfapkg_bench_run *runs, size_t n)
{
	struct panel pn = {MARGIN + AXIS_LEFT, top, FIG_W - 2 * MARGIN - AXIS_LEFT - l->gutter,
	                   PLOT_H, 0, 1, 1, (unsigned)n};
	struct text_style t = {12, true, ANCHOR_START, NULL, false, false, "panel-title", NULL};
	const char *name = metric ? p->metric_name : "wall time (s)";
	char ratio[256] = ": ", title[512], axis[256];
	const char *one = title;
	size_t i;

	scale(&pn, metric, runs, n);
	c->ops->group(c, metric ? "panel metric" : "panel wall", NULL);
	/* A long name is cut, not the ratio after it: the ratio is the news. */
	ratio_text(ratio, sizeof(ratio), p, metric, true, runs, n);
	fit_cut(name, 12, true, FIG_W - 2 * MARGIN - text_width(ratio, 12, true), title,
	        sizeof(title));
	cli_fit_add(title, sizeof(title), "%s", ratio);
	c->ops->text(c, &t, MARGIN, pn.top - 12, &one, 1);
	warmup_band(c, &pn, runs, n);
	panel_axes(c, &pn, fit_cut(name, 11, false, PLOT_H, axis, sizeof(axis)));
	medians(c, &pn, metric, runs, n);
	for (i = 0; i < n; i++)
		mark(c, &pn, p, metric, &runs[i]);
	c->ops->group_end(c);
}

static void draw(struct canvas *c, const struct layout *l, const struct bench_plot *p,
                 const struct cfapkg_bench_run *runs, size_t n)
{
	double y;
	size_t i;

	draw_para(c, &l->title, MARGIN, l->title_y, NULL, NULL, "title", true);
	draw_para(c, &l->sub[0], MARGIN, l->sub_y[0], "#444444", NULL, "subtitle", false);
	draw_para(c, &l->sub[1], MARGIN, l->sub_y[1], "#444444", NULL, NULL, false);
	legend(c, l, p);
	/* The metric's panel above wall time's: it is what the figure is about
	 * when there is one. */
	if (p->metric_name)
		panel(c, l, p, l->panel_top, true, runs, n);
	panel(c, l, p, l->panel_top + PANEL_H * (l->panels - 1), false, runs, n);
	for (i = 0, y = l->foot_y; i < l->nfoot; y += para_height(&l->foot[i++]))
		draw_para(c, &l->foot[i], MARGIN, y, grey, "about", NULL, false);
}

int write_plots(const char *svg, const char *png, const struct bench_plot *p,
                const struct cfapkg_bench_run *runs, size_t n)
{
	/* Static: the layout's text buffers are much for the stack, and one
	 * figure is made per run. */
	static struct layout l;
	struct canvas *c;
	char head[1024];
	int rc = 0;

	lay_out(&l, p, runs, n);
	headline(head, sizeof(head), p, runs, n);
	if (!(c = svg_canvas_open(svg, FIG_W, l.height, head)))
		return -1;
	draw(c, &l, p, runs, n);
	rc |= svg_canvas_close(c);
	if (png && !(c = png_canvas_open(FIG_W, l.height)))
		return -1;
	if (png) {
		draw(c, &l, p, runs, n);
		rc |= png_canvas_close(c, png);
	}
	return rc;
}
