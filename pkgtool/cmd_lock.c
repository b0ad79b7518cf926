/*
 * cmd_lock.c - an environment's exact set written out ('cfapkg lock') and
 * checked against what is on disk ('cfapkg verify').
 */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "render.h"

/* lock --json: the lockfile (its own format, docs/cli.md) inside the
 * envelope every document has. */
static int print_lock_json(const char *env, char *text)
{
	cJSON *doc = cJSON_CreateObject();

	json_str(doc, "env", env);
	cJSON_AddItemToObject(doc, "lockfile", cJSON_Parse(text));
	cfapkg_free(text);
	json_print(doc);
	return EXIT_OK;
}

/* --output names a file of the user's, written as asked; without it the text
 * goes to standard output, or under --json into the document. */
int cmd_lock(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *env = env_from_cli(cli), *out = cli_value(cli, OPT_OUTPUT);
	struct cfapkg_lockfile *lock = NULL;
	char *text = NULL;
	FILE *f;
	enum cfapkg_err e;
	int rc;

	if ((rc = need_env(ctx, env)))
		return rc;
	/* A generation an older cfapkg wrote gets what the checks of 'install
	 * --locked' need from the recipes. */
	if ((e = cfapkg_env_lockfile(ctx, env, 0, &lock)) || (e = cfapkg_lockfile_upgrade(ctx, lock)) ||
	    (e = cfapkg_lockfile_text(ctx, lock, &text))) {
		cfapkg_lockfile_free(lock);
		return report_error(ctx, e);
	}
	cfapkg_lockfile_free(lock);
	if (cli->json && !out)
		return print_lock_json(env, text);
	f = out ? fopen(out, "wb") : stdout;
	if (!f || fprintf(f, "%s\n", text) < 0 || (out && fclose(f) != 0)) {
		cli_error("%s: cannot write the lockfile\n", out ? out : "stdout");
		rc = EXIT_ERROR;
	}
	cfapkg_free(text);
	return rc;
}

/* verify's callback: each changed file as a line, and for --json kept. */
static void print_problem(void *arg, const char *line)
{
	if (arg)
		cJSON_AddItemToArray(arg, cJSON_CreateString(line));
	fprintf(stderr, "changed: %s\n", line);
}

/* The store and the views first, then the files staged into Python environments
 * from them; when the store is damaged, its message is the one reported, as the
 * staged files came from it. */
int cmd_verify(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *env = cli_value(cli, OPT_ENV);
	cJSON *doc = cli->json ? cJSON_CreateObject() : NULL;
	cJSON *changed = doc ? cJSON_AddArrayToObject(doc, "changed") : NULL;
	size_t files = 0, staged = 0;
	char first[1024] = "";
	enum cfapkg_err e, ev = CFAPKG_E_OK;
	bool store_bad;
	int rc;

	if (env && (rc = need_env(ctx, env))) {
		cJSON_Delete(doc);
		return rc;
	}
	e = cfapkg_verify(ctx, env, print_problem, changed, &files);
	/* Then the files staged into Python environments from it; the
	 * store's verdict, when it has one, is the one reported. */
	cli_fit(first, sizeof(first), "%s", cfapkg_ctx_error(ctx));
	if (!e || e == CFAPKG_E_INTEGRITY)
		ev = cfapkg_venv_verify(ctx, env, print_problem, changed, &staged);
	files += staged;
	store_bad = e == CFAPKG_E_INTEGRITY && ev != CFAPKG_E_NOMEM;
	if (!e || ev == CFAPKG_E_NOMEM)
		e = ev;
	if (doc && (!e || e == CFAPKG_E_INTEGRITY)) {
		/* The document says what changed; the exit status stays 9. */
		json_str(doc, "env", env);
		cJSON_AddNumberToObject(doc, "files", (double)files);
		cJSON_AddBoolToObject(doc, "ok", !e);
		json_print(doc);
		doc = NULL;
	}
	cJSON_Delete(doc);
	if (store_bad) {
		cli_error("%s\n", first);
		return report_error_code(CFAPKG_E_INTEGRITY);
	}
	if (e)
		return report_error(ctx, e);
	if (!cli->quiet && !cli->json)
		printf("Verified %zu installed file%s: all match their manifests\n", files,
		       files == 1 ? "" : "s");
	return EXIT_OK;
}
