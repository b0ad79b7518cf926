/*
 * opts.h - the command line's option table and parser (getopt_long).  One
 * sorted table of every option, some with a short letter; each command
 * says which ones it accepts.
 */
#ifndef CFAPKG_OPTS_H
#define CFAPKG_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "cfapkg.h"

enum opt_id {
	OPT_ALLOW_EXPERIMENTAL,
	OPT_ARCH,
	OPT_CA_BUNDLE,
	OPT_DRIVER,
	OPT_DRY_RUN,
	OPT_FACTS,
	OPT_GPU,
	OPT_GPU_INDEX,
	OPT_HELP,
	OPT_HIP_RUNTIME,
	OPT_HIP_SDK,
	OPT_JSON,
	OPT_MIRROR,
	OPT_OFFLINE,
	OPT_OS,
	OPT_OUTPUT,
	OPT_PARALLEL,
	OPT_PIN,
	OPT_QUIET,
	OPT_RECIPES,
	OPT_RETRIES,
	OPT_ROOT,
	OPT_SHA256,
	OPT_SIZE,
	OPT_STALL_TIMEOUT,
	OPT_TESTCASE,
	OPT_VERSION,
	OPT_YES,
	OPT_ENV,
	OPT_KEEP,
	OPT_KNOWN_GOOD,
	OPT_LOCKED,
	OPT_METRIC,
	OPT_NO_STAGE,
	OPT_RUNS,
	OPT_SHELL,
	OPT_TO,
	OPT_WARMUP,
	OPT_TIMEOUT,
	OPT_LIB_DIR,
	OPT_MAX_SIZE,
	OPT_KEY,
	OPT_NAME,
	OPT_PRIORITY,
	OPT_EXPIRES_DAYS,
	OPT_NEXT_KEY,
	OPT_INDEX_VERSION,
	OPT_SOURCE,
	OPT_FORMAT,
	OPT_STRIP,
	OPT_RELEASES_URL,
	OPT_COMPUTE,
	OPT_METRIC_NAME,
	OPT_VENV,
	OPT_GLIBC,
	OPT_SUITE,
	OPT_VERBOSE,
	OPT_NO_INDEX_CACHE,
	OPT__COUNT
};

#define OPT_BIT(id) (1ull << (id))
/* Options every command takes (and --json, unless its output is not
 * cfapkg's: main.c's table says). */
#define OPTS_GLOBAL                                                                         \
	(OPT_BIT(OPT_HELP) | OPT_BIT(OPT_QUIET) | OPT_BIT(OPT_RECIPES) |                   \
	 OPT_BIT(OPT_ROOT) | OPT_BIT(OPT_VERSION) | OPT_BIT(OPT_YES) | OPT_BIT(OPT_VERBOSE))
/* Options that describe the machine to plan for. */
#define OPTS_FACTS                                                                         \
	(OPT_BIT(OPT_ARCH) | OPT_BIT(OPT_DRIVER) | OPT_BIT(OPT_FACTS) | OPT_BIT(OPT_GPU) |   \
	 OPT_BIT(OPT_HIP_RUNTIME) | OPT_BIT(OPT_HIP_SDK) | OPT_BIT(OPT_OS) |                \
	 OPT_BIT(OPT_GPU_INDEX) | OPT_BIT(OPT_GLIBC))
/* Options of the commands that download. */
#define OPTS_FETCH                                                                         \
	(OPT_BIT(OPT_CA_BUNDLE) | OPT_BIT(OPT_OFFLINE) | OPT_BIT(OPT_PARALLEL) |              \
	 OPT_BIT(OPT_RETRIES) | OPT_BIT(OPT_STALL_TIMEOUT) | OPT_BIT(OPT_NO_INDEX_CACHE))

#define CLI_MAX_ARGS 1024

struct cli_opt_value {
	enum opt_id id;
	const char *value;     /* NULL for flags */
};

struct cli {
	const char *command;
	size_t nargs;                                 /* args in use */
	size_t nopts;                                 /* opts in use */
	unsigned long long seen;                      /* OPT_BIT of each option given */
	bool json, quiet, yes;
	unsigned verbose;                             /* how many times -v was given */
	bool takes_program;                           /* the command runs a program: the
	                                                 arguments after its name are its own */
	int argc;                                     /* the command line as typed */
	char **argv;
	const struct cli_commands *commands;          /* the table it was parsed against */
	/* Sized by the command line (cli_free releases them), at most
	 * CLI_MAX_ARGS each: room for every argument there could be would
	 * spread a command's few words over several fresh pages. */
	const char **args;                      /* positional arguments after the command */
	struct cli_opt_value *opts;             /* in command-line order */
};

/* What the parser asks of the command table once it has read the
 * command's name: false for a name the table lacks; else the options the
 * command takes (for the meaning of a short letter) and whether its
 * first argument is a program whose arguments follow. */
struct cli_commands {
	bool (*lookup)(const char *name, unsigned long long *opts, bool *program);
	/* Command i of the table, with the options it takes beyond
	 * OPTS_GLOBAL (false past its end), and whether its first argument is
	 * a program: what completion scripts are made from.  The table is
	 * main.c's, handed down here so that no command calls back into it. */
	bool (*at)(size_t i, const char **name, unsigned long long *opts, const char **usage,
	           const char **summary);
	bool (*takes_program)(size_t i);
};

/* Parses argv into cli.  On a usage error prints it and returns false;
 * either way cli_free releases what it holds. */
bool cli_parse(int argc, char **argv, struct cli *cli, const struct cli_commands *table);
void cli_free(struct cli *cli);
/* The short letter of an option where the options in allowed are taken,
 * or 0 when it has none there. */
char cli_opt_letter(enum opt_id id, unsigned long long allowed);
/* Fails (printing why) when an option outside allowed was given. */
bool cli_check_allowed(const struct cli *cli, unsigned long long allowed);
/* The last value of an option, or NULL. */
const char *cli_value(const struct cli *cli, enum opt_id id);
const char *cli_opt_name(enum opt_id id);
/* A decimal number no larger than max. */
bool cli_number(const char *s, unsigned long long max, unsigned long long *out);
/* Option i of the table (sorted by name); false past its end.  For
 * completion scripts. */
bool cli_option_at(size_t i, const char **name, enum opt_id *id, const char **arg,
                   const char **help);
/* One line per allowed option, for --help. */
void cli_print_options(unsigned long long allowed);

/* The settings of cfapkg.conf and the environment (NULL before they are
 * read); an option given beats each.  main.c keeps them once the root is
 * known; cli_keep_settings frees what was kept before (NULL: at exit). */
const struct cfapkg_settings *cli_settings(void);
void cli_keep_settings(struct cfapkg_settings *s);

/* contract.c: prints "cfapkg: error: " and the message on standard error,
 * and keeps the message for the --json error document. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void cli_contract_end(void);

#endif
