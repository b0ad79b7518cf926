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
                 struct cfapkg_runtime **rt, struct cfapkg_machine *m,
                 const struct cfapkg_machine **machine)
{
	struct cfapkg_machine own = {0}, *into = m ? m : &own;
	const struct cfapkg_machine *mp = NULL;
	enum cfapkg_err e = CFAPKG_E_OK;
	int index = -1, rc;

	if ((rc = gpu_index_from_cli(cli, &index)))
		return rc;
	if (cfapkg_detect(ctx, index, into) == CFAPKG_E_OK)
		mp = into;
	else if (index >= 0)
		rc = report_error(ctx, CFAPKG_E_NOTFOUND);
	if (!rc) {
		cfapkg_ctx_clear_error(ctx);
		/* The runtime keeps nothing of the machine: own may go after. */
		if ((e = cfapkg_runtime_load(ctx, env, 0, mp, index, rt)))
			rc = report_error(ctx, e);
	}
	cfapkg_machine_clear(&own);
	if (machine)
		*machine = rc ? NULL : mp;
	return rc;
}
