/*
 * main.c - the cfapkg command: global options, the command table, and the
 * mapping of library errors to messages and exit codes.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* One row of the command table: completion scripts, help and the parser are
 * all made from it, so a command is declared once. */
struct command {
	const char *name;
	int (*run)(struct cfapkg_ctx *ctx, const struct cli *cli);
	unsigned long long opts; /* options beyond OPTS_GLOBAL */
	const char *usage;
	const char *summary;
};

/* In a command's opts: its output is not cfapkg's (a program's, a
 * shell's), so --json is refused rather than ignored. */
#define TEXT_ONLY (1ull << 63)
/* Its first argument is a program: every argument after the program's
 * name is the program's, options or not. */
#define TAKES_PROGRAM (1ull << 62)
/* It runs without the recipe set: it reads, runs or switches what is
 * recorded (listing, running or rolling back an environment must work
 * while a recipe folder is broken), or it repairs what would break loading
 * it; the library loads the recipes itself where a call needs them.
 * Loading them costs most of a short command's time. */
#define NO_RECIPES (1ull << 61)
#define NOT_OPTIONS (TEXT_ONLY | TAKES_PROGRAM | NO_RECIPES)
_Static_assert(OPT__COUNT < 61, "the option bits reach NO_RECIPES");

#define OPT_ENV_BIT OPT_BIT(OPT_ENV)
#define OPTS_CHANGE (OPTS_FACTS | OPTS_FETCH | OPT_ENV_BIT | OPT_BIT(OPT_DRY_RUN) | \
                     OPT_BIT(OPT_ALLOW_EXPERIMENTAL) | OPT_BIT(OPT_PIN) | OPT_BIT(OPT_MAX_SIZE))

