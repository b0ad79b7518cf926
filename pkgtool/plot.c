/*
 * plot.c - the bench figure, made to be pasted into a bug report: the
 * metric and wall time side by side (wall time alone without a metric),
 * every run at its place in the order run (measured runs filled, warm-up
 * runs hollow, failed runs as crosses), each environment's median as a
 * dashed line labelled with its value, a legend, and the ratio B / A of
 * the medians with the spread of the per-round ratios in the titles.
 * Plain SVG: no scripts, no external fonts, the same bytes for the same
 * runs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"
#include "render.h"

#define PANEL_W 500 /* one of two panels, with its axis labels */
#define SOLE_W 720  /* a panel alone: room for the title */
#define FIG_H 456
#define PLOT_LEFT 84 /* the plotting area within a panel */
#define PLOT_RIGHT 20
#define PLOT_TOP 140
#define PLOT_H 260
#define PROGRAM_MAX 90 /* characters of the command line in the subtitle */

static const char *const colour[2] = {"#1f77b4", "#d62728"};
static const char *const letter[2] = {"A", "B"};

/* A number to place: "inf" or "nan" (strtod reads them) has no place. */
static bool has_value(const struct cfapkg_bench_run *r, bool metric)
{
	return metric ? r->has_metric && isfinite(r->metric) : isfinite(r->wall_s);
}

static bool counted(const struct cfapkg_bench_run *r, bool metric)
{
	return !r->warmup && r->status == 0 && has_value(r, metric);
}

static double value(const struct cfapkg_bench_run *r, bool metric)
{
	return metric ? r->metric : r->wall_s;
}

/* Long: "rt-linux / six = 1.75 (median ratio; per-round 1.2 to 2.67, 3
 * rounds)"; short, for a panel: "B / A = 1.75, per-round 1.2 to 2.67". */
static void ratio_text(FILE *f, const struct bench_plot *p, bool metric, bool shrt,
                       const struct cfapkg_bench_run *runs, size_t n)
{
	struct cfapkg_bench_ratio r;

	cfapkg_bench_ratio(runs, n, metric, &r);
	svg_text(f, shrt ? "B" : p->names[1]);
	fputs(" / ", f);
	svg_text(f, shrt ? "A" : p->names[0]);
	if (r.of_medians == 0)
		fputs(": no ratio (an environment has no counted run)", f);
	else if (shrt)
		fprintf(f, " = %.3g, per-round %.3g to %.3g", r.of_medians, r.min, r.max);
	else
		fprintf(f, " = %.3g (median ratio; per-round %.3g to %.3g, %lu round%s)",
		        r.of_medians, r.min, r.max, (unsigned long)r.rounds, r.rounds == 1 ? "" : "s");
}

/* "TFLOPS: B / A = ...": the figure's title, and its <title> for tools. */
static void headline(FILE *f, const struct bench_plot *p, const struct cfapkg_bench_run *runs,
                     size_t n)
{
	svg_text(f, p->metric_name ? p->metric_name : "wall time");
	fputs(": ", f);
	ratio_text(f, p, p->metric_name != NULL, false, runs, n);
}

static void title(FILE *f, const struct bench_plot *p, int width,
                  const struct cfapkg_bench_run *runs, size_t n)
{
	fputs("<title>", f);
	headline(f, p, runs, n);
	fputs("</title>\n", f);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, FIG_H);
	fputs("<text id=\"title\" x=\"16\" y=\"26\" font-size=\"16\" font-weight=\"bold\">", f);
	headline(f, p, runs, n);
	fputs("</text>\n", f);
}

/* The command line and how the runs were made, cut to fit one line. */
static void subtitle(FILE *f, const struct bench_plot *p, const struct cfapkg_bench_run *runs,
                     size_t n)
{
	size_t i, used = 0, warm = 0;

	for (i = 0; i < n; i++)
		warm += runs[i].warmup;
	fputs("<text id=\"subtitle\" x=\"16\" y=\"46\" font-size=\"11\" fill=\"#444444\">"
	      "program: ", f);
	for (i = 0; i < p->nargs && used < PROGRAM_MAX; i++) {
		char part[PROGRAM_MAX + 4];
		size_t len = strlen(p->args[i]), room = PROGRAM_MAX - used;
		snprintf(part, sizeof(part), "%.*s%s", (int)(len < room ? len : room), p->args[i],
		         len < room ? "" : "...");
		fputs(i ? " " : "", f);
		svg_text(f, part);
		used += len + 1;
	}
	fprintf(f, "</text>\n<text x=\"16\" y=\"61\" font-size=\"11\" fill=\"#444444\">%lu "
	        "runs each after %lu warm-up, A B alternating; ratio: median B / median A; "
	        "spread: per-round B / A, min to max</text>\n",
	        (unsigned long)((n - warm) / 2), (unsigned long)(warm / 2));
}

