/*
 * test_machine.c - a detected machine is held whole or not at all:
 * clearing is safe on a zeroed machine and twice, and whichever allocation
 * of a detection fails, cfapkg_detect says CFAPKG_E_NOMEM rather than
 * return a machine with a text or a list entry missing.  The same for the
 * facts made from a machine (cfapkg_machine_facts): every HIP runtime and
 * SDK, however many.  Run on fixture trees (CFAPKG_SYSROOT); the sanitizer
 * build checks that every failed detection, and every cleared machine and
 * facts, leaks nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"
#include "check.h"
#include "detect/detect.h"
#include "platform/platform.h"

#define MAX_RUNS 20000

/* acc + text + "|" (the test's own allocations: they never fail). */
static char *append(char *acc, const char *text)
{
	size_t a = acc ? strlen(acc) : 0, b;
	char *r;

	text = text ? text : "(null)";
	b = strlen(text);
	if (!(r = realloc(acc, a + b + 2)))
		abort();
	memcpy(r + a, text, b);
	memcpy(r + a + b, "|", 2);
	return r;
}

static char *gpu_text(char *t, const struct cfapkg_gpu *g)
{
	t = append(t, g->name);
	t = append(t, g->gfx);
	t = append(t, g->generation);
	t = append(t, g->chip);
	t = append(t, g->pci_id);
	t = append(t, g->source);
	return append(t, g->problem);
}

/* Everything a machine holds, as one text to compare. */
static char *machine_text(const struct cfapkg_machine *m)
{
	char num[64], *t = NULL;
	size_t i;

	if ((size_t)snprintf(num, sizeof(num), "%lu %lu %lu %lu %d %d", (unsigned long)m->ngpus,
	                     (unsigned long)m->nhip_runtimes, (unsigned long)m->nhip_sdks,
	                     (unsigned long)m->nwarnings, m->selected, m->passed_over) >= sizeof(num))
		abort();
	t = append(t, num);
	t = append(t, m->os);
	t = append(t, m->arch);
	t = append(t, m->os_build);
	t = append(t, m->driver);
	t = append(t, m->driver_source);
	t = append(t, m->driver_detail);
	t = append(t, m->glibc);
	t = append(t, m->glibc_source);
	for (i = 0; i < m->ngpus; i++)
		t = gpu_text(t, &m->gpus[i]);
	for (i = 0; i < m->nhip_runtimes; i++)
		t = append(t, m->hip_runtimes[i].file);
	for (i = 0; i < m->nhip_sdks; i++) {
		t = append(t, m->hip_sdks[i].version);
		t = append(t, m->hip_sdks[i].path);
		t = append(t, m->hip_sdks[i].source);
	}
	for (i = 0; i < m->nwarnings; i++)
		t = append(t, m->warnings[i]);
	return t;
}

static void clear_is_safe(void)
{
	struct cfapkg_machine m;
	struct cfapkg_facts_choice c;

	memset(&m, 0, sizeof(m));
	memset(&c, 0, sizeof(c));
	cfapkg_machine_clear(&m);
	cfapkg_machine_clear(&m);
	cfapkg_facts_choice_clear(&c);
	cfapkg_facts_choice_clear(&c);
	cfapkg_machine_clear(NULL);
	CHECK(m.gpus == NULL && m.warnings == NULL && c.machine.gpus == NULL,
	      "a cleared machine holds nothing");
	cfapkg_facts_clear(&c.facts);
	cfapkg_facts_clear(&c.facts);
	cfapkg_facts_clear(NULL);
	CHECK(c.facts.arch == NULL && c.facts.hip_sdks == NULL, "cleared facts hold nothing");
}

/* A machine with twelve HIP runtimes and SDKs (more than the eight the
 * facts once held) and a long architecture name. */
static void many_sdks(struct cfapkg_machine *m)
{
	char version[16], path[32];
	unsigned i;
	bool ok = cfa_machine_setf(&m->arch, "%s", "an-architecture-name-of-forty-bytes-long") &&
	          cfa_machine_setf(&m->glibc, "%s", "2.41");

	m->selected = m->passed_over = -1;
	CFA_MACHINE_NAME(m->os, "linux");
	for (i = 0; i < 12 && ok; i++)
		ok = snprintf(version, sizeof(version), "6.%u.0", i) < (int)sizeof(version) &&
		     snprintf(path, sizeof(path), "/opt/rocm-%s", version) < (int)sizeof(path) &&
		     cfa_machine_add_sdk(m, version, path, "/opt") &&
		     cfa_machine_add_runtime(m, i + 1, path);
	CHECK(ok, "the machine could not be made");
}

