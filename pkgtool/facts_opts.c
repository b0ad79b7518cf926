/*
 * facts_opts.c - the machine a command plans for, from its flags: the
 * facts set by hand (CFAPKG_GPU unless --gpu, then --os, --gpu, --driver
 * and the rest in the order given, a GPU's name resolved here so that an
 * ambiguous one is answered with the candidates), handed to the library's
 * one rule (cfapkg_facts_choose), and what it chose told on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

static const struct {
	enum opt_id id;
	const char *key;
} fact_flags[] = {
	{OPT_OS, "os"},         {OPT_ARCH, "arch"},       {OPT_GPU, "gpu"},
	{OPT_DRIVER, "driver"}, {OPT_HIP_RUNTIME, "hip-runtime"}, {OPT_HIP_SDK, "hip-sdk"},
	{OPT_GLIBC, "glibc"},
};

/* One or two digits: no machine has a hundred GPUs, and a bound this small
 * needs no overflow check.  Not given is -1, detection's own pick. */
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

/* Kept for the plan, which shows detection's warnings, until the command
 * ends (forget_facts_choice). */
static struct cfapkg_facts_choice choice;

static void forget_set_facts(void);

void forget_facts_choice(void)
{
	cfapkg_facts_choice_clear(&choice);
	forget_set_facts();
}

const struct cfapkg_machine *detected_machine(void)
{
	return choice.detected ? &choice.machine : NULL;
}

/* What the choice means for the user, on stderr (even under --json: a
 * plan for another machine than the environment's is worth knowing). */
static void tell_choice(const struct cli *cli, const struct cfapkg_facts_choice *c)
{
	const struct cfapkg_facts *f = &c->facts, *r = &c->remembered;
	const struct cfapkg_machine *m = &c->machine;

	if (cli->quiet)
		return;
	if (c->from == CFAPKG_FACTS_REMEMBERED) {
		fprintf(stderr, "Using the facts generation %u was planned with: %s on %s-%s (pass "
		        "--gpu/--os to plan for another machine)\n", c->remembered_gen, f->gfx, f->os,
		        or_else(f->arch, "unknown"));
		return;
	}
	if (c->remembered_gen)
		fprintf(stderr, "This machine's GPU is %s, not the %s generation %u was planned "
		        "for: planning for %s (pass --gpu %s to keep planning for %s)\n", f->gfx,
		        r->gfx, c->remembered_gen, f->gfx, r->gfx, r->gfx);
	if (c->detected && !cli->json) {
		const struct cfapkg_gpu *g = &m->gpus[m->selected];
		fprintf(stderr, "Detected GPU %u: %s (%s", g->index, g->name, f->gfx);
		if (m->gfx_override[0])
			fprintf(stderr, " from HSA_OVERRIDE_GFX_VERSION; the hardware is %s", g->gfx);
		fprintf(stderr, ")%s\n", m->ngpus > 1 ? "; --gpu-index N picks another" : "");
	}
	if (c->other_os)
		fprintf(stderr, "Planning for %s on this %s machine: its GPU is used, but its driver, "
		        "HIP runtimes and ROCm are %s's, so they are not checked (pass --driver, "
		        "--hip-runtime and --hip-sdk for the %s side)\n", f->os, m->os, m->os, f->os);
}

/* Only commands that plan for one environment may plan with the
 * machine it remembers. */
static const char *planned_env(const struct cli *cli)
{
	static const char *const commands[] = {"install", "update", "remove", "plan"};
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cli->command, commands[i]) == 0)
			return env_from_cli(cli);
	return NULL;
}

/* The facts set by hand, in order: CFAPKG_GPU unless --gpu is given,
 * then each fact flag; a GPU's name resolved to its target here, so
 * that a name fitting several GPUs, or none, is answered with the
 * candidates or the nearest. */
struct set_facts {
	const char **keys, **values; /* n of them, room for one more */
	char (*gfx)[16];
	size_t n;
};

/* Kept with the choice, whose facts may point into it: a few facts in
 * one allocation for the command's options, not room for every
 * argument (which would spread a few words over several fresh pages). */
static struct set_facts set;

static void forget_set_facts(void)
{
	free(set.keys);
	memset(&set, 0, sizeof(set));
}

/* Room for CFAPKG_GPU, every option and the terminator. */
static bool make_set_facts(const struct cli *cli)
{
	size_t cap = cli->nopts + 2;
	char *block;

	forget_set_facts();
	if (!(block = calloc(cap, 2 * sizeof(char *) + sizeof(*set.gfx))))
		return false;
	set.keys = (const char **)(void *)block;
	set.values = set.keys + cap;
	set.gfx = (char(*)[16])(void *)(set.values + cap);
	return true;
}

/* A GPU given by name is kept as its target, in s's own room, so that the
 * library is handed one known target; every other fact goes as given. */
static int add_fact(struct cfapkg_ctx *ctx, struct set_facts *s, const char *key,
                    const char *value)
{
	int rc;

	if (strcmp(key, "gpu") == 0) {
		if ((rc = gpu_from_cli(ctx, value, s->gfx[s->n], sizeof(s->gfx[s->n]))))
			return rc;
		value = s->gfx[s->n];
	}
	s->keys[s->n] = key;
	s->values[s->n++] = value;
	return EXIT_OK;
}

/* CFAPKG_GPU first, so that any fact flag after it still wins, and not at all
 * when --gpu is given. */
static int set_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct set_facts *s)
{
	const char *env_gpu = getenv("CFAPKG_GPU");
	size_t i, k;
	int rc;

	if (env_gpu && *env_gpu && !(cli->seen & OPT_BIT(OPT_GPU)) &&
	    (rc = add_fact(ctx, s, "gpu", env_gpu)))
		return rc;
	for (i = 0; i < cli->nopts; i++)
		for (k = 0; k < sizeof(fact_flags) / sizeof(fact_flags[0]); k++)
			if (cli->opts[i].id == fact_flags[k].id &&
			    (rc = add_fact(ctx, s, fact_flags[k].key, cli->opts[i].value)))
				return rc;
	return EXIT_OK;
}

int facts_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_facts *f)
{
	struct cfapkg_facts_request req = {.env = planned_env(cli), .file = cli_value(cli, OPT_FACTS)};
	enum cfapkg_err e;
	int rc;

	if (!make_set_facts(cli))
		return report_error(ctx, CFAPKG_E_NOMEM);
	if ((rc = gpu_index_from_cli(cli, &req.gpu_index)) || (rc = set_from_cli(ctx, cli, &set)))
		return rc;
	req.keys = set.keys;
	req.values = set.values;
	req.nkeys = set.n;
	e = cfapkg_facts_choose(ctx, &req, &choice);
	if (e && choice.detected && choice.machine.selected < 0) {
		print_detection_notes(stderr, &choice.machine);
		cli_error("no AMD GPU found on this machine (cfapkg detect shows what was read); to "
		          "plan for another machine, pass --gpu with its target, name or PCI id, for "
		          "example --gpu gfx1200 or --gpu \"RX 9060 XT\" (cfapkg gpus lists them)\n");
		return EXIT_NO_GPU;
	}
	if (e)
		return report_error(ctx, e);
	tell_choice(cli, &choice);
	/* A copy the caller owns: the choice is kept only for its notes. */
	return cfapkg_facts_copy(&choice.facts, f) ? report_error(ctx, CFAPKG_E_NOMEM) : EXIT_OK;
}
