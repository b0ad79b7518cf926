/*
 * cmd_plan.c - 'cfapkg plan' and 'cfapkg install --dry-run': what would be
 * installed for this machine, and why, or why nothing fits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* "gfx1200 (RDNA4, supported)": the target with what the GPU table says of it;
 * a target the table lacks is still planned for. */
static const char *gpu_label(struct cfapkg_ctx *ctx, const char *gfx, char *buf, size_t len)
{
	const struct cfapkg_gpu_target *t = cfapkg_gpu_target_find(ctx, gfx);

	if (t)
		cli_fit(buf, len, "%s (%s, %s)", gfx, t->generation, cfapkg_status_name(t->status));
	else
		cli_fit(buf, len, "%s (not in the GPU table)", gfx);
	return buf;
}

/* The SIZE column: only packages are downloaded; system parts are the
 * machine's, user parts the user's own files. */
static const char *item_size(const struct cfapkg_plan_item *it, char *buf, size_t len)
{
	switch (it->version->recipe->kind) {
	case CFAPKG_KIND_SYSTEM:
		return "system";
	case CFAPKG_KIND_META:
		return "-";
	case CFAPKG_KIND_USER:
		return "your files";
	case CFAPKG_KIND_PACKAGE:
		break;
	}
	return it->source ? human_size(it->source->size, buf, len) : "?";
}

/* Facts that were neither detected nor given: the plan could not check the
 * constraints on them, and says which flag would let it. */
static void print_unchecked(const struct cfapkg_plan *plan)
{
	static const struct {
		const char *fact, *text;
	} what[] = {{"driver", "AMD driver version (pass --driver)"},
	            {"hip_runtime", "HIP runtimes in the driver (pass --hip-runtime)"},
	            {"hip_sdk", "installed HIP SDKs (pass --hip-sdk)"},
	            {"glibc", "the C library's version (pass --glibc)"}};
	size_t i, k, n;
	const char *const *unchecked = cfapkg_plan_unchecked(plan, &n);

	for (i = 0; i < n; i++)
		for (k = 0; k < 4; k++)
			if (strcmp(unchecked[i], what[k].fact) == 0)
				printf("note: not checked, not known: %s\n", what[k].text);
}

/* Parts whose pin is only what this machine received the first time. */
static void print_first_use(const struct cfapkg_plan *plan)
{
	size_t i, n;
	const struct cfapkg_plan_item *items = cfapkg_plan_items(plan, &n);

	for (i = 0; i < n; i++) {
		const struct cfapkg_plan_item *it = &items[i];
		if (it->source && it->source->first_use)
			printf("note: %s %s: its %s download is trusted on first use (recorded %s), not "
			       "checked against anyone else's pin\n", it->version->recipe->name,
			       it->version->version, it->source->platform, it->source->first_use);
	}
}

/* Who vouches for a part's download: its recipe's pin, or this machine's
 * first download (NULL: no download, or none pinned). */
static const char *trust_name(const struct cfapkg_source *s)
{
	if (s && s->first_use)
		return "first-use";
	/* A recipe vouches through a file's hash, its artifacts' hashes, or
	 * the hash of the APT index the .debs are listed in. */
	if (s && (s->sha256 || s->nartifacts || (s->apt && s->apt->index_sha256)))
		return "recipe";
	return NULL;
}

/* The parts of the plan the store or the download cache already holds
 * (their bytes are not downloaded again) and the bytes that are. */
static size_t already_here(struct cfapkg_ctx *ctx, const struct cfapkg_plan *plan,
                           int64_t *needed)
{
	struct cfapkg_lockfile *lock = NULL;
	size_t i, n = 0;

	/* The plan is turned into the lock an install would write, so the
	 * store and the cache are asked about exactly the parts it would
	 * fetch. */
	if (!cfapkg_plan_solved(plan) || cfapkg_lockfile_from_plan(ctx, plan, NULL, 0, &lock)) {
		cfapkg_ctx_clear_error(ctx); /* a plan that cannot be locked says why below */
		return 0;
	}
	*needed = 0;
	for (i = 0; i < lock->nparts; i++) {
		uint64_t b;
		if (lock->parts[i].kind != CFAPKG_KIND_PACKAGE)
			continue;
		b = cfapkg_part_fetch_bytes(ctx, &lock->parts[i]);
		*needed += (int64_t)b;
		n += b == 0;
	}
	cfapkg_lockfile_free(lock);
	return n;
}

/* Why the other candidates were not taken: a newer version left out is
 * the first thing a user asks about. */
