/*
 * canvas_text.c - how wide the figure's text is, and lines that fit.
 * The advances are DejaVu Sans's (Book and Bold), in thousandths of the
 * font size, as cairo reports them for ' ' to '~': the font a Linux
 * "sans-serif" resolves to, and wider than Arial or Helvetica, so text
 * measured by it fits whichever of them a viewer uses.  A character past
 * ASCII counts as an average lower-case letter.
 */
#include <stdio.h>
#include <string.h>

#include "canvas.h"
#include "render.h"

static const unsigned short book[95] = {
	318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
	636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,
	1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
	603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,
	500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
	635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838};
static const unsigned short bold[95] = {
	348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365,
	696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 580,
	1000, 774, 762, 734, 830, 683, 683, 821, 837, 372, 372, 775, 637, 995, 837, 850,
	733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725, 457, 365, 457, 838, 500,
	500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687,
	716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838};

/* The width of s's first n bytes.  Only the first byte of a character past
 * ASCII counts, so that a character of several bytes is one advance. */
static double width_n(const char *s, size_t n, double size, bool heavy)
{
	const unsigned short *adv = heavy ? bold : book;
	double w = 0;
	size_t i;

	for (i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 32 && c < 127)
			w += adv[c - 32];
		else if ((c & 0xC0) != 0x80) /* the first byte of a character */
			w += heavy ? 678 : 615;
	}
	return w * size / 1000.0;
}

double text_width(const char *s, double size, bool heavy)
{
	return width_n(s, strlen(s), size, heavy);
}

/* Where to break s within width: after the last ", " or "; " that fits,
 * else the last space, else (one long word) where it stops fitting. */
static size_t break_at(const char *s, double size, bool heavy, double width)
{
	size_t n = strlen(s), i, clause = 0, space = 0, fits = 0;

	if (width_n(s, n, size, heavy) <= width)
		return n;
	for (i = 1; i <= n; i++) {
		if (width_n(s, i, size, heavy) > width)
			break;
		fits = i;
		if (s[i] == ' ' && (s[i - 1] == ',' || s[i - 1] == ';'))
			clause = i;
		else if (s[i] == ' ')
			space = i;
	}
	/* A break never falls inside a character; at least one byte is taken,
	 * so that wrapping moves on even when not one character fits. */
	while (fits > 0 && ((unsigned char)s[fits] & 0xC0) == 0x80)
		fits--; /* not inside a character */
	return clause ? clause : space ? space : fits ? fits : 1;
}

/* Every line is also cut to what buf has left, so that lines never run past it;
 * the blanks at a break are dropped, not carried to the next line. */
size_t wrap_text(const char *s, double size, bool heavy, double width, char *buf, size_t len,
                 const char **lines, size_t max)
{
	size_t used = 0, n = 0;

	while (*s && n < max && used + 1 < len) {
		size_t cut = break_at(s, size, heavy, width);
		if (cut > len - used - 1)
			cut = len - used - 1;
		memcpy(buf + used, s, cut);
		buf[used + cut] = '\0';
		lines[n++] = buf + used;
		used += cut + 1;
		s += cut;
		while (*s == ' ')
			s++;
	}
	return n;
}

const char *fit_cut(const char *s, double size, bool heavy, double width, char *buf, size_t len)
{
	size_t n = strlen(s);
	double dots = width_n("...", 3, size, heavy);

	if (width_n(s, n, size, heavy) <= width || len < 5) {
		cli_fit(buf, len, "%s", s);
		return buf;
	}
	/* Shortened until the text and its dots fit both the width and buf, and
	 * the cut falls between characters. */
	while (n > 0 && (width_n(s, n, size, heavy) + dots > width || n + 4 > len ||
	                 ((unsigned char)s[n] & 0xC0) == 0x80))
		n--;
	cli_fit(buf, len, "%.*s...", (int)n, s);
	return buf;
}
