/*
 * lazy_cairo.c - the cairo functions the bench figure's PNG is painted
 * with, bound on first use (lazylib.h): only 'cfapkg bench' draws, and
 * cairo brings some twenty libraries (pixman, freetype, fontconfig, glib,
 * X11's) that no other command should map.  FcFini is fontconfig's,
 * which cairo loads: looked up through cairo's handle, whose search takes
 * in the libraries it depends on.
 */
#include <cairo.h>
#include <fontconfig/fontconfig.h>

#include "platform/lazylib.h"

#define C cairo_t *cr
/* X(return type, name, parameters, arguments) */
#define CAIRO_FUNCS(X)                                                                     \
	X(cairo_surface_t *, cairo_image_surface_create, (cairo_format_t f, int w, int h),       \
	  (f, w, h))                                                                           \
	X(cairo_t *, cairo_create, (cairo_surface_t *s), (s))                                  \
	X(cairo_status_t, cairo_status, (C), (cr))                                             \
	X(void, cairo_destroy, (C), (cr))                                                      \
	X(void, cairo_surface_destroy, (cairo_surface_t *s), (s))                              \
	X(cairo_status_t, cairo_surface_write_to_png, (cairo_surface_t *s, const char *f),     \
	  (s, f))                                                                              \
	X(void, cairo_set_source_rgb, (C, double r, double g, double b), (cr, r, g, b))        \
	X(void, cairo_paint, (C), (cr))                                                        \
	X(void, cairo_set_line_width, (C, double w), (cr, w))                                  \
	X(void, cairo_set_dash, (C, const double *d, int n, double o), (cr, d, n, o))          \
	X(void, cairo_stroke, (C), (cr))                                                       \
	X(void, cairo_move_to, (C, double x, double y), (cr, x, y))                            \
	X(void, cairo_line_to, (C, double x, double y), (cr, x, y))                            \
	X(void, cairo_rectangle, (C, double x, double y, double w, double h), (cr, x, y, w, h)) \
	X(void, cairo_fill, (C), (cr))                                                         \
	X(void, cairo_fill_preserve, (C), (cr))                                                \
	X(void, cairo_new_path, (C), (cr))                                                     \
	X(void, cairo_new_sub_path, (C), (cr))                                                 \
	X(void, cairo_close_path, (C), (cr))                                                   \
	X(void, cairo_arc, (C, double x, double y, double r, double a, double b),              \
	  (cr, x, y, r, a, b))                                                                 \
	X(void, cairo_text_extents, (C, const char *s, cairo_text_extents_t *e), (cr, s, e))   \
	X(void, cairo_text_path, (C, const char *s), (cr, s))                                  \
	X(void, cairo_show_text, (C, const char *s), (cr, s))                                  \
	X(void, cairo_save, (C), (cr))                                                         \
	X(void, cairo_restore, (C), (cr))                                                      \
	X(void, cairo_select_font_face, (C, const char *f, cairo_font_slant_t s,               \
	                                 cairo_font_weight_t w), (cr, f, s, w))                \
	X(void, cairo_set_font_size, (C, double s), (cr, s))                                   \
	X(void, cairo_translate, (C, double x, double y), (cr, x, y))                          \
	X(void, cairo_rotate, (C, double a), (cr, a))                                          \
	X(void, cairo_debug_reset_static_data, (void), ())                                     \
	X(void, FcFini, (void), ())

enum { CAIRO_FUNCS(CFA_LAZY_ID) F_COUNT };
static const char *const names[] = {CAIRO_FUNCS(CFA_LAZY_NAME) NULL};

#ifndef CFA_SONAME_CAIRO
#define CFA_SONAME_CAIRO "libcairo.so.2"
#endif
CFA_LAZYLIB(CFA_SONAME_CAIRO, names, F_COUNT)

CAIRO_FUNCS(CFA_LAZY_DEFINE)
