/*
 * plot_axis.c - the bench figure's scales: y ranges in "nice" steps of 1,
 * 2 or 5 times a power of ten (from zero for values that are never below
 * it), tick labels with just the decimals a step needs, grids, axis
 * titles and the frame; and the escaping of text into SVG.
 * No libm: the command line does not link it, and loops over powers of
 * ten are exact enough for ticks.
 */
#include <stdio.h>
#include <string.h>

#include "canvas.h"
#include "render.h"
#include "plot.h"

#define TICKS 5 /* about this many steps on a y axis */
#define GRID "#dddddd"

double panel_x(const struct panel *p, double run)
{
	/* Half a run of room on each side keeps the first and last marks off
	 * the axes. */
	return p->left + (run - 0.5) * p->width / (double)(p->runs ? p->runs : 1);
}

/* Screen y grows downwards, so the panel's bottom is its lowest value. */
double panel_y(const struct panel *p, double v)
{
	return p->top + p->height - (v - p->lo) * p->height / (p->hi - p->lo);
}

/* The smallest of 1, 2, 5 times a power of ten that is at least x > 0. */
static double nice_step(double x)
{
	double unit = 1;

	/* Bounded both ways, so that a step of 0 or of infinity ends the loops
	 * rather than spinning. */
	while (unit > x && unit > 1e-300)
		unit /= 10;
	while (unit * 10 <= x && unit < 1e300)
		unit *= 10;
	if (unit >= x)
		return unit;
	return unit * 2 >= x ? unit * 2 : unit * 5 >= x ? unit * 5 : unit * 10;
}

/* The whole number of steps at or below (up: at or above) v. */
static double steps(double v, double step, int up)
{
	double k = v / step;

	if (k > 9e18 || k < -9e18)
		return k; /* past what a whole number can hold: near enough */
	/* The cast truncates toward zero; the two checks below move k to the
	 * step at or below v (or above, when up), whichever side of zero v is
	 * on. */
	k = (double)(long long)k;

	if (!up && k * step > v)
		k -= 1;
	if (up && k * step < v)
		k += 1;
	return k;
}

