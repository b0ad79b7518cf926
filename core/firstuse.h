/*
 * firstuse.h - the pins trusted on first use (ROOT/first-use.json): read,
 * laid over the loaded recipes, and judged (core/firstuse.c).
 */
#ifndef CFA_FIRSTUSE_H
#define CFA_FIRSTUSE_H

#include "core/ctx.h"

/* The pins of file into arena (none when the file is not there). */
enum cfapkg_err cfa_first_use_read(struct cfapkg_ctx *ctx, struct cfa_arena *arena,
                                   const char *file, struct cfapkg_first_use_pin **pins,
                                   size_t *n);
/* Applies the root's pins to the recipe set (after every recipe folder
 * and channel was read). */
enum cfapkg_err cfa_first_use_apply(struct cfapkg_ctx *ctx);
/* "applied", or why a pin is not used against the loaded recipes.
 * Static text. */
const char *cfa_first_use_status(struct cfapkg_ctx *ctx, const struct cfapkg_first_use_pin *p);

#endif