static void cross(FILE *f, double x, double y, const char *stroke)
{
	fprintf(f, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"%s\" stroke-width=\"2\" "
	        "fill=\"none\"/>", x - 4, y - 4, stroke);
}

static void legend(FILE *f, const struct bench_plot *p)
{
	double x = 16, y = 84;
	size_t k;

	for (k = 0; k < 2; k++) {
		fprintf(f, "<g class=\"legend env%lu\"><rect x=\"%.1f\" y=\"%.1f\" width=\"12\" "
		        "height=\"12\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s: ", (unsigned long)k,
		        x, y - 10, colour[k], x + 18, y, letter[k]);
		svg_text(f, p->names[k]);
		fputs("</text></g>\n", f);
		x += 48 + 7 * (double)strlen(p->names[k]);
	}
	x = 16, y = 104;
	fprintf(f, "<g class=\"legend key\" fill=\"#555555\"><circle cx=\"%.1f\" cy=\"%.1f\" "
	        "r=\"4.5\"/><text x=\"%.1f\" y=\"%.1f\">measured</text>", x + 6, y - 4, x + 16, y);
	x += 90;
	fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"white\" stroke=\"#555555\" "
	        "stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\">warm-up, not counted</text>",
	        x + 6, y - 4, x + 16, y);
	x += 170;
	cross(f, x + 6, y - 4, "#555555");
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s, not counted</text>", x + 16, y,
	        p->metric_name ? "failed or no metric" : "failed");
	x += p->metric_name ? 250 : 140;
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555555\" "
	        "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"%.1f\" y=\"%.1f\">"
	        "median</text></g>\n", x, y - 4, x + 24, y - 4, x + 30, y);
}

/* The panel's y range: the counted runs and nothing else, so that a slow
 * first run or a timeout does not flatten the rest. */
static void scale(struct panel *pn, bool metric, const struct cfapkg_bench_run *runs, size_t n)
{
	double v[2 * 1100];
	size_t i, k = 0, all = 0;

	for (i = 0; i < n && k < sizeof(v) / sizeof(v[0]); i++)
		if (counted(&runs[i], metric))
			v[k++] = value(&runs[i], metric);
	/* Nothing counted: the range of whatever has a value. */
	for (i = 0; !k && i < n && all < sizeof(v) / sizeof(v[0]); i++)
		if (has_value(&runs[i], metric))
			v[all++] = value(&runs[i], metric);
	panel_scale(pn, v, k ? k : all);
}

static double clamp_y(const struct panel *pn, double y)
{
	return y < pn->top ? pn->top : y > pn->top + pn->height ? pn->top + pn->height : y;
}

/* One run's mark, with a tooltip naming it: run number, environment,
 * value, and why it does not count. */
static void mark(FILE *f, const struct panel *pn, const struct bench_plot *p, bool metric,
                 const struct cfapkg_bench_run *r)
{
	bool ok = r->status == 0 && has_value(r, metric);
	double x = panel_x(pn, r->index + 1.0);
	double y = has_value(r, metric) ? clamp_y(pn, panel_y(pn, value(r, metric)))
	                                : pn->top + pn->height;

	fprintf(f, "<g class=\"run %s%s env%u\"><title>run %u, %s: ", r->warmup ? "warmup" : "measured",
	        ok ? "" : " failed", r->env, r->index + 1, letter[r->env]);
	svg_text(f, p->names[r->env]);
	if (has_value(r, metric))
		fprintf(f, ", %.6g%s", value(r, metric), metric ? "" : " s");
	else
		fputs(", metric not found", f);
	if (r->status)
		fprintf(f, ", exit %d", r->status);
	fputs(r->warmup ? ", warm-up" : "", f);
	fputs("</title>", f);
	if (!ok)
		cross(f, x, y, colour[r->env]);
	else if (r->warmup)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"white\" stroke=\"%s\" "
		        "stroke-width=\"1.5\"/>", x, y, colour[r->env]);
	else
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/>", x, y,
		        colour[r->env]);
	fputs("</g>\n", f);
}

