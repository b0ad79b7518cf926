/*
 * cmd_run.c - programs under an environment: 'env show', 'env activate'
 * (its snippets are in shell_snippet.c), 'run', 'stage' and 'unstage'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* env show --json: everything run and activate would set, in the order it is
 * applied. */
static cJSON *runtime_json(const struct cfapkg_runtime *rt)
{
	cJSON *o = cJSON_CreateObject(), *a, *v;
	size_t i;

	json_str(o, "env", rt->env_name);
	cJSON_AddNumberToObject(o, "generation", rt->generation);
	json_str(o, "os", rt->os);
	json_str(o, "gfx", rt->gfx);
	a = cJSON_AddArrayToObject(o, "path");
	for (i = 0; i < rt->npath; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(rt->path[i]));
	v = cJSON_AddObjectToObject(o, "variables");
	for (i = 0; i < rt->nenv; i++)
		cJSON_AddStringToObject(v, rt->env[i].name, rt->env[i].value);
	json_str(o, "launcher", rt->launcher);
	a = cJSON_AddArrayToObject(o, "stage");
	for (i = 0; i < rt->nstage; i++) {
		cJSON *s = cJSON_CreateObject();
		json_str(s, "part", rt->stage[i].part);
		json_str(s, "from", rt->stage[i].from);
		json_str(s, "as", rt->stage[i].as);
		cJSON_AddItemToArray(a, s);
	}
	a = cJSON_AddArrayToObject(o, "path_removed");
	for (i = 0; i < rt->npath_removed; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(rt->path_removed[i]));
	json_str(o, "rocm", rt->rocm_prefix);
	/* stable_path is the folder link that follows the current generation;
	 * null where the paths name one generation's own folder. */
	json_str(o, "stable_path", rt->stable_dir);
	a = cJSON_AddArrayToObject(o, "warnings");
	for (i = 0; i < rt->nwarnings; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(rt->warnings[i]));
	return o;
}

/* In the order a program meets them: where its paths point, what goes in front
 * of the search path, what is taken off it, the variables, then what is staged
 * beside it. */
static void show_text(const struct cfapkg_runtime *rt)
{
	size_t i;

	printf("Environment \"%s\", generation %u (%s, %s)\n", rt->env_name, rt->generation,
	       rt->os, rt->gfx);
	if (rt->stable_dir)
		printf("Paths go through %s, which follows updates, repairs and rollbacks\n",
		       rt->stable_dir);
	else
		printf("Paths name generation %u's own folder (no folder link here): a shell "
		       "activated now keeps generation %u after an update\n", rt->generation,
		       rt->generation);
	/* Windows finds DLLs through PATH; elsewhere the same folders also go
	 * in front of LD_LIBRARY_PATH. */
	printf("PATH%s, first wins:\n", strcmp(rt->os, "windows") ? " and LD_LIBRARY_PATH" : "");
	for (i = 0; i < rt->npath; i++)
		printf("  %s\n", rt->path[i]);
	if (rt->npath_removed)
		printf("Taken off the path (another HIP runtime must not mix with %s):\n",
		       rt->rocm_prefix);
	for (i = 0; i < rt->npath_removed; i++)
		printf("  %s\n", rt->path_removed[i]);
	printf("Variables:\n");
	for (i = 0; i < rt->nenv; i++)
		printf("  %s=%s\n", rt->env[i].name, rt->env[i].value);
	if (rt->launcher)
		printf("Launcher: %s\n", rt->launcher);
	if (rt->nstage)
		printf("Placed beside a program on Windows:\n");
	for (i = 0; i < rt->nstage; i++)
		printf("  %-24s from %s\n", rt->stage[i].as, rt->stage[i].part);
	for (i = 0; i < rt->nwarnings; i++)
		printf("warning: %s\n", rt->warnings[i]);
}

int cmd_env_runtime(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_runtime *rt = NULL;
	bool activate = cli->nargs == 1 && strcmp(cli->args[0], "activate") == 0;
	const char *shell = activate ? shell_from_cli(cli) : NULL;
	int rc;

	if (cli->nargs != 1) {
		cli_error("usage: cfapkg env show|activate [--env NAME]\n");
		return EXIT_USAGE;
	}
	if (activate && !shell)
		return EXIT_USAGE;
	/* In an activated shell, what the paths keep and which variables
	 * are the user's own is judged on the environment from before the
	 * activation (which a new activation's snippet restores first), not
	 * on what the activation set. */
	shell_undo_here();
	if ((rc = load_runtime(ctx, cli, env_from_cli(cli), &rt, NULL, NULL)))
		return rc;
	if (activate)
		rc = shell_activate(ctx, rt, shell);
	else if (cli->json)
		json_print(runtime_json(rt));
	else
		show_text(rt);
	cfapkg_runtime_free(rt);
	return rc;
}

/* Parts experimental on this GPU that were validated on others (the
 * reference overlay on anything but gfx1200).
 * Only a warning: an experimental part may still work, and the user chose to
 * install it. */
static void warn_unvalidated(struct cfapkg_ctx *ctx, const char *env, const char *gfx)
{
	struct cfapkg_unvalidated *u = NULL;
	size_t i, n = 0;

	/* Recipes that cannot be read (one being edited, say) do not stop the
	 * program: the installed set runs without them, and the user hears why
	 * no part was checked. */
	if (cfapkg_env_unvalidated(ctx, env, gfx, &u, &n)) {
		fprintf(stderr, "warning: the parts' status on this GPU was not checked: %s\n",
		        cfapkg_ctx_error(ctx));
		cfapkg_ctx_clear_error(ctx);
		return;
	}
	for (i = 0; i < n; i++)
		fprintf(stderr, "warning: %s %s was validated on %s only; on this %s it is "
		        "experimental\n", u[i].name, u[i].version, u[i].validated_on, gfx);
	cfapkg_free(u);
}

