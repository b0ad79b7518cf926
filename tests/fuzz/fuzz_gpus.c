/*
 * fuzz_gpus.c - the GPU table (core/gpus.c, recipes/gpus.json).
 * Properties: a refusal names the file; an accepted table holds only valid
 * GPU targets, and looking each target and device up finds an entry with
 * the same target or PCI id.
 */
#include <string.h>

#include "core/gpus.h"
#include "core/recipe.h"
#include "tests/fuzz/fuzz.h"

static char input[1024];

static void check_table(struct cfapkg_ctx *ctx)
{
	const struct cfa_gpus *g = ctx->gpus;
	size_t i;

	FUZZ_CHECK(g && g->ntargets > 0 && g->ndevices > 0, "an empty table was accepted");
	for (i = 0; i < g->ntargets; i++) {
		const struct cfapkg_gpu_target *t = cfa_gpus_target(ctx, g->targets[i].gfx);
		FUZZ_CHECK(cfa_valid_gfx(g->targets[i].gfx), "target %s", g->targets[i].gfx);
		FUZZ_CHECK(t && strcmp(t->gfx, g->targets[i].gfx) == 0, "lookup of %s",
		           g->targets[i].gfx);
	}
	for (i = 0; i < g->ndevices; i++) {
		const struct cfapkg_gpu_device *d = &g->devices[i], *found;
		found = cfapkg_gpu_device_find(ctx, d->vendor, d->device, d->revision);
		FUZZ_CHECK(cfa_valid_gfx(d->gfx) && d->revision >= -1 && d->revision <= 0xff,
		           "device %04x:%04x gfx %s rev %d", d->vendor, d->device, d->gfx,
		           d->revision);
		FUZZ_CHECK(found && found->vendor == d->vendor && found->device == d->device,
		           "lookup of %04x:%04x", d->vendor, d->device);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_path(input, sizeof(input), "gpus.json");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();

	/* Lookups must not go and load the real recipes. */
	ctx->loaded = true;
	fuzz_write(input, data, size);
	if (cfa_gpus_load(ctx, input))
		FUZZ_CHECK(strstr(cfapkg_ctx_error(ctx), input) && !ctx->gpus, "refusal: %s",
		           cfapkg_ctx_error(ctx));
	else
		check_table(ctx);
	cfapkg_ctx_free(ctx);
	return 0;
}
