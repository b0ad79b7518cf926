/*
 * canvas_nopng.c - a build without cairo (the Windows one): the bench
 * figure is written as SVG only, and bench says so.
 */
#include "canvas.h"

/* No PNG in this build: bench asks first and says why there is only an SVG, so
 * the other two are never reached; they fail all the same. */
bool png_available(void)
{
	return false;
}

struct canvas *png_canvas_open(double width, double height)
{
	(void)width, (void)height;
	return NULL;
}

int png_canvas_close(struct canvas *c, const char *path)
{
	(void)c, (void)path;
	return -1;
}
