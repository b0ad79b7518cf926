/*
 * fuzz_sysfs.c - Linux detection (detect/sysfs.c, detect/detect.c) on a
 * fixture tree made from the input and read through CFAPKG_SYSROOT, as
 * the detect test does.  The input is a list of entries, each a line
 * ">PATH" followed by the file's bytes up to the next such line:
 *
 *   >sys/class/kfd/kfd/topology/nodes/1/properties
 *   gfx_target_version 120000
 *   >sys/class/drm/card0/device/vendor
 *   0x1002
 *
 * A PATH ending in "/" makes a folder (a folder where a file is expected
 * is how an unreadable file is written), and ">=override" gives the
 * entry's text as HSA_OVERRIDE_GFX_VERSION.  Paths with other characters
 * than letters, digits and ".-_+", or with "." or ".." components, are
 * skipped.  Properties: detection succeeds (no GPU is not an error),
 * each list agrees with its count and the choice stays within it, every
 * GPU is named and its fixed fields terminated, every GPU target is a
 * valid one, and the planning facts made from the result are ones the
 * facts parser would accept; the sanitizer build checks that clearing the
 * machine frees all of it.
 */
#define _XOPEN_SOURCE 700 /* setenv */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/recipe.h"
#include "core/version.h"
#include "platform/platform.h"
#include "tests/fuzz/fuzz.h"

#define MAX_ENTRIES 256

static struct cfapkg_ctx *ctx; /* recipes and the GPU table, loaded once */
static char root[1024];

static bool safe_rel(const char *p, size_t n)
{
	size_t i, start = 0;

	if (n == 0 || n > 512)
		return false;
	for (i = 0; i <= n; i++) {
		char c = i < n ? p[i] : '/';
		if (c == '/') {
			size_t len = i - start;
			if ((len == 0 && i < n) || (len == 1 && p[start] == '.') ||
			    (len == 2 && p[start] == '.' && p[start + 1] == '.'))
				return false;
			start = i + 1;
		} else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		             (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' || c == '+')) {
			return false;
		}
	}
	return true;
}

static void make_entry(const char *path, size_t plen, const uint8_t *body, size_t blen)
{
	char full[2048], *slash;

	if (plen == 9 && memcmp(path, "=override", 9) == 0) {
		char value[64];
		snprintf(value, sizeof(value), "%.*s", (int)blen, (const char *)body);
		value[strcspn(value, "\n")] = '\0';
		setenv("HSA_OVERRIDE_GFX_VERSION", value, 1);
		return;
	}
	if (!safe_rel(path, plen))
		return;
	snprintf(full, sizeof(full), "%s/%.*s", root, (int)plen, path);
	if (path[plen - 1] == '/') {
		cfa_plat_mkdir_p(full);
		return;
	}
	slash = strrchr(full, '/');
	*slash = '\0';
	if (cfa_plat_mkdir_p(full) != 0)
		return;
	*slash = '/';
	if (!cfa_plat_is_dir(full)) {
		FILE *f = fopen(full, "wb");
		if (f) {
			fwrite(body, 1, blen, f);
			fclose(f);
		}
	}
}

/* Splits the input at lines that start with '>' and writes each entry. */
static void make_tree(const uint8_t *data, size_t size)
{
	size_t i = 0, entries = 0;

	while (i < size && entries < MAX_ENTRIES) {
		size_t path = i + 1, eol, body, end;
		if (data[i] != '>') {
			const uint8_t *next = memchr(data + i, '\n', size - i);
			i = next ? (size_t)(next - data) + 1 : size;
			continue;
		}
		for (eol = path; eol < size && data[eol] != '\n'; eol++)
			;
		body = eol < size ? eol + 1 : size;
		for (end = body; end < size && !(data[end] == '>' && data[end - 1] == '\n'); end++)
			;
		make_entry((const char *)data + path, eol - path, data + body, end - body);
		entries++;
		i = end;
	}
}