/* Sorted by name: help lists them in this order. */
static const struct command commands[] = {
	{"add-file", cmd_add_file, 0, "add-file PATH...",
	 "put files you supply into the cache if a recipe expects their SHA-256"},
	{"bench", cmd_bench,
	 OPT_ENV_BIT | OPT_BIT(OPT_RUNS) | OPT_BIT(OPT_WARMUP) | OPT_BIT(OPT_METRIC) |
	 OPT_BIT(OPT_METRIC_NAME) | OPT_BIT(OPT_OUTPUT) | OPT_BIT(OPT_TIMEOUT) |
	 OPT_BIT(OPT_GPU_INDEX) | TAKES_PROGRAM,
	 "bench --env A --env B [-n 10] [--] PROGRAM ARGS...",
	 "run a program under two environments in turn and compare the times or a metric"},
	{"cache", cmd_cache, OPT_BIT(OPT_COMPUTE) | OPT_BIT(OPT_DRY_RUN),
	 "cache info | clean [--compute] [--dry-run]",
	 "show cfapkg's downloads and the stack's compute caches; remove what is not needed"},
	{"channel", cmd_channel,
	 NO_RECIPES | OPTS_FETCH | OPT_BIT(OPT_KEY) | OPT_BIT(OPT_NAME) | OPT_BIT(OPT_PRIORITY) |
	 OPT_BIT(OPT_EXPIRES_DAYS) | OPT_BIT(OPT_NEXT_KEY) | OPT_BIT(OPT_INDEX_VERSION),
	 "channel keygen|build|add|list|remove|update",
	 "publish a recipe folder as a signed channel, and follow channels"},
	{"completion", cmd_completion, TEXT_ONLY | NO_RECIPES, "completion bash|zsh|fish|powershell",
	 "print a completion script for the shell, made from this command table"},
	{"config", cmd_config, 0, "config", "show where cfapkg keeps data and reads recipes"},
	{"detect", cmd_detect, OPT_BIT(OPT_GPU_INDEX), "detect",
	 "show this machine's AMD GPUs, driver, HIP runtimes and SDKs"},
	{"doctor", cmd_doctor,
	 OPT_ENV_BIT | OPT_BIT(OPT_GPU_INDEX) | OPT_BIT(OPT_LIB_DIR) | OPT_BIT(OPT_TIMEOUT) |
	 OPT_BIT(OPT_VENV),
	 "doctor [--env NAME] [--venv DIR]", "check that the environment's stack works: static checks and a "
	 "live CUDA probe per library"},
	{"env", cmd_env, OPT_ENV_BIT | OPT_BIT(OPT_SHELL) | OPT_BIT(OPT_GPU_INDEX) | NO_RECIPES,
	 "env create|remove NAME | list | show | activate | deactivate",
	 "manage environments; show one's runtime settings or a shell snippet"},
	{"fetch", cmd_fetch,
	 OPTS_FACTS | OPTS_FETCH | OPT_BIT(OPT_ALLOW_EXPERIMENTAL) | OPT_BIT(OPT_PIN) |
	 OPT_BIT(OPT_MAX_SIZE), "fetch SPEC...",
	 "plan, then download, verify and unpack the plan's packages into the store"},
	{"gc", cmd_gc, OPT_BIT(OPT_KEEP) | OPT_BIT(OPT_DRY_RUN), "gc [--keep N] [--dry-run]",
	 "remove old generations, and store prefixes and downloads nothing kept uses"},
	{"gpus", cmd_gpus, OPT_BIT(OPT_NO_INDEX_CACHE), "gpus [PATTERN]",
	 "list the GPUs cfapkg knows: name, target, generation, status, PCI id"},
	{"help", NULL, TEXT_ONLY, "help [COMMAND]",
	 "show the commands, or one command's options (as 'cfapkg COMMAND --help')"},
	{"history", cmd_history, OPT_ENV_BIT | NO_RECIPES, "history [--env NAME]",
	 "list an environment's generations and switches"},
	{"info", cmd_info, OPT_BIT(OPT_GPU) | OPT_ENV_BIT | OPT_BIT(OPT_NO_INDEX_CACHE),
	 "info NAME [--env NAME]",
	 "show a recipe (or who provides a name): versions, sources, status, what is installed"},
	{"install", cmd_install, OPTS_CHANGE | OPT_BIT(OPT_LOCKED) | NO_RECIPES,
	 "install SPEC... | --locked FILE", "add packages to an environment (a new generation)"},
	{"list", cmd_list, OPT_ENV_BIT | OPT_BIT(OPT_NO_INDEX_CACHE) | NO_RECIPES, "list [--env NAME]",
	 "list what an environment holds"},
	{"lock", cmd_lock, OPT_ENV_BIT | OPT_BIT(OPT_OUTPUT) | NO_RECIPES, "lock [--env NAME] [-o FILE]",
	 "write the environment's exact set as a lockfile"},
	{"mark-good", cmd_mark_good, OPT_ENV_BIT | NO_RECIPES, "mark-good [N] [--env NAME]",
	 "record, on your word, that generation N (default: the current one) works here"},
	{"mirror", cmd_mirror,
	 OPTS_FACTS | OPTS_FETCH | OPT_ENV_BIT | OPT_BIT(OPT_LOCKED) | OPT_BIT(OPT_MAX_SIZE) |
	 OPT_BIT(OPT_ALLOW_EXPERIMENTAL) | OPT_BIT(OPT_PIN) | OPT_BIT(OPT_KEY) | OPT_BIT(OPT_NAME),
	 "mirror create DIR [SPEC... | --env NAME | --locked FILE] [--key FILE [--name NAME]]",
	 "copy the archives a set needs into DIR, laid out by URL for a web server, with the "
	 "rules clients put in mirrors.conf"},
	{"pin", cmd_pin, OPT_ENV_BIT, "pin SPEC... [--env NAME]",
	 "hold packages to versions in every later solve of an environment"},
	{"pins", cmd_pins, OPT_ENV_BIT | NO_RECIPES, "pins [--env NAME]", "list an environment's pins"},
	{"plan", cmd_plan,
	 /* The solve reads only the recipes the request reaches. */
	 NO_RECIPES | OPTS_FACTS | OPT_ENV_BIT | OPT_BIT(OPT_ALLOW_EXPERIMENTAL) | OPT_BIT(OPT_PIN) |
	 OPT_BIT(OPT_TESTCASE) | OPT_BIT(OPT_NO_INDEX_CACHE),
	 "plan SPEC...", "show what would be installed for this machine, or why nothing fits"},
	{"prefetch", cmd_prefetch,
	 OPTS_FETCH | OPT_BIT(OPT_SHA256) | OPT_BIT(OPT_SIZE) | OPT_BIT(OPT_MIRROR) |
	 OPT_BIT(OPT_MAX_SIZE),
	 "prefetch URL...", "download into the cache and print each SHA-256 and size"},
	{"recipe", cmd_recipe,
	 OPTS_FETCH | OPT_BIT(OPT_MAX_SIZE) | OPT_BIT(OPT_SOURCE) | OPT_BIT(OPT_FORMAT) |
	 OPT_BIT(OPT_STRIP) | OPT_BIT(OPT_RELEASES_URL) | OPT_BIT(OPT_SUITE),
	 "recipe add-version NAME VERSION --source OS-ARCH=URL... | outdated [NAME...] | "
	 "trust|untrust NAME VERSION [OS-ARCH] | trusted | export-trusted [NAME...] | "
	 "deb-set DIR --suite SUITE... PACKAGE...",
	 "add a version to a recipe file (downloads hashed), list newer upstream releases, "
	 "trust a download nobody has pinned on first use, or pin a Debian package set's "
	 "closure"},
	{"remove", cmd_remove, OPTS_CHANGE, "remove NAME...",
	 "take requested packages out of an environment (a new generation)"},
	{"repair", cmd_repair, OPTS_FETCH | OPT_ENV_BIT | OPT_BIT(OPT_DRY_RUN) | OPT_BIT(OPT_MAX_SIZE),
	 "repair [--env NAME]",
	 "fetch again what an environment's store folders lack, and re-link it (a new generation)"},
	{"report", cmd_report, OPT_BIT(OPT_GPU_INDEX) | OPT_BIT(OPT_OUTPUT), "report [-o FILE]",
	 "write what detect found as JSON for a compatibility report"},
	{"rollback", cmd_rollback,
	 OPT_ENV_BIT | OPT_BIT(OPT_TO) | OPT_BIT(OPT_KNOWN_GOOD) | NO_RECIPES,
	 "rollback [--to N | --known-good]",
	 "make an earlier generation current again (no network, no unpacking)"},
	{"run", cmd_run,
	 OPT_ENV_BIT | OPT_BIT(OPT_GPU_INDEX) | OPT_BIT(OPT_NO_STAGE) | TEXT_ONLY | TAKES_PROGRAM |
	 NO_RECIPES,
	 "run [--env NAME] [--] PROGRAM ARGS...",
	 "run a program with the environment's libraries and settings in place"},
	{"search", cmd_search, 0, "search [PATTERN]", "list recipes whose name or summary matches"},
	{"stage", cmd_stage, OPT_ENV_BIT | OPT_BIT(OPT_GPU_INDEX) | OPT_BIT(OPT_VENV),
	 "stage [--env NAME] DIR | --venv DIR",
	 "place the environment's DLLs in a program's folder (run does this on Windows), or its "
	 "ZLUDA libraries over a venv's torch's CUDA libraries"},
	{"unmark", cmd_unmark, OPT_ENV_BIT | NO_RECIPES, "unmark [N] [--env NAME]",
	 "take the known-good mark off generation N (default: the current one)"},
	{"unpin", cmd_unpin, OPT_ENV_BIT, "unpin NAME... [--env NAME]", "remove pins"},
	{"unstage", cmd_unstage, OPT_BIT(OPT_VENV) | NO_RECIPES, "unstage DIR | --venv DIR",
	 "take staged DLLs out of a folder or venv and put back what was there"},
	{"update", cmd_update, OPTS_CHANGE, "update [NAME...]",
	 "move an environment's packages (or the named ones) to the newest versions that fit"},
	{"verify", cmd_verify, OPT_ENV_BIT | NO_RECIPES, "verify [--env NAME]",
	 "re-hash installed files and name any that changed"},
	{"why", cmd_why, OPT_ENV_BIT, "why NAME [--env NAME]",
	 "show which request, through which requirements, puts NAME in an environment"},
};

