/*
 * opts.c - a small portable option parser: --name VALUE, --name=VALUE,
 * and "--" to end options.  No getopt_long (MSVC has none).
 */
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opt_def {
	const char *name;      /* without the leading "--" */
	enum opt_id id;
	const char *arg;       /* argument name, NULL for a flag */
	const char *help;
};

/* Sorted by name for bsearch. */
static const struct opt_def defs[] = {
	{"allow-experimental", OPT_ALLOW_EXPERIMENTAL, NULL, "let the plan use experimental parts"},
	{"arch", OPT_ARCH, "ARCH", "plan for this CPU architecture (x86_64)"},
	{"ca-bundle", OPT_CA_BUNDLE, "FILE", "trust the certificate authorities in FILE (PEM)"},
	{"compute", OPT_COMPUTE, NULL, "cache clean: also remove the stack's compute caches (ZLUDA, MIOpen, ...)"},
	{"driver", OPT_DRIVER, "VERSION", "the AMD driver version to plan for (25.8.1)"},
	{"dry-run", OPT_DRY_RUN, NULL, "show the plan and change nothing"},
	{"env", OPT_ENV, "NAME", "the environment to act on (default: default); bench takes two"},
	{"expires-days", OPT_EXPIRES_DAYS, "DAYS", "a channel index expires this many days after it is built (30)"},
	{"facts", OPT_FACTS, "FILE", "read machine facts from a JSON file"},
	{"format", OPT_FORMAT, "FMT", "recipe add-version: the archive format (default: from the URL)"},
	{"glibc", OPT_GLIBC, "VERSION", "the C library (glibc) version to plan for (2.41)"},
	{"gpu", OPT_GPU, "GPU", "plan for this GPU, not the detected one: gfx1200, \"RX 9060 XT\", 1002:7590 (cfapkg gpus)"},
	{"gpu-index", OPT_GPU_INDEX, "N", "use detected GPU N (cfapkg detect lists them)"},
	{"help", OPT_HELP, NULL, "show help"},
	{"hip-runtime", OPT_HIP_RUNTIME, "N", "a HIP runtime major in the driver (6, 7, none); repeatable"},
	{"hip-sdk", OPT_HIP_SDK, "VERSION", "an installed HIP SDK or ROCm (6.4.2, none); repeatable"},
	{"index-version", OPT_INDEX_VERSION, "N", "the version to give a channel index (default: one more)"},
	{"json", OPT_JSON, NULL, "print JSON instead of text"},
	{"keep", OPT_KEEP, "N", "keep the N newest generations of each environment"},
	{"key", OPT_KEY, "FILE", "build: the private key that signs; add: the channel's public key"},
	{"known-good", OPT_KNOWN_GOOD, NULL, "go back to the newest earlier generation proven to work (doctor, mark-good)"},
	{"lib-dir", OPT_LIB_DIR, "DIR", "also look for the CUDA libraries in DIR first; repeatable"},
	{"locked", OPT_LOCKED, "FILE", "install exactly what a lockfile lists, without solving"},
	{"max-size", OPT_MAX_SIZE, "SIZE", "the most a download of unknown size may bring (4G)"},
	{"metric", OPT_METRIC, "REGEX", "compare the number the regex captures from the output"},
	{"metric-name", OPT_METRIC_NAME, "NAME", "bench: what to call the metric in the plot and JSON (default: the regex's text before its group)"},
	{"mirror", OPT_MIRROR, "URL", "another place to get the same bytes; repeatable"},
	{"name", OPT_NAME, "NAME", "the channel's name, written into its index (default: the folder's)"},
	{"next-key", OPT_NEXT_KEY, "PUB", "also trust this public key for later versions (rotation); repeatable"},
	{"no-stage", OPT_NO_STAGE, NULL, "do not place DLLs beside the program"},
	{"offline", OPT_OFFLINE, NULL, "never use the network (the download cache only)"},
	{"os", OPT_OS, "OS", "plan for this OS (windows, linux)"},
	{"output", OPT_OUTPUT, "FILE", "write to FILE instead of standard output (also -o)"},
	{"parallel", OPT_PARALLEL, "N", "downloads at once (default 4)"},
	{"pin", OPT_PIN, "SPEC", "hold a package to a version range for this solve; repeatable"},
	{"priority", OPT_PRIORITY, "N", "a channel's rank: a higher one wins for a recipe name (default 50)"},
	{"quiet", OPT_QUIET, NULL, "print nothing but errors"},
	{"recipes", OPT_RECIPES, "DIR", "also read recipes from DIR; repeatable"},
	{"releases-url", OPT_RELEASES_URL, "URL", "recipe outdated: read this releases list (one recipe)"},
	{"retries", OPT_RETRIES, "N", "retries in a row without progress per URL (4)"},
	{"root", OPT_ROOT, "DIR", "where cfapkg keeps its data (also CFAPKG_ROOT)"},
	{"runs", OPT_RUNS, "N", "measured runs per environment (also -n; default 10)"},
	{"sha256", OPT_SHA256, "HEX", "the SHA-256 the download must have"},
	{"shell", OPT_SHELL, "SHELL", "bash, zsh, fish, powershell or cmd"},
	{"size", OPT_SIZE, "BYTES", "the size the download must have"},
	{"source", OPT_SOURCE, "OS-ARCH=URL", "recipe add-version: a download of the new version; repeatable"},
	{"stall-timeout", OPT_STALL_TIMEOUT, "SECONDS", "cut an attempt that gets no data this long (30)"},
	{"strip", OPT_STRIP, "N", "recipe add-version: leading folders to drop when unpacking"},
	{"suite", OPT_SUITE, "SUITE", "recipe deb-set: a suite to read, in order of preference; repeatable"},
	{"testcase", OPT_TESTCASE, "DIR", "also write the whole problem as a libsolv testcase"},
	{"timeout", OPT_TIMEOUT, "SECONDS", "give up a probe or run after this long"},
	{"to", OPT_TO, "N", "the generation to switch to"},
	{"venv", OPT_VENV, "DIR", "a Python environment whose torch to stage into or probe (default: the active one, $VIRTUAL_ENV)"},
	{"version", OPT_VERSION, NULL, "print cfapkg's version"},
	{"warmup", OPT_WARMUP, "N", "runs per environment to discard first (default 1)"},
	{"yes", OPT_YES, NULL, "answer yes to questions"},
};

