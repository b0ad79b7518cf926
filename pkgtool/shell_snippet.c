/*
 * shell_snippet.c - what 'env activate' and 'env deactivate' print: the
 * environment's settings in a shell's own syntax, and the way back.
 *
 * Activation first saves each variable it sets into the process
 * environment (CFAPKG_SAVED lists the names, CFAPKG_SAVED_NAME holds a
 * value that was set; a name without one was unset), so that a function,
 * or 'env deactivate' for cmd.exe, restores exactly what was there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

enum shell { SH_BASH, SH_ZSH, SH_FISH, SH_POWERSHELL, SH_CMD, SH_NONE };

static const char *const shell_names[] = {"bash", "zsh", "fish", "powershell", "cmd"};

/* SH_NONE (after saying which shells there are) for a name without a snippet;
 * NULL is no shell either. */
static enum shell shell_of(const char *name)
{
	int i;

	for (i = 0; name && i < SH_NONE; i++)
		if (strcmp(name, shell_names[i]) == 0)
			return (enum shell)i;
	cli_error("--shell takes bash, zsh, fish, powershell or cmd\n");
	return SH_NONE;
}

bool shell_known(const char *shell)
{
	return shell_of(shell) != SH_NONE;
}

/* $SHELL's last part: "/usr/bin/zsh" is zsh, "pwsh" PowerShell. */
static const char *login_shell(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	if (strcmp(base, "pwsh") == 0 || strcmp(base, "pwsh-preview") == 0)
		/* PowerShell's executables are pwsh (and pwsh-preview), not a
		 * name from the table. */
		return "powershell";
	for (i = 0; i < SH_CMD; i++)
		if (strcmp(base, shell_names[i]) == 0)
			return shell_names[i];
	return NULL;
}

const char *shell_from_cli(const struct cli *cli)
{
	const char *given = cli_value(cli, OPT_SHELL), *env = getenv("SHELL"), *sh;

	if (given)
		return shell_known(given) ? given : NULL;
	/* Windows has no $SHELL; PowerShell is its shell (cmd.exe: --shell cmd). */
	if (strcmp(cfapkg_host_os(), "windows") == 0)
		return "powershell";
	if (env && *env && (sh = login_shell(env)))
		return sh;
	cli_error("which shell? %s%s%s; pass --shell bash, zsh, fish, powershell or cmd\n",
	          env && *env ? "$SHELL is " : "$SHELL is not set", env && *env ? env : "",
	          env && *env ? ", which has no snippet" : "");
	return NULL;
}

/* The shells of POSIX systems, whose path lists are separated by ":". */
static bool posix_like(enum shell sh)
{
	return sh == SH_BASH || sh == SH_ZSH || sh == SH_FISH;
}

/* v quoted for the shell: sh and PowerShell have no escapes inside '...'
 * (a quote is closed and reopened, or doubled); fish escapes \ and '. */
static void quoted(enum shell sh, const char *v)
{
	/* cmd.exe has no quoting inside set "NAME=value", but the lines are
	 * run as a batch file, which expands %NAME% even there: a percent sign
	 * is doubled to stay one. */
	if (sh == SH_CMD) {
		for (; *v; v++) {
			if (*v == '%')
				putchar('%');
			putchar(*v);
		}
		return;
	}
	putchar('\'');
	for (; *v; v++) {
		if (*v == '\'' && sh == SH_POWERSHELL)
			fputs("''", stdout);
		else if (*v == '\'' && sh != SH_FISH)
			fputs("'\\''", stdout);
		else if ((*v == '\'' || *v == '\\') && sh == SH_FISH)
			printf("\\%c", *v);
		else
			putchar(*v);
	}
	putchar('\'');
}

/* Restores every saved variable and removes itself: the same loop for any
 * environment, since the names travel in CFAPKG_SAVED. */
