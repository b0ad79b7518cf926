/*
 * cmd_doctor.c - 'cfapkg doctor': is this environment's stack usable?
 * Static checks (GPU, the driver's HIP runtime, each system part and its
 * libraries, each installed part's files), then the live CUDA probe, one
 * child process per library.  Only this live probe proves a generation:
 * a usable stack marks it known-good, and a failing one takes a
 * known-good mark back; both are recorded in history.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

#define DEFAULT_TIMEOUT_S 120

struct doctor {
	struct cfapkg_ctx *ctx;
	const struct cli *cli;
	const struct cfapkg_runtime *rt;
	const struct cfapkg_machine *m;
	cJSON *checks;           /* [{check, status, detail}] */
	unsigned problems;
	bool elsewhere;          /* made for another OS than this machine's: only
	                            the environment's own files can be checked */
};

/* What a check of the machine says when the environment is for another
 * OS: not missing here, but for that OS to answer. */
#define NOT_HERE "NOT CHECKED"

static void row(struct doctor *d, const char *check, const char *status, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

/* One check's row: kept in d->checks for --json and printed as it is found, so
 * a slow probe later does not hide what was already learnt. Any status but
 * "OK" counts as a problem, NOT CHECKED included. */
static void row(struct doctor *d, const char *check, const char *status, const char *fmt, ...)
{
	char detail[1024];
	cJSON *o = cJSON_CreateObject();
	va_list ap;

	va_start(ap, fmt);
	cli_vfit(detail, sizeof(detail), fmt, ap); /* shown: a cut ends in "..." */
	va_end(ap);
	json_str(o, "check", check);
	json_str(o, "status", status);
	json_str(o, "detail", detail);
	cJSON_AddItemToArray(d->checks, o);
	d->problems += strcmp(status, "OK") != 0;
	if (!d->cli->json && !d->cli->quiet)
		printf("  %-28s %-12s %s\n", check, status, detail);
}

/* The recipe version a runtime part was installed from; NULL when the recipe
 * or that version is no longer in the loaded recipes. */
static const struct cfapkg_version *part_version(struct doctor *d,
                                                 const struct cfapkg_runtime_part *p)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(d->ctx, p->name);
	size_t i;

	for (i = 0; r && i < r->nversions; i++)
		if (strcmp(r->versions[i].version, p->version) == 0)
			return &r->versions[i];
	return NULL;
}

/* Whether dir/name can be opened for reading: the test a loader would pass,
 * not only that a directory entry exists. */
static bool file_here(const char *dir, const char *name)
{
	char path[4096 + 512];
	FILE *f;

	/* A path too long to open is not there to load either. */
	if (!cli_snprintf(path, sizeof(path), "%s/%s", dir, name) || !(f = fopen(path, "rb")))
		return false;
	fclose(f);
	return true;
}

/* The libraries a system part provides ("rocblas") as files in its PATH
 * folders: NAME.dll on Windows, libNAME.so on Linux. */
static void check_libraries(struct doctor *d, const struct cfapkg_runtime_part *p,
                            const struct cfapkg_version *v)
{
	bool win = strcmp(d->rt->os, "windows") == 0;
	char file[256], dir[4096], label[160];
	size_t i, k;

	for (i = 0; i < v->nprovides; i++) {
		bool found = false;
		bool fits = cli_snprintf(file, sizeof(file), win ? "%s.dll" : "lib%s.so",
		                         v->provides[i].name);
		for (k = 0; fits && k < v->npath && !found; k++) {
			fits = cli_snprintf(dir, sizeof(dir), "%s/%s", p->prefix, v->path[k]);
			found = fits && file_here(dir, file);
		}
		cli_fit(label, sizeof(label), "  %s", v->provides[i].name);
		/* A provide limited to other GPU targets is not expected here,
		 * so its absence is no problem. */
		if (v->provides[i].ngfx && d->rt->gfx[0] && !cfapkg_version_supports_gfx(v, d->rt->gfx))
			continue;
		/* A folder or file name past the buffers is said, not looked for
		 * under a shortened name. */
		if (!fits) {
			row(d, label, "FAILED", "%s: the folder or file name is too long to check (%s)",
			    p->prefix, v->provides[i].name);
			continue;
		}
		if (found)
			row(d, label, "OK", "%s/%s", dir, file);
		else
			row(d, label, "MISSING", "%s not in %s's %s folder; reinstall %s with its libraries",
			    file, p->name, v->npath ? v->path[0] : "", p->name);
	}
}