static int def_cmp(const void *key, const void *elem)
{
	const char *k = key;
	const struct opt_def *d = elem;
	size_t n = strcspn(k, "=");
	int c = strncmp(k, d->name, n);
	return c ? c : (d->name[n] ? -1 : 0);
}

static const struct opt_def *find_def(const char *name)
{
	return bsearch(name, defs, sizeof(defs) / sizeof(defs[0]), sizeof(defs[0]), def_cmp);
}

static const struct opt_def *def_of(enum opt_id id)
{
	size_t i;
	for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (defs[i].id == id)
			return &defs[i];
	return NULL;
}

const char *cli_opt_name(enum opt_id id)
{
	const struct opt_def *d = def_of(id);
	return d ? d->name : "?";
}

static bool usage_error(const char *msg, const char *what)
{
	cli_error("%s%s\n", msg, what);
	fprintf(stderr, "Try 'cfapkg --help'.\n");
	return false;
}

static bool take_option(struct cli *cli, const char *arg, int *i, int argc, char **argv)
{
	const struct opt_def *d = find_def(arg + 2);
	const char *eq = strchr(arg, '=');
	const char *value = NULL;

	if (!d)
		return usage_error("unknown option ", arg);
	if (d->arg) {
		if (eq)
			value = eq + 1;
		else if (*i + 1 < argc)
			value = argv[++*i];
		else
			return usage_error("this option needs a value: ", arg);
	} else if (eq) {
		return usage_error("this option takes no value: ", arg);
	}
	if (cli->nopts == CLI_MAX_ARGS)
		return usage_error("too many options", "");
	cli->opts[cli->nopts++] = (struct cli_opt_value){d->id, value};
	cli->seen |= OPT_BIT(d->id);
	return true;
}

bool cli_parse(int argc, char **argv, struct cli *cli)
{
	bool options_done = false;
	int i;

	memset(cli, 0, sizeof(*cli));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!options_done && strcmp(a, "--") == 0) {
			options_done = true;
		} else if (!options_done && a[0] == '-' && a[1] == '-' && a[2]) {
			if (!take_option(cli, a, &i, argc, argv))
				return false;
		} else if (!options_done && a[0] == '-' && a[1] && a[1] != '-') {
			if (strcmp(a, "-h") == 0) {
				cli->seen |= OPT_BIT(OPT_HELP);
				continue;
			}
			if (strcmp(a, "-o") == 0 || strcmp(a, "-n") == 0) {
				if (!take_option(cli, a[1] == 'o' ? "--output" : "--runs", &i, argc, argv))
					return false;
				continue;
			}
			return usage_error("unknown option ", a);
		} else if (!cli->command) {
			cli->command = a;
		} else if (cli->nargs < CLI_MAX_ARGS) {
			cli->args[cli->nargs++] = a;
		} else {
			return usage_error("too many arguments", "");
		}
	}
	cli->json = cli->seen & OPT_BIT(OPT_JSON);
	cli->quiet = cli->seen & OPT_BIT(OPT_QUIET);
	cli->yes = cli->seen & OPT_BIT(OPT_YES);
	return true;
}

bool cli_check_allowed(const struct cli *cli, unsigned long long allowed)
{
	size_t i;

	for (i = 0; i < cli->nopts; i++)
		if (!(allowed & OPT_BIT(cli->opts[i].id))) {
			cli_error("'%s' does not take --%s\n", cli->command,
			        cli_opt_name(cli->opts[i].id));
			return false;
		}
	return true;
}

const char *cli_value(const struct cli *cli, enum opt_id id)
{
	const char *v = NULL;
	size_t i;

	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == id)
			v = cli->opts[i].value;
	return v;
}

bool cli_option_at(size_t i, const char **name, enum opt_id *id, const char **arg,
                   const char **help)
{
	if (i >= sizeof(defs) / sizeof(defs[0]))
		return false;
	*name = defs[i].name;
	*id = defs[i].id;
	*arg = defs[i].arg;
	*help = defs[i].help;
	return true;
}

void cli_print_options(unsigned long long allowed)
{
	size_t i;

	for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		char left[64];
		if (!(allowed & OPT_BIT(defs[i].id)))
			continue;
		snprintf(left, sizeof(left), "--%s%s%s", defs[i].name, defs[i].arg ? " " : "",
		         defs[i].arg ? defs[i].arg : "");
		printf("  %-26s %s\n", left, defs[i].help);
	}
}

bool cli_number(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (max - (unsigned)(*s - '0')) / 10)
			return false;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*out = v;
	return true;
}
