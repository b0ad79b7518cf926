/*
 * win32_util.h - UTF-8 and UTF-16 conversion shared by the Windows files of
 * the platform room.
 */
#ifndef CFA_WIN32_UTIL_H
#define CFA_WIN32_UTIL_H

#include <stddef.h>
#include <wchar.h>

/* A freshly allocated (malloc) UTF-16 copy, or NULL. */
wchar_t *cfa_win_widen(const char *s);
/* A UTF-8 path as the file APIs take it (backslashes, \\?\ past
 * MAX_PATH): freshly allocated (malloc), or NULL. */
wchar_t *cfa_win_path(const char *path);
/* UTF-16 into a UTF-8 buffer; 0 or an errno-style code (ENAMETOOLONG
 * when it does not fit: never a cut). */
int cfa_win_narrow(const wchar_t *w, char *buf, size_t len);
/* The same in a new allocation (malloc), or NULL. */
char *cfa_win_narrow_dup(const wchar_t *w);

#endif
