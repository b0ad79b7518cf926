/*
 * compat.h - compiler attributes behind macros, so MSVC builds too.
 */
#ifndef CFA_COMPAT_H
#define CFA_COMPAT_H

#if defined(__GNUC__)
#define CFA_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CFA_PRINTF(fmt, args)
#endif

#endif
