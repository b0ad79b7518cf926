/*
 * opts.c - the command line's options, parsed by getopt_long (glibc's, and
 * mingw-w64's on Windows; the MSVC build takes vcpkg's getopt port):
 * --name VALUE, --name=VALUE, unique prefixes of long names, short
 * letters that bundle (-yq) and take values joined or apart (-oFILE, -o
 * FILE), and "--" to end options.  One table of every option; a letter
 * may stand for two options of commands that never take both (-n is
 * --dry-run, and --runs for bench), so the letters are chosen for the
 * command once it is known.  Arguments are read in order, not permuted:
 * for a command that runs a program, everything after the program's name
 * is the program's (cfapkg run sh -c 'echo $0').
 */
#include "opts.h"
#include "render.h"

#include <getopt.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct opt_def {
	const char *name;      /* without the leading "--" */
	enum opt_id id;
	char letter;           /* its short form, or 0 */
	const char *arg;       /* argument name, NULL for a flag */
	const char *help;
};

/* Sorted by name (help and completion list them in this order). */
static const struct opt_def defs[] = {
	{"allow-experimental", OPT_ALLOW_EXPERIMENTAL, 0, NULL, "let the plan use experimental parts"},
	{"arch", OPT_ARCH, 0, "ARCH", "plan for this CPU architecture (x86_64)"},
	{"ca-bundle", OPT_CA_BUNDLE, 0, "FILE", "trust the certificate authorities in FILE (PEM)"},
	{"compute", OPT_COMPUTE, 0, NULL, "cache clean: also remove the stack's compute caches (ZLUDA, MIOpen, ...)"},
	{"driver", OPT_DRIVER, 0, "VERSION", "the AMD driver version to plan for (25.8.1)"},
	/* -n is shared with --runs (bench): letter_def picks the one the
	 * command takes. */
	{"dry-run", OPT_DRY_RUN, 'n', NULL, "show the plan and change nothing"},
	{"env", OPT_ENV, 'e', "NAME", "the environment to act on (default: default); bench takes two"},
	{"expires-days", OPT_EXPIRES_DAYS, 0, "DAYS", "a channel index expires this many days after it is built (30)"},
	{"facts", OPT_FACTS, 0, "FILE", "read machine facts from a JSON file"},
	{"format", OPT_FORMAT, 0, "FMT", "recipe add-version: the archive format (default: from the URL)"},
	{"glibc", OPT_GLIBC, 0, "VERSION", "the C library (glibc) version to plan for (2.41)"},
	{"gpu", OPT_GPU, 0, "GPU", "plan for this GPU, not the detected one: gfx1200, \"RX 9060 XT\", 1002:7590 (cfapkg gpus)"},
	{"gpu-index", OPT_GPU_INDEX, 0, "N", "use detected GPU N (cfapkg detect lists them)"},
	{"help", OPT_HELP, 'h', NULL, "show help"},
	{"hip-runtime", OPT_HIP_RUNTIME, 0, "N", "a HIP runtime major in the driver (6, 7, none); repeatable"},
	{"hip-sdk", OPT_HIP_SDK, 0, "VERSION", "an installed HIP SDK or ROCm (6.4.2, none); repeatable"},
	{"index-version", OPT_INDEX_VERSION, 0, "N", "the version to give a channel index (default: one more)"},
	{"json", OPT_JSON, 0, NULL, "print JSON instead of text"},
	{"keep", OPT_KEEP, 0, "N", "keep the N newest generations of each environment"},
	{"key", OPT_KEY, 0, "FILE", "build: the private key that signs; add: the channel's public key"},
	{"known-good", OPT_KNOWN_GOOD, 0, NULL, "go back to the newest earlier generation proven to work (doctor, mark-good)"},
	{"lib-dir", OPT_LIB_DIR, 0, "DIR", "also look for the CUDA libraries in DIR first; repeatable"},
	{"locked", OPT_LOCKED, 0, "FILE", "install exactly what a lockfile lists, without solving"},
	{"max-size", OPT_MAX_SIZE, 0, "SIZE", "the most a download of unknown size may bring (4G)"},
	{"metric", OPT_METRIC, 0, "REGEX", "compare the number the regex captures from the output"},
	{"metric-name", OPT_METRIC_NAME, 0, "NAME", "bench: what to call the metric in the plot and JSON (default: the regex's text before its group)"},
	{"mirror", OPT_MIRROR, 0, "URL", "another place to get the same bytes; repeatable"},
	{"name", OPT_NAME, 0, "NAME", "the channel's name, written into its index (default: the folder's)"},
	{"next-key", OPT_NEXT_KEY, 0, "PUB", "also trust this public key for later versions (rotation); repeatable"},
	{"no-index-cache", OPT_NO_INDEX_CACHE, 0, NULL, "read every recipe, an APT source's whole index and a generation's lock.json, not the caches made from them"},
	{"no-stage", OPT_NO_STAGE, 0, NULL, "do not place DLLs beside the program"},
	{"offline", OPT_OFFLINE, 0, NULL, "never use the network (the download cache only)"},
	{"os", OPT_OS, 0, "OS", "plan for this OS (windows, linux)"},
	{"output", OPT_OUTPUT, 'o', "FILE", "write to FILE instead of standard output"},
	{"parallel", OPT_PARALLEL, 0, "N", "downloads at once (default 4)"},
	{"pin", OPT_PIN, 0, "SPEC", "hold a package to a version range for this solve; repeatable"},
	{"priority", OPT_PRIORITY, 0, "N", "a channel's rank: a higher one wins for a recipe name (default 50)"},
	{"quiet", OPT_QUIET, 'q', NULL, "print nothing but errors"},
	{"recipes", OPT_RECIPES, 0, "DIR", "also read recipes from DIR; repeatable"},
	{"releases-url", OPT_RELEASES_URL, 0, "URL", "recipe outdated: read this releases list (one recipe)"},
	{"retries", OPT_RETRIES, 0, "N", "retries in a row without progress per URL (4)"},
	{"root", OPT_ROOT, 0, "DIR", "where cfapkg keeps its data (also CFAPKG_ROOT)"},
	{"runs", OPT_RUNS, 'n', "N", "measured runs per environment (default 10)"},
	{"sha256", OPT_SHA256, 0, "HEX", "the SHA-256 the download must have"},
	{"shell", OPT_SHELL, 0, "SHELL", "bash, zsh, fish, powershell or cmd"},
	{"size", OPT_SIZE, 0, "BYTES", "the size the download must have"},
	{"source", OPT_SOURCE, 0, "OS-ARCH=URL", "recipe add-version: a download of the new version; repeatable"},
	{"stall-timeout", OPT_STALL_TIMEOUT, 0, "SECONDS", "cut an attempt that gets no data this long (30)"},
	{"strip", OPT_STRIP, 0, "N", "recipe add-version: leading folders to drop when unpacking"},
	{"suite", OPT_SUITE, 0, "SUITE", "recipe deb-set: a suite to read, in order of preference; repeatable"},
	{"testcase", OPT_TESTCASE, 0, "DIR", "also write the whole problem as a libsolv testcase"},
	{"timeout", OPT_TIMEOUT, 0, "SECONDS", "give up a probe or run after this long"},
	{"to", OPT_TO, 0, "N", "the generation to switch to"},
	{"venv", OPT_VENV, 0, "DIR", "a Python environment whose torch to stage into or probe (default: the active one, $VIRTUAL_ENV)"},
	{"verbose", OPT_VERBOSE, 'v', NULL, "say more: what the solver decided, each URL tried and why it failed"},
	{"version", OPT_VERSION, 'V', NULL, "print cfapkg's version"},
	{"warmup", OPT_WARMUP, 0, "N", "runs per environment to discard first (default 1)"},
	{"yes", OPT_YES, 'y', NULL, "answer yes to questions"},
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))
/* getopt_long's code for defs[i]: past every byte a letter can be. */
#define LONG_CODE 256