/* The exit status of a launch that failed: a missing program is told
 * apart (a script tells it from a missing package, 4, and from the
 * program's own statuses). */
static int launch_failed(struct cfapkg_ctx *ctx, const struct cfapkg_launch *l,
                         enum cfapkg_err e)
{
	int rc = report_error(ctx, e);

	return e == CFAPKG_E_NOTFOUND && l && !cfapkg_launch_program(l) ? EXIT_NO_PROGRAM : rc;
}

/* run PROGRAM ARGS...: the program's exit status becomes cfapkg's, so a script
 * sees the program's own; 126 and 127 are only cfapkg's when the program could
 * not be started or found. */
int cmd_run(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_runtime *rt = NULL;
	struct cfapkg_launch *l = NULL;
	const char *dir;
	size_t i, n;
	int rc, status = 0;
	enum cfapkg_err e;

	if (cli->nargs == 0) {
		cli_error("usage: cfapkg run [--env NAME] -- PROGRAM ARGS...\n");
		return EXIT_USAGE;
	}
	if ((rc = load_runtime(ctx, cli, env_from_cli(cli), &rt, NULL, NULL)))
		return rc;
	for (i = 0; i < rt->nwarnings; i++)
		fprintf(stderr, "warning: %s\n", rt->warnings[i]);
	warn_unvalidated(ctx, env_from_cli(cli), rt->gfx);
	/* The runtime is applied to this process first: the program inherits
	 * its PATH and variables, and the lookup of PROGRAM sees the
	 * environment's folders. */
	if (!(e = cfapkg_runtime_apply(ctx, rt)))
		e = cfapkg_launch_prepare(ctx, rt, cli->args, cli->nargs,
		                          !(cli->seen & OPT_BIT(OPT_NO_STAGE)), &l);
	if (e) {
		rc = launch_failed(ctx, l, e);
		cfapkg_launch_free(l);
		cfapkg_runtime_free(rt);
		return rc;
	}
	/* Staging (Windows) put DLLs beside the program: said, with how to
	 * undo it, since it changed a folder outside cfapkg's root. */
	if (!cli->quiet && (n = cfapkg_launch_staged(l, &dir)))
		fprintf(stderr, "cfapkg: placed %zu file%s beside %s ('cfapkg unstage %s' restores "
		        "the folder)\n", n, n == 1 ? "" : "s", cfapkg_launch_program(l), dir);
	/* The launch borrows the launcher's path from rt: both go after. */
	e = cfapkg_exec(ctx, cfapkg_launch_argv(l), &status);
	cfapkg_launch_free(l);
	cfapkg_runtime_free(rt);
	if (e) { /* found but not started: not executable, or not a program */
		report_error(ctx, e);
		return EXIT_NOT_EXECUTABLE;
	}
	return status;
}

/* stage DIR places the DLLs in a program's folder; with --venv, or in an
 * active venv without DIR, the venv's torch gets the environment's libraries
 * instead. */
int cmd_stage(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_runtime *rt = NULL;
	size_t n;
	enum cfapkg_err e;
	int rc;

	if (cli->nargs == 0 && venv_from_cli(cli, true))
		return stage_venv(ctx, cli, venv_from_cli(cli, true));
	if (cli->nargs != 1 || venv_from_cli(cli, false)) {
		cli_error("usage: cfapkg stage [--env NAME] DIR, or stage [--env NAME] --venv DIR "
		          "(or in an active venv: stage [--env NAME])\n");
		return EXIT_USAGE;
	}
	if ((rc = load_runtime(ctx, cli, env_from_cli(cli), &rt, NULL, NULL)))
		return rc;
	e = cfapkg_stage(ctx, rt, cli->args[0], &n);
	cfapkg_runtime_free(rt);
	if (e)
		return report_error(ctx, e);
	if (cli->json)
		print_count_json(cli->args[0], "placed", n);
	else if (!cli->quiet)
		printf("Placed %zu file%s in %s ('cfapkg unstage %s' restores it)\n", n,
		       n == 1 ? "" : "s", cli->args[0], cli->args[0]);
	return EXIT_OK;
}

/* unstage's notes (a file changed since it was staged, say) are warnings: the
 * rest of the undo still goes on. */
static void print_note(void *arg, const char *note)
{
	(void)arg;
	fprintf(stderr, "warning: %s\n", note);
}

/* Takes no lock: the files undone are in a folder of the user's, and the root's
 * list of staged venvs keeps one file per venv (venv_list.c), so that unstaging
 * writes no file another command writes. */
int cmd_unstage(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *dir = cli->nargs == 1 ? cli->args[0] : venv_from_cli(cli, true);
	size_t n;
	enum cfapkg_err e;

	/* A venv's record names its files below the venv: the same undo. */
	if (!dir || cli->nargs > 1 || (cli->nargs && venv_from_cli(cli, false))) {
		cli_error("usage: cfapkg unstage DIR, or unstage --venv DIR (or in an active venv: "
		          "unstage)\n");
		return EXIT_USAGE;
	}
	if ((e = cfapkg_unstage(ctx, dir, print_note, NULL, &n)))
		return report_error(ctx, e);
	if (cli->json)
		print_count_json(dir, "removed", n);
	else if (!cli->quiet)
		printf("Removed %zu staged file%s from %s; files that were there before are back\n",
		       n, n == 1 ? "" : "s", dir);
	return EXIT_OK;
}