static void check_lists(const struct cfapkg_machine *m)
{
	size_t i;

	FUZZ_CHECK((m->ngpus == 0) == (m->gpus == NULL) && (m->nwarnings == 0) == (m->warnings == NULL)
	               && (!m->nhip_runtimes || m->hip_runtimes) && (!m->nhip_sdks || m->hip_sdks),
	           "%lu GPUs, %lu warnings: a list and its count disagree", (unsigned long)m->ngpus,
	           (unsigned long)m->nwarnings);
	for (i = 0; i < m->nwarnings; i++)
		FUZZ_CHECK(m->warnings[i] != NULL, "warning %lu is NULL", (unsigned long)i);
	for (i = 0; i < m->nhip_runtimes; i++)
		FUZZ_CHECK(m->hip_runtimes[i].file && m->hip_runtimes[i].major > 0,
		           "HIP runtime %lu", (unsigned long)i);
	for (i = 0; i < m->nhip_sdks; i++)
		FUZZ_CHECK(m->hip_sdks[i].version && m->hip_sdks[i].path, "HIP SDK %lu",
		           (unsigned long)i);
}

static void check_machine(const struct cfapkg_machine *m)
{
	struct cfapkg_facts f = {0};
	struct cfa_ver v;
	size_t i;

	check_lists(m);
	FUZZ_CHECK(m->selected >= -1 && m->selected < (int)m->ngpus && m->passed_over >= -1 &&
	               m->passed_over < (int)m->ngpus,
	           "selected %d, passed over %d of %lu", m->selected, m->passed_over,
	           (unsigned long)m->ngpus);
	for (i = 0; i < m->ngpus; i++) {
		const struct cfapkg_gpu *g = &m->gpus[i];
		FUZZ_CHECK(g->name && memchr(g->pci_id, '\0', sizeof(g->pci_id)) &&
		               memchr(g->source, '\0', sizeof(g->source)),
		           "GPU %lu: no name, or a field without its terminator", (unsigned long)i);
		FUZZ_CHECK(!g->gfx[0] || cfa_valid_gfx(g->gfx), "GPU %lu: target \"%s\"",
		           (unsigned long)i, g->gfx);
		FUZZ_CHECK(g->index == i && g->revision >= -1 && g->revision <= 0xff,
		           "GPU %lu: index %u, revision %d", (unsigned long)i, g->index, g->revision);
	}
	/* As the command line does: host facts, then what was detected,
	 * every HIP runtime and SDK of it. */
	FUZZ_CHECK(cfapkg_facts_init_host(&f) == CFAPKG_E_OK &&
	               cfapkg_machine_facts(m, &f) == CFAPKG_E_OK,
	           "facts: out of memory");
	FUZZ_CHECK(!f.gfx[0] || cfa_valid_gfx(f.gfx), "facts: target \"%s\"", f.gfx);
	FUZZ_CHECK(!f.driver || cfa_ver_parse(f.driver, strlen(f.driver), &v, NULL),
	           "facts: driver \"%s\"", f.driver);
	FUZZ_CHECK(f.nhip_runtimes == m->nhip_runtimes && f.nhip_sdks == m->nhip_sdks,
	           "facts: %lu of %lu HIP runtimes, %lu of %lu SDKs", (unsigned long)f.nhip_runtimes,
	           (unsigned long)m->nhip_runtimes, (unsigned long)f.nhip_sdks,
	           (unsigned long)m->nhip_sdks);
	for (i = 0; i < f.nhip_sdks; i++)
		FUZZ_CHECK(cfa_ver_parse(f.hip_sdks[i], strlen(f.hip_sdks[i]), &v, NULL),
		           "facts: HIP SDK \"%s\"", f.hip_sdks[i]);
	cfapkg_facts_clear(&f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_path(root, sizeof(root), "root");
	setenv("CFAPKG_SYSROOT", root, 1);
	unsetenv("CFAPKG_RECIPES");
	unsetenv("CFAPKG_NO_BUILTIN_RECIPES");
	ctx = cfapkg_ctx_new();
	if (!ctx || cfapkg_recipes_load(ctx))
		fuzz_fail("cannot load the built-in recipes: %s",
		          ctx ? cfapkg_ctx_error(ctx) : "out of memory");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Cleared by each detection, and after the last one. */
	static struct cfapkg_machine m;
	enum cfapkg_err e;

	unsetenv("HSA_OVERRIDE_GFX_VERSION");
	cfa_plat_mkdir_p(root);
	make_tree(data, size);
	e = cfapkg_detect(ctx, -1, &m);
	FUZZ_CHECK(e == CFAPKG_E_OK, "detection failed: %s", cfapkg_ctx_error(ctx));
	check_machine(&m);
	cfapkg_machine_clear(&m);
	cfapkg_ctx_clear_error(ctx);
	cfa_plat_remove_tree(root);
	return 0;
}