/* Every enum value has one row; NULL would mean a row is missing. */
static const struct opt_def *def_of(enum opt_id id)
{
	size_t i;

	for (i = 0; i < NDEFS; i++)
		if (defs[i].id == id)
			return &defs[i];
	return NULL;
}

const char *cli_opt_name(enum opt_id id)
{
	const struct opt_def *d = def_of(id);
	return d ? d->name : "?";
}

/* The option letter c stands for where the options in allowed are
 * taken (0: no command yet): the one allowed, else the first. */
static const struct opt_def *letter_def(int c, unsigned long long allowed)
{
	const struct opt_def *first = NULL;
	size_t i;

	for (i = 0; i < NDEFS; i++) {
		if (defs[i].letter != c)
			continue;
		if (allowed & OPT_BIT(defs[i].id))
			return &defs[i];
		first = first ? first : &defs[i];
	}
	return first;
}

/* The letter only where it stands for this option: a letter two options share
 * (-n) belongs to the one the command takes, and to no other. */
char cli_opt_letter(enum opt_id id, unsigned long long allowed)
{
	const struct opt_def *d = def_of(id);

	return d && d->letter && letter_def(d->letter, allowed) == d ? d->letter : 0;
}

/* getopt's string of letters: "-" returns each argument that is no
 * option in order (code 1), ":" reports a missing value as ':'. */
