/*
 * facts_opts.c - machine facts for planning: detected on this machine
 * unless another machine is described (--gpu, CFAPKG_GPU or --facts), then
 * the facts file, then each fact flag in the order given, so a flag always
 * wins over what was detected or read.  A GPU may be named as people
 * know it (cfapkg gpus lists the names).  install, update, remove and plan
 * given none of those, on a machine where no AMD GPU is found, plan with
 * the facts the environment's active generation was planned with, so that
 * a machine described once by flags need not be described again.
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
	{OPT_GLIBC, "glibc"},
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
		cli_error("--gpu-index takes a number (cfapkg detect lists them)\n");
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

/* The facts a generation was planned with; gen 0 when there are none. */
struct recorded {
	unsigned gen;
	struct cfapkg_facts facts;
};

static void print_detected(const struct cli *cli, const struct cfapkg_facts *f,
                           const struct recorded *rec)
{
	const struct cfapkg_gpu *g = &machine.gpus[machine.selected];

	if (cli->quiet)
		return;
	/* Said even under --json (it goes to stderr): the plan is no longer for
	 * the machine the environment was made for. */
	if (rec->gen && strcmp(rec->facts.gfx, f->gfx) != 0)
		fprintf(stderr, "This machine's GPU is %s, not the %s generation %u was planned "
		        "for: planning for %s (pass --gpu %s to keep planning for %s)\n", f->gfx,
		        rec->facts.gfx, rec->gen, f->gfx, rec->facts.gfx, rec->facts.gfx);
	if (cli->json)
		return;
	fprintf(stderr, "Detected GPU %u: %s (%s", g->index, g->name, f->gfx);
	if (machine.gfx_override[0])
		fprintf(stderr, " from HSA_OVERRIDE_GFX_VERSION; the hardware is %s", g->gfx);
	fprintf(stderr, ")%s\n", machine.ngpus > 1 ? "; --gpu-index N picks another" : "");
}

/* No GPU here: plan for the machine the environment was made for, as if
 * its facts were given again (so no detection notes about this one). */
static int reuse_facts(const struct cli *cli, struct cfapkg_facts *f, const struct recorded *rec)
{
	*f = rec->facts;
	machine_detected = false;
	if (!cli->quiet)
		fprintf(stderr, "Using the facts generation %u was planned with: %s on %s-%s (pass "
		        "--gpu/--os to plan for another machine)\n", rec->gen, f->gfx, f->os, f->arch);
	return EXIT_OK;
}

/* Detects this machine into f; prints what it found unless quiet.  With
 * no AMD GPU found, rec's facts are used when there are any. */
static int detected_facts(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_facts *f,
                          const struct recorded *rec)
{
	enum cfapkg_err e;
	int index, rc;

	if ((rc = gpu_index_from_cli(cli, &index)))
		return rc;
	if ((e = cfapkg_detect(ctx, index, &machine)))
		return report_error(ctx, e);
	machine_detected = true;
	if (machine.selected < 0 && rec->gen)
		return reuse_facts(cli, f, rec);
	if (machine.selected < 0) {
		print_detection_notes(stderr, &machine);
		cli_error("no AMD GPU found on this machine (cfapkg detect shows "
		                "what was read); to plan for another machine, pass --gpu with its "
		                "target, name or PCI id, for example --gpu gfx1200 or --gpu \"RX 9060 "
		                "XT\" (cfapkg gpus lists them)\n");
		return EXIT_NO_GPU;
	}
	cfapkg_machine_facts(&machine, f);
	print_detected(cli, f, rec);
	return EXIT_OK;
}

/* Whether the environment's machine is remembered: only commands that
 * plan for one environment, only when no fact was given, and only a
 * generation that recorded a GPU.  Anything unreadable: not remembered
 * (the command then detects, as it did before). */
static void recorded_facts(struct cfapkg_ctx *ctx, const struct cli *cli, struct recorded *rec)
{
	static const char *const commands[] = {"install", "update", "remove", "plan"};
	const char *env = env_from_cli(cli);
	bool planning = false;
	size_t i;

	rec->gen = 0;
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		planning = planning || strcmp(cli->command, commands[i]) == 0;
	for (i = 0; i < sizeof(fact_flags) / sizeof(fact_flags[0]); i++)
		planning = planning && !(cli->seen & OPT_BIT(fact_flags[i].id));
	if (!planning || !cfapkg_env_exists(ctx, env) ||
	    cfapkg_env_facts(ctx, env, &rec->gen, &rec->facts) || !rec->facts.gfx[0])
		rec->gen = 0;
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

/* --os naming another OS than the detected machine's: the GPU is the one
 * found here, but its driver, HIP runtimes and SDKs are this OS's, so
 * they are not checked (facts not known), unless a flag gives them. */
static void other_os(const struct cli *cli, struct cfapkg_facts *f)
{
	bool driver = !(cli->seen & OPT_BIT(OPT_DRIVER)) && f->driver[0];
	bool runtimes = !(cli->seen & OPT_BIT(OPT_HIP_RUNTIME)) && f->hip_runtimes_known;
	bool sdks = !(cli->seen & OPT_BIT(OPT_HIP_SDK)) && f->hip_sdks_known;

	if (!machine_detected || strcmp(f->os, machine.os) == 0 || !(driver || runtimes || sdks))
		return;
	if (driver)
		f->driver[0] = '\0';
	if (runtimes)
		f->hip_runtimes_known = false, f->nhip_runtimes = 0;
	if (sdks)
		f->hip_sdks_known = false, f->nhip_sdks = 0;
	if (!cli->quiet)
		fprintf(stderr, "Planning for %s on this %s machine: its GPU is used, but its driver, "
		        "HIP runtimes and ROCm are %s's, so they are not checked (pass --driver, "
		        "--hip-runtime and --hip-sdk for the %s side)\n", f->os, machine.os,
		        machine.os, f->os);
}

int facts_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_facts *f)
{
	const char *file = cli_value(cli, OPT_FACTS);
	const char *env_gpu = getenv("CFAPKG_GPU");
	bool other_machine = file || (env_gpu && *env_gpu) || (cli->seen & OPT_BIT(OPT_GPU));
	struct recorded rec = {0};
	enum cfapkg_err e;
	size_t i, k;
	int rc;

	cfapkg_facts_init_host(f);
	if (!other_machine)
		recorded_facts(ctx, cli, &rec);
	if (!other_machine && (rc = detected_facts(ctx, cli, f, &rec)))
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
	other_os(cli, f);
	return EXIT_OK;
}
