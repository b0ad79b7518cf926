/*
 * cmd_venv.c - a Python environment's torch on the command line: 'stage
 * --venv DIR' (or the active venv, $VIRTUAL_ENV), 'unstage' of it, the
 * venvs staged again after an install, update, repair or rollback, their
 * lines in 'verify', and 'doctor --venv DIR' (the PyTorch probe).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* --venv always wins; $VIRTUAL_ENV only counts where active asks for it, and
 * an empty one is no venv. */
const char *venv_from_cli(const struct cli *cli, bool active)
{
	const char *v = cli_value(cli, OPT_VENV), *a = getenv("VIRTUAL_ENV");

	return v ? v : active && a && *a ? a : NULL;
}

/* "saved": the wheel's own file was kept beside the one placed, so unstage can
 * put it back; "left": the wheel's files the environment has nothing for. */
static cJSON *staged_json(const struct cfapkg_venv_staged *s, const struct cfapkg_runtime *rt)
{
	cJSON *o = cJSON_CreateObject(), *a;
	size_t i;

	json_str(o, "venv", s->venv->root);
	json_str(o, "torch", s->venv->torch_version);
	json_str(o, "cuda", s->venv->cuda);
	json_str(o, "env", rt->env_name);
	cJSON_AddNumberToObject(o, "generation", rt->generation);
	a = cJSON_AddArrayToObject(o, "placed");
	for (i = 0; i < s->nplaced; i++) {
		cJSON *p = cJSON_CreateObject();
		json_str(p, "path", s->placed[i].path);
		json_str(p, "part", s->placed[i].part);
		json_str(p, "version", s->placed[i].version);
		cJSON_AddBoolToObject(p, "saved", s->placed[i].saved);
		cJSON_AddItemToArray(a, p);
	}
	a = cJSON_AddArrayToObject(o, "left");
	for (i = 0; i < s->nleft; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(s->left[i]));
	cJSON_AddNumberToObject(o, "restored", (double)s->restored);
	return o;
}

/* What was placed and what was left to the wheel, so that a torch that still
 * loads NVIDIA's file for some library can be told from one fully served. */
static void staged_text(const struct cfapkg_venv_staged *s, const struct cfapkg_runtime *rt)
{
	size_t i;

	printf("Staged into %s (torch %s, CUDA %s) from \"%s\" generation %u:\n", s->venv->root,
	       s->venv->torch_version, s->venv->cuda, rt->env_name, rt->generation);
	/* A placed file with no part comes from the wheel itself (its NVRTC),
	 * not from the environment. */
	for (i = 0; i < s->nplaced; i++)
		printf("  %s  <- %s%s%s%s\n", s->placed[i].path,
		       s->placed[i].part ? s->placed[i].part : "the wheel's own nvrtc",
		       s->placed[i].part ? " " : "", s->placed[i].part ? s->placed[i].version : "",
		       s->placed[i].saved ? " (the wheel's file kept beside it)" : "");
	for (i = 0; i < s->nleft; i++)
		printf("  %s  stays the wheel's: the environment has no file of that name\n",
		       s->left[i]);
	if (s->restored)
		printf("  %zu file%s of the earlier staging put back as the wheel had %s\n",
		       s->restored, s->restored == 1 ? "" : "s", s->restored == 1 ? "it" : "them");
	printf("'cfapkg unstage %s' puts the wheel's files back; installs, updates and rollbacks of "
	       "\"%s\" stage it again\n", s->venv->root, rt->env_name);
}

/* stage --venv DIR: the environment's runtime is resolved first, so a broken
 * environment changes nothing in the venv. */
int stage_venv(struct cfapkg_ctx *ctx, const struct cli *cli, const char *dir)
{
	struct cfapkg_runtime *rt = NULL;
	struct cfapkg_venv_staged *s = NULL;
	enum cfapkg_err e;
	int rc;

	if ((rc = load_runtime(ctx, cli, env_from_cli(cli), &rt, NULL, NULL)))
		return rc;
	if ((e = cfapkg_venv_stage(ctx, rt, dir, &s))) {
		cfapkg_runtime_free(rt);
		return report_error(ctx, e);
	}
	if (cli->json)
		json_print(staged_json(s, rt));
	else if (!cli->quiet)
		staged_text(s, rt);
	cfapkg_venv_staged_free(s);
	cfapkg_runtime_free(rt);
	return EXIT_OK;
}

/* The library's notes while staged venvs follow a change, one per line on
 * standard error. */
static void print_note(void *arg, const char *note)
{
	(void)arg;
	fprintf(stderr, "cfapkg: %s\n", note);
}

/* A venv that could not follow is a warning, not a failure: the change to the
 * environment is already made and stays made. */
void follow_venvs(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env)
{
	size_t n = 0;

	if (cfapkg_venv_follow(ctx, env, cli->quiet ? NULL : print_note, NULL, &n)) {
		fprintf(stderr, "warning: the Python environments staged from \"%s\" were not staged "
		        "again: %s\n", env, cfapkg_ctx_error(ctx));
		cfapkg_ctx_clear_error(ctx);
	}
}

/* The names people know the libraries by; a family not in the list is shown as
 * the probe named it. */
