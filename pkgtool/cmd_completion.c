/*
 * cmd_completion.c - 'cfapkg completion SHELL': the shell's completion
 * script, made from the command table (main.c) and the option table
 * (opts.c).  Commands, each command's own options, subcommands and fixed
 * option values are written into the script; environment and package
 * names are asked of cfapkg itself (env list --quiet, search --quiet)
 * when a name is completed.  Here: bash and zsh (the model is
 * completion_model.c's, fish and PowerShell completion_fish.c's).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "render.h"
#include "completion.h"

/* The options of a command, "--a --b" (none: the global ones). */
static void option_list(const struct comp_model *m, const char *cmd, const char *sep)
{
	const char *name, *arg, *help;
	enum opt_id id;
	size_t i, n = 0;

	/* An option a command does not take is left out of its list, so that
	 * completion never offers what the command would refuse. */
	for (i = 0; cli_option_at(i, &name, &id, &arg, &help); i++)
		if (comp_takes(m, cmd, id))
			printf("%s--%s", n++ ? sep : "", name);
}

/* Shared by bash and zsh: case arms naming each command's options and
 * subcommands, and the options that take a value. */
static void sh_tables(const struct comp_model *m)
{
	const char *name, *arg, *help, *words;
	enum opt_id id;
	size_t i;

	printf("_cfapkg_opts() {\n\tcase $1 in\n");
	for (i = 0; i < m->ncmd; i++) {
		printf("\t%s) _cfapkg_w='", m->cmd[i].name);
		option_list(m, m->cmd[i].name, " ");
		printf("' ;;\n");
	}
	printf("\t*) _cfapkg_w='");
	option_list(m, NULL, " ");
	printf("' ;;\n\tesac\n}\n_cfapkg_subs() {\n\tcase $1 in\n");
	for (i = 0; i < m->ncmd; i++)
		if (m->cmd[i].subs[0])
			printf("\t%s) _cfapkg_w='%s' ;;\n", m->cmd[i].name, m->cmd[i].subs);
	printf("\t*) _cfapkg_w='' ;;\n\tesac\n}\n_cfapkg_args() {\n\tcase $1 in\n");
	for (i = 0; i < m->ncmd; i++)
		if (m->cmd[i].args != COMP_NONE)
			printf("\t%s) _cfapkg_w=%s ;;\n", m->cmd[i].name,
			       m->cmd[i].args == COMP_ENVS ? "envs" : "packages");
	printf("\t*) _cfapkg_w='' ;;\n\tesac\n}\n_cfapkg_value() {\n\tcase $1 in\n");
	for (i = 0; cli_option_at(i, &name, &id, &arg, &help); i++) {
		enum comp_kind k = comp_option_value(id, arg, &words);
		if (arg)
			printf("\t--%s) _cfapkg_w='%s%s' ;;\n", name, k == COMP_ENVS ? "@envs" :
			       k == COMP_FILES ? "@files" : k == COMP_WORDS ? "" : "@none", words);
	}
	printf("\t*) _cfapkg_w='' ;;\n\tesac\n}\n");
}

static void sh_header(const struct comp_model *m, const char *shell)
{
	size_t i;

	printf("# %s completion for cfapkg, made by 'cfapkg completion %s' from its own\n"
	       "# command and option tables.\n_cfapkg_cmds='", shell, shell);
	for (i = 0; i < m->ncmd; i++)
		printf("%s%s", i ? " " : "", m->cmd[i].name);
	printf("'\n");
	sh_tables(m);
}

/* The end of the completion function, after the scan, in bash and zsh
 * alike: files offers file names, commands the command names. */
