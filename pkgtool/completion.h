/*
 * completion.h - what the completion scripts are made from: the command
 * table, each command's options, and its subcommands and arguments as its
 * usage line writes them, so that a script never drifts from the program.
 */
#ifndef CFAPKG_COMPLETION_H
#define CFAPKG_COMPLETION_H

#include <stdbool.h>
#include <stddef.h>

#include "opts.h"

#define COMP_MAX_COMMANDS 64

/* What completes an option's value or a command's argument. */
enum comp_kind { COMP_NONE, COMP_FILES, COMP_ENVS, COMP_PACKAGES, COMP_WORDS };

struct comp_command {
	const char *name, *summary;
	unsigned long long opts;   /* with OPTS_GLOBAL */
	char subs[160];            /* subcommands, space-separated ("" when none) */
	enum comp_kind args;       /* positional arguments after the subcommand */
};

struct comp_model {
	struct comp_command cmd[COMP_MAX_COMMANDS];
	size_t ncmd;
	char programs[128];        /* the commands whose first argument is a program
	                              (run, bench), space-separated */
};

void comp_model_build(struct comp_model *m, const struct cli_commands *table);
/* An option's value: its kind, and for COMP_WORDS the words. */
enum comp_kind comp_option_value(enum opt_id id, const char *arg, const char **words);
/* The short letters of the option table, each once. */
void comp_letters(const struct comp_model *m, char *all, size_t len);
/* The commands in which letter's option takes a value (space-separated),
 * and whether it does in every command that has the letter. */
void comp_letter_valued(const struct comp_model *m, char letter, char *cmds, size_t len,
                        bool *everywhere);
/* Whether a command (NULL: none yet) takes option id. */
bool comp_takes(const struct comp_model *m, const char *cmd, enum opt_id id);

/* Each shell's script (completion_fish.c: fish and PowerShell). */
void comp_bash(const struct comp_model *m);
void comp_zsh(const struct comp_model *m);
void comp_fish(const struct comp_model *m);
void comp_powershell(const struct comp_model *m);

/* s in single quotes for sh, zsh and fish ('\'' and \' for a quote). */
void comp_quoted(const char *s, bool fish);

#endif