/* A system part comes from the machine, not the store: it is either found with
 * a prefix or missing, and a HIP SDK older than the target needs (gpus.json's
 * min_hip_sdk) fails. */
static void check_system_part(struct doctor *d, const struct cfapkg_runtime_part *p)
{
	const struct cfapkg_version *v = part_version(d, p);
	const struct cfapkg_gpu_target *t = cfapkg_gpu_target_find(d->ctx, d->rt->gfx);
	char label[160];

	cli_fit(label, sizeof(label), "%s %s", p->name, p->version);
	if (!p->prefix) {
		row(d, label, "MISSING", "not found on this machine%s%s",
		    v && v->recipe->install_hint ? ": " : "", v ? v->recipe->install_hint : "");
		return;
	}
	if (t && t->min_hip_sdk && cfapkg_version_compare(p->version, t->min_hip_sdk, NULL) < 0)
		row(d, label, "FAILED", "%s needs %s or newer for %s", p->name, t->min_hip_sdk,
		    d->rt->gfx);
	else
		row(d, label, "OK", "%s", p->prefix);
	if (v)
		check_libraries(d, p, v);
}

/* The environment's parts, each in its store folder. */
static void part_checks(struct doctor *d)
{
	size_t i;

	for (i = 0; i < d->rt->nparts; i++) {
		const struct cfapkg_runtime_part *p = &d->rt->parts[i];
		char label[160];
		cli_fit(label, sizeof(label), "%s %s", p->name, p->version);
		/* Meta parts have no files of their own: nothing to look for. */
		if (p->kind == CFAPKG_KIND_SYSTEM && d->elsewhere)
			row(d, label, NOT_HERE, "a system part of %s: installed there, not here",
			    d->rt->os);
		else if (p->kind == CFAPKG_KIND_SYSTEM)
			check_system_part(d, p);
		else if (p->kind != CFAPKG_KIND_META)
			row(d, label, p->prefix ? "OK" : "MISSING", "%s", p->prefix ? p->prefix : "");
	}
}

/* The machine's checks (GPU, the driver's HIP runtime), then each part. For
 * another OS only the parts can be looked at here. */
static void static_checks(struct doctor *d)
{
	const struct cfapkg_machine *m = d->m;
	char list[64] = "";
	size_t i;

	if (d->elsewhere) {
		part_checks(d);
		return;
	}
	/* An environment made for another target than the GPU in use would
	 * load kernels that do not run on it. */
	if (!m || m->selected < 0)
		row(d, "GPU", "MISSING", "no AMD GPU found (the environment was made for %s)",
		    d->rt->gfx);
	else if (strcmp(m->gpus[m->selected].gfx, d->rt->gfx) != 0)
		row(d, "GPU", "FAILED", "%s is %s, the environment was made for %s",
		    m->gpus[m->selected].name, m->gpus[m->selected].gfx, d->rt->gfx);
	else
		row(d, "GPU", "OK", "%s (%s)", m->gpus[m->selected].name, d->rt->gfx);
	for (i = 0; m && i < m->nhip_runtimes; i++)
		cli_fit_add(list, sizeof(list), "%s%u", i ? ", " : "",
		            m->hip_runtimes[i].major);
	if (m && m->nhip_runtimes)
		row(d, "HIP runtime (driver)", "OK", "amdhip64 %s", list);
	else
		row(d, "HIP runtime (driver)", "MISSING", "no amdhip64 library from the AMD driver: "
		    "install a current AMD driver (Windows) or ROCm (Linux)");
	part_checks(d);
}

/* Another OS's environment: what the environment brings is looked at,
 * what the system there would bring is not missing here. */
static bool not_here(struct doctor *d, const char *check, bool found_in_env)
{
	if (!d->elsewhere || found_in_env)
		return false;
	row(d, check, NOT_HERE, "the %s machine's to say: run 'cfapkg doctor' there", d->rt->os);
	return true;
}

/* The environment's own ROCm is looked at even when it is for another OS; the
 * system's is that machine's to report. */