static void print_passed(const struct cfapkg_plan *plan)
{
	char line[2048];
	size_t i, n;
	const struct cfapkg_problem *passed = cfapkg_plan_passed(plan, &n);

	if (n)
		printf("Passed over:\n");
	for (i = 0; i < n; i++)
		printf("  - %s\n", problem_text(&passed[i], cfapkg_plan_facts(plan), line,
		                                 sizeof(line)));
}

/* The plan as a table, then what it would download; notes on experimental
 * parts, on passed-over candidates, trust on first use and unchecked facts
 * come after it. */
void print_plan_text(struct cfapkg_ctx *ctx, const struct cfapkg_plan *plan)
{
	const struct cfapkg_facts *f = cfapkg_plan_facts(plan);
	struct table t;
	int64_t total = 0;
	size_t i, nitems, nfetch = 0, nexp = 0, nunknown = 0, nparts = 0, here = 0;
	const struct cfapkg_plan_item *items = cfapkg_plan_items(plan, &nitems);
	char gpu[128], size[32];

	printf("Plan for %s on %s-%s:\n\n", gpu_label(ctx, f->gfx, gpu, sizeof(gpu)), f->os,
	       or_else(f->arch, "unknown"));
	table_init(&t, 5);
	table_row(&t, (const char *const[]){"  NAME", "VERSION", "KIND", "STATUS", "SIZE"});
	for (i = 0; i < nitems; i++) {
		const struct cfapkg_plan_item *it = &items[i];
		char name[160];
		cli_fit(name, sizeof(name), "  %s", it->version->recipe->name);
		table_row(&t, (const char *const[]){name, it->version->version,
		                                    cfapkg_kind_name(it->version->recipe->kind),
		                                    cfapkg_status_name(it->status),
		                                    item_size(it, size, sizeof(size))});
		nparts += it->version->recipe->kind == CFAPKG_KIND_PACKAGE;
		/* Sizes a recipe does not record are counted apart, so the
		 * total is given as "at least" rather than as a number that is
		 * too small. */
		if (it->source && it->installable) {
			nfetch++;
			total += it->source->size > 0 ? it->source->size : 0;
			nunknown += it->source->size < 0;
		}
		nexp += it->status == CFAPKG_STATUS_EXPERIMENTAL;
	}
	table_print(&t);
	/* With every size known, the total is what the store and the download
	 * cache still lack, not the sum of the archives. */
	if (!nunknown && nfetch && (here = already_here(ctx, plan, &total)) > nfetch)
		here = nfetch;
	if (nunknown && nunknown == nfetch) /* no byte count to give at all */
		printf("\nDownload: %zu package%s of unrecorded size", nunknown,
		       nunknown == 1 ? "" : "s");
	else
		printf("\nDownload: %s%s in %zu package%s", nunknown ? "at least " : "",
		       human_size(total, size, sizeof(size)), nfetch - here,
		       nfetch - here == 1 ? "" : "s");
	if (here)
		printf(" (%lu already in the store or the download cache)", (unsigned long)here);
	if (nunknown && nunknown < nfetch)
		printf(" (%zu of unrecorded size)", nunknown);
	if (nfetch < nparts)
		printf("; %lu part%s cannot be installed yet (below)", (unsigned long)(nparts - nfetch),
		       nparts - nfetch == 1 ? "" : "s");
	printf("\n");
	if (nexp)
		printf("warning: this plan uses %zu experimental part%s (--allow-experimental)\n", nexp,
		       nexp == 1 ? "" : "s");
	print_passed(plan);
	print_first_use(plan);
	print_unchecked(plan);
	print_detection_notes(stdout, detected_machine());
}

/* Parts of a solved plan that cannot be installed here: an install of it
 * would be refused, so the plan says which and why. */
static size_t count_uninstallable(const struct cfapkg_plan *plan)
{
	size_t i, nitems, n = 0;
	const struct cfapkg_plan_item *items = cfapkg_plan_items(plan, &nitems);

	for (i = 0; i < nitems; i++)
		n += !items[i].installable;
	return n;
}

/* On standard error, one line per part with the library's reason. */
static void print_uninstallable(const struct cfapkg_plan *plan)
{
	const struct cfapkg_facts *f = cfapkg_plan_facts(plan);
	size_t i, n;
	const struct cfapkg_plan_item *items = cfapkg_plan_items(plan, &n);

	for (i = 0; i < n; i++) {
		const struct cfapkg_plan_item *it = &items[i];
		if (!it->installable)
			cli_error("%s %s cannot be installed yet on %s-%s: %s\n",
			        it->version->recipe->name, it->version->version, f->os,
			        or_else(f->arch, "unknown"),
			        it->why_not ? it->why_not : "no reason recorded");
	}
}