/* The options a command takes beyond its own: the global ones, and
 * --json unless it is text only. */
static unsigned long long json_bit(const struct command *c)
{
	return (c->opts & TEXT_ONLY) ? 0 : OPT_BIT(OPT_JSON);
}

/* The table's row i for completion scripts (opts.h's cli_commands.at); false
 * past its end. */
static bool command_at(size_t i, const char **name, unsigned long long *opts, const char **usage,
                const char **summary)
{
	if (i >= sizeof(commands) / sizeof(commands[0]))
		return false;
	*name = commands[i].name;
	*opts = (commands[i].opts & ~NOT_OPTIONS) | json_bit(&commands[i]);
	*usage = commands[i].usage;
	*summary = commands[i].summary;
	return true;
}

/* Whether command i runs a program whose arguments follow its name. */
static bool command_takes_program(size_t i)
{
	return i < sizeof(commands) / sizeof(commands[0]) && (commands[i].opts & TAKES_PROGRAM);
}

/* Exact names only: a prefix or another package manager's word is suggested,
 * never run. */
static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* For the parser: the options a command takes, with the global ones. */
static bool lookup_command(const char *name, unsigned long long *opts, bool *program)
{
	const struct command *c = find_command(name);

	if (!c)
		return false;
	*opts = OPTS_GLOBAL | (c->opts & ~NOT_OPTIONS) | json_bit(c);
	*program = c->opts & TAKES_PROGRAM;
	return true;
}

