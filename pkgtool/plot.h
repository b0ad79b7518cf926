/*
 * plot.h - what the bench figure's files share: a panel's frame and
 * scales (plot_axis.c) and the text helpers both use.
 */
#ifndef CFAPKG_PLOT_H
#define CFAPKG_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "canvas.h"

struct panel {
	double left, top, width, height; /* the plotting area, in figure units */
	double lo, hi, step;             /* the y range, a whole number of steps */
	unsigned runs;                   /* the x axis: runs 1..runs in the order run */
};

/* Where run number (1-based) and value v fall in the panel. */
double panel_x(const struct panel *p, double run);
double panel_y(const struct panel *p, double v);
/* A y range of "nice" 1-2-5 steps around the n values (n may be 0);
 * from zero when no value is below it (the figure compares by ratio,
 * which only heights from zero show truly). */
void panel_scale(struct panel *p, const double *v, size_t n);
/* Whether v lies within the panel's range (else it is drawn at the edge,
 * marked as off the scale). */
int panel_side(const struct panel *p, double v);
/* Grid, ticks and their labels on both axes, the axis titles and the
 * frame. */
void panel_axes(struct canvas *c, const struct panel *p, const char *ytitle);

/* Text for an SVG text node or attribute: &, <, > and quotes escaped. */
void svg_text(FILE *f, const char *s);
/* v with as many decimals as a step of step needs ("0.25" for 0.05). */
const char *tick_label(double v, double step, char *buf, size_t len);

#endif