/* An argument as a shell reads it back: quoted when it holds anything
 * but letters, digits and a few safe marks. */
static void put_arg(char *buf, size_t len, const char *a)
{
	bool plain = *a != '\0';
	const char *p;

	for (p = a; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		               "-_./:=+,@%", *p) != NULL;
	if (plain) {
		cli_fit_add(buf, len, " %s", a);
		return;
	}
	/* Inside double quotes a POSIX shell still reads these four. */
	cli_fit_add(buf, len, " \"");
	for (p = a; *p; p++)
		cli_fit_add(buf, len, strchr("\"$`\\", *p) ? "\\%c" : "%c", *p);
	cli_fit_add(buf, len, "\"");
}

/* The command as typed, with the fix's flags: a fact given by a flag or
 * a file needs its new value too; a detected one is seen again once the
 * part is installed. */
static void fixed_command(const struct cfapkg_plan_fix *fix, const struct cli *cli, char *buf,
                          size_t len)
{
	int i;
	size_t k;

	cli_fit(buf, len, "cfapkg");
	for (i = 1; i < cli->argc; i++)
		put_arg(buf, len, cli->argv[i]);
	for (k = 0; k < fix->nsteps && !detected_machine(); k++)
		cli_fit_add(buf, len, " --%s %s", fix->steps[k].fact,
		            fix->steps[k].value);
	/* --allow-experimental is added once, and only when not typed
	 * already. */
	if (fix->allow_experimental && !(cli->seen & OPT_BIT(OPT_ALLOW_EXPERIMENTAL)))
		cli_fit_add(buf, len, " --allow-experimental");
}

/* "install hip-sdk 6.2.4 and allow experimental parts". */
static void fix_text(const struct cfapkg_plan_fix *fix, char *buf, size_t len)
{
	size_t k;

	buf[0] = '\0';
	for (k = 0; k < fix->nsteps; k++)
		cli_fit_add(buf, len, "%s%s", k ? " and " : "install ",
		            fix->steps[k].part);
	if (fix->allow_experimental)
		cli_fit_add(buf, len, "%sallow experimental parts",
		            fix->nsteps ? ", then " : "");
}

/* The way out first, so that it is not lost below the reasons. */
static void print_fix(const struct cfapkg_plan *plan, const struct cli *cli)
{
	const struct cfapkg_plan_fix *fix = cfapkg_plan_fix(plan);
	char what[1024], command[4096];
	size_t k;

	if (!fix)
		return;
	fix_text(fix, what, sizeof(what));
	fixed_command(fix, cli, command, sizeof(command));
	fprintf(stderr, "To fix it, %s:\n  %s\n", what, command);
	for (k = 0; k < fix->nsteps; k++)
		if (fix->steps[k].hint)
			fprintf(stderr, "  (%s: %s)\n", fix->steps[k].part, fix->steps[k].hint);
	fprintf(stderr, "Why it does not plan as asked:\n");
}

/* Everything goes to standard error: a plan that did not solve has no output
 * for a pipe.  The fix, when there is one, comes first. */
void print_problems_text(const struct cfapkg_plan *plan, const struct cli *cli)
{
	const struct cfapkg_facts *f = cfapkg_plan_facts(plan);
	bool context = false, beyond = false;
	char line[2048];
	size_t i, n;
	const struct cfapkg_problem *problems = cfapkg_plan_problems(plan, &n);

	cli_error("cannot plan");
	for (i = 0; i < cli->nargs; i++)
		fprintf(stderr, " %s", cli->args[i]);
	fprintf(stderr, " for %s on %s-%s%s\n", f->gfx, f->os, or_else(f->arch, "unknown"),
	        cfapkg_plan_fix(plan) ? "" : ":");
	print_fix(plan, cli);
	for (i = 0; i < n; i++) {
		const struct cfapkg_problem *p = &problems[i];
		/* The problems that remain even with experimental parts
		 * allowed are listed last, under their own heading. */
		if (p->beyond_experimental && !beyond) {
			fprintf(stderr, "and even with --allow-experimental:\n");
			beyond = true;
			context = false;
		}
		/* Requirement chains explain the problem above them:
		 * "because:" is said once, before the first. */
		if (p->kind == CFAPKG_PROBLEM_REQUIRES && !context) {
			fprintf(stderr, "  because:\n");
			context = true;
		}
		fprintf(stderr, "  - %s\n", problem_text(p, f, line, sizeof(line)));
	}
	/* The GPU planned for may be the wrong one: that can be why nothing fits. */
	print_detection_notes(stderr, detected_machine());
}

