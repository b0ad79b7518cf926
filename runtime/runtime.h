/*
 * runtime.h - the runtime room: what a program needs to run under an
 * environment (PATH order, environment variables, the launcher, the DLLs
 * to place beside it), derived from the generation's lock alone.
 */
#ifndef CFA_RUNTIME_H
#define CFA_RUNTIME_H

#include <cjson/cJSON.h>

#include "core/ctx.h"

/* runtime.json of a generation being written in gendir.  Package paths
 * are relative to the generation ("view/zluda/..."); a system part's
 * values keep "{prefix}", which is where that part is found on the
 * machine when a program starts.  NULL when out of memory. */
cJSON *cfa_runtime_json(struct cfapkg_ctx *ctx, const struct cfapkg_lock *lock,
                        const char *gendir);

#endif