static void rocm_in_use(struct doctor *d, const struct cfapkg_rocm_report *r)
{
	if (not_here(d, "ROCm in use", r->prefix && r->from_env))
		return; /* the other OS's SDK */
	if (r->prefix)
		row(d, "ROCm in use", "OK", "%s%s%s%s: %s",
		    r->from_env ? "the environment's" : "the system's", r->rocm_part ? " (" : "",
		    r->rocm_part ? r->rocm_part : "", r->rocm_part ? ")" : "", r->prefix);
	else
		row(d, "ROCm in use", "MISSING", "no ROCm or HIP SDK found: install one, or a package "
		    "that brings it");
}

/* Without Tensile files for the target, rocBLAS stops at its first call rather
 * than failing to load, so the static checks look for them. */
static void tensile_files(struct doctor *d, const struct cfapkg_rocm_report *r)
{
	if (not_here(d, "rocBLAS Tensile files", r->tensile_file && (r->from_env ||
	                                                              r->rocblas_overlay)))
		return; /* the other OS's rocBLAS */
	if (r->tensile_file)
		row(d, "rocBLAS Tensile files", "OK", "%s%s%s%s", r->tensile_file,
		    r->rocblas_overlay ? " (from " : "", r->rocblas_overlay ? r->rocblas_overlay : "",
		    r->rocblas_overlay ? ")" : "");
	else
		row(d, "rocBLAS Tensile files", "MISSING", "none for %s in %s: rocBLAS will stop at its "
		    "first call; install a rocBLAS overlay for %s", r->gfx,
		    r->tensile_dir ? r->tensile_dir : "(no rocBLAS folder)", r->gfx);
}

/* Which ROCm programs use and whether its kernels cover the GPU. */
static void rocm_checks(struct doctor *d)
{
	struct cfapkg_rocm_report *r = NULL;
	const char *lt;

	if (cfapkg_rocm_check(d->ctx, d->rt, d->m, &r)) {
		row(d, "ROCm in use", "FAILED", "%s", cfapkg_ctx_error(d->ctx));
		return;
	}
	rocm_in_use(d, r);
	tensile_files(d, r);
	/* hipBLASLt kernels missing for the target are no problem when PyTorch
	 * is told to use rocBLAS instead: the row says which way it is. */
	lt = r->addmm_lt_disabled ? "DISABLE_ADDMM_CUDA_LT=1 is set, so PyTorch uses rocBLAS"
	                          : "set DISABLE_ADDMM_CUDA_LT=1 so PyTorch uses rocBLAS";
	if (r->hipblaslt_file)
		row(d, "hipBLASLt kernels", "OK", "%s", r->hipblaslt_file);
	else if (r->hipblaslt)
		row(d, "hipBLASLt kernels", "OK", "hipBLASLt has kernels for %s (gpus.json; no "
		    "hipBLASLt folder to read)", d->rt->gfx);
	else
		row(d, "hipBLASLt kernels", r->addmm_lt_disabled ? "OK" : "MISSING",
		    "none for %s%s%s; %s", d->rt->gfx, r->hipblaslt_dir ? " in " : "",
		    r->hipblaslt_dir ? r->hipblaslt_dir : "", lt);
	if (!not_here(d, "MIOpen", r->miopen && r->from_env))
		/* MIOpen is only needed for convolutions: its absence is
		 * reported, and the detail says dense work is unaffected. */
		row(d, "MIOpen", r->miopen ? "OK" : "MISSING", "%s", r->miopen ? r->miopen :
		    "not found: cuDNN calls will fail (convolutions); dense and GEMM work runs "
		    "without it");
	cfapkg_rocm_report_free(r);
}

/* At most this many libraries that cannot load are listed one by one. */
#define LOAD_ROWS 8

struct load_rows {
	struct doctor *d;
	size_t shown;
};

/* Every issue is counted in shown, so that the rows past LOAD_ROWS can be
 * summed up in one line.  A library only this system has loads here, so its
 * row is OK, but the environment does not carry it. */
static void load_row(void *arg, const struct cfapkg_load_issue *is)
{
	struct load_rows *l = arg;

	if (l->shown++ >= LOAD_ROWS)
		return;
	row(l->d, "library loads", is->host ? "OK" : "MISSING", "%s needs %s: %s%s%s%s%s%s",
	    is->file, is->needed, is->host ? "only this system has it, " : "found nowhere",
	    is->host ? is->host : "", is->carrier ? "; the package that should carry it: " : "",
	    is->carrier ? is->carrier : "", is->carrier ? ", " : "",
	    is->carrier ? is->carrier_why : "");
}

