/*
 * canvas_cairo.c - the bench figure as a PNG, painted by cairo (its image
 * surface and PNG writer; text through its own font selection, which asks
 * fontconfig for "sans-serif").  What forums and chats take where an SVG
 * is refused.  Groups and tooltips have no place in a picture: ignored.
 */
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <stdlib.h>
#include <string.h>

#include "canvas.h"

struct png {
	struct canvas c;
	cairo_surface_t *surface;
	cairo_t *cr;
};

static cairo_t *cr_of(struct canvas *c)
{
	return ((struct png *)c)->cr;
}

/* Anything but a hex digit reads as 0 rather than being refused: the colours
 * are the figure's own literals. */
static unsigned hex(char h)
{
	return h >= '0' && h <= '9' ? (unsigned)(h - '0')
	       : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
	       : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10)
	                              : 0;
}

/* "#rrggbb", the only form the figure uses; "white" for the halo. */
static void colour(cairo_t *cr, const char *c)
{
	if (!c || c[0] != '#' || strlen(c) != 7) {
		double v = c && strcmp(c, "white") == 0 ? 1 : 0;
		cairo_set_source_rgb(cr, v, v, v);
		return;
	}
	cairo_set_source_rgb(cr, (hex(c[1]) * 16 + hex(c[2])) / 255.0,
	                     (hex(c[3]) * 16 + hex(c[4])) / 255.0,
	                     (hex(c[5]) * 16 + hex(c[6])) / 255.0);
}

static void stroke_with(cairo_t *cr, const struct stroke *s)
{
	static const double dash[] = {6, 4};

	colour(cr, s->colour);
	cairo_set_line_width(cr, s->width);
	cairo_set_dash(cr, dash, s->dashed ? 2 : 0, 0);
	cairo_stroke(cr);
	/* The dash is reset after each stroke, so that the next shape is solid
	 * unless it asks otherwise. */
	cairo_set_dash(cr, dash, 0, 0);
}

/* The path drawn: filled (fill not NULL), then outlined (s). */
static void paint(cairo_t *cr, const char *fill, const struct stroke *s)
{
	if (fill) {
		colour(cr, fill);
		/* The path is kept for the outline, and cleared after both, so
		 * that no shape carries into the next. */
		cairo_fill_preserve(cr);
	}
	if (s && s->colour)
		stroke_with(cr, s);
	cairo_new_path(cr);
}

static void group(struct canvas *c, const char *cls, const char *tooltip)
{
	(void)c, (void)cls, (void)tooltip;
}

static void group_end(struct canvas *c)
{
	(void)c;
}

static void line(struct canvas *c, const struct stroke *s, const char *cls, double x1, double y1,
                 double x2, double y2)
{
	cairo_t *cr = cr_of(c);

	(void)cls;
	cairo_move_to(cr, x1, y1);
	cairo_line_to(cr, x2, y2);
	stroke_with(cr, s);
}

static void rect(struct canvas *c, const char *fill, const struct stroke *s, double x, double y,
                 double w, double h)
{
	cairo_t *cr = cr_of(c);

	cairo_rectangle(cr, x, y, w, h);
	paint(cr, fill, s);
}

static void circle(struct canvas *c, const char *fill, const struct stroke *s, double cx,
                   double cy, double r)
{
	cairo_t *cr = cr_of(c);

	/* A sub-path of its own, so that the arc is not joined to where the
	 * last shape ended. */
	cairo_new_sub_path(cr);
	cairo_arc(cr, cx, cy, r, 0, 6.283185307179586);
	paint(cr, fill, s);
}

static void cross(struct canvas *c, const char *col, double cx, double cy)
{
	struct stroke s = {col, 2, false};
	cairo_t *cr = cr_of(c);

	cairo_move_to(cr, cx - 4, cy - 4);
	cairo_line_to(cr, cx + 4, cy + 4);
	cairo_move_to(cr, cx + 4, cy - 4);
	cairo_line_to(cr, cx - 4, cy + 4);
	stroke_with(cr, &s);
}

static void arrow(struct canvas *c, const char *col, double cx, double cy, bool up)
{
	cairo_t *cr = cr_of(c);
	double tip = up ? -4 : 4, base = up ? 5 : -5;

	cairo_move_to(cr, cx, cy + tip);
	cairo_line_to(cr, cx + 5, cy + base);
	cairo_line_to(cr, cx - 5, cy + base);
	cairo_close_path(cr);
	colour(cr, col);
	cairo_fill(cr);
}

static void one_line(cairo_t *cr, const struct text_style *t, double x, double y, const char *s)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	x -= t->anchor == ANCHOR_MIDDLE ? e.x_advance / 2 : t->anchor == ANCHOR_END ? e.x_advance : 0;
	cairo_move_to(cr, x, y);
	/* The outline first and the letters over it, as the SVG's paint-order
	 * draws them. */
	if (t->halo) {
		cairo_text_path(cr, s);
		colour(cr, "white");
		cairo_set_line_width(cr, 3);
		cairo_stroke(cr);
		cairo_move_to(cr, x, y);
	}
	colour(cr, t->fill);
	cairo_show_text(cr, s);
}

static void text(struct canvas *c, const struct text_style *t, double x, double y,
                 const char *const *lines, size_t n)
{
	cairo_t *cr = cr_of(c);
	size_t i;

	/* The font and a rotation are undone afterwards, so that they do not
	 * carry into the next shape. */
	cairo_save(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
	                       t->bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, t->size);
	if (t->vertical) {
		cairo_translate(cr, x, y);
		cairo_rotate(cr, -1.5707963267948966);
		x = y = 0;
	}
	for (i = 0; i < n; i++)
		one_line(cr, t, x, y + (double)i * t->size * 1.3, lines[i]);
	cairo_restore(cr);
}

static const struct canvas_ops png_ops = {group, group_end, line, rect, circle, cross, arrow,
                                          text};

bool png_available(void)
{
	return true;
}

struct canvas *png_canvas_open(double width, double height)
{
	struct png *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	/* No alpha: the figure is opaque, on white.  A surface that could not
	 * be made gives a context in an error state, which the check below
	 * catches. */
	p->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)width, (int)height);
	p->cr = cairo_create(p->surface);
	if (cairo_status(p->cr) != CAIRO_STATUS_SUCCESS) {
		cairo_destroy(p->cr);
		cairo_surface_destroy(p->surface);
		free(p);
		return NULL;
	}
	p->c.ops = &png_ops;
	p->c.width = width;
	p->c.height = height;
	cairo_set_source_rgb(p->cr, 1, 1, 1);
	cairo_paint(p->cr);
	return &p->c;
}

int png_canvas_close(struct canvas *c, const char *path)
{
	struct png *p = (struct png *)c;
	/* A drawing call that failed leaves the context in an error state,
	 * which is checked once here rather than after each call. */
	int rc = cairo_status(p->cr) == CAIRO_STATUS_SUCCESS &&
	                 cairo_surface_write_to_png(p->surface, path) == CAIRO_STATUS_SUCCESS
	             ? 0
	             : -1;

	cairo_destroy(p->cr);
	cairo_surface_destroy(p->surface);
	free(p);
	/* The font caches cairo and fontconfig keep for the process: let go
	 * of them, so that a leak check sees nothing left. */
	cairo_debug_reset_static_data();
	FcFini();
	return rc;
}
