/*
 * completion_fish.c - the fish and PowerShell completion scripts, from the
 * same model as bash's and zsh's (completion.h).
 */
#include <stdio.h>
#include <string.h>

#include "completion.h"

/* The options that take a value, for the scan of the words. */
static void valued_list(const char *sep, const char *quote)
{
	const char *name, *arg, *help;
	enum opt_id id;
	size_t i, n = 0;

	for (i = 0; cli_option_at(i, &name, &id, &arg, &help); i++)
		if (arg)
			printf("%s%s--%s%s", n++ ? sep : "", quote, name, quote);
}

/* __cfapkg_letter_valued WORD CMD: whether the short option WORD takes
 * the next word as its value in command CMD. */
static void fish_letters(const struct comp_model *m)
{
	char letters[32], cmds[512];
	bool everywhere;
	size_t i;

	comp_letters(m, letters, sizeof(letters));
	printf("function __cfapkg_letter_valued\n\tswitch $argv[1]\n");
	/* A letter that takes a value everywhere needs no command to be known;
	 * one that does in some commands asks which command came first. */
	for (i = 0; letters[i]; i++) {
		comp_letter_valued(m, letters[i], cmds, sizeof(cmds), &everywhere);
		if (everywhere)
			printf("\t\tcase -%c\n\t\t\treturn 0\n", letters[i]);
		else if (cmds[0])
			printf("\t\tcase -%c\n\t\t\tcontains -- \"$argv[2]\" %s; return\n", letters[i],
			       cmds);
	}
	printf("\tend\n\treturn 1\nend\n");
}

/* __cfapkg_scan sets the command, the subcommand, whether "--" came (a
 * program's arguments follow, as they do after run's program), and the
 * --root/--recipes to pass on. */
static void fish_functions(const struct comp_model *m)
{
	fish_letters(m);
	printf("function __cfapkg_scan\n"
	       "\tset -g __cfapkg_c ''; set -g __cfapkg_s ''; set -g __cfapkg_r ''\n"
	       "\tset -g __cfapkg_where\n"
	       "\tset -l toks (commandline -opc)\n"
	       "\tset -l i 2\n"
	       "\twhile test $i -le (count $toks)\n"
	       "\t\tset -l w $toks[$i]\n"
	       "\t\tswitch $w\n"
	       "\t\t\tcase '--'\n"
	       "\t\t\t\tset __cfapkg_r 1\n"
	       "\t\t\tcase '--root=*' '--recipes=*'\n"
	       "\t\t\t\tset -a __cfapkg_where $w\n"
	       "\t\t\tcase '--*=*' '-?*'\n"
	       "\t\t\t\tif contains -- $w $__cfapkg_valued; or __cfapkg_letter_valued $w \"$__cfapkg_c\"\n"
	       "\t\t\t\tand test $i -lt (count $toks)\n"
	       "\t\t\t\t\tset i (math $i + 1)\n"
	       "\t\t\t\t\tcontains -- $w --root --recipes; and set -a __cfapkg_where $w $toks[$i]\n"
	       "\t\t\t\tend\n"
	       "\t\t\tcase '*'\n"
	       "\t\t\t\tif test -z \"$__cfapkg_c\"; set __cfapkg_c $w\n"
	       "\t\t\t\telse if test -z \"$__cfapkg_s\"; set __cfapkg_s $w\n"
	       "\t\t\t\t\tcontains -- $__cfapkg_c %s; and set __cfapkg_r 1\n"
	       "\t\t\t\tend\n"
	       "\t\tend\n"
	       "\t\tset i (math $i + 1)\n"
	       "\tend\n"
	       "end\n"
	       "function __cfapkg_needs_cmd\n"
	       "\t__cfapkg_scan; test -z \"$__cfapkg_c\" -a -z \"$__cfapkg_r\"\n"
	       "end\n"
	       "function __cfapkg_cmd_is\n"
	       "\t__cfapkg_scan; test -z \"$__cfapkg_r\"; and contains -- \"$__cfapkg_c\" $argv\n"
	       "end\n"
	       "function __cfapkg_needs_sub\n"
	       "\t__cfapkg_cmd_is $argv; and test -z \"$__cfapkg_s\"\n"
	       "end\n"
	       "function __cfapkg_after_sub\n"
	       "\t__cfapkg_cmd_is $argv; and test -n \"$__cfapkg_s\"\n"
	       "end\n"
	       "function __cfapkg_rest\n"
	       "\t__cfapkg_scan; test -n \"$__cfapkg_r\"\n"
	       "end\n"
	       "function __cfapkg_envs\n"
	       "\t__cfapkg_scan; set -l prog (commandline -opc)[1]\n"
	       "\t$prog $__cfapkg_where env list --quiet 2>/dev/null\n"
	       "end\n"
	       "function __cfapkg_packages\n"
	       "\t__cfapkg_scan; set -l prog (commandline -opc)[1]\n"
	       "\t$prog $__cfapkg_where search --quiet 2>/dev/null\n"
	       "end\n", m->programs);
}

