#include "commands.h"
int cmd_bench(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	(void)ctx;
	(void)cli;
	return EXIT_UNSUPPORTED;
}