static void function_sh(enum shell sh)
{
	/* The function reads CFAPKG_SAVED when it runs, not when it is
	 * defined, so one definition serves any environment. */
	printf("cfapkg_deactivate() {\n"
	       "\tlocal _cfapkg_v _cfapkg_s\n");
	/* bash and zsh differ only in how they split a list and read a
	 * variable by its name: ${!name} against ${(P)name}. */
	if (sh == SH_BASH)
		printf("\tlocal IFS=' '\n"
		       "\tfor _cfapkg_v in ${CFAPKG_SAVED-}; do\n"
		       "\t\t_cfapkg_s=CFAPKG_SAVED_$_cfapkg_v\n"
		       "\t\tif [ -n \"${!_cfapkg_s+x}\" ]; then\n"
		       "\t\t\texport \"$_cfapkg_v=${!_cfapkg_s}\"\n");
	else
		printf("\tfor _cfapkg_v in ${(s: :)CFAPKG_SAVED-}; do\n"
		       "\t\t_cfapkg_s=CFAPKG_SAVED_$_cfapkg_v\n"
		       "\t\tif [[ -n ${(P)_cfapkg_s+x} ]]; then\n"
		       "\t\t\texport \"$_cfapkg_v=${(P)_cfapkg_s}\"\n");
	printf("\t\t\tunset \"$_cfapkg_s\"\n"
	       "\t\telse\n"
	       "\t\t\tunset \"$_cfapkg_v\"\n"
	       "\t\tfi\n"
	       "\tdone\n"
	       "\tunset CFAPKG_SAVED\n"
	       "\t%s cfapkg_deactivate\n"
	       "}\n", sh == SH_BASH ? "unset -f" : "unfunction");
}

static void function_fish(void)
{
	printf("function cfapkg_deactivate\n"
	       "\tfor _cfapkg_v in (string split --no-empty ' ' -- \"$CFAPKG_SAVED\")\n"
	       "\t\tset -l _cfapkg_s CFAPKG_SAVED_$_cfapkg_v\n"
	       "\t\tif set -q $_cfapkg_s\n"
	       "\t\t\tset -gx $_cfapkg_v $$_cfapkg_s\n"
	       "\t\t\tset -e $_cfapkg_s\n"
	       "\t\telse\n"
	       "\t\t\tset -e $_cfapkg_v\n"
	       "\t\tend\n"
	       "\tend\n"
	       "\tset -e CFAPKG_SAVED\n"
	       "\tfunctions -e cfapkg_deactivate\n"
	       "end\n");
}

static void function_powershell(void)
{
	printf("function global:cfapkg_deactivate {\n"
	       "\tforeach ($v in (\"$env:CFAPKG_SAVED\" -split ' ')) {\n"
	       "\t\tif (-not $v) { continue }\n"
	       "\t\t$s = \"CFAPKG_SAVED_$v\"\n"
	       "\t\tif (Test-Path \"env:$s\") {\n"
	       "\t\t\tSet-Item -Path \"env:$v\" -Value (Get-Item -Path \"env:$s\").Value\n"
	       "\t\t\tRemove-Item -Path \"env:$s\"\n"
	       "\t\t} else {\n"
	       "\t\t\tRemove-Item -Path \"env:$v\" -ErrorAction SilentlyContinue\n"
	       "\t\t}\n"
	       "\t}\n"
	       "\tRemove-Item -Path env:CFAPKG_SAVED -ErrorAction SilentlyContinue\n"
	       "\tRemove-Item -Path function:cfapkg_deactivate\n"
	       "}\n");
}

/* Calls fn with each name CFAPKG_SAVED lists and the value saved for it
 * (NULL: it was unset).
 * A name too long for the buffer is skipped: no variable cfapkg sets has such
 * a name. */
static void each_saved(void (*fn)(const char *name, const char *saved))
{
	const char *list = getenv("CFAPKG_SAVED");
	char name[256], saved[300];
	const char *p = list ? list : "";

	while (*p) {
		size_t n = strcspn(p, " ");
		if (n && n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			/* name is shorter than 256 bytes: saved has room for it. */
			if (cli_snprintf(saved, sizeof(saved), "CFAPKG_SAVED_%s", name))
				fn(name, getenv(saved));
		}
		p += n + (p[n] == ' ');
	}
}

/* NAME = value, in the shell's syntax.
 * cmd's line is closed with its quote after the value, as set "NAME=value"
 * wants it. */
