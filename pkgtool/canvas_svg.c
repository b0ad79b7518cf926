/*
 * canvas_svg.c - the bench figure as SVG: plain (no scripts, no external
 * fonts), each mark in a group with its class and a tooltip, so that
 * tools (and the tests) find what is drawn where.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canvas.h"
#include "plot.h"

struct svg {
	struct canvas c;
	FILE *f;
};

/* The canvas is the first member of struct svg, so the pointer converts. */
static FILE *out(struct canvas *c)
{
	return ((struct svg *)c)->f;
}

static void stroke_attrs(FILE *f, const struct stroke *s)
{
	if (!s || !s->colour)
		return;
	fprintf(f, " stroke=\"%s\" stroke-width=\"%.3g\"%s", s->colour, s->width,
	        s->dashed ? " stroke-dasharray=\"6 4\"" : "");
}

static void group(struct canvas *c, const char *cls, const char *tooltip)
{
	/* The class and tooltip may hold recipe and environment names, so they
	 * are escaped like any text. */
	fputs("<g class=\"", out(c));
	svg_text(out(c), cls);
	fputs("\">", out(c));
	if (tooltip) {
		fputs("<title>", out(c));
		svg_text(out(c), tooltip);
		fputs("</title>", out(c));
	}
}

static void group_end(struct canvas *c)
{
	fputs("</g>\n", out(c));
}

static void line(struct canvas *c, const struct stroke *s, const char *cls, double x1, double y1,
                 double x2, double y2)
{
	fputs("<line", out(c));
	/* A class is one of the figure's own names ("median env0"), never text
	 * from outside, so it goes in as it is. */
	if (cls)
		fprintf(out(c), " class=\"%s\"", cls);
	fprintf(out(c), " x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"", x1, y1, x2, y2);
	stroke_attrs(out(c), s);
	fputs("/>\n", out(c));
}

static void rect(struct canvas *c, const char *fill, const struct stroke *s, double x, double y,
                 double w, double h)
{
	fprintf(out(c), "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"", x, y,
	        w, h, fill ? fill : "none");
	stroke_attrs(out(c), s);
	fputs("/>", out(c));
}

static void circle(struct canvas *c, const char *fill, const struct stroke *s, double cx,
                   double cy, double r)
{
	fprintf(out(c), "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.3g\" fill=\"%s\"", cx, cy, r,
	        fill ? fill : "none");
	stroke_attrs(out(c), s);
	fputs("/>", out(c));
}

static void cross(struct canvas *c, const char *colour, double cx, double cy)
{
	fprintf(out(c), "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"%s\" stroke-width=\"2\" "
	        "fill=\"none\"/>", cx - 4, cy - 4, colour);
}

static void arrow(struct canvas *c, const char *colour, double cx, double cy, bool up)
{
	fprintf(out(c), "<path d=\"M%.1f %.1fl5 %dh-10z\" fill=\"%s\"/>", cx, up ? cy - 4 : cy + 4,
	        up ? 9 : -9, colour);
}

static void text(struct canvas *c, const struct text_style *t, double x, double y,
                 const char *const *lines, size_t n)
{
	static const char *const anchors[] = {"start", "middle", "end"};
	FILE *f = out(c);
	size_t i;

	fputs("<text", f);
	if (t->id)
		fprintf(f, " id=\"%s\"", t->id);
	if (t->cls)
		fprintf(f, " class=\"%s\"", t->cls);
	fprintf(f, " x=\"%.1f\" y=\"%.1f\" font-size=\"%.3g\"", x, y, t->size);
	if (t->bold)
		fputs(" font-weight=\"bold\"", f);
	if (t->anchor != ANCHOR_START)
		fprintf(f, " text-anchor=\"%s\"", anchors[t->anchor]);
	if (t->fill)
		fprintf(f, " fill=\"%s\"", t->fill);
	/* paint-order draws the white outline behind the letters, so that text
	 * over grid lines stays readable. */
	if (t->halo)
		fputs(" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"", f);
	if (t->vertical)
		fprintf(f, " transform=\"rotate(-90 %.1f %.1f)\"", x, y);
	fputs(">", f);
	for (i = 0; i < n; i++) {
		/* Each line below the last, 1.3 times the font size apart, as
		 * the PNG's lines are. */
		if (n > 1)
			fprintf(f, "<tspan x=\"%.1f\" dy=\"%.3g\">", x, i ? t->size * 1.3 : 0.0);
		/* A line after the first begins with its space, so that the
		 * text read as a whole keeps its words apart. */
		if (i)
			fputc(' ', f);
		svg_text(f, lines[i]);
		if (n > 1)
			fputs("</tspan>", f);
	}
	fputs("</text>", f);
}

static const struct canvas_ops svg_ops = {group, group_end, line, rect, circle, cross, arrow,
                                          text};

struct canvas *svg_canvas_open(const char *path, double width, double height, const char *title)
{
	struct svg *s = calloc(1, sizeof(*s));

	if (!s || !(s->f = fopen(path, "w"))) {
		free(s);
		return NULL;
	}
	s->c.ops = &svg_ops;
	s->c.width = width;
	s->c.height = height;
	fprintf(s->f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/"
	        "2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	        "font-family=\"sans-serif\" font-size=\"12\">\n<title>", width, height, width, height);
	svg_text(s->f, title);
	/* A white background, so that the figure reads the same on a dark page
	 * as the PNG does. */
	fprintf(s->f, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width,
	        height);
	return &s->c;
}

int svg_canvas_close(struct canvas *c)
{
	struct svg *s = (struct svg *)c;
	int rc;

	fputs("</svg>\n", s->f);
	/* A write that failed part way (a full disk) is caught here once,
	 * rather than after every fprintf. */
	rc = ferror(s->f) || c->failed ? -1 : 0;
	if (fclose(s->f) != 0)
		rc = -1;
	free(s);
	return rc;
}