/* Every library of the environment finds what it loads. */
static void load_checks(struct doctor *d)
{
	struct load_rows l = {d, 0};
	size_t missing = 0, host = 0;

	if (cfapkg_load_check(d->ctx, d->rt, load_row, &l, &missing, &host)) {
		row(d, "libraries load", "FAILED", "%s", cfapkg_ctx_error(d->ctx));
		return;
	}
	if (l.shown > LOAD_ROWS)
		row(d, "library loads", missing ? "MISSING" : "OK", "and %lu more like it",
		    (unsigned long)(l.shown - LOAD_ROWS));
	/* The all-clear row only where DT_NEEDED was read: ELF, so Linux. */
	if (!missing && !host && strcmp(d->rt->os, "linux") == 0)
		row(d, "libraries load", "OK", "every library's DT_NEEDED is in the environment "
		    "or the C library");
}

/* The CUDA name a probe library stands for, in recipes' provides. */
static const char *provided_name(const char *library)
{
	return strcmp(library, "cuda") == 0 ? "cuda-driver-api" : library;
}

/* Whether v (NULL: no recipe version known) provides name. */
static bool provides(const struct cfapkg_version *v, const char *name)
{
	size_t i;

	for (i = 0; v && i < v->nprovides; i++)
		if (strcmp(v->provides[i].name, name) == 0)
			return true;
	return false;
}

/* A note with no OS list applies on every OS. */
static bool os_matches(const struct cfapkg_note *n, const char *os)
{
	size_t i;

	for (i = 0; i < n->nos; i++)
		if (strcmp(n->os[i], os) == 0)
			return true;
	return n->nos == 0;
}

/* Who would provide a missing library: a part of the environment that
 * should have, a recipe's note about the name, or a recipe that could. */
static void missing_hint(struct doctor *d, const char *library, char *buf, size_t len)
{
	const char *name = provided_name(library);
	size_t i, k, n;
	const struct cfapkg_recipe *const *all = cfapkg_recipes(d->ctx, &n);

	buf[0] = '\0';
	/* The order goes from the most to the least specific advice: a part
	 * that should have it, a recipe's note on the name, any recipe that
	 * has it. */
	for (i = 0; i < d->rt->nparts; i++)
		if (provides(part_version(d, &d->rt->parts[i]), name)) {
			cli_fit(buf, len, "%s %s should provide it; 'cfapkg verify' checks its files",
			        d->rt->parts[i].name, d->rt->parts[i].version);
			return;
		}
	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *r = all[i];
		for (k = 0; k < r->nnotes; k++)
			if (strcmp(r->notes[k].name, name) == 0 && os_matches(&r->notes[k], d->rt->os)) {
				cli_fit(buf, len, "%s", r->notes[k].text);
				return;
			}
	}
	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *r = all[i];
		for (k = 0; k < r->nversions; k++)
			if (provides(&r->versions[k], name)) {
				cli_fit(buf, len, "%s provides it ('cfapkg install %s')", r->name, r->name);
				return;
			}
	}
	cli_fit(buf, len, "no recipe provides %s", name);
}

/* One probe's result for --json; an empty hint is null rather than "". */
static cJSON *probe_json(const struct cfapkg_probe_result *r, const char *hint)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "library", r->library);
	json_str(o, "status", cfapkg_probe_status_name(r->status));
	/* No text is "", as it always was in this output. */
	json_str(o, "file", r->file ? r->file : "");
	json_str(o, "detail", r->detail ? r->detail : "");
	json_str(o, "last_step", r->last_step ? r->last_step : "");
	json_str(o, "hint", hint[0] ? hint : NULL);
	return o;
}

/* The folders searched first: each --lib-dir, then the environment's
 * own PATH folders, all of them (NULL-ended; owned by the caller). */
static const char **probe_dirs(const struct doctor *d, size_t *n)
{
	const char **dirs = calloc(d->cli->nopts + d->rt->npath + 1, sizeof(*dirs));
	size_t i;

	*n = 0;
	for (i = 0; dirs && i < d->cli->nopts; i++)
		if (d->cli->opts[i].id == OPT_LIB_DIR)
			dirs[(*n)++] = d->cli->opts[i].value;
	for (i = 0; dirs && i < d->rt->npath; i++)
		dirs[(*n)++] = d->rt->path[i];
	return dirs;
}