/* Words people type from other package managers, and what cfapkg calls
 * them (only suggested: an unknown command never runs another). */
static const struct {
	const char *typed, *meant;
} other_words[] = {
	{"activate", "env activate"}, {"add", "install"},      {"deactivate", "env deactivate"},
	{"erase", "remove"},          {"find", "search"},      {"ls", "list"},
	{"purge", "remove"},          {"rm", "remove"},        {"show", "info"},
	{"uninstall", "remove"},      {"upgrade", "update"},
};

/* The other word for name ("update" for "upgrade"), or NULL. */
static const char *meant_by(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(other_words) / sizeof(other_words[0]); i++)
		if (strcmp(other_words[i].typed, name) == 0)
			return other_words[i].meant;
	return NULL;
}

/* "unknown command "upgrade"; did you mean: cfapkg update": the other
 * word, then the commands spelt like it. */
static void unknown_command(const char *name)
{
	const char *names[sizeof(commands) / sizeof(commands[0])], *meant = meant_by(name), *p;
	char like[512] = "", *similar;
	size_t i;

	if (meant)
		cli_fit(like, sizeof(like), "cfapkg %s", meant);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		names[i] = commands[i].name;
	/* The other word is said once: a spelling suggestion that names the
	 * same command is left out. */
	similar = cfapkg_names_suggest(name, names, i);
	for (p = similar; p && *p; p += strspn(p, ", ")) {
		size_t len = strcspn(p, ",");
		if (!meant || strlen(meant) != len || strncmp(meant, p, len) != 0)
			cli_fit_add(like, sizeof(like), "%scfapkg %.*s",
			            like[0] ? ", " : "", (int)len, p);
		p += len;
	}
	cfapkg_free(similar);
	cli_error("unknown command \"%s\"%s%s; 'cfapkg help' lists the commands\n", name,
	          like[0] ? "; did you mean: " : "", like);
}

/* A usage too long for the column goes on its own line, with the summary under
 * it. */
static void print_help(const struct command *c)
{
	size_t i;

	if (c) {
		printf("usage: cfapkg %s [OPTIONS]\n%s\n\noptions:\n", c->usage, c->summary);
		cli_print_options(OPTS_GLOBAL | (c->opts & ~NOT_OPTIONS) | json_bit(c));
		return;
	}
	printf("usage: cfapkg COMMAND [OPTIONS] [ARGS]\n\n"
	       "cfapkg assembles the parts that run CUDA-only software on AMD GPUs.\n\n"
	       "commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strlen(commands[i].usage) > 28)
			printf("  %s\n  %-28s %s\n", commands[i].usage, "", commands[i].summary);
		else
			printf("  %-28s %s\n", commands[i].usage, commands[i].summary);
	printf("\nglobal options:\n");
	cli_print_options(OPTS_GLOBAL);
	printf("\nA SPEC is a name with optional constraints: zluda, zluda==7-preview.10,\n"
	       "'libtorch-cuda>=2.3,<2.4'.  'cfapkg help COMMAND' (or 'cfapkg COMMAND --help')\n"
	       "shows a command's options.\n");
}

/* "cfapkg help [COMMAND]": what --help prints. */
static int help_command(const struct cli *cli)
{
	const struct command *c = cli->nargs ? find_command(cli->args[0]) : NULL;

	if (cli->nargs > 1) {
		cli_error("usage: cfapkg help [COMMAND]\n");
		return EXIT_USAGE;
	}
	if (cli->nargs && !c) {
		unknown_command(cli->args[0]);
		return EXIT_USAGE;
	}
	print_help(c);
	return EXIT_OK;
}

/* The root, the settings, the --recipes folders and (when needed) the recipes,
 * in the order each depends on the one before. */
static int setup_context(struct cfapkg_ctx *ctx, const struct cli *cli, bool recipes)
{
	enum cfapkg_err e;
	size_t i;

	struct cfapkg_settings *settings = NULL;

	if ((e = cfapkg_ctx_set_root(ctx, cli_value(cli, OPT_ROOT))))
		return report_error(ctx, e);
	/* Kept even when the load failed: what it read is freed at the end. */
	e = cfapkg_settings_load(ctx, &settings);
	cli_keep_settings(settings);
	if (e)
		return report_error(ctx, e);
	/* Added before the load, in command-line order, so that they are read
	 * with the rest. */
	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_RECIPES &&
		    (e = cfapkg_ctx_add_recipe_dir(ctx, cli->opts[i].value)))
			return report_error(ctx, e);
	if (cli->seen & OPT_BIT(OPT_NO_INDEX_CACHE))
		cfapkg_ctx_set_recipe_index(ctx, false);
	if (recipes && (e = cfapkg_recipes_load(ctx)))
		return report_error(ctx, e);
	return EXIT_OK;
}