static void letters(unsigned long long allowed, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[n++] = '-';
	buf[n++] = ':';
	buf[n] = '\0';
	for (i = 0; i < NDEFS && n + 3 < len; i++) {
		const struct opt_def *d = defs[i].letter ? letter_def(defs[i].letter, allowed) : NULL;
		if (d != &defs[i] || strchr(buf + 2, d->letter))
			continue;
		buf[n++] = d->letter;
		if (d->arg)
			buf[n++] = ':';
		buf[n] = '\0';
	}
}

/* Built once, on the first parse: the table never changes.  The last row stays
 * zeroed, as getopt_long needs its end marked. */
static const struct option *long_options(void)
{
	static struct option longs[NDEFS + 1];
	size_t i;

	for (i = 0; i < NDEFS && !longs[NDEFS - 1].name; i++)
		longs[i] = (struct option){defs[i].name, defs[i].arg ? required_argument : no_argument,
		                           NULL, LONG_CODE + (int)i};
	return longs;
}

/* Every usage error ends in the same pointer to --help; the caller returns
 * false, and main exits EXIT_USAGE. */
static bool usage_error(const char *msg, const char *what)
{
	cli_error("%s%s\n", msg, what);
	fprintf(stderr, "Try 'cfapkg --help'.\n");
	return false;
}

/* "--gpux": unknown, and the names like it ("--gpu").
 * A name longer than the buffer is cut for the suggestion only; the message
 * repeats it whole. */
static bool unknown_named(const char *arg, size_t n)
{
	const char *names[NDEFS], *p;
	char name[64], dashed[256], *like;
	size_t i;

	for (i = 0; i < NDEFS; i++)
		names[i] = defs[i].name;
	cli_fit(name, sizeof(name), "%.*s", (int)n, arg + 2);
	like = cfapkg_names_suggest(name, names, NDEFS);
	dashed[0] = '\0';
	for (p = like; p && *p; p += strspn(p, ", ")) {
		size_t len = strcspn(p, ",");
		cli_fit_add(dashed, sizeof(dashed), "%s--%.*s",
		            dashed[0] ? ", " : "; did you mean ", (int)len, p);
		p += len;
	}
	cfapkg_free(like);
	cli_error("unknown option %.*s%s\n", (int)(n + 2), arg, dashed);
	fprintf(stderr, "Try 'cfapkg --help'.\n");
	return false;
}