static const char *family_label(const char *family)
{
	static const char *const names[][2] = {
		{"cuda", "the CUDA driver"}, {"cublas", "cuBLAS"}, {"cublaslt", "cuBLASLt"},
		{"cusparse", "cuSPARSE"},    {"cufft", "cuFFT"},   {"cufftw", "cuFFTW"},
		{"cudnn", "cuDNN"},          {"nvrtc", "NVRTC"},   {"nvml", "NVML"},
		{"cudart", "the CUDA runtime"}};
	size_t i;

	for (i = 0; family && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i][0], family) == 0)
			return names[i][1];
	return family;
}

/* doctor --venv --json: the probe's checks, and the file each library was
 * loaded from, which is what tells whose library torch used. */
static cJSON *probe_json(const struct cfapkg_venv *v, const struct cfapkg_venv_probe *p)
{
	cJSON *o = cJSON_CreateObject(), *a;
	size_t i;

	json_str(o, "venv", v->root);
	json_str(o, "torch", p->torch_version);
	json_str(o, "cuda", p->cuda);
	cJSON_AddBoolToObject(o, "ok", cfapkg_venv_probe_ok(p));
	a = cJSON_AddArrayToObject(o, "checks");
	for (i = 0; i < p->nchecks; i++) {
		cJSON *c = cJSON_CreateObject();
		json_str(c, "check", p->checks[i].check);
		json_str(c, "status", cfapkg_probe_status_name(p->checks[i].status));
		json_str(c, "library", p->checks[i].library);
		json_str(c, "detail", p->checks[i].detail);
		cJSON_AddItemToArray(a, c);
	}
	a = cJSON_AddArrayToObject(o, "loaded");
	for (i = 0; i < p->nloaded; i++) {
		cJSON *l = cJSON_CreateObject();
		json_str(l, "library", p->loaded[i].family);
		json_str(l, "path", p->loaded[i].path);
		cJSON_AddItemToArray(a, l);
	}
	return o;
}

static void probe_text(const struct cfapkg_venv *v, const struct cfapkg_venv_probe *p)
{
	size_t i;

	printf("\nPyTorch in %s (torch %s, CUDA %s):\n", v->root, v->torch_version, v->cuda);
	for (i = 0; i < p->nchecks; i++) {
		const struct cfapkg_venv_check *c = &p->checks[i];
		printf("  %-28s %-12s %s\n", c->check, cfapkg_probe_status_name(c->status), c->detail);
		/* A skipped check is not a failure: it had nothing to run
		 * on. */
		if (c->status != CFAPKG_PROBE_OK && c->status != CFAPKG_PROBE_SKIPPED && c->library)
			printf("  %-41s the library that failed: %s\n", "", family_label(c->library));
	}
	for (i = 0; i < p->nloaded; i++)
		printf("  %-28s %-12s %s\n", family_label(p->loaded[i].family), "loaded",
		       p->loaded[i].path);
}

/* What makes the venv unusable, for the doctor's summary and mark. */
static void probe_failed(const struct cfapkg_venv_probe *p, char *failed, size_t len)
{
	size_t i, used;

	for (i = 0; i < p->nchecks; i++) {
		const struct cfapkg_venv_check *c = &p->checks[i];
		if (c->status == CFAPKG_PROBE_OK || c->status == CFAPKG_PROBE_SKIPPED)
			continue;
		used = strlen(failed);
		/* Each detail is cut at 200 bytes, so that one long traceback
		 * does not crowd the other failures out of failed. */
		cli_fit(failed + used, len - used, "%storch %s %s%s%s%s: %.200s", used ? "; " : "",
		        c->check, cfapkg_probe_status_name(c->status), c->library ? " (" : "",
		        c->library ? family_label(c->library) : "", c->library ? ")" : "", c->detail);
	}
}

/* EXIT_OK means the probe ran, whatever it found: *ok says whether the venv
 * works, and failed why not. */
int doctor_venv(struct cfapkg_ctx *ctx, const struct cli *cli, const char *dir,
                unsigned timeout_s, cJSON **json, bool *ok, char *failed, size_t len)
{
	struct cfapkg_venv *v = NULL;
	struct cfapkg_venv_probe *p = NULL;
	enum cfapkg_err e;

	*json = NULL;
	if ((e = cfapkg_venv_open(ctx, dir, &v)) ||
	    (e = cfapkg_venv_probe(ctx, v, timeout_s * 1000u, &p))) {
		cfapkg_venv_free(v);
		return report_error(ctx, e);
	}
	*ok = cfapkg_venv_probe_ok(p);
	if (!*ok)
		probe_failed(p, failed, len);
	if (cli->json)
		*json = probe_json(v, p);
	else if (!cli->quiet)
		probe_text(v, p);
	cfapkg_venv_probe_free(p);
	cfapkg_venv_free(v);
	return EXIT_OK;
}

/* The venv doctor probes: --venv, else the active one when it was staged
 * from this environment (a venv of another stack is not this one's). */
const char *doctor_venv_dir(struct cfapkg_ctx *ctx, const struct cli *cli, const char *env)
{
	const char *dir = venv_from_cli(cli, false), *active = venv_from_cli(cli, true);
	char *from = NULL;
	bool ours;

	if (dir || !active)
		return dir;
	/* An active venv that cannot be read is not probed rather than failing
	 * doctor: it may not be cfapkg's at all. */
	if (cfapkg_venv_env(ctx, active, &from)) {
		cfapkg_ctx_clear_error(ctx);
		return NULL;
	}
	ours = from && strcmp(from, env) == 0;
	cfapkg_free(from);
	return ours ? active : NULL;
}
