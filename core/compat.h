/*
 * compat.h - compiler attributes behind macros, so MSVC builds too.
 */
#ifndef CFA_COMPAT_H
#define CFA_COMPAT_H

#if defined(__GNUC__)
#define CFA_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
/* A result that must not be dropped: a cut path or a failed step. */
#define CFA_MUST_USE __attribute__((warn_unused_result))
#else
#define CFA_PRINTF(fmt, args)
#define CFA_MUST_USE
#endif

#endif
