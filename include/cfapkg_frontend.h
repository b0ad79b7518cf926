/*
 * cfapkg_frontend.h - what a command-line front end needs from the
 * platform beside cfapkg.h: UTF-8 arguments, the terminal, a clock and
 * checked formatting.  None of it is package management; it lives in
 * libcfapkg only because the platform layer does, and a front end sees
 * nothing of the library but its headers.  A GUI or a Python binding
 * needs none of it.
 */
#ifndef CFAPKG_FRONTEND_H
#define CFAPKG_FRONTEND_H

#include "cfapkg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Replaces main()'s arguments with the command line in
 * UTF-8 (on Windows main() gets the ANSI code page) and sets the console
 * to UTF-8.  Does nothing on other systems. */
CFAPKG_API void cfapkg_utf8_args(int *argc, char ***argv);
/** Whether f is a terminal (for progress drawing). */
CFAPKG_API bool cfapkg_is_terminal(FILE *f);
/** A terminal's width in columns (its own word, else
 * COLUMNS, else 80). */
CFAPKG_API unsigned cfapkg_terminal_columns(FILE *f);
/** Seconds on a monotonic clock. */
CFAPKG_API double cfapkg_monotonic_seconds(void);
/** Formats into dst of size bytes; true when the whole
 * text fit.  A text too long ends in "..." (cut at a UTF-8 character) so
 * the cut shows: text for people may go on so, a path or a value that did
 * not fit must be refused by the caller. */
CFAPKG_API bool cfapkg_fit_text(char *dst, size_t size, const char *fmt, va_list ap)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 0)))
#endif
	;
#ifdef __cplusplus
}
#endif

#endif