/* The record's fields as they are, and the sentence the text output gives, so
 * a script need not render it. */
static cJSON *problem_json(const struct cfapkg_problem *p, const struct cfapkg_facts *f)
{
	cJSON *j = cJSON_CreateObject();
	char line[2048];

	json_str(j, "kind", problem_kind_name(p->kind));
	cJSON_AddNumberToObject(j, "group", p->group);
	json_str(j, "package", p->package);
	json_str(j, "versions", p->versions);
	json_str(j, "constraint", p->dep);
	json_str(j, "fact", p->fact);
	json_str(j, "have", p->have);
	json_str(j, "alternatives", p->alternatives);
	json_str(j, "hint", p->hint);
	cJSON_AddBoolToObject(j, "beyond_experimental", p->beyond_experimental);
	json_str(j, "message", problem_text(p, f, line, sizeof(line)));
	return j;
}

/* {"allow_experimental", "steps": [{"fact", "value", "part", "hint"}]}, or null. */
static cJSON *fix_json(const struct cfapkg_plan_fix *fix)
{
	cJSON *o, *a;
	size_t k;

	if (!fix)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "allow_experimental", fix->allow_experimental);
	a = cJSON_AddArrayToObject(o, "steps");
	for (k = 0; k < fix->nsteps; k++) {
		cJSON *s = cJSON_CreateObject();
		json_str(s, "fact", fix->steps[k].fact);
		json_str(s, "value", fix->steps[k].value);
		json_str(s, "part", fix->steps[k].part);
		json_str(s, "hint", fix->steps[k].hint);
		cJSON_AddItemToArray(a, s);
	}
	return o;
}

/* A list of problem records as an array named key of o. */
static void add_problems(cJSON *o, const char *key, const struct cfapkg_problem *p, size_t n,
                         const struct cfapkg_facts *f)
{
	cJSON *a = cJSON_AddArrayToObject(o, key);
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, problem_json(&p[i], f));
}

/* "solved" says a consistent set exists; "installable" also needs every part
 * of it installable on this machine. */
cJSON *plan_json(struct cfapkg_ctx *ctx, const struct cfapkg_plan *plan)
{
	const struct cfapkg_facts *f = cfapkg_plan_facts(plan);
	const struct cfapkg_gpu_target *t = cfapkg_gpu_target_find(ctx, f->gfx);
	cJSON *o = cJSON_CreateObject(), *pk, *un, *gpu;
	size_t i, n;
	const struct cfapkg_plan_item *items = cfapkg_plan_items(plan, &n);
	const struct cfapkg_problem *probs;
	const char *const *unchecked;

	gpu = cJSON_AddObjectToObject(o, "gpu");
	json_str(gpu, "gfx", f->gfx);
	json_str(gpu, "generation", t ? t->generation : NULL);
	json_str(gpu, "status", t ? cfapkg_status_name(t->status) : NULL);
	json_str(o, "os", f->os);
	json_str(o, "arch", f->arch);
	cJSON_AddBoolToObject(o, "solved", cfapkg_plan_solved(plan));
	cJSON_AddBoolToObject(o, "installable",
	                      cfapkg_plan_solved(plan) && count_uninstallable(plan) == 0);
	pk = cJSON_AddArrayToObject(o, "packages");
	for (i = 0; i < n; i++) {
		const struct cfapkg_plan_item *it = &items[i];
		cJSON *p = cJSON_CreateObject();
		json_str(p, "name", it->version->recipe->name);
		json_str(p, "version", it->version->version);
		json_str(p, "kind", cfapkg_kind_name(it->version->recipe->kind));
		json_str(p, "status", cfapkg_status_name(it->status));
		cJSON_AddBoolToObject(p, "requested", it->requested);
		cJSON_AddBoolToObject(p, "installable", it->installable);
		json_str(p, "reason", it->why_not);
		json_str(p, "url", it->source ? it->source->url : NULL);
		json_str(p, "sha256", it->source ? it->source->sha256 : NULL);
		json_str(p, "trust", trust_name(it->source));
		json_str(p, "first_use", it->source ? it->source->first_use : NULL);
		if (it->source && it->source->size >= 0)
			cJSON_AddNumberToObject(p, "size", (double)it->source->size);
		else
			cJSON_AddNullToObject(p, "size");
		cJSON_AddItemToArray(pk, p);
	}
	probs = cfapkg_plan_problems(plan, &n);
	add_problems(o, "problems", probs, n, f);
	probs = cfapkg_plan_passed(plan, &n);
	add_problems(o, "passed_over", probs, n, f);
	cJSON_AddItemToObject(o, "fix", fix_json(cfapkg_plan_fix(plan)));
	un = cJSON_AddArrayToObject(o, "unchecked");
	unchecked = cfapkg_plan_unchecked(plan, &n);
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(un, cJSON_CreateString(unchecked[i]));
	cJSON_AddItemToObject(o, "detection", detection_json(detected_machine()));
	return o;
}