/* The commands that take option id, for a -n condition. */
static void takers(const struct comp_model *m, enum opt_id id)
{
	size_t i;

	for (i = 0; i < m->ncmd; i++)
		if (m->cmd[i].opts & OPT_BIT(id))
			printf(" %s", m->cmd[i].name);
}

static void fish_options(const struct comp_model *m)
{
	const char *name, *arg, *help, *words;
	enum opt_id id;
	size_t i;

	for (i = 0; cli_option_at(i, &name, &id, &arg, &help); i++) {
		enum comp_kind k = comp_option_value(id, arg, &words);
		/* An option every command takes needs no condition; one that
		 * only some take is offered only after one of those. */
		printf("complete -c cfapkg");
		if (!comp_takes(m, NULL, id)) {
			printf(" -n '__cfapkg_cmd_is");
			takers(m, id);
			printf("'");
		}
		printf(" -l %s", name);
		if (cli_opt_letter(id, OPT_BIT(id)))
			printf(" -s %c", cli_opt_letter(id, OPT_BIT(id)));
		if (k == COMP_FILES)
			printf(" -r -F");
		else if (k == COMP_ENVS)
			printf(" -x -a '(__cfapkg_envs)'");
		else if (k == COMP_WORDS)
			printf(" -x -a '%s'", words);
		else if (arg)
			printf(" -x");
		printf(" -d ");
		comp_quoted(help, true);
		printf("\n");
	}
}

void comp_fish(const struct comp_model *m)
{
	size_t i;

	printf("# fish completion for cfapkg, made by 'cfapkg completion fish' from its own\n"
	       "# command and option tables.\nset -g __cfapkg_valued ");
	valued_list(" ", "");
	printf("\n");
	fish_functions(m);
	/* No files by default: they are offered only after "--" (a program's
	 * own arguments) and for an option that takes a file. */
	printf("complete -c cfapkg -f\n"
	       "complete -c cfapkg -n __cfapkg_rest -F\n");
	for (i = 0; i < m->ncmd; i++) {
		printf("complete -c cfapkg -n __cfapkg_needs_cmd -a %s -d ", m->cmd[i].name);
		comp_quoted(m->cmd[i].summary, true);
		printf("\n");
	}
	for (i = 0; i < m->ncmd; i++)
		if (m->cmd[i].subs[0])
			printf("complete -c cfapkg -n '__cfapkg_needs_sub %s' -a '%s'\n", m->cmd[i].name,
			       m->cmd[i].subs);
	for (i = 0; i < m->ncmd; i++) {
		const struct comp_command *c = &m->cmd[i];
		/* Environment names only after 'env remove': the other env
		 * subcommands take none or a new name. */
		if (c->args == COMP_ENVS)
			printf("complete -c cfapkg -n '__cfapkg_after_sub %s; and test \"$__cfapkg_s\" = "
			       "remove' -a '(__cfapkg_envs)'\n", c->name);
		else if (c->args == COMP_PACKAGES)
			printf("complete -c cfapkg -n '%s %s' -a '(__cfapkg_packages)'\n",
			       c->subs[0] ? "__cfapkg_after_sub" : "__cfapkg_cmd_is", c->name);
	}
	fish_options(m);
}

