/*
 * cmd_bench.c - 'cfapkg bench --env A --env B -- PROGRAM ARGS': runs the
 * program under each environment in turn and compares wall time, or the
 * number --metric captures, by median; writes CSV, JSON and the figure
 * (SVG, and PNG where the build has cairo), each saying what was
 * compared: the environments' parts, the GPU, the OS, the date and
 * cfapkg's version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "canvas.h"
#include "commands.h"
#include "render.h"

/* What was compared, for the figure's foot and the JSON's "about". */
struct compared {
	char own[2][1024], shared[1024];
	char gpu[256], os[256], date[40];
	unsigned generation[2];
	struct cfapkg_lockfile *lock[2];
};

/* The state of one bench command; on_run gets it as its argument. */
struct bench {
	const struct cli *cli;
	const char *names[2];
	const char *metric;
	const char *metric_name;    /* --metric-name, else from the regex */
	/* Holds the name made from the regex when --metric-name is not
	 * given. */
	char derived[64];
	struct compared what;
};

/* Each run as it ends, on standard error, so that a long bench shows it is
 * alive and standard output stays for the summary or the JSON. */
static void on_run(void *arg, const struct cfapkg_bench_run *r)
{
	const struct bench *b = arg;

	if (b->cli->quiet)
		return;
	fprintf(stderr, "%s%-12s %6.3f s", r->warmup ? "warm-up " : "run     ", b->names[r->env],
	        r->wall_s);
	if (b->metric)
		fprintf(stderr, r->has_metric ? "  %s %g" : "  %s not found", b->metric_name, r->metric);
	if (r->status)
		fprintf(stderr, "  exit %d", r->status);
	fprintf(stderr, "\n");
}

/* One row per run, warm-ups included and marked, so that nothing the
 * statistics left out is hidden; an empty metric cell means the regex found no
 * number.  0, or -1 when the file could not be written. */
static int write_csv(const char *path, const struct bench *b,
                     const struct cfapkg_bench_run *runs, size_t n)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		return -1;
	fprintf(f, "run,env,warmup,status,wall_s,metric\n");
	for (i = 0; i < n; i++) {
		fprintf(f, "%u,%s,%d,%d,%.6f,", runs[i].index, b->names[runs[i].env], runs[i].warmup,
		        runs[i].status, runs[i].wall_s);
		if (runs[i].has_metric)
			fprintf(f, "%.9g", runs[i].metric);
		fprintf(f, "\n");
	}
	return fclose(f);
}

/* The counted runs of one environment: warm-ups and runs that did not exit
 * with 0 are not in n. */
static cJSON *stats_json(const struct cfapkg_bench_stats *s)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "n", (double)s->n);
	cJSON_AddNumberToObject(o, "min", s->min);
	cJSON_AddNumberToObject(o, "median", s->median);
	cJSON_AddNumberToObject(o, "max", s->max);
	cJSON_AddNumberToObject(o, "mean", s->mean);
	return o;
}

/* B / A of the medians, and the spread of the per-round ratios, named so
 * that nobody has to guess which way round it is. */
static void ratio_json(cJSON *which, const struct bench *b, bool metric,
                       const struct cfapkg_bench_run *runs, size_t n)
{
	struct cfapkg_bench_ratio r;
	cJSON *o;
	char of[256];

	cfapkg_bench_ratio(runs, n, metric, &r);
	/* No ratio when either side has no counted run or A's median is 0: a
	 * division would give a number that means nothing. */
	if (r.of_medians == 0)
		return;
	cJSON_AddNumberToObject(which, "ratio_of_medians", r.of_medians);
	o = cJSON_AddObjectToObject(which, "ratio");
	cli_fit(of, sizeof(of), "%s / %s", b->names[1], b->names[0]);
	json_str(o, "of", of);
	cJSON_AddNumberToObject(o, "of_medians", r.of_medians);
	json_str(o, "spread", "min to max of the per-round ratios");
	cJSON_AddNumberToObject(o, "per_round_min", r.min);
	cJSON_AddNumberToObject(o, "per_round_max", r.max);
	cJSON_AddNumberToObject(o, "rounds", (double)r.rounds);
}