/* Each --pin, in the order given.
 * NULL-terminated (one more slot than
 * options); NULL only when out of memory. */
static const char **cli_pins(const struct cli *cli, size_t *n)
{
	const char **pins = calloc(cli->nopts + 1, sizeof(*pins));
	size_t i;

	*n = 0;
	for (i = 0; pins && i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_PIN)
			pins[(*n)++] = cli->opts[i].value;
	return pins;
}

/* The plan is made by the library against the environment, so that its
 * pins bind as they do for install. */
int solve_from_cli(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_plan **out)
{
	struct cfapkg_plan_opts opts = {0};
	struct cfapkg_facts facts = {0};
	const char **pins;
	enum cfapkg_err e;
	int rc;

	if ((rc = facts_from_cli(ctx, cli, &facts)))
		return rc;
	if (!(pins = cli_pins(cli, &opts.npins))) {
		cfapkg_facts_clear(&facts);
		return report_error(ctx, CFAPKG_E_NOMEM);
	}
	opts.pins = pins;
	opts.allow_experimental = cli->seen & OPT_BIT(OPT_ALLOW_EXPERIMENTAL);
	/* A testcase holds the whole problem, so the pool holds every recipe. */
	opts.full_pool = cli_value(cli, OPT_TESTCASE) != NULL;
	/* The plan holds its own copy of the facts. */
	e = cfapkg_env_plan(ctx, env_from_cli(cli), &facts, cli->args, cli->nargs, &opts, out);
	cfapkg_facts_clear(&facts);
	free(pins);
	return e ? report_error(ctx, e) : EXIT_OK;
}

int unsolved_exit(const struct cfapkg_plan *plan)
{
	size_t i, n;
	const struct cfapkg_problem *p = cfapkg_plan_problems(plan, &n);

	/* A misspelt name is "no such package" (4), as info and pin say it,
	 * not a set that cannot be made consistent (3). */
	for (i = 0; i < n; i++)
		if (p[i].kind == CFAPKG_PROBLEM_UNKNOWN_NAME)
			return EXIT_NOTFOUND;
	return EXIT_UNSOLVABLE;
}

/* One line of the solver's decisions, indented under the heading. */
static void decision_line(void *arg, const char *text)
{
	(void)arg;
	fprintf(stderr, "  %s\n", text);
}

/* Only a solved plan has decisions worth showing; --quiet wins over
 * --verbose. */
void print_decisions(const struct cfapkg_plan *plan, const struct cli *cli)
{
	if (!cli->verbose || cli->quiet || !cfapkg_plan_solved(plan))
		return;
	fprintf(stderr, "The solver decided:\n");
	cfapkg_plan_decisions(plan, decision_line, NULL);
}

/* A testcase is written whether or not the plan solved: a failing one is the
 * case most worth replaying. */
int cmd_plan(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *testcase = cli_value(cli, OPT_TESTCASE);
	struct cfapkg_plan *plan = NULL;
	enum cfapkg_err e;
	int rc;

	if ((rc = solve_from_cli(ctx, cli, &plan)))
		return rc;
	if (testcase && (e = cfapkg_plan_write_testcase(ctx, plan, testcase))) {
		cfapkg_plan_free(plan);
		return report_error(ctx, e);
	}
	/* A plan that solves but holds a part this machine cannot install
	 * exits EXIT_UNSUPPORTED: install would refuse it. */
	rc = !cfapkg_plan_solved(plan)       ? unsolved_exit(plan)
	     : count_uninstallable(plan) > 0 ? EXIT_UNSUPPORTED
	                                     : EXIT_OK;
	if (cli->json) {
		json_print(plan_json(ctx, plan));
	} else if (!cfapkg_plan_solved(plan)) {
		print_problems_text(plan, cli);
	} else {
		if (!cli->quiet)
			print_plan_text(ctx, plan);
		print_uninstallable(plan);
	}
	/* Decisions go to standard error, so they never mix into the JSON. */
	print_decisions(plan, cli);
	cfapkg_plan_free(plan);
	return rc;
}
