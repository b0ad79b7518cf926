/*
 * cache.h - the cache room's internal helpers.
 */
#ifndef CFA_CACHE_H
#define CFA_CACHE_H

#include <stdbool.h>

#include "core/ctx.h"

/* A 32-byte digest as 64 lower-case hex digits and a terminator. */
void cfa_sha256_hex(const unsigned char *md, char hex[65]);

/* An archive entry's name made safe: components joined by "/", the first
 * strip of them dropped ("" when none is left).  False with *why when the
 * name could reach outside the folder being unpacked. */
bool cfa_safe_entry_path(const char *in, unsigned strip, char *out, size_t len,
                         const char **why);
/* Whether a link at entry (a safe path) pointing to target stays inside. */
bool cfa_link_stays_inside(const char *entry, const char *target);

#endif