/* "name version", comma-separated; a list too long for buf ends in "..."
 * rather than being cut silently. */
static void add_part(char *buf, size_t len, const struct cfapkg_lockfile_part *p)
{
	cli_fit_add(buf, len, "%s%s %s", buf[0] ? ", " : "", p->name,
	            p->version);
}

/* The version of name in lock, or NULL. */
static const char *version_in(const struct cfapkg_lockfile *lock, const char *name)
{
	size_t i;

	for (i = 0; lock && i < lock->nparts; i++)
		if (strcmp(lock->parts[i].name, name) == 0)
			return lock->parts[i].version;
	return NULL;
}

/* Each environment's parts that the other lacks or has at another
 * version, and those both have alike. */
static void compare_sets(struct compared *w)
{
	unsigned k;
	size_t i;

	/* A part both have at the same version is added once, while looking at
	 * A; anything else belongs to the side that has it. */
	for (k = 0; k < 2; k++)
		for (i = 0; w->lock[k] && i < w->lock[k]->nparts; i++) {
			const struct cfapkg_lockfile_part *p = &w->lock[k]->parts[i];
			const char *other = version_in(w->lock[!k], p->name);
			if (other && strcmp(other, p->version) == 0) {
				if (k == 0)
					add_part(w->shared, sizeof(w->shared), p);
			} else {
				add_part(w->own[k], sizeof(w->own[k]), p);
			}
		}
}

/* The date, in UTC; SOURCE_DATE_EPOCH (the reproducible-builds variable)
 * fixes it, so that the same runs give the same files. */
static void today(char *buf, size_t len)
{
	const char *fixed = getenv("SOURCE_DATE_EPOCH");
	unsigned long long secs;
	time_t t = fixed && cli_number(fixed, 1ull << 40, &secs) ? (time_t)secs : time(NULL);
	struct tm *tm = gmtime(&t);

	if (!tm || !strftime(buf, len, "%Y-%m-%d %H:%M UTC", tm))
		cli_fit(buf, len, "date unknown");
}

/* What the figure and the JSON say was compared: each environment's current
 * parts, the GPU and the OS.  Nothing here can fail the bench. */
static void look_at(struct cfapkg_ctx *ctx, struct bench *b, const struct cfapkg_runtime *rt,
                    const struct cfapkg_machine *m)
{
	struct compared *w = &b->what;
	const struct cfapkg_gpu *g = m && m->selected >= 0 ? &m->gpus[m->selected] : NULL;
	unsigned k;

	for (k = 0; k < 2; k++) {
		if (cfapkg_env_current(ctx, b->names[k], &w->generation[k]) ||
		    cfapkg_env_lockfile(ctx, b->names[k], 0, &w->lock[k]))
			cfapkg_ctx_clear_error(ctx); /* an empty environment: no parts to name */
	}
	compare_sets(w);
	if (g)
		cli_fit(w->gpu, sizeof(w->gpu), "%s (%s)", g->name, g->gfx);
	else
		/* With no GPU detected, the target the runtime was resolved
		 * for is named, so the figure does not claim a GPU that was
		 * not there. */
		cli_fit(w->gpu, sizeof(w->gpu), "%s (planned for; no AMD GPU detected)", rt->gfx);
	cli_fit(w->os, sizeof(w->os), "%s-%s%s%s", m ? m->os : cfapkg_host_os(),
	        m && m->arch ? m->arch : "",
	        m && m->os_build ? ", " : "", m && m->os_build ? m->os_build : "");
	today(w->date, sizeof(w->date));
}

/* Each environment's parts by name and version, for the JSON's "about". */
static cJSON *env_about(const struct bench *b, unsigned k)
{
	const struct cfapkg_lockfile *lock = b->what.lock[k];
	cJSON *o = cJSON_CreateObject(), *a;
	size_t i;

	json_str(o, "name", b->names[k]);
	cJSON_AddNumberToObject(o, "generation", b->what.generation[k]);
	a = cJSON_AddArrayToObject(o, "packages");
	for (i = 0; lock && i < lock->nparts; i++) {
		cJSON *p = cJSON_CreateObject();
		json_str(p, "name", lock->parts[i].name);
		json_str(p, "version", lock->parts[i].version);
		cJSON_AddItemToArray(a, p);
	}
	return o;
}