/* A library that was not found or not probed has no file to name, so its
 * detail follows the status directly. */
static void print_probe(const struct cfapkg_probe_result *r, const char *hint)
{
	const char *file = r->file ? r->file : "", *detail = r->detail ? r->detail : "";
	bool no_file = !file[0] || r->status == CFAPKG_PROBE_MISSING ||
	               r->status == CFAPKG_PROBE_SKIPPED;

	printf("  %-28s %-12s %s%s%s\n", r->library, cfapkg_probe_status_name(r->status), file,
	       no_file ? " " : ": ", detail);
	if (hint[0])
		printf("  %-41s %s\n", "", hint);
}

/* One probe per library, each result given to the library's verdict. */
static int live_probe(struct doctor *d, cJSON *out, struct cfapkg_verdict *v)
{
	size_t nlibs;
	const char *const *libs = cfapkg_probe_libraries(&nlibs);
	const char *t = cli_value(d->cli, OPT_TIMEOUT), **dirs;
	unsigned long long timeout = DEFAULT_TIMEOUT_S;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, n;

	if (t && (!cli_number(t, 3600, &timeout) || timeout == 0)) {
		cli_error("--timeout takes 1..3600 seconds\n");
		return EXIT_USAGE;
	}
	if (!(dirs = probe_dirs(d, &n)))
		return report_error(d->ctx, CFAPKG_E_NOMEM);
	/* A library error (not a failed probe) stops the loop: the verdict
	 * would be made from a partial list. */
	for (i = 0; i < nlibs && !e; i++) {
		struct cfapkg_probe_result r = {0};
		char hint[512] = "";
		if ((e = cfapkg_probe(d->ctx, libs[i], dirs, n, (unsigned)timeout * 1000u, &r)) ||
		    (e = cfapkg_verdict_add_probe(d->ctx, v, &r))) {
			cfapkg_probe_result_clear(&r);
			break;
		}
		if (r.status == CFAPKG_PROBE_MISSING)
			missing_hint(d, libs[i], hint, sizeof(hint));
		cJSON_AddItemToArray(out, probe_json(&r, hint));
		if (!d->cli->json && !d->cli->quiet)
			print_probe(&r, hint);
		cfapkg_probe_result_clear(&r);
	}
	free(dirs);
	return e ? report_error(d->ctx, e) : EXIT_OK;
}

/* Appends "flag value" at *end (the room was counted first). */
static void put_flag(char **end, const char *flag, const char *value)
{
	size_t nf = strlen(flag), nv = strlen(value);

	memcpy(*end, flag, nf);
	memcpy(*end + nf, value, nv + 1);
	*end += nf + nv;
}

/* "cfapkg doctor --env lab --lib-dir D", recorded with the mark, whole
 * however long its folders; dirs: the --lib-dir folders, which the mark's
 * reason names.  NULL when out of memory. */
static char *doctor_command(const struct cli *cli, const char **dirs, size_t *ndirs)
{
	/* len counts the terminating NUL once, in sizeof("cfapkg doctor"). */
	const char *env = cli_value(cli, OPT_ENV);
	size_t i, len = sizeof("cfapkg doctor") + (env ? strlen(" --env ") + strlen(env) : 0);
	char *out, *end;

	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_LIB_DIR)
			len += strlen(" --lib-dir ") + strlen(cli->opts[i].value);
	if (!(out = malloc(len)))
		return NULL;
	end = out;
	put_flag(&end, "cfapkg doctor", "");
	if (env)
		put_flag(&end, " --env ", env);
	*ndirs = 0;
	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_LIB_DIR) {
			put_flag(&end, " --lib-dir ", cli->opts[i].value);
			dirs[(*ndirs)++] = cli->opts[i].value;
		}
	return out;
}

/* The summary line's note (text shown to people: cli_fit). */
static void note_said(char *said, size_t len, unsigned gen, const char *what)
{
	cli_fit(said, len, "; generation %u %s", gen, what);
}

/* A passing probe proves the generation here; a failing one takes its
 * known-good mark back (the library decides).  said: what changed, for
 * the summary line. */
