/*
 * venv_probe.c - the PyTorch probe (probe/torch_probe.py, built into
 * cfapkg) run by a venv's own interpreter, and its lines read back: one
 * check each for importing torch, CUDA being available, the device and a
 * checked matmul, and the CUDA library files the process loaded.  A probe
 * that hangs or dies is reported at the first check it did not reach.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "runtime/venv.h"

#define OUTPUT_MAX (256u << 10) /* a few hundred bytes normally; a chatty library more */
#define MAX_ITEMS 64

/* The order the probe script reports its checks in: the first one missing from
 * the output is where a probe that died stopped. */
static const char *const check_order[] = {"import torch", "CUDA available", "device", "matmul"};
#define NCHECKS (sizeof(check_order) / sizeof(check_order[0]))

/* The probe's lines as read; the strings go into the result's arena, and
 * failed remembers an allocation that did not succeed. */
struct reader {
	struct cfapkg_venv_probe *p;
	struct cfapkg_venv_check checks[MAX_ITEMS];
	struct cfapkg_venv_loaded loaded[MAX_ITEMS];
	size_t nchecks, nloaded;
	bool failed;
};

static char *keepn(struct reader *r, const char *s, size_t n)
{
	char *k = cfa_arena_strndup(r->p->arena, s, n);

	r->failed |= !k;
	return k;
}

/* An unknown word reads as FAILED: a check whose result cannot be read never
 * passes. */
static enum cfapkg_probe_status status_of(const char *w, size_t n)
{
	static const struct {
		const char *word;
		enum cfapkg_probe_status status;
	} map[] = {{"OK", CFAPKG_PROBE_OK},           {"FAILED", CFAPKG_PROBE_FAILED},
	           {"WRONG", CFAPKG_PROBE_WRONG},     {"SKIPPED", CFAPKG_PROBE_SKIPPED},
	           {"MISSING", CFAPKG_PROBE_MISSING}};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].word) == n && strncmp(map[i].word, w, n) == 0)
			return map[i].status;
	return CFAPKG_PROBE_FAILED;
}

/* The next space-separated field of *line (its length in *n). */
static const char *field(const char **line, size_t *n)
{
	const char *s = *line + strspn(*line, " ");

	*n = strcspn(s, " ");
	*line = s + *n;
	return s;
}

/* "CHECK import_torch FAILED cublas OSError: ..." */
static void read_check(struct reader *r, const char *line)
{
	struct cfapkg_venv_check *c;
	const char *name, *status, *lib;
	size_t nn, ns, nl, i;

	if (r->nchecks == MAX_ITEMS)
		return;
	name = field(&line, &nn);
	status = field(&line, &ns);
	lib = field(&line, &nl);
	c = &r->checks[r->nchecks++];
	c->check = keepn(r, name, nn);
	/* The script writes a check's name with "_" for its spaces, so the
	 * name stays one field of the line. */
	for (i = 0; c->check && c->check[i]; i++)
		if (c->check[i] == '_')
			((char *)c->check)[i] = ' ';
	c->status = status_of(status, ns);
	/* "-" in the library field: the check names no library. */
	c->library = nl && !(nl == 1 && lib[0] == '-') ? keepn(r, lib, nl) : NULL;
	line += strspn(line, " ");
	c->detail = keepn(r, line, strlen(line));
}

/* "WORD REST OF LINE" into two kept strings. */
static void read_pair(struct reader *r, const char *rest, const char **first, const char **second)
{
	size_t n;
	const char *f = field(&rest, &n);

	*first = keepn(r, f, n);
	rest += strspn(rest, " ");
	*second = keepn(r, rest, strlen(rest));
}

static void read_lib(struct reader *r, const char *rest)
{
	struct cfapkg_venv_loaded *l = &r->loaded[r->nloaded++];

	read_pair(r, rest, &l->family, &l->path);
}

/* Lines the probe does not start with a known word (a library's own output)
 * are ignored. */
static void read_line(struct reader *r, const char *line)
{
	if (strncmp(line, "CHECK ", 6) == 0)
		read_check(r, line + 6);
	else if (strncmp(line, "LIB ", 4) == 0 && r->nloaded < MAX_ITEMS)
		read_lib(r, line + 4);
	else if (strncmp(line, "TORCH ", 6) == 0)
		read_pair(r, line + 6, &r->p->torch_version, &r->p->cuda);
}

/* Lines of the output, a "\r" before a line's end dropped (Windows). */
static void read_output(struct reader *r, char *text)
{
	char *line = text, *end;

	while (line && *line) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (end && end > line && end[-1] == '\r')
			end[-1] = '\0';
		read_line(r, line);
		line = end ? end + 1 : NULL;
	}
}