static void sh_dispatch(const char *files, const char *commands)
{
	printf("\tif [[ -n $_cfapkg_rest ]]; then %s; return; fi\n", files);
	printf("\tif [[ $prev == --* ]]; then\n"
	       "\t\t_cfapkg_value \"$prev\"\n"
	       "\t\tif [[ -n $_cfapkg_w ]]; then _cfapkg_put \"$_cfapkg_w\"; return; fi\n"
	       "\tfi\n"
	       "\tif [[ $cur == -* ]]; then _cfapkg_opts \"$cmd\"; _cfapkg_put \"$_cfapkg_w\"; return; fi\n");
	printf("\tif [[ -z $cmd ]]; then %s; return; fi\n", commands);
	printf("\t_cfapkg_subs \"$cmd\"\n"
	       "\tif [[ -n $_cfapkg_w && -z $sub ]]; then _cfapkg_put \"$_cfapkg_w\"; return; fi\n"
	       "\t_cfapkg_args \"$cmd\"\n"
	       "\t[[ $cmd == env && $sub != remove ]] && return\n"
	       "\t[[ -n $_cfapkg_w ]] && _cfapkg_put \"@$_cfapkg_w\"\n"
	       "}\n");
}

/* The scan's arms for the short letters whose option takes a value (the
 * next word is the value): everywhere, or in the commands that say so
 * (-n is bench's --runs, elsewhere --dry-run). */
static void sh_letter_arms(const struct comp_model *m)
{
	char letters[32], cmds[512];
	bool everywhere;
	size_t i;

	comp_letters(m, letters, sizeof(letters));
	for (i = 0; letters[i]; i++) {
		comp_letter_valued(m, letters[i], cmds, sizeof(cmds), &everywhere);
		if (everywhere)
			printf("\t\t-%c) (( i++ )) ;;\n", letters[i]);
		else if (cmds[0])
			printf("\t\t-%c) [[ \" %s \" == *\" $cmd \"* ]] && (( i++ )) ;;\n", letters[i],
			       cmds);
	}
}

/* The scan of the words before the cursor, the same in bash and zsh:
 * the command, its subcommand, and --root/--recipes to pass on when
 * cfapkg is asked for names.  $1 is the first word after the program.
 * After run's or bench's program, the words are the program's. */
static void sh_scan(const struct comp_model *m)
{
	printf("\tfor (( i = $1; i < _cfapkg_end; i++ )); do\n"
	       "\t\tw=${_cfapkg_words[i]}\n"
	       "\t\tcase $w in\n"
	       "\t\t--) _cfapkg_rest=1 ;;\n"
	       "\t\t--*=*) [[ $w == --root=* || $w == --recipes=* ]] && where+=(\"$w\") ;;\n"
	       "\t\t--*) _cfapkg_value \"$w\"\n"
	       "\t\t\tif [[ -n $_cfapkg_w ]] && (( i + 1 < _cfapkg_end )); then\n"
	       "\t\t\t\t(( i++ ))\n"
	       "\t\t\t\t[[ ${_cfapkg_words[i]} == = ]] && (( i + 1 < _cfapkg_end )) && (( i++ ))\n"
	       "\t\t\t\t[[ $w == --root || $w == --recipes ]] && where+=(\"$w\" \"${_cfapkg_words[i]}\")\n"
	       "\t\t\tfi ;;\n");
	sh_letter_arms(m);
	printf("\t\t-*) ;;\n"
	       "\t\t*) if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w\n"
	       "\t\t\t[[ \" %s \" == *\" $cmd \"* ]] && _cfapkg_rest=1; fi ;;\n"
	       "\t\tesac\n"
	       "\tdone\n", m->programs);
}

