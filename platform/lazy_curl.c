/*
 * lazy_curl.c - libcurl's functions that cfapkg calls, bound on first use
 * (lazylib.h).  Each is defined here with libcurl's own declaration, so a
 * mismatch with the headers fails the build.
 */
#define CURL_DISABLE_TYPECHECK /* curl_easy_setopt is defined below, not a macro */
#include <curl/curl.h>
#include <stdarg.h>

#include "platform/lazylib.h"

/* X(return type, name, parameters, arguments) */
#define CURL_FUNCS(X, V)                                                                  \
	X(CURLcode, curl_global_init, (long flags), (flags))                                \
	V(curl_global_cleanup, (void), ())                                                  \
	X(CURL *, curl_easy_init, (void), ())                                               \
	V(curl_easy_cleanup, (CURL *h), (h))                                                \
	X(const char *, curl_easy_strerror, (CURLcode c), (c))                              \
	X(struct curl_slist *, curl_slist_append, (struct curl_slist *l, const char *s),    \
	  (l, s))                                                                           \
	V(curl_slist_free_all, (struct curl_slist *l), (l))                                 \
	X(CURLM *, curl_multi_init, (void), ())                                             \
	X(CURLMcode, curl_multi_cleanup, (CURLM *m), (m))                                   \
	X(CURLMcode, curl_multi_add_handle, (CURLM *m, CURL *h), (m, h))                    \
	X(CURLMcode, curl_multi_remove_handle, (CURLM *m, CURL *h), (m, h))                 \
	X(CURLMcode, curl_multi_perform, (CURLM *m, int *running), (m, running))            \
	X(CURLMcode, curl_multi_poll,                                                       \
	  (CURLM *m, struct curl_waitfd extra[], unsigned n, int ms, int *numfds),          \
	  (m, extra, n, ms, numfds))                                                        \
	X(CURLMsg *, curl_multi_info_read, (CURLM *m, int *left), (m, left))                \
	X(curl_version_info_data *, curl_version_info, (CURLversion v), (v))

enum { CURL_FUNCS(CFA_LAZY_ID, CFA_LAZY_VID) F_curl_easy_setopt, F_curl_easy_getinfo, F_COUNT };
static const char *const names[] = {CURL_FUNCS(CFA_LAZY_NAME, CFA_LAZY_VNAME) "curl_easy_setopt",
                                    "curl_easy_getinfo", NULL};

#ifndef CFA_SONAME_CURL
#define CFA_SONAME_CURL "libcurl.so.4"
#endif
CFA_LAZYLIB(CFA_SONAME_CURL, names, F_COUNT)

CURL_FUNCS(CFA_LAZY_DEFINE, CFA_LAZY_VDEFINE)

/* The one variadic argument has the type the option's number range says
 * (curl.h's CURLOPTTYPE_ bases): a long, a pointer, a function pointer, a
 * curl_off_t, or a blob's pointer. */
CURLcode curl_easy_setopt(CURL *h, CURLoption opt, ...)
{
	CURLcode (*fn)(CURL *, CURLoption, ...) = (CURLcode(*)(CURL *, CURLoption, ...))
	                                             lazy_fn(F_curl_easy_setopt);
	CURLcode rc;
	va_list ap;

	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = fn(h, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		rc = fn(h, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		rc = fn(h, opt, va_arg(ap, void (*)(void)));
	else if (opt < CURLOPTTYPE_BLOB)
		rc = fn(h, opt, va_arg(ap, curl_off_t));
	else
		rc = fn(h, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Every CURLINFO_ takes a pointer to where the answer goes. */
CURLcode curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	CURLcode (*fn)(CURL *, CURLINFO, ...) = (CURLcode(*)(CURL *, CURLINFO, ...))
	                                           lazy_fn(F_curl_easy_getinfo);
	CURLcode rc;
	va_list ap;

	va_start(ap, info);
	rc = fn(h, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}