/* Each environment's median: a dashed line and its value at the right
 * end, above the line, or below it when the other label would be near. */
static void medians(FILE *f, const struct panel *pn, bool metric,
                    const struct cfapkg_bench_run *runs, size_t n)
{
	struct cfapkg_bench_stats s[2];
	double y[2], right = pn->left + pn->width;
	unsigned k;

	for (k = 0; k < 2; k++) {
		cfapkg_bench_stats(runs, n, k, metric, &s[k]);
		if (!isfinite(s[k].median))
			s[k].n = 0;
		y[k] = s[k].n ? panel_y(pn, s[k].median) : 0;
	}
	for (k = 0; k < 2; k++) {
		bool below = s[!k].n && y[k] - y[!k] < 16 && y[k] - y[!k] > -16 &&
		             (y[k] > y[!k] || (y[k] == y[!k] && k == 1));
		if (!s[k].n)
			continue;
		fprintf(f, "<line class=\"median env%u\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		        "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n", k, pn->left,
		        y[k], right, y[k], colour[k]);
		fprintf(f, "<text class=\"median-label env%u\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
		        "fill=\"%s\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">%s median "
		        "%.4g%s</text>\n", k, right - 4, below ? y[k] + 15 : y[k] - 5, colour[k],
		        letter[k], s[k].median, metric ? "" : " s");
	}
}

/* The runs before the first measured one, shaded and named. */
static void warmup_band(FILE *f, const struct panel *pn, const struct cfapkg_bench_run *runs,
                        size_t n)
{
	size_t w = 0;

	while (w < n && runs[w].warmup)
		w++;
	if (!w)
		return;
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f0f0f0\"/>\n"
	        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#777777\">warm-up</text>\n",
	        pn->left, pn->top, panel_x(pn, (double)w + 0.5) - pn->left, pn->height,
	        pn->left + 3, pn->top + 12);
}

static void panel(FILE *f, const struct bench_plot *p, double x0, double w, bool metric,
                  const struct cfapkg_bench_run *runs, size_t n)
{
	struct panel pn = {x0 + PLOT_LEFT, PLOT_TOP, w - PLOT_LEFT - PLOT_RIGHT, PLOT_H, 0, 1, 1,
	                   (unsigned)n};
	size_t i;

	scale(&pn, metric, runs, n);
	fprintf(f, "<g class=\"panel %s\">\n<text class=\"panel-title\" x=\"%.1f\" y=\"%d\" "
	        "font-weight=\"bold\">", metric ? "metric" : "wall", pn.left, PLOT_TOP - 12);
	svg_text(f, metric ? p->metric_name : "wall time (s)");
	fputs(": ", f);
	ratio_text(f, p, metric, true, runs, n);
	fputs("</text>\n", f);
	warmup_band(f, &pn, runs, n);
	panel_axes(f, &pn, metric ? p->metric_name : "wall time (s)");
	medians(f, &pn, metric, runs, n);
	for (i = 0; i < n; i++)
		mark(f, &pn, p, metric, &runs[i]);
	fputs("</g>\n", f);
}

int write_svg(const char *path, const struct bench_plot *p, const struct cfapkg_bench_run *runs,
              size_t n)
{
	int panels = p->metric_name ? 2 : 1, pw = panels == 2 ? PANEL_W : SOLE_W;
	int width = panels * pw + 20;
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
	        "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
	        "font-size=\"12\">\n", width, FIG_H, width, FIG_H);
	title(f, p, width, runs, n);
	subtitle(f, p, runs, n);
	legend(f, p);
	if (p->metric_name)
		panel(f, p, 10, pw, true, runs, n);
	panel(f, p, 10 + (panels - 1) * pw, pw, false, runs, n);
	fputs("</svg>\n", f);
	return ferror(f) ? (fclose(f), -1) : fclose(f);
}