static enum cfapkg_gen_state record_probe(struct doctor *d, const struct cfapkg_verdict *v,
                                          char *said, size_t len)
{
	const char *env = d->rt->env_name, **dirs = calloc(d->cli->nopts + 1, sizeof(*dirs));
	unsigned gen = d->rt->generation;
	struct cfapkg_writer_lock *lock = NULL;
	enum cfapkg_gen_state state = CFAPKG_GEN_UNCHECKED;
	bool needed = false;
	char *command = NULL;
	size_t ndirs = 0;

	said[0] = '\0';
	/* No mark is needed when the state already says what the probe found;
	 * only then is the writer lock taken.  Failing to take it leaves the
	 * generation's mark as it was, and doctor still reports the probe. */
	if (!dirs || cfapkg_verdict_needs_mark(d->ctx, v, env, gen, &state, &needed) || !needed ||
	    take_lock(d->ctx, d->cli, &lock)) {
		if (state == CFAPKG_GEN_KNOWN_GOOD && cfapkg_verdict_usable(v))
			note_said(said, len, gen, "was already known-good");
		cfapkg_ctx_clear_error(d->ctx);
		free(dirs);
		return state;
	}
	if (!(command = doctor_command(d->cli, dirs, &ndirs)))
		report_error(d->ctx, CFAPKG_E_NOMEM);
	else if (cfapkg_verdict_mark(d->ctx, v, env, gen, command, dirs, ndirs, &state))
		report_error(d->ctx, CFAPKG_E_IO);
	else
		note_said(said, len, gen,
		          cfapkg_verdict_usable(v) ? "marked known-good" : "no longer marked known-good");
	free(command);
	free(dirs);
	cfapkg_writer_unlock(lock);
	return state;
}

/* The verdict, with --json one document holding every row; d->checks then
 * belongs to that document and is cleared here. */
static void report_result(struct doctor *d, const struct cfapkg_verdict *v, cJSON *probes,
                          cJSON *venv, enum cfapkg_gen_state state, const char *said)
{
	const char *absent = cfapkg_verdict_absent(v);
	cJSON *o;

	if (d->cli->json) {
		o = cJSON_CreateObject();
		json_str(o, "env", d->rt->env_name);
		cJSON_AddNumberToObject(o, "generation", d->rt->generation);
		cJSON_AddItemToObject(o, "static", d->checks);
		cJSON_AddItemToObject(o, "probes", probes);
		cJSON_AddItemToObject(o, "venv", venv ? venv : cJSON_CreateNull());
		cJSON_AddBoolToObject(o, "usable", cfapkg_verdict_usable(v));
		json_str(o, "absent", absent);
		json_str(o, "failed", cfapkg_verdict_failed(v));
		cJSON_AddBoolToObject(o, "known_good", state == CFAPKG_GEN_KNOWN_GOOD);
		json_str(o, "state", cfapkg_gen_state_name(state));
		json_print(o);
		d->checks = NULL;
	} else {
		cJSON_Delete(venv);
		if (!d->cli->quiet)
			printf("\n%s for dense/GEMM work%s%s%s\n",
			       cfapkg_verdict_usable(v) ? "Usable" : "NOT usable",
			       absent[0] ? "; absent: " : "", absent, said);
	}
}

/* The PyTorch probe of a venv (doctor --venv, or the active venv staged
 * from this environment): a failing one makes the stack not usable. */
static int venv_probe(struct doctor *d, struct cfapkg_verdict *v, cJSON **json)
{
	const char *dir = doctor_venv_dir(d->ctx, d->cli, d->rt->env_name);
	const char *t = cli_value(d->cli, OPT_TIMEOUT);
	unsigned long long timeout = DEFAULT_TIMEOUT_S;
	char failed[400] = "";
	bool ok = true;
	int rc;

	*json = NULL;
	if (!dir)
		return EXIT_OK;
	if (t && !cli_number(t, 3600, &timeout))
		return EXIT_USAGE; /* live_probe said why */
	rc = doctor_venv(d->ctx, d->cli, dir, (unsigned)timeout, json, &ok, failed, sizeof(failed));
	/* A venv whose PyTorch probe failed makes the whole stack not usable:
	 * the venv is what the user runs. */
	if (!rc && !ok && cfapkg_verdict_add_failure(d->ctx, v, failed))
		rc = report_error(d->ctx, CFAPKG_E_NOMEM);
	return rc;
}

