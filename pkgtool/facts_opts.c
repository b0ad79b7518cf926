/*
 * facts_opts.c - machine facts from the command line: the host's OS and
 * architecture, then a facts file, then each fact flag in the order given.
 */
#include <stdlib.h>

#include "commands.h"

static const struct {
	enum opt_id id;
	const char *key;
} fact_flags[] = {
	{OPT_OS, "os"},         {OPT_ARCH, "arch"},       {OPT_GPU, "gpu"},
	{OPT_DRIVER, "driver"}, {OPT_HIP_RUNTIME, "hip-runtime"}, {OPT_HIP_SDK, "hip-sdk"},
};

int facts_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_facts *f)
{
	const char *file = cli_value(cli, OPT_FACTS);
	const char *env_gpu = getenv("CFAPKG_GPU");
	enum cfapkg_err e;
	size_t i, k;

	cfapkg_facts_init_host(f);
	if (file && (e = cfapkg_facts_load(ctx, f, file)))
		return report_error(ctx, e);
	if (env_gpu && *env_gpu && !(cli->seen & OPT_BIT(OPT_GPU)) &&
	    (e = cfapkg_facts_set(ctx, f, "gpu", env_gpu)))
		return report_error(ctx, e);
	for (i = 0; i < cli->nopts; i++)
		for (k = 0; k < sizeof(fact_flags) / sizeof(fact_flags[0]); k++)
			if (cli->opts[i].id == fact_flags[k].id &&
			    (e = cfapkg_facts_set(ctx, f, fact_flags[k].key, cli->opts[i].value)))
				return report_error(ctx, e);
	return EXIT_OK;
}
