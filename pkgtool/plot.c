/*
 * plot.c - the bench plot: each measured run as a dot at its place in the
 * sequence, one colour per environment, and each environment's median as
 * a dashed line.  Plain SVG, no scripts, no external fonts.
 */
#include <stdio.h>
#include <string.h>

#include "render.h"

#define W 720
#define H 360
#define L 70
#define R 20
#define T 40
#define B 50

static const char *const colour[2] = {"#1f77b4", "#d62728"};

static double value(const struct cfapkg_bench_run *r, bool metric)
{
	return metric ? r->metric : r->wall_s;
}

static bool counted(const struct cfapkg_bench_run *r, bool metric)
{
	return !r->warmup && r->status == 0 && (!metric || r->has_metric);
}

static void escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

int write_svg(const char *path, const char *const names[2], const char *metric,
              const struct cfapkg_bench_run *runs, size_t n)
{
	bool m = metric != NULL;
	double lo = 0, hi = 0, span;
	struct cfapkg_bench_stats s;
	size_t i, k, shown = 0;
	FILE *f;

	for (i = 0; i < n; i++)
		if (counted(&runs[i], m)) {
			double v = value(&runs[i], m);
			lo = shown ? (v < lo ? v : lo) : v;
			hi = shown++ ? (v > hi ? v : hi) : v;
		}
	span = hi > lo ? hi - lo : (hi ? hi * 0.1 : 1);
	lo -= span * 0.1;
	hi += span * 0.1;
	if (!(f = fopen(path, "w")))
		return -1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"20\">", L);
	escape(f, m ? metric : "wall time (s)");
	fprintf(f, " per run: ");
	for (k = 0; k < 2; k++) {
		fprintf(f, "<tspan fill=\"%s\">", colour[k]);
		escape(f, names[k]);
		fprintf(f, "</tspan>%s", k ? "" : " vs ");
	}
	fprintf(f, "</text>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L,
	        H - B, W - R, H - B);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L,
	        H - B);
	fprintf(f, "<text x=\"5\" y=\"%d\">%.4g</text>\n<text x=\"5\" y=\"%d\">%.4g</text>\n", T + 4,
	        hi, H - B, lo);
	fprintf(f, "<text x=\"%d\" y=\"%d\">run (in the order run; warm-up left out)</text>\n",
	        L, H - 15);
#define X(i) (L + (double)(i) * (W - L - R) / (double)(n > 1 ? n - 1 : 1))
#define Y(v) (H - B - ((v) - lo) * (H - T - B) / (hi - lo))
	for (i = 0; i < n; i++)
		if (counted(&runs[i], m))
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", X(i),
			        Y(value(&runs[i], m)), colour[runs[i].env]);
	for (k = 0; k < 2; k++) {
		cfapkg_bench_stats(runs, n, (unsigned)k, m, &s);
		if (s.n)
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
			        "stroke-dasharray=\"6 4\"/>\n", L, Y(s.median), W - R, Y(s.median),
			        colour[k]);
	}
	fprintf(f, "</svg>\n");
	return fclose(f);
}