/* A probe that hung or died: the first check it did not report. */
static void no_end(struct reader *r, bool timed_out, int status, unsigned timeout_ms)
{
	struct cfapkg_venv_check *c;
	char *text;
	size_t i, k;

	for (i = 0; i < NCHECKS; i++) {
		for (k = 0; k < r->nchecks && strcmp(r->checks[k].check, check_order[i]) != 0; k++)
			;
		if (k == r->nchecks)
			break;
	}
	if (i == NCHECKS || r->nchecks == MAX_ITEMS)
		return;
	c = &r->checks[r->nchecks++];
	c->check = check_order[i];
	c->status = timed_out ? CFAPKG_PROBE_TIMEOUT : CFAPKG_PROBE_CRASHED;
	/* The library blamed for a check that never answered: the matmul runs
	 * in cuBLAS, the device and availability checks in the CUDA driver
	 * API. */
	c->library = i == 3 ? "cublas" : i == 0 ? NULL : "cuda";
	text = timed_out ? cfa_aprintf("no answer in %u s", timeout_ms / 1000)
	                 : cfa_aprintf("python ended with status %d", status);
	c->detail = text ? keepn(r, text, strlen(text)) : NULL;
	r->failed |= !c->detail;
	cfa_free(text);
}

/* The checks and loaded files are copied out of the reader's fixed arrays into
 * the arena, which the result keeps. */
static enum cfapkg_err finish(struct reader *r)
{
	struct cfapkg_venv_check *c = cfa_arena_alloc(r->p->arena, (r->nchecks + 1) * sizeof(*c));
	struct cfapkg_venv_loaded *l = cfa_arena_alloc(r->p->arena, (r->nloaded + 1) * sizeof(*l));

	if (!c || !l || r->failed)
		return CFAPKG_E_NOMEM;
	memcpy(c, r->checks, r->nchecks * sizeof(*c));
	memcpy(l, r->loaded, r->nloaded * sizeof(*l));
	r->p->checks = c;
	r->p->nchecks = r->nchecks;
	r->p->loaded = l;
	r->p->nloaded = r->nloaded;
	return CFAPKG_E_OK;
}

static enum cfapkg_err run(struct cfapkg_ctx *ctx, const struct cfapkg_venv *v,
                           unsigned timeout_ms, struct reader *r)
{
	/* The script goes on the command line, not into a file in the venv:
	 * the probe writes nothing there. */
	const char *argv[] = {v->python, "-c", cfa_torch_probe_py, NULL};
	char *text = cfa_malloc(OUTPUT_MAX);
	int status = 0;
	bool timed_out = false, reported;
	enum cfapkg_err e;
	size_t i;

	if (!text)
		return cfa_nomem(ctx);
	text[0] = '\0';
	e = cfapkg_run_capture(ctx, argv, timeout_ms, text, OUTPUT_MAX, &status, &timed_out);
	if (!e) {
		read_output(r, text);
		for (i = 0, reported = false; i < r->nchecks; i++)
			reported |= strcmp(r->checks[i].check, check_order[NCHECKS - 1]) == 0 ||
			            r->checks[i].status != CFAPKG_PROBE_OK;
		/* A probe that ended before its last check and did not report
		 * a failure itself hung or crashed: the first check it did not
		 * reach gets the blame. */
		if (timed_out || (!reported && status != 0) || r->nchecks == 0)
			no_end(r, timed_out, status, timeout_ms);
		if (finish(r))
			e = cfa_nomem(ctx);
	}
	cfa_free(text);
	return e;
}

/* Owned: cfapkg_venv_probe_free.  A probe that fails is a result, not an
 * error: errors are for a probe that could not be run. */
enum cfapkg_err cfapkg_venv_probe(struct cfapkg_ctx *ctx, const struct cfapkg_venv *v,
                                  unsigned timeout_ms, struct cfapkg_venv_probe **out)
{
	struct reader *r;
	enum cfapkg_err e;

	*out = NULL;
	if (!v->python)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s: no Python interpreter for this system in "
		                "it (%s)", v->root, strcmp(cfa_plat_os(), "windows") == 0
		                                         ? "Scripts\\python.exe"
		                                         : "bin/python");
	if (!(r = cfa_calloc(1, sizeof(*r))) || !(r->p = cfa_calloc(1, sizeof(*r->p))) ||
	    !(r->p->arena = cfa_calloc(1, sizeof(*r->p->arena)))) {
		if (r)
			cfa_free(r->p);
		cfa_free(r);
		return cfa_nomem(ctx);
	}
	cfa_arena_init(r->p->arena);
	e = run(ctx, v, timeout_ms, r);
	if (e)
		cfapkg_venv_probe_free(r->p);
	else
		*out = r->p;
	cfa_free(r);
	return e;
}

void cfapkg_venv_probe_free(struct cfapkg_venv_probe *p)
{
	if (!p)
		return;
	cfa_arena_fini(p->arena);
	cfa_free(p->arena);
	cfa_free(p);
}

/* Every check must be OK: a skipped one did not prove anything, and a probe
 * with no checks proved nothing at all. */
bool cfapkg_venv_probe_ok(const struct cfapkg_venv_probe *p)
{
	size_t i;

	for (i = 0; i < p->nchecks; i++)
		if (p->checks[i].status != CFAPKG_PROBE_OK)
			return false;
	return p->nchecks > 0;
}