/* "--gp" fits --gpu and --gpu-index: getopt says only that it failed. */
static bool unknown_long(const char *arg)
{
	size_t n = strcspn(arg + 2, "="), i, fits = 0;
	char list[256] = "";

	for (i = 0; i < NDEFS; i++)
		/* At most five names are listed: enough to see the prefix is
		 * too short. */
		if (strncmp(defs[i].name, arg + 2, n) == 0 && ++fits < 6)
			cli_fit_add(list, sizeof(list), "%s--%s",
			            fits > 1 ? ", " : "", defs[i].name);
	if (fits > 1) {
		cli_error("ambiguous option %.*s: it begins %s\n", (int)(n + 2), arg, list);
		fprintf(stderr, "Try 'cfapkg --help'.\n");
		return false;
	}
	return unknown_named(arg, n);
}

/* getopt's '?' or ':' as a message.  optopt: the letter, or the long
 * option's code, or 0 for a long name that fits none (or several). */
static bool option_error(int c, const char *arg, unsigned long long allowed)
{
	const struct opt_def *d = optopt >= LONG_CODE && (size_t)(optopt - LONG_CODE) < NDEFS
	                              ? &defs[optopt - LONG_CODE]
	                              : optopt > 0 && optopt < LONG_CODE ? letter_def(optopt, allowed)
	                                                                 : NULL;
	char name[64];

	if (!d && optopt > 0 && optopt < LONG_CODE) {
		cli_fit(name, sizeof(name), "-%c", optopt);
		return usage_error("unknown option ", name);
	}
	if (!d)
		return unknown_long(arg);
	cli_fit(name, sizeof(name), "--%s", d->name);
	if (c == ':' && d->arg)
		return usage_error("this option needs a value: ", name);
	return usage_error("this option takes no value: ", name);
}

/* A flag records no value, whatever optarg holds. */
static bool take(struct cli *cli, const struct opt_def *d, const char *value)
{
	if (cli->nopts == CLI_MAX_ARGS)
		return usage_error("too many options", "");
	cli->opts[cli->nopts++] = (struct cli_opt_value){d->id, d->arg ? value : NULL};
	cli->seen |= OPT_BIT(d->id);
	cli->verbose += d->id == OPT_VERBOSE;
	return true;
}

/* The first argument that is no option is the command; the rest are its
 * arguments, up to CLI_MAX_ARGS. */
static bool positional(struct cli *cli, const char *a)
{
	if (!cli->command)
		cli->command = a;
	else if (cli->nargs < CLI_MAX_ARGS)
		cli->args[cli->nargs++] = a;
	else
		return usage_error("too many arguments", "");
	return true;
}

/* An argument that is no option: the command (whose options pick the
 * letters from now on), or one of its arguments.  *rest: the arguments
 * after it are the program's, options or not. */
static bool argument(struct cli *cli, const char *a, const struct cli_commands *table,
                     unsigned long long *allowed, char *shorts, size_t len, bool *rest)
{
	bool program = false;

	if (!cli->command) {
		/* Once the command is known its options decide what each
		 * letter means from here on; an unknown command keeps the
		 * table's first meanings and is reported by main. */
		if (table && table->lookup(a, allowed, &program))
			letters(*allowed, shorts, len);
		cli->takes_program = program;
	} else {
		*rest = cli->takes_program;
	}
	return positional(cli, a);
}

void cli_free(struct cli *cli)
{
	free(cli->args);
	free(cli->opts);
	cli->args = NULL;
	cli->opts = NULL;
}

/* The letters getopt accepts are remade once the command is known (argument),
 * since a shared letter means what that command makes it. */