void panel_scale(struct panel *p, const double *v, size_t n)
{
	double lo = n ? v[0] : 0, hi = n ? v[0] : 1;
	size_t i;

	for (i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	/* Times and rates are compared by ratio: their axis starts at zero,
	 * so that twice the height is twice the value. */
	if (lo >= 0)
		lo = 0;
	if (hi - lo <= (hi > -lo ? hi : -lo) * 1e-9) {
		/* One value (or all alike, or all zero): a range around it. */
		double pad = hi > 0 ? hi * 0.1 : hi < 0 ? -hi * 0.1 : 1;
		lo -= lo == 0 ? 0 : pad;
		hi += pad;
	}
	/* The range is widened to whole steps, so that the first and last grid
	 * lines are ticks too. */
	p->step = nice_step((hi - lo) / TICKS);
	p->lo = steps(lo, p->step, 0) * p->step;
	p->hi = steps(hi, p->step, 1) * p->step;
	/* Values that sit on the range's edge stay clear of the frame. */
	if (p->lo == lo && lo != 0)
		p->lo -= p->step;
	if (p->hi == hi)
		p->hi += p->step;
}

int panel_side(const struct panel *p, double v)
{
	return v > p->hi ? 1 : v < p->lo ? -1 : 0;
}

const char *tick_label(double v, double step, char *buf, size_t len)
{
	int decimals = 0;
	double s = step;

	if (v < step * 1e-9 && v > -step * 1e-9)
		v = 0; /* no "-0.0" from a sum of steps */
	/* As many decimals as the step has: a step of 0.2 shows one, 0.05
	 * two and 5 none.  The slack keeps 0.1 * 10 from reading as just
	 * under 1. */
	while (s < 1 - 1e-9 && decimals < 9) {
		s *= 10;
		decimals++;
	}
	/* Very large values and very fine steps would make long labels: they
	 * get four significant digits instead. */
	if (v >= 1e7 || v <= -1e7 || step < 1e-6)
		cli_fit(buf, len, "%.4g", v);
	else
		cli_fit(buf, len, "%.*f", decimals, v);
	return buf;
}

static const struct stroke tick_stroke = {"#000000", 1, false};

/* The x axis: run numbers in steps of 1, 2, 5, 10 ... */
static void x_axis(struct canvas *c, const struct panel *p)
{
	double bottom = p->top + p->height, step = nice_step((double)p->runs / 10), r;
	struct text_style tick = {11, false, ANCHOR_MIDDLE, NULL, false, false, "tick x", NULL};
	struct text_style title = {11, false, ANCHOR_MIDDLE, "#333333", false, false, "axis-title x",
	                           NULL};
	const char *words = "run, in the order run (A and B alternate)";
	char label[32];
	const char *one = label;

	/* Whole runs only: a run has no halves. */
	if (step < 1)
		step = 1;
	for (r = 1; r <= (double)p->runs; r += step) {
		double x = panel_x(p, r);
		c->ops->line(c, &tick_stroke, NULL, x, bottom, x, bottom + 5);
		tick_label(r, 1, label, sizeof(label));
		c->ops->text(c, &tick, x, bottom + 17, &one, 1);
	}
	c->ops->text(c, &title, p->left + p->width / 2, bottom + 33, &words, 1);
}

static void y_axis(struct canvas *c, const struct panel *p, const char *ytitle)
{
	static const struct stroke grid = {GRID, 1, false};
	struct text_style tick = {11, false, ANCHOR_END, NULL, false, false, "tick y", NULL};
	struct text_style title = {11, false, ANCHOR_MIDDLE, "#333333", false, true, "axis-title y",
	                           NULL};
	double right = p->left + p->width, v, mid = p->top + p->height / 2;
	char label[48];
	const char *one = label;
	int k;

	/* Stepped by count from lo rather than by adding to v, so that rounding
	 * does not build up; the slack lets the last tick land on hi. */
	for (k = 0; (v = p->lo + k * p->step) <= p->hi + p->step * 1e-6; k++) {
		double y = panel_y(p, v);
		c->ops->line(c, &grid, NULL, p->left, y, right, y);
		c->ops->line(c, &tick_stroke, NULL, p->left - 5, y, p->left, y);
		tick_label(v, p->step, label, sizeof(label));
		c->ops->text(c, &tick, p->left - 8, y + 4, &one, 1);
	}
	c->ops->text(c, &title, p->left - 52, mid, &ytitle, 1);
}

void panel_axes(struct canvas *c, const struct panel *p, const char *ytitle)
{
	/* The grid first and the frame over its ends; the caller draws the
	 * marks after, over both. */
	y_axis(c, p, ytitle);
	x_axis(c, p);
	c->ops->group(c, "frame", NULL);
	c->ops->rect(c, NULL, &tick_stroke, p->left, p->top, p->width, p->height);
	c->ops->group_end(c);
}

/* The length of the valid UTF-8 character at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = *s >= 0xF0 && *s <= 0xF4 ? 4 : *s >= 0xE0 ? 3 : *s >= 0xC2 ? 2 : 0, i;

	if (*s >= 0xF5 || (s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0) ||
	    (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))
		return 0; /* past U+10FFFF, a surrogate, or an overlong form */
	for (i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

void svg_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p && *p) {
		/* Each character is checked whole: broken UTF-8 from a recipe
		 * or a machine's name would make the file unreadable as XML. */
		size_t n = *p < 0x80 ? 1 : utf8_len(p);
		if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else if (*p == '"')
			fputs("&quot;", f);
		else if (*p == '\'')
			fputs("&apos;", f);
		else if (n == 0 || (*p < 0x20 && *p != '\t'))
			fputc('?', f); /* XML has no place for control bytes or broken UTF-8 */
		else
			fwrite(p, 1, n, f);
		p += n ? n : 1;
	}
}
