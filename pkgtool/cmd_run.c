/*
 * cmd_run.c - running programs under an environment.
 */
#include <stdio.h>

#include "commands.h"

int cmd_env_runtime(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	(void)ctx;
	(void)cli;
	fprintf(stderr, "cfapkg: error: not built yet\n");
	return EXIT_UNSUPPORTED;
}
