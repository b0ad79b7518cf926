/*
 * canvas.h - what the bench figure is drawn on: a few shapes and text,
 * written as SVG (canvas_svg.c) or painted by cairo into a PNG
 * (canvas_cairo.c, where the build found cairo; canvas_nopng.c says the
 * build writes SVG only).  The figure is laid out once and drawn on each,
 * so both files show the same.  Units are pixels of the figure.
 */
#ifndef CFAPKG_CANVAS_H
#define CFAPKG_CANVAS_H

#include <stdbool.h>
#include <stddef.h>

enum anchor { ANCHOR_START, ANCHOR_MIDDLE, ANCHOR_END };

struct stroke {
	const char *colour;        /* "#rrggbb"; NULL: none */
	double width;
	bool dashed;               /* 6 on, 4 off */
};

struct text_style {
	double size;               /* font size in pixels */
	bool bold;
	enum anchor anchor;
	const char *fill;          /* NULL: black */
	bool halo;                 /* a white outline behind, over grid lines */
	bool vertical;             /* read bottom to top (a y axis's title) */
	const char *cls, *id;      /* SVG only: what the tests and tools find it by */
};

struct canvas;
struct canvas_ops {
	/* A group of shapes with a class and a tooltip (SVG's <g><title>). */
	void (*group)(struct canvas *c, const char *cls, const char *tooltip);
	void (*group_end)(struct canvas *c);
	void (*line)(struct canvas *c, const struct stroke *s, const char *cls, double x1, double y1,
	             double x2, double y2);
	void (*rect)(struct canvas *c, const char *fill, const struct stroke *s, double x, double y,
	             double w, double h);
	void (*circle)(struct canvas *c, const char *fill, const struct stroke *s, double cx,
	               double cy, double r);
	void (*cross)(struct canvas *c, const char *colour, double cx, double cy);
	/* A triangle at an edge of an axis, pointing up (a value above its
	 * range) or down (below it). */
	void (*arrow)(struct canvas *c, const char *colour, double cx, double cy, bool up);
	/* Lines of text, the first with its baseline at y, each below the last. */
	void (*text)(struct canvas *c, const struct text_style *t, double x, double y,
	             const char *const *lines, size_t n);
};

struct canvas {
	const struct canvas_ops *ops;
	double width, height;
	bool failed;               /* a write or an allocation failed */
};

/* canvas_text.c: how wide text is drawn, in pixels: DejaVu Sans's
 * advances (what a Linux "sans-serif" is; Arial and Helvetica are
 * narrower), so that laid out by it, text fits in either file. */
double text_width(const char *s, double size, bool bold);
/* The lines of text (split at ", " and "; " first, then spaces) that
 * fit width at that size, into buf (lines point into it); how many. */
size_t wrap_text(const char *s, double size, bool bold, double width, char *buf, size_t len,
                 const char **lines, size_t max);

/* s as it fits width, cut with "..." when it does not (a name that
 * would run off the figure); into buf. */
const char *fit_cut(const char *s, double size, bool bold, double width, char *buf, size_t len);

/* canvas_svg.c */
struct canvas *svg_canvas_open(const char *path, double width, double height, const char *title);
/* Finishes the file; 0, or -1 when anything failed. */
int svg_canvas_close(struct canvas *c);

/* canvas_cairo.c or canvas_nopng.c */
bool png_available(void);
struct canvas *png_canvas_open(double width, double height);
/* Writes the PNG and frees the canvas; 0, or -1. */
int png_canvas_close(struct canvas *c, const char *path);

#endif
