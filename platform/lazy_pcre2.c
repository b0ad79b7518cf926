/*
 * lazy_pcre2.c - PCRE2's functions that cfapkg calls, bound on first use
 * (lazylib.h): only a recipe's upstream tag pattern and bench's metric use
 * them, so a plan starts without mapping the library.  Each is defined
 * with PCRE2's own declaration (the 8-bit names the macros stand for), so
 * a mismatch with the header fails the build.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "platform/lazylib.h"

/* X(return type, name, parameters, arguments) */
#define PCRE2_FUNCS(X)                                                                      \
	X(pcre2_code *, pcre2_compile_8, (PCRE2_SPTR p, PCRE2_SIZE len, uint32_t opts,      \
	                                  int *err, PCRE2_SIZE *off,                        \
	                                  pcre2_compile_context *cc),                       \
	  (p, len, opts, err, off, cc))                                                     \
	X(void, pcre2_code_free_8, (pcre2_code *c), (c))                                    \
	X(int, pcre2_pattern_info_8, (const pcre2_code *c, uint32_t what, void *where),     \
	  (c, what, where))                                                                 \
	X(pcre2_match_data *, pcre2_match_data_create_from_pattern_8,                       \
	  (const pcre2_code *c, pcre2_general_context *g), (c, g))                          \
	X(int, pcre2_match_8, (const pcre2_code *c, PCRE2_SPTR s, PCRE2_SIZE len,           \
	                       PCRE2_SIZE start, uint32_t opts, pcre2_match_data *md,       \
	                       pcre2_match_context *mc), (c, s, len, start, opts, md, mc))  \
	X(void, pcre2_match_data_free_8, (pcre2_match_data *md), (md))                      \
	X(PCRE2_SIZE *, pcre2_get_ovector_pointer_8, (pcre2_match_data *md), (md))         \
	X(int, pcre2_get_error_message_8, (int err, PCRE2_UCHAR *buf, PCRE2_SIZE len),      \
	  (err, buf, len))

enum { PCRE2_FUNCS(CFA_LAZY_ID) F_COUNT };
static const char *const names[] = {PCRE2_FUNCS(CFA_LAZY_NAME) NULL};

#ifndef CFA_SONAME_PCRE2
#define CFA_SONAME_PCRE2 "libpcre2-8.so.0"
#endif
CFA_LAZYLIB(CFA_SONAME_PCRE2, names, F_COUNT)

PCRE2_FUNCS(CFA_LAZY_DEFINE)