bool cli_parse(int argc, char **argv, struct cli *cli, const struct cli_commands *table)
{
	const struct option *longs = long_options();
	unsigned long long allowed = 0;
	char shorts[2 * NDEFS + 4];
	bool rest = false;

	memset(cli, 0, sizeof(*cli));
	/* Each argument is at most one option or one positional.  Commands
	 * name their first arguments by place (args[3] at most, after a
	 * command drops its first two): those read as NULL when not given. */
	cli->args = calloc((size_t)argc + 8, sizeof(*cli->args));
	cli->opts = calloc((size_t)argc + 1, sizeof(*cli->opts));
	if (!cli->args || !cli->opts)
		return usage_error("out of memory reading the command line", "");
	cli->argc = argc;
	cli->argv = argv;
	cli->commands = table;
	letters(0, shorts, sizeof(shorts));
	/* getopt's own messages are off: option_error says it in cfapkg's
	 * words, with suggestions. */
	opterr = 0;
	optind = 0; /* glibc and mingw-w64 alike: start over, state and all */
	while (!rest) {
		/* The argument getopt is about to read, for the error message;
		 * optind is 0 only before the first call. */
		int at = optind ? optind : 1;
		int c = getopt_long(argc, argv, shorts, longs, NULL);
		if (c == -1)
			break;
		if (c == 1 && !argument(cli, optarg, table, &allowed, shorts, sizeof(shorts), &rest))
			return false;
		if (c == '?' || c == ':')
			return option_error(c, at < argc ? argv[at] : "", allowed);
		if (c >= LONG_CODE && !take(cli, &defs[c - LONG_CODE], optarg))
			return false;
		if (c > 1 && c < LONG_CODE && !take(cli, letter_def(c, allowed), optarg))
			return false;
	}
	/* After "--", or the program's own arguments. */
	for (; optind < argc; optind++)
		if (!positional(cli, argv[optind]))
			return false;
	cli->json = cli->seen & OPT_BIT(OPT_JSON);
	cli->quiet = cli->seen & OPT_BIT(OPT_QUIET);
	cli->yes = cli->seen & OPT_BIT(OPT_YES);
	return true;
}

/* The first option the command does not take is named; the rest are not looked
 * at. */
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

/* The last one wins: "--env a --env b" acts on b, as most tools do. */
const char *cli_value(const struct cli *cli, enum opt_id id)
{
	const char *v = NULL;
	size_t i;

	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == id)
			v = cli->opts[i].value;
	return v;
}

/* The table in its own order, for the completion scripts and the help: both
 * read the one table the parser reads. */
bool cli_option_at(size_t i, const char **name, enum opt_id *id, const char **arg,
                   const char **help)
{
	if (i >= NDEFS)
		return false;
	*name = defs[i].name;
	*id = defs[i].id;
	*arg = defs[i].arg;
	*help = defs[i].help;
	return true;
}

/* Only the options the command takes, each with the letter it has there, so
 * that the help never shows a letter meaning another option. */
void cli_print_options(unsigned long long allowed)
{
	size_t i;

	for (i = 0; i < NDEFS; i++) {
		char left[64], letter = cli_opt_letter(defs[i].id, allowed);
		if (!(allowed & OPT_BIT(defs[i].id)))
			continue;
		cli_fit(left, sizeof(left), "%c%c%s--%s%s%s", letter ? '-' : ' ', letter ? letter : ' ',
		        letter ? ", " : "  ", defs[i].name, defs[i].arg ? " " : "",
		        defs[i].arg ? defs[i].arg : "");
		printf("  %-30s %s\n", left, defs[i].help);
	}
}

/* Digits only: no sign, no spaces, no 0x; the bound is checked before each
 * multiplication, so the value never wraps. */
bool cli_number(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');
		/* d > max first: max - d would wrap for a bound below 9. */
		if (*s < '0' || *s > '9' || d > max || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* One process, one root: the settings read for it live as long as the
 * command runs. */
static struct cfapkg_settings *kept_settings;

/* A second call replaces the first's settings, freeing them: the settings kept
 * are always the latest read. */
void cli_keep_settings(struct cfapkg_settings *s)
{
	cfapkg_settings_free(kept_settings);
	kept_settings = s;
}

const struct cfapkg_settings *cli_settings(void)
{
	return kept_settings;
}