void comp_bash(const struct comp_model *m)
{
	sh_header(m, "bash");
	printf("_cfapkg_names() {\n"
	       "\tlocal what=$1; shift\n"
	       "\tif [[ $what == envs ]]; then \"$_cfapkg_prog\" \"$@\" env list --quiet 2>/dev/null\n"
	       "\telse \"$_cfapkg_prog\" \"$@\" search --quiet 2>/dev/null; fi\n"
	       "}\n"
	       "_cfapkg_put() { # $1: words or @envs/@packages/@files/@none\n"
	       "\tcase $1 in\n"
	       "\t@files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	       "\t@none) COMPREPLY=() ;;\n"
	       "\t@*) COMPREPLY=($(compgen -W \"$(_cfapkg_names \"${1#@}\" \"${where[@]}\")\" -- \"$cur\")) ;;\n"
	       "\t*) COMPREPLY=($(compgen -W \"$1\" -- \"$cur\")) ;;\n"
	       "\tesac\n"
	       "}\n"
	       "_cfapkg() {\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev='' cmd='' sub='' w i _cfapkg_w _cfapkg_rest=''\n"
	       "\tlocal _cfapkg_prog=${COMP_WORDS[0]} _cfapkg_end=$COMP_CWORD\n"
	       "\tlocal -a where=() _cfapkg_words=(\"${COMP_WORDS[@]}\")\n"
	       "\t(( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	       "\t# COMP_WORDBREAKS splits --env=NAME into --env, =, NAME.\n"
	       "\tif [[ $cur == = ]]; then cur=''\n"
	       "\telif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
	       "\tset -- 1\n");
	sh_scan(m);
	printf("\tCOMPREPLY=()\n");
	sh_dispatch("_cfapkg_put @files", "_cfapkg_put \"$_cfapkg_cmds\"");
	printf("complete -F _cfapkg cfapkg\n");
}

/* zsh: the same tables and scan; compadd, _describe and _files answer. */
static void zsh_describe(const struct comp_model *m)
{
	size_t i;

	printf("_cfapkg_describe() {\n\tlocal -a c\n\tc=(\n");
	for (i = 0; i < m->ncmd; i++) {
		char item[512];
		cli_fit(item, sizeof(item), "%s:%s", m->cmd[i].name, m->cmd[i].summary);
		putchar('\t');
		comp_quoted(item, false);
		putchar('\n');
	}
	printf("\t)\n\t_describe -t commands 'cfapkg command' c\n}\n");
}

void comp_zsh(const struct comp_model *m)
{
	printf("#compdef cfapkg\n");
	sh_header(m, "zsh");
	zsh_describe(m);
	printf("_cfapkg_put() {\n"
	       "\tcase $1 in\n"
	       "\t@files) _files ;;\n"
	       "\t@none) ;;\n"
	       "\t@envs) compadd -- ${(f)\"$(\"$_cfapkg_prog\" $where env list --quiet 2>/dev/null)\"} ;;\n"
	       "\t@packages) compadd -- ${(f)\"$(\"$_cfapkg_prog\" $where search --quiet 2>/dev/null)\"} ;;\n"
	       "\t*) compadd -- ${(s: :)1} ;;\n"
	       "\tesac\n"
	       "}\n"
	       "_cfapkg() {\n"
	       "\tlocal cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd='' sub='' w i _cfapkg_w\n"
	       "\tlocal _cfapkg_rest='' _cfapkg_prog=${words[1]} _cfapkg_end=$CURRENT\n"
	       "\tlocal -a where _cfapkg_words\n"
	       "\t_cfapkg_words=(\"${words[@]}\")\n"
	       "\tif [[ $cur == --*=* ]]; then prev=${cur%%%%=*}; cur=${cur#*=}; compset -P '*='; fi\n"
	       "\tset -- 2\n");
	sh_scan(m);
	sh_dispatch("_files", "_cfapkg_describe");
	/* Autoloaded from a file in fpath, the script is the function's body
	 * and completes at once; sourced, it only registers the function. */
	printf("if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then\n"
	       "\t_cfapkg \"$@\"\n"
	       "else\n"
	       "\tcompdef _cfapkg cfapkg\n"
	       "fi\n");
}

/* The model is static: it holds every command's tables, which is much for the
 * stack, and a run builds it once. */
int cmd_completion(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	static const char *const shells[] = {"bash", "zsh", "fish", "powershell"};
	static void (*const emit[])(const struct comp_model *) = {comp_bash, comp_zsh, comp_fish,
	                                                          comp_powershell};
	static struct comp_model m;
	size_t i;

	(void)ctx;
	for (i = 0; cli->nargs == 1 && i < sizeof(shells) / sizeof(shells[0]); i++)
		if (strcmp(cli->args[0], shells[i]) == 0) {
			comp_model_build(&m, cli->commands);
			emit[i](&m);
			return EXIT_OK;
		}
	cli_error("usage: cfapkg completion bash|zsh|fish|powershell\n");
	return EXIT_USAGE;
}