/* What was compared and where, so that a result file read later, or on another
 * machine, still says what it measured. */
static cJSON *about_json(const struct bench *b)
{
	cJSON *o = cJSON_CreateObject(), *a;
	unsigned k;

	json_str(o, "cfapkg_version", cfapkg_version_string());
	json_str(o, "date", b->what.date);
	json_str(o, "gpu", b->what.gpu);
	json_str(o, "os", b->what.os);
	a = cJSON_AddArrayToObject(o, "envs");
	for (k = 0; k < 2; k++)
		cJSON_AddItemToArray(a, env_about(b, k));
	return o;
}

/* The whole result: the program, the statistics and ratio of wall time and of
 * the metric, what was compared, and every run.  The same document is written
 * to the JSON file and printed with --json. */
static cJSON *result_json(const struct bench *b, const struct cfapkg_bench_run *runs, size_t n)
{
	cJSON *o = cJSON_CreateObject(), *a, *st;
	struct cfapkg_bench_stats s[2];
	size_t i, k;
	int m;

	a = cJSON_AddArrayToObject(o, "program");
	for (i = 0; i < b->cli->nargs; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(b->cli->args[i]));
	json_str(o, "metric_regex", b->metric);
	json_str(o, "metric_name", b->metric_name);
	a = cJSON_AddArrayToObject(o, "envs");
	st = cJSON_AddObjectToObject(o, "stats");
	for (k = 0; k < 2; k++)
		cJSON_AddItemToArray(a, cJSON_CreateString(b->names[k]));
	for (m = 0; m < (b->metric ? 2 : 1); m++) {
		cJSON *which = cJSON_AddObjectToObject(st, m ? "metric" : "wall_s");
		for (k = 0; k < 2; k++) {
			cfapkg_bench_stats(runs, n, (unsigned)k, m, &s[k]);
			cJSON_AddItemToObject(which, b->names[k], stats_json(&s[k]));
		}
		ratio_json(which, b, m, runs, n);
	}
	cJSON_AddItemToObject(o, "about", about_json(b));
	a = cJSON_AddArrayToObject(o, "runs");
	for (i = 0; i < n; i++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddNumberToObject(r, "run", runs[i].index);
		json_str(r, "env", b->names[runs[i].env]);
		cJSON_AddBoolToObject(r, "warmup", runs[i].warmup);
		cJSON_AddNumberToObject(r, "status", runs[i].status);
		cJSON_AddNumberToObject(r, "wall_s", runs[i].wall_s);
		if (runs[i].has_metric)
			cJSON_AddNumberToObject(r, "metric", runs[i].metric);
		cJSON_AddItemToArray(a, r);
	}
	return o;
}

/* A file left half-written by a failed write reports -1, so that bench does not
 * say it wrote a result it did not. */
static int write_json(const char *path, cJSON *doc)
{
	/* A document that lost a member to a failed allocation is not written. */
	char *text = json_output_failed() ? NULL : cJSON_Print(doc);
	FILE *f = text ? fopen(path, "w") : NULL;
	int rc = -1;

	if (f && text && fprintf(f, "%s\n", text) >= 0)
		rc = 0;
	if (f && fclose(f) != 0)
		rc = -1;
	cJSON_free(text);
	return rc;
}

/* A table per measure; the ratio is B / A, the order the --env options were
 * given in. */
static void print_summary(const struct bench *b, const struct cfapkg_bench_run *runs, size_t n)
{
	struct cfapkg_bench_stats s[2];
	struct cfapkg_bench_ratio r;
	size_t k;
	int m;

	for (m = 0; m < (b->metric ? 2 : 1); m++) {
		printf("%s:\n", m ? b->metric_name : "wall time (s)");
		printf("  %-20s %5s %12s %12s %12s\n", "environment", "runs", "min", "median", "max");
		for (k = 0; k < 2; k++) {
			cfapkg_bench_stats(runs, n, (unsigned)k, m, &s[k]);
			printf("  %-20s %5lu %12.6g %12.6g %12.6g\n", b->names[k], (unsigned long)s[k].n,
			       s[k].min, s[k].median, s[k].max);
		}
		cfapkg_bench_ratio(runs, n, m, &r);
		if (r.of_medians != 0)
			printf("  median %s / %s = %.3f (per-round %.3f to %.3f)\n", b->names[1],
			       b->names[0], r.of_medians, r.min, r.max);
	}
}

