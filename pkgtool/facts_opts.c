/*
 * facts_opts.c - machine facts for planning: detected on this machine
 * unless another machine is described (--gpu, CFAPKG_GPU or --facts), then
 * the facts file, then each fact flag in the order given, so a flag always
 * wins over what was detected or read.  A GPU may be named as people
 * know it (cfapkg gpus lists the names).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static const struct {
	enum opt_id id;
	const char *key;
} fact_flags[] = {
	{OPT_OS, "os"},         {OPT_ARCH, "arch"},       {OPT_GPU, "gpu"},
	{OPT_DRIVER, "driver"}, {OPT_HIP_RUNTIME, "hip-runtime"}, {OPT_HIP_SDK, "hip-sdk"},
};

int gpu_index_from_cli(const struct cli *cli, int *index)
{
	const char *v = cli_value(cli, OPT_GPU_INDEX);
	size_t i;

	*index = -1;
	if (!v)
		return EXIT_OK;
	for (i = 0; v[i] >= '0' && v[i] <= '9' && i < 2; i++)
		;
	if (i == 0 || v[i] != '\0') {
		fprintf(stderr, "cfapkg: error: --gpu-index takes a number (cfapkg detect lists them)\n");
		return EXIT_USAGE;
	}
	*index = (v[0] - '0') * (i == 2 ? 10 : 1) + (i == 2 ? v[1] - '0' : 0);
	return EXIT_OK;
}

/* Kept for the plan, which shows detection's warnings. */
static struct cfapkg_machine machine;
static bool machine_detected;

const struct cfapkg_machine *detected_machine(void)
{
	return machine_detected ? &machine : NULL;
}

/* Detects this machine into f; prints what it found unless quiet. */
static int detected_facts(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_facts *f)
{
	const struct cfapkg_gpu *g;
	enum cfapkg_err e;
	int index, rc;

	if ((rc = gpu_index_from_cli(cli, &index)))
		return rc;
	if ((e = cfapkg_detect(ctx, index, &machine)))
		return report_error(ctx, e);
	machine_detected = true;
	if (machine.selected < 0) {
		print_detection_notes(stderr, &machine);
		fprintf(stderr, "cfapkg: error: no AMD GPU found on this machine (cfapkg detect shows "
		                "what was read); to plan for another machine, pass --gpu with its "
		                "target, name or PCI id, for example --gpu gfx1200 or --gpu \"RX 9060 "
		                "XT\" (cfapkg gpus lists them)\n");
		return EXIT_NO_GPU;
	}
	cfapkg_machine_facts(&machine, f);
	g = &machine.gpus[machine.selected];
	if (cli->quiet || cli->json)
		return EXIT_OK;
	fprintf(stderr, "Detected GPU %u: %s (%s", g->index, g->name, f->gfx);
	if (machine.gfx_override[0])
		fprintf(stderr, " from HSA_OVERRIDE_GFX_VERSION; the hardware is %s", g->gfx);
	fprintf(stderr, ")%s\n", machine.ngpus > 1 ? "; --gpu-index N picks another" : "");
	return EXIT_OK;
}

/* One fact; a GPU is looked up first, so that a name fitting several
 * GPUs, or none, is answered with the candidates or the nearest. */
static int set_fact(struct cfapkg_ctx *ctx, struct cfapkg_facts *f, const char *key,
                    const char *value)
{
	char gfx[sizeof(f->gfx)];
	enum cfapkg_err e;
	int rc;

	if (strcmp(key, "gpu") == 0) {
		if ((rc = gpu_from_cli(ctx, value, gfx, sizeof(gfx))))
			return rc;
		value = gfx;
	}
	if ((e = cfapkg_facts_set(ctx, f, key, value)))
		return report_error(ctx, e);
	return EXIT_OK;
}

int facts_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_facts *f)
{
	const char *file = cli_value(cli, OPT_FACTS);
	const char *env_gpu = getenv("CFAPKG_GPU");
	bool other_machine = file || (env_gpu && *env_gpu) || (cli->seen & OPT_BIT(OPT_GPU));
	enum cfapkg_err e;
	size_t i, k;
	int rc;

	cfapkg_facts_init_host(f);
	if (!other_machine && (rc = detected_facts(ctx, cli, f)))
		return rc;
	if (file && (e = cfapkg_facts_load(ctx, f, file)))
		return report_error(ctx, e);
	if (env_gpu && *env_gpu && !(cli->seen & OPT_BIT(OPT_GPU)) &&
	    (rc = set_fact(ctx, f, "gpu", env_gpu)))
		return rc;
	for (i = 0; i < cli->nopts; i++)
		for (k = 0; k < sizeof(fact_flags) / sizeof(fact_flags[0]); k++)
			if (cli->opts[i].id == fact_flags[k].id &&
			    (rc = set_fact(ctx, f, fact_flags[k].key, cli->opts[i].value)))
				return rc;
	return EXIT_OK;
}
