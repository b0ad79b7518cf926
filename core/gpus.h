/*
 * gpus.h - the GPU table (recipes/gpus.json): PCI id and revision to chip,
 * gfx target and product name; gfx target to generation, KFD version and
 * the project's status.
 */
#ifndef CFA_GPUS_H
#define CFA_GPUS_H

#include "core/ctx.h"

#define CFA_GPUS_FILE "gpus.json"

struct cJSON;

struct cfa_gpus {
	struct cfa_arena arena;
	struct cfapkg_gpu_target *targets;
	size_t ntargets;
	struct cfapkg_gpu_device *devices;
	size_t ndevices;
};

/* Replaces any table loaded before. */
enum cfapkg_err cfa_gpus_load(struct cfapkg_ctx *ctx, const char *path);
/* The same for a table already parsed (a channel index holds one); path
 * names it in errors. */
enum cfapkg_err cfa_gpus_load_json(struct cfapkg_ctx *ctx, const char *path,
                                   const struct cJSON *root);
void cfa_gpus_free(struct cfa_gpus *g);
/* Makes g (parsed, or read from a cache) the context's table, in place of
 * any before it. */
void cfa_gpus_take(struct cfapkg_ctx *ctx, struct cfa_gpus *g);
const struct cfapkg_gpu_target *cfa_gpus_target(const struct cfapkg_ctx *ctx, const char *gfx);
/* Edit distance between two names (the first 128 bytes of each); also
 * what registry.c's recipe name suggestions measure. */
unsigned cfa_edit_distance(const char *a, const char *b);
/* With part, from a to the closest part of b (distance.c). */
unsigned cfa_edit_distance_part(const char *a, const char *b, bool part);
/* A lookup that found no single target, as a CFAPKG_E_FACTS failure
 * naming text, the candidates or the nearest GPUs, and what to give. */
enum cfapkg_err cfa_gpu_lookup_fail(struct cfapkg_ctx *ctx, const char *text,
                                    const struct cfapkg_gpu_lookup *l);

#endif