static void assign(enum shell sh, const char *var, const char *value)
{
	if (sh == SH_FISH)
		printf("set -gx %s ", var);
	else if (sh == SH_POWERSHELL)
		printf("$env:%s = ", var);
	else if (sh == SH_CMD)
		printf("set \"%s=", var);
	else
		printf("export %s=", var);
	quoted(sh, value);
	printf("%s\n", sh == SH_CMD ? "\"" : "");
}

static void restore_line_cmd(const char *name, const char *saved)
{
	assign(SH_CMD, name, saved ? saved : "");
	if (saved)
		printf("set \"CFAPKG_SAVED_%s=\"\n", name);
}

/* cmd.exe has no functions: the restoring lines are written out with the
 * saved values this process inherited. */
static void restore_cmd(void)
{
	each_saved(restore_line_cmd);
	printf("set \"CFAPKG_SAVED=\"\n");
}

/* The variables of this process are put back as they were before the
 * activation, so the runtime is judged on the user's own settings. */
static void restore_here(const char *name, const char *saved)
{
	cfapkg_setenv(name, saved);
}

void shell_undo_here(void)
{
	each_saved(restore_here);
}

/* The deactivating function's definition (for cmd: the restoring lines). */
static void deactivator(enum shell sh)
{
	if (sh == SH_BASH || sh == SH_ZSH)
		function_sh(sh);
	else if (sh == SH_FISH)
		function_fish();
	else if (sh == SH_POWERSHELL)
		function_powershell();
	else
		restore_cmd();
}

/* The function is defined and called at once, then removes itself: the shell
 * is left as it was before the activation. */
static void call_deactivator(enum shell sh)
{
	deactivator(sh);
	if (sh != SH_CMD)
		printf("cfapkg_deactivate\n");
}

int shell_deactivate(const char *shell)
{
	enum shell sh = shell_of(shell);

	if (sh == SH_NONE)
		return EXIT_USAGE;
	/* Without CFAPKG_SAVED no activation is in effect here: that is
	 * EXIT_NOTFOUND, not an empty snippet. */
	if (!getenv("CFAPKG_SAVED")) {
		cli_error("no environment is active here (CFAPKG_SAVED is not set)\n");
		return EXIT_NOTFOUND;
	}
	call_deactivator(sh);
	return EXIT_OK;
}

/* The names activation sets, each once: PATH, the library path, then the
 * environment's variables.
 * PATH and LD_LIBRARY_PATH come first: they are saved whatever the
 * environment's variables are, and a variable the environment sets too is
 * still saved once. */
static size_t names_set(const struct cfapkg_runtime *rt, const char **out, size_t max)
{
	size_t i, k, n = 0;

	out[n++] = "PATH";
	if (strcmp(rt->os, "windows") != 0)
		out[n++] = "LD_LIBRARY_PATH";
	for (i = 0; i < rt->nenv && n < max; i++) {
		for (k = 0; k < n && strcmp(out[k], rt->env[i].name) != 0; k++)
			;
		if (k == n)
			out[n++] = rt->env[i].name;
	}
	return n;
}

/* Only a variable that is set is saved: one that was unset has no
 * CFAPKG_SAVED_ value, and deactivating unsets it again. */
static void save_line(enum shell sh, const char *v)
{
	if (sh == SH_BASH || sh == SH_ZSH)
		printf("if [ -n \"${%s+x}\" ]; then export CFAPKG_SAVED_%s=\"$%s\"; fi\n", v, v, v);
	else if (sh == SH_FISH)
		printf("if set -q %s; set -gx CFAPKG_SAVED_%s $%s; end\n", v, v, v);
	else if (sh == SH_POWERSHELL)
		printf("if (Test-Path env:%s) { $env:CFAPKG_SAVED_%s = $env:%s }\n", v, v, v);
	else
		printf("if defined %s set \"CFAPKG_SAVED_%s=%%%s%%\"\n", v, v, v);
}