/* An environment for another OS: its files were checked; the driver,
 * its ROCm and the live probe are for a machine of that OS.  Nothing is
 * marked; exit 6 (not on this platform).
 * In JSON, "checked_here": false tells a script the verdict is not this
 * machine's to give. */
static int report_elsewhere(struct doctor *d, cJSON *probes)
{
	const char *host = cfapkg_host_os();
	cJSON *o;

	if (d->cli->json) {
		o = cJSON_CreateObject();
		json_str(o, "env", d->rt->env_name);
		cJSON_AddNumberToObject(o, "generation", d->rt->generation);
		json_str(o, "os", d->rt->os);
		json_str(o, "host_os", host);
		cJSON_AddItemToObject(o, "static", d->checks);
		cJSON_AddItemToObject(o, "probes", probes);
		cJSON_AddBoolToObject(o, "usable", false);
		cJSON_AddBoolToObject(o, "checked_here", false);
		json_print(o);
	} else {
		cJSON_Delete(d->checks);
		cJSON_Delete(probes);
		if (!d->cli->quiet)
			printf("\nThis environment is for %s and this machine runs %s: its files were "
			       "checked, the rest is for a %s machine to say (its driver, HIP SDK and the "
			       "CUDA probe): run 'cfapkg doctor' there. Nothing was marked.\n",
			       d->rt->os, host, d->rt->os);
	}
	return EXIT_UNSUPPORTED;
}

/* doctor: the static checks, then the live probe; exit 0 only when the stack
 * is usable for dense/GEMM work, EXIT_ERROR when it is not. */
int cmd_doctor(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_runtime *rt = NULL;
	struct cfapkg_machine here = {0};
	const struct cfapkg_machine *m = NULL;
	struct doctor d = {ctx, cli, NULL, NULL, cJSON_CreateArray(), 0, false};
	cJSON *probes = cJSON_CreateArray();
	struct cfapkg_verdict *v = cfapkg_verdict_new();
	cJSON *venv = NULL;
	enum cfapkg_gen_state state;
	char said[96];
	int rc;

	/* The runtime is applied to this process (its PATH and variables) so
	 * the probes below load the environment's libraries, as a program run
	 * in it would. */
	if (!v || (rc = load_runtime(ctx, cli, env_from_cli(cli), &rt, &here, &m)) ||
	    cfapkg_runtime_apply(ctx, rt)) {
		cJSON_Delete(d.checks);
		cJSON_Delete(probes);
		cfapkg_runtime_free(rt);
		cfapkg_machine_clear(&here);
		if (!v)
			return report_error(ctx, CFAPKG_E_NOMEM);
		cfapkg_verdict_free(v);
		return rc ? rc : report_error(ctx, CFAPKG_E_IO);
	}
	d.rt = rt;
	d.m = m;
	d.elsewhere = strcmp(rt->os, cfapkg_host_os()) != 0;
	if (!cli->json && !cli->quiet)
		printf("Environment \"%s\", generation %u, made for %s on %s\n\nStatic checks:\n",
		       rt->env_name, rt->generation, rt->gfx, rt->os);
	static_checks(&d);
	rocm_checks(&d);
	load_checks(&d);
	/* For another OS the live probe cannot run here, so nothing is marked
	 * and the exit code is EXIT_UNSUPPORTED. */
	if (d.elsewhere) {
		rc = report_elsewhere(&d, probes);
		cfapkg_runtime_free(rt);
		cfapkg_machine_clear(&here);
		cfapkg_verdict_free(v);
		return rc;
	}
	if (!cli->json && !cli->quiet)
		printf("\nCUDA probe:\n");
	if ((rc = live_probe(&d, probes, v)) == EXIT_OK &&
	    (rc = venv_probe(&d, v, &venv)) == EXIT_OK) {
		state = record_probe(&d, v, said, sizeof(said));
		report_result(&d, v, probes, venv, state, said);
		/* report_result handed probes to the JSON document, which
		 * freed them. */
		if (cli->json)
			probes = NULL;
		rc = cfapkg_verdict_usable(v) ? EXIT_OK : EXIT_ERROR;
	}
	cJSON_Delete(d.checks);
	cJSON_Delete(probes);
	cfapkg_runtime_free(rt);
	cfapkg_machine_clear(&here);
	cfapkg_verdict_free(v);
	return rc;
}
