/*
 * cache.h - the cache room's internal helpers.
 */
#ifndef CFA_CACHE_H
#define CFA_CACHE_H

#include <stdbool.h>

#include "core/ctx.h"

/* 64 hex digits (either case). */
bool cfa_valid_hex64(const char *s);

#endif