/* Whether --json comes before any "--": a command line that does not
 * parse still gets its error as a document. */
static bool asks_for_json(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			return true;
	return false;
}

/* Everything after parsing; the exit code. */
static int dispatch(const struct cli *cli)
{
	const struct command *c = NULL;
	struct cfapkg_ctx *ctx;
	int rc;

	if (cli->command && !(c = find_command(cli->command))) {
		unknown_command(cli->command);
		return EXIT_USAGE;
	}
	if (!c || (cli->seen & OPT_BIT(OPT_HELP))) {
		print_help(c);
		return c || (cli->seen & OPT_BIT(OPT_HELP)) ? EXIT_OK : EXIT_USAGE;
	}
	if (cli->json && !json_bit(c)) {
		cli_error("'%s' does not take --json: its output is the program's\n", c->name);
		return EXIT_USAGE;
	}
	/* An option the command does not take is refused rather than ignored:
	 * a silently ignored --env would act on the default environment. */
	if (!cli_check_allowed(cli, OPTS_GLOBAL | (c->opts & ~NOT_OPTIONS) | json_bit(c)))
		return EXIT_USAGE;
	/* help has no handler of its own: it needs no context. */
	if (!c->run)
		return help_command(cli);
	if (!(ctx = cfapkg_ctx_new())) {
		cli_error("out of memory\n");
		return EXIT_ERROR;
	}
	rc = setup_context(ctx, cli, !(c->opts & NO_RECIPES));
	if (rc == EXIT_OK)
		rc = c->run(ctx, cli);
	/* The settings and the machine the facts were chosen on are kept
	 * until the command ends, since it may read them at any time; freed
	 * here, before the context. */
	cli_keep_settings(NULL);
	forget_facts_choice();
	cfapkg_ctx_free(ctx);
	return rc;
}

/* The exit code is the command's (commands.h's enum); with --json a failure
 * also prints the error document. */
int main(int argc, char **argv)
{
	static const struct cli_commands table = {lookup_command, command_at,
	                                          command_takes_program};
	struct cli cli;
	int rc;

	json_count_failures();
	/* On Windows the arguments are read again as UTF-16 and converted, so
	 * names and paths outside the ANSI code page survive. */
	cfapkg_utf8_args(&argc, &argv);
	if (!cli_parse(argc, argv, &cli, &table)) {
		cli_free(&cli);
		if (asks_for_json(argc, argv))
			json_print_error(EXIT_USAGE);
		cli_contract_end();
		return EXIT_USAGE;
	}
	/* --version needs no context: it works even where the root cannot be
	 * used. */
	rc = cli.seen & OPT_BIT(OPT_VERSION) ? print_versions(&cli) : dispatch(&cli);
	cli_free(&cli);
	if (cli.seen & OPT_BIT(OPT_VERSION))
		return rc;
	if (json_output_failed() && rc == EXIT_OK)
		rc = EXIT_ERROR;
	/* A text-only command (run) never gets here with --json: the
	 * refusal above is cfapkg's own error, and has its document. */
	if (cli.json && rc != EXIT_OK)
		json_print_error(rc);
	cli_contract_end();
	return rc;
}