static void save_all(enum shell sh, const char *const *names, size_t n)
{
	size_t i;

	printf(sh == SH_FISH ? "set -gx CFAPKG_SAVED '" : sh == SH_POWERSHELL
	       ? "$env:CFAPKG_SAVED = '" : sh == SH_CMD ? "set \"CFAPKG_SAVED=" :
	       "export CFAPKG_SAVED='");
	for (i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", names[i]);
	printf(sh == SH_CMD ? "\"\n" : "'\n");
	for (i = 0; i < n; i++)
		save_line(sh, names[i]);
}

/* rt's folders joined with sep (free), NULL when out of memory. */
static char *joined_path(const char *sep, const struct cfapkg_runtime *rt)
{
	char *out;
	size_t i, n = 1, used = 0;

	for (i = 0; i < rt->npath; i++)
		n += strlen(rt->path[i]) + strlen(sep);
	if (!(out = calloc(1, n)))
		return NULL;
	for (i = 0; i < rt->npath; i++) {
		/* n was measured for all of them: a cut here is a bug, not a path. */
		if (!cli_snprintf(out + used, n - used, "%s%s", i ? sep : "", rt->path[i])) {
			free(out);
			return NULL;
		}
		used += strlen(out + used);
	}
	return out;
}

/* The runtime's folders in front of a path variable's present value
 * (fish: list elements, each folder one). */
static void prepend(enum shell sh, const char *var, const struct cfapkg_runtime *rt)
{
	char *front = joined_path(posix_like(sh) ? ":" : ";", rt);
	size_t i;

	if (!front)
		return;
	if (sh == SH_FISH) {
		printf("set -gx %s", var);
		for (i = 0; i < rt->npath; i++) {
			putchar(' ');
			quoted(sh, rt->path[i]);
		}
		printf(" $%s\n", var);
	} else if (sh == SH_POWERSHELL) {
		printf("$env:%s = ", var);
		quoted(sh, front);
		printf(" + ';' + $env:%s\n", var);
	} else if (sh == SH_CMD) {
		printf("set \"%s=%s;%%%s%%\"\n", var, front, var);
	} else {
		printf("export %s=", var);
		quoted(sh, front);
		/* The old value follows after a ":" only when there was one:
		 * an empty entry in PATH would mean the current folder. */
		printf("\"${%s:+:${%s}}\"\n", var, var);
	}
	free(front);
}

/* Folders taken off (other ROCm folders) cannot be taken off in a shell's
 * own syntax: then the whole value is given, as 'cfapkg run' sets it. */
static void path_line(struct cfapkg_ctx *ctx, enum shell sh, const char *var,
                      const struct cfapkg_runtime *rt)
{
	char *full = NULL;

	/* When the whole value cannot be made, the folders are only put in
	 * front: the activation still works, with the other ROCm still on the
	 * path. */
	if (!rt->npath_removed || cfapkg_runtime_path_value(ctx, rt, var, &full)) {
		prepend(sh, var, rt);
		return;
	}
	if (sh == SH_FISH) {
		printf("set -gx %s (string split ':' -- ", var);
		quoted(sh, full);
		printf(")\n");
	} else {
		assign(sh, var, full);
	}
	cfapkg_free(full);
}

/* The snippet saves, then sets, then defines the way back; the shell evaluates
 * it, so nothing but shell code goes to standard output. */
int shell_activate(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt, const char *shell)
{
	enum shell sh = shell_of(shell);
	const char **names;
	size_t i, n;

	if (sh == SH_NONE)
		return EXIT_USAGE;
	if (!(names = calloc(rt->nenv + 2, sizeof(*names)))) {
		cli_error("out of memory\n");
		return EXIT_ERROR;
	}
	n = names_set(rt, names, rt->nenv + 2);
	/* Activating again must not save the first activation's values. */
	if (getenv("CFAPKG_SAVED"))
		call_deactivator(sh);
	save_all(sh, names, n);
	path_line(ctx, sh, "PATH", rt);
	if (strcmp(rt->os, "windows") != 0)
		path_line(ctx, sh, "LD_LIBRARY_PATH", rt);
	for (i = 0; i < rt->nenv; i++)
		assign(sh, rt->env[i].name, rt->env[i].value);
	if (sh != SH_CMD)
		deactivator(sh);
	free(names);
	return EXIT_OK;
}