/* PowerShell: 'text' with '' for a quote. */
static void ps_quoted(const char *s)
{
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			putchar('\'');
		putchar(*s);
	}
	putchar('\'');
}

/* @('a', 'b') from "a b". */
static void ps_words(const char *words)
{
	const char *p = words;

	printf("@(");
	while (*p) {
		size_t n = strcspn(p, " ");
		printf("%s'%.*s'", p == words ? "" : ", ", (int)n, p);
		p += n + (p[n] == ' ');
	}
	printf(")");
}

/* $letters: each short letter that takes a value, '*' where it always
 * does, else the commands where it does; $programs: run and bench. */
static void ps_letters(const struct comp_model *m)
{
	char letters[32], cmds[512];
	bool everywhere;
	size_t i;

	comp_letters(m, letters, sizeof(letters));
	printf("\t$letters = @{\n");
	for (i = 0; letters[i]; i++) {
		comp_letter_valued(m, letters[i], cmds, sizeof(cmds), &everywhere);
		if (everywhere)
			printf("\t\t'-%c' = '*'\n", letters[i]);
		else if (cmds[0]) {
			printf("\t\t'-%c' = ", letters[i]);
			ps_words(cmds);
			printf("\n");
		}
	}
	printf("\t}\n\t$programs = ");
	ps_words(m->programs);
	printf("\n");
}

static void ps_tables(const struct comp_model *m)
{
	const char *name, *arg, *help, *words;
	enum opt_id id;
	size_t i, k;

	printf("\t$commands = [ordered]@{\n");
	for (i = 0; i < m->ncmd; i++) {
		printf("\t\t'%s' = ", m->cmd[i].name);
		ps_quoted(m->cmd[i].summary);
		printf("\n");
	}
	printf("\t}\n\t$options = @{\n");
	/* One entry more than there are commands: the last, under '', holds the
	 * options taken before any command is named. */
	for (i = 0; i <= m->ncmd; i++) {
		const char *cmd = i < m->ncmd ? m->cmd[i].name : NULL;
		size_t n = 0;
		printf("\t\t'%s' = @(", cmd ? cmd : "");
		for (k = 0; cli_option_at(k, &name, &id, &arg, &help); k++)
			if (comp_takes(m, cmd, id))
				printf("%s'--%s'", n++ ? ", " : "", name);
		printf(")\n");
	}
	printf("\t}\n\t$subs = @{\n");
	for (i = 0; i < m->ncmd; i++)
		if (m->cmd[i].subs[0]) {
			printf("\t\t'%s' = ", m->cmd[i].name);
			ps_words(m->cmd[i].subs);
			printf("\n");
		}
	printf("\t}\n\t$positional = @{\n");
	for (i = 0; i < m->ncmd; i++)
		if (m->cmd[i].args != COMP_NONE)
			printf("\t\t'%s' = '%s'\n", m->cmd[i].name,
			       m->cmd[i].args == COMP_ENVS ? "envs" : "packages");
	printf("\t}\n\t$values = @{\n");
	for (i = 0; cli_option_at(i, &name, &id, &arg, &help); i++) {
		enum comp_kind kind = comp_option_value(id, arg, &words);
		if (!arg)
			continue;
		printf("\t\t'--%s' = ", name);
		if (kind == COMP_WORDS)
			ps_words(words);
		else
			printf("'@%s'", kind == COMP_ENVS ? "envs" : kind == COMP_FILES ? "files" : "none");
		printf("\n");
	}
	printf("\t}\n");
	ps_letters(m);
}

