/*
 * cli_runtime.c - an environment's runtime for this machine (its GPU
 * detected, or the one --gpu-index picks), as run, bench, venv and doctor
 * load it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* The environment's runtime for this machine (detected unless facts say
 * otherwise), with HIP_VISIBLE_DEVICES for --gpu-index, or the library's
 * pick of several GPUs: the one the generation was made for. */
int load_runtime(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env,
                 struct cfapkg_runtime **rt, const struct cfapkg_machine **machine)
{
	/* Static: *machine hands it to the caller, who may show what detection
	 * found after this returns; a command loads one runtime. */
	static struct cfapkg_machine m;
	const struct cfapkg_machine *mp = NULL;
	enum cfapkg_err e;
	int index = -1, rc;

	if ((rc = gpu_index_from_cli(cli, &index)))
		return rc;
	if (cfapkg_detect(ctx, index, &m) == CFAPKG_E_OK) {
		mp = &m;
	} else if (index >= 0) {
		return report_error(ctx, CFAPKG_E_NOTFOUND);
	}
	cfapkg_ctx_clear_error(ctx);
	if ((e = cfapkg_runtime_load(ctx, env, 0, mp, index, rt)))
		return report_error(ctx, e);
	if (machine)
		*machine = mp;
	return EXIT_OK;
}