/* -n, --warmup and --timeout, with their defaults: 10 runs, 1 warm-up, an hour
 * per run. */
static int parse_counts(const struct cli *cli, unsigned *runs, unsigned *warmup, unsigned *timeout)
{
	const char *r = cli_value(cli, OPT_RUNS), *w = cli_value(cli, OPT_WARMUP);
	const char *t = cli_value(cli, OPT_TIMEOUT);
	unsigned long long v;

	*runs = 10, *warmup = 1, *timeout = 3600;
	if (r && (!cli_number(r, 1000, &v) || v == 0))
		goto bad;
	*runs = r ? (unsigned)v : *runs;
	if (w && !cli_number(w, 100, &v))
		goto bad;
	*warmup = w ? (unsigned)v : *warmup;
	if (t && (!cli_number(t, 86400, &v) || v == 0))
		goto bad;
	*timeout = t ? (unsigned)v : *timeout;
	return EXIT_OK;
bad:
	cli_error("-n takes 1..1000 runs, --warmup 0..100, --timeout "
	        "1..86400 seconds\n");
	return EXIT_USAGE;
}

/* Exactly two --env options, A then B, and a program after them. */
static int env_names(const struct cli *cli, const char **names)
{
	size_t i, n = 0;

	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_ENV && n++ < 2)
			names[n - 1] = cli->opts[i].value;
	if (n != 2 || cli->nargs == 0) {
		cli_error("usage: cfapkg bench --env A --env B [-n 10] "
		        "[--warmup 1] [--metric REGEX] [-o DIR] -- PROGRAM ARGS...\n");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* With --metric, each environment needs a measured run that printed it:
 * else there is nothing to compare, and the bench says so and fails. */
static bool measured(const struct bench *b, const struct cfapkg_bench_run *runs, size_t n)
{
	struct cfapkg_bench_stats s;
	unsigned k;
	bool ok = true;

	for (k = 0; k < 2 && b->metric; k++) {
		cfapkg_bench_stats(runs, n, k, true, &s);
		if (s.n)
			continue;
		cli_error("no measured run under %s printed the metric: the regex '%s' found no "
		          "number in its output; check the program's output and the regex (its first "
		          "group is the number)\n", b->names[k], b->metric);
		ok = false;
	}
	return ok;
}

/* Writes the CSV, the JSON and the figure, then says what was written. Runs
 * that failed or a metric never found make the exit code EXIT_ERROR, after the
 * files are written, so the evidence is kept. */
static int report(struct cfapkg_ctx *ctx, const struct bench *b,
                  const struct cfapkg_bench_run *runs, size_t n)
{
	const char *dir = cli_value(b->cli, OPT_OUTPUT);
	char path[4][4096];
	const char *ext[4] = {"csv", "json", "svg", "png"};
	cJSON *doc = result_json(b, runs, n);
	struct bench_plot plot = {{b->names[0], b->names[1]}, b->metric_name, b->cli->args,
	                          b->cli->nargs, {b->what.own[0], b->what.own[1]}, b->what.shared,
	                          b->what.gpu, b->what.os, b->what.date, cfapkg_version_string()};
	size_t i, failed = 0;
	int bad = 0;

	(void)ctx;
	/* A file name that does not fit is refused whole: a cut one would
	 * write the results somewhere else. */
	for (i = 0; i < 4; i++)
		if (!cli_snprintf(path[i], sizeof(path[i]), "%s/bench-%s-vs-%s.%s", dir ? dir : ".",
		                  b->names[0], b->names[1], ext[i])) {
			cli_error("%s/bench-%s-vs-%s.%s: the path is too long to write the results to\n",
			          dir ? dir : ".", b->names[0], b->names[1], ext[i]);
			cJSON_Delete(doc);
			return EXIT_USAGE;
		}
	/* Each file is tried even when one before failed: a figure may still
	 * be written beside a CSV that was not. */
	bad |= write_csv(path[0], b, runs, n) != 0;
	bad |= write_json(path[1], doc) != 0;
	bad |= write_plots(path[2], png_available() ? path[3] : NULL, &plot, runs, n) != 0;
	if (b->cli->json)
		json_print(doc);
	else
		cJSON_Delete(doc);
	if (!b->cli->json && !b->cli->quiet) {
		print_summary(b, runs, n);
		if (png_available())
			printf("Wrote %s, %s, %s and %s\n", path[0], path[1], path[2], path[3]);
		else
			printf("Wrote %s, %s and %s (this build writes the figure as SVG only: a browser "
			       "opens it, and its screenshot pastes where an SVG is refused)\n", path[0],
			       path[1], path[2]);
	}
	for (i = 0; i < n; i++)
		failed += runs[i].status != 0;
	if (bad)
		cli_error("cannot write the results in %s\n", dir ? dir : ".");
	if (failed)
		cli_error("%lu run%s did not exit with 0 (left out of the "
		        "statistics)\n", (unsigned long)failed, failed == 1 ? "" : "s");
	return bad || failed || !measured(b, runs, n) ? EXIT_ERROR : EXIT_OK;
}

int cmd_bench(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	static struct bench b;
	struct cfapkg_machine here = {0};
	const struct cfapkg_machine *machine = NULL;
	struct cfapkg_bench_opts o;
	struct cfapkg_runtime *rt[2] = {NULL, NULL};
	struct cfapkg_bench_run *runs = NULL;
	const char *argv[CLI_MAX_ARGS + 1];
	char program[4096];
	unsigned timeout;
	size_t i, n = 0;
	enum cfapkg_err e;
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&b, 0, sizeof(b));
	b.cli = cli;
	b.metric = cli_value(cli, OPT_METRIC);
	if ((rc = env_names(cli, b.names)) || (rc = parse_counts(cli, &o.runs, &o.warmup, &timeout)))
		return rc;
	if ((b.metric_name = cli_value(cli, OPT_METRIC_NAME)) && !b.metric) {
		cli_error("--metric-name names the number --metric captures: give --metric too\n");
		return EXIT_USAGE;
	}
	/* Without --metric-name the name comes from the regex, so the table
	 * and the figure can say what the number is. */
	if (b.metric && (!b.metric_name || !*b.metric_name))
		b.metric_name = cfapkg_bench_metric_name(b.metric, b.derived, sizeof(b.derived));
	/* The program is looked up once, as a shell would, so both
	 * environments run the same file. */
	if ((e = cfapkg_find_program(ctx, cli->args[0], program, sizeof(program))))
		return report_error(ctx, e);
	for (i = 0; i < 2 && !rc; i++)
		rc = load_runtime(ctx, cli, b.names[i], &rt[i], &here, &machine);
	if (!rc) {
		/* Both runtimes are resolved before the first run: a broken
		 * environment fails the bench before any time is spent. */
		look_at(ctx, &b, rt[0], machine);
		argv[0] = program;
		for (i = 1; i < cli->nargs; i++)
			argv[i] = cli->args[i];
		argv[i] = NULL;
		o.runtimes[0] = rt[0];
		o.runtimes[1] = rt[1];
		o.metric = b.metric;
		o.timeout_ms = timeout * 1000u;
		o.argv = argv;
		o.on_run = on_run;
		o.arg = &b;
		e = cfapkg_bench(ctx, &o, &runs, &n);
		rc = e ? report_error(ctx, e) : report(ctx, &b, runs, n);
	}
	cfapkg_free(runs);
	cfapkg_machine_clear(&here);
	cfapkg_runtime_free(rt[0]);
	cfapkg_runtime_free(rt[1]);
	cfapkg_lockfile_free(b.what.lock[0]);
	cfapkg_lockfile_free(b.what.lock[1]);
	return rc;
}