void comp_powershell(const struct comp_model *m)
{
	printf("# PowerShell completion for cfapkg, made by 'cfapkg completion powershell'\n"
	       "# from its own command and option tables.\n"
	       "Register-ArgumentCompleter -Native -CommandName cfapkg, cfapkg.exe -ScriptBlock {\n"
	       "\tparam($wordToComplete, $commandAst, $cursorPosition)\n");
	ps_tables(m);
	/* The words before the cursor are scanned as the fish script scans
	 * them: a value is skipped with its option, --root and --recipes are
	 * kept to pass on to the listing commands, and "--" ends completion. */
	printf("\t$before = @($commandAst.CommandElements |\n"
	       "\t\tWhere-Object { $_.Extent.EndOffset -lt $cursorPosition -or\n"
	       "\t\t\t($_.Extent.EndOffset -eq $cursorPosition -and -not $wordToComplete) } |\n"
	       "\t\tForEach-Object { $_.ToString() })\n"
	       "\t$cmd = ''; $sub = ''; $rest = $false; $where = @()\n"
	       "\tfor ($i = 1; $i -lt $before.Count; $i++) {\n"
	       "\t\t$w = $before[$i]\n"
	       "\t\tif ($w -eq '--') { $rest = $true }\n"
	       "\t\telseif ($w -like '--root=*' -or $w -like '--recipes=*') { $where += $w }\n"
	       "\t\telseif ($w -like '--*=*') { }\n"
	       "\t\telseif (($values.ContainsKey($w) -or ($letters.ContainsKey($w) -and\n"
	       "\t\t         ($letters[$w] -eq '*' -or $letters[$w] -contains $cmd))) -and\n"
	       "\t\t        $i + 1 -lt $before.Count) {\n"
	       "\t\t\t$i++\n"
	       "\t\t\tif ($w -eq '--root' -or $w -eq '--recipes') { $where += $w, $before[$i] }\n"
	       "\t\t}\n"
	       "\t\telseif ($w -like '-*') { }\n"
	       "\t\telseif (-not $cmd) { $cmd = $w }\n"
	       "\t\telseif (-not $sub) { $sub = $w; if ($programs -contains $cmd) { $rest = $true } }\n"
	       "\t}\n"
	       "\t$prev = if ($before.Count -gt 1) { $before[-1] } else { '' }\n"
	       "\t$prog = $before[0]\n"
	       "\t$names = {\n"
	       "\t\tparam($what)\n"
	       "\t\tif ($what -eq 'envs') { & $prog @where env list --quiet 2>$null }\n"
	       "\t\telse { & $prog @where search --quiet 2>$null }\n"
	       "\t}\n"
	       "\tif ($rest) { return }\n"
	       "\t$found = @()\n"
	       "\tif ($values.ContainsKey($prev) -and $prev -ne $wordToComplete) {\n"
	       "\t\t$v = $values[$prev]\n"
	       "\t\tif ($v -is [array]) { $found = $v }\n"
	       "\t\telseif ($v -eq '@envs') { $found = @(& $names 'envs') }\n"
	       "\t\telseif ($v -eq '@files') { return }\n"
	       "\t} elseif ($wordToComplete -like '-*') {\n"
	       "\t\t$found = if ($options.ContainsKey($cmd)) { $options[$cmd] } else { $options[''] }\n"
	       "\t} elseif (-not $cmd) {\n"
	       "\t\tforeach ($c in $commands.Keys) {\n"
	       "\t\t\tif ($c -like \"$wordToComplete*\") {\n"
	       "\t\t\t\t[System.Management.Automation.CompletionResult]::new($c, $c, 'ParameterValue', $commands[$c])\n"
	       "\t\t\t}\n"
	       "\t\t}\n"
	       "\t\treturn\n"
	       "\t} elseif ($subs.ContainsKey($cmd) -and -not $sub) {\n"
	       "\t\t$found = $subs[$cmd]\n"
	       "\t} elseif ($positional.ContainsKey($cmd) -and ($cmd -ne 'env' -or $sub -eq 'remove')) {\n"
	       "\t\t$found = @(& $names $positional[$cmd])\n"
	       "\t}\n"
	       "\t$found | Where-Object { $_ -like \"$wordToComplete*\" } | ForEach-Object {\n"
	       "\t\t[System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)\n"
	       "\t}\n"
	       "}\n");
}