/* Its facts hold every runtime and SDK, or with an allocation failing
 * CFAPKG_E_NOMEM and nothing. */
static void facts_whole(void)
{
	struct cfapkg_machine m = {0};
	struct cfapkg_facts f = {0};
	unsigned long n;
	int nomem = 0;
	enum cfapkg_err e = CFAPKG_E_NOMEM;

	many_sdks(&m);
	for (n = 1; n <= MAX_RUNS && e; n++) {
		cfapkg_debug_fail_alloc(n);
		e = cfapkg_machine_facts(&m, &f);
		cfapkg_debug_fail_alloc(0);
		if (e) {
			CHECK(e == CFAPKG_E_NOMEM && !f.arch && !f.hip_sdks && !f.nhip_sdks,
			      "allocation %lu: error %d, or facts left behind", n, e);
			nomem++;
		}
	}
	CHECK(!e && f.nhip_sdks == 12 && f.nhip_runtimes == 12 && f.hip_sdks_known &&
	          strcmp(f.hip_sdks[11], "6.11.0") == 0 && f.hip_runtimes[11] == 12 &&
	          f.arch && strcmp(f.arch, m.arch) == 0 && f.glibc && strcmp(f.glibc, "2.41") == 0,
	      "%lu of 12 SDKs, %lu of 12 runtimes, arch %s", (unsigned long)f.nhip_sdks,
	      (unsigned long)f.nhip_runtimes, f.arch ? f.arch : "(none)");
	CHECK(nomem > 12, "facts: %d failures injected", nomem);
	cfapkg_facts_clear(&f);
	cfapkg_machine_clear(&m);
}

/* Each allocation of one detection made to fail in turn: NOMEM, or the
 * whole machine.  Past the last allocation every run is whole: a run of
 * them ends the test (a failure that changed nothing is no end). */
static void detect_failures(struct cfapkg_ctx *ctx, const char *tree)
{
	struct cfapkg_machine m;
	char *whole, *have;
	unsigned long n;
	int nomem = 0, whole_runs = 0;

	memset(&m, 0, sizeof(m));
	cfa_plat_setenv("CFAPKG_SYSROOT", tree);
	CHECK(cfapkg_detect(ctx, -1, &m) == CFAPKG_E_OK, "%s: %s", tree, cfapkg_ctx_error(ctx));
	whole = machine_text(&m);
	/* Detected again into the same machine: it is cleared first. */
	CHECK(cfapkg_detect(ctx, -1, &m) == CFAPKG_E_OK, "%s: %s", tree, cfapkg_ctx_error(ctx));
	have = machine_text(&m);
	CHECK(strcmp(have, whole) == 0, "%s: a second detection differs", tree);
	free(have);
	for (n = 1; n <= MAX_RUNS && whole_runs < 20; n++) {
		enum cfapkg_err e;
		cfapkg_debug_fail_alloc(n);
		e = cfapkg_detect(ctx, -1, &m);
		cfapkg_debug_fail_alloc(0);
		cfapkg_ctx_clear_error(ctx);
		if (e == CFAPKG_E_OK) {
			have = machine_text(&m);
			CHECK(strcmp(have, whole) == 0, "%s: allocation %lu failed, yet detection "
			      "succeeded with\n%s\nnot\n%s", tree, n, have, whole);
			whole_runs = strcmp(have, whole) == 0 ? whole_runs + 1 : 0;
			free(have);
		} else {
			CHECK(e == CFAPKG_E_NOMEM, "%s: allocation %lu gave error %d", tree, n, e);
			nomem++;
			whole_runs = 0;
		}
		cfapkg_machine_clear(&m);
	}
	CHECK(whole_runs == 20 && nomem > 10, "%s: %d failures injected in %lu runs", tree, nomem,
	      n);
	free(whole);
}

int main(int argc, char **argv)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	int i;

	if (argc < 2 || !ctx) {
		fprintf(stderr, "usage: test_machine SYSROOT...\n");
		return 2;
	}
	cfa_plat_setenv("HSA_OVERRIDE_GFX_VERSION", NULL);
	clear_is_safe();
	facts_whole();
	CHECK(cfapkg_recipes_load(ctx) == CFAPKG_E_OK, "%s", cfapkg_ctx_error(ctx));
	for (i = 1; i < argc; i++)
		detect_failures(ctx, argv[i]);
	cfapkg_ctx_free(ctx);
	return check_report();
}
