/*
 * detect.c - runs the backend for this OS, names each GPU from gpus.json,
 * applies HSA_OVERRIDE_GFX_VERSION, chooses the GPU to plan for, and turns
 * the result into planning facts.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpus.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "detect/detect.h"
#include "platform/platform.h"

/* Name, chip, target facts and status from gpus.json. */
static void describe(struct cfapkg_ctx *ctx, struct cfapkg_machine *m, struct cfapkg_gpu *g)
{
	const struct cfapkg_gpu_device *d = cfapkg_gpu_device_find(ctx, g->vendor, g->device,
	                                                          g->revision);
	const struct cfapkg_gpu_target *t;

	if (d) {
		g->known = true;
		cfa_fit_text(g->name, sizeof(g->name), "%s", d->name);
		cfa_fit_text(g->chip, sizeof(g->chip), "%s", d->chip);
		if (!g->gfx[0])
			cfa_machine_set(m, g->gfx, sizeof(g->gfx), "gpus.json target", d->gfx);
	} else if (!g->name[0]) {
		cfa_fit_text(g->name, sizeof(g->name), "AMD GPU %04x:%04x (not in gpus.json)",
		             g->vendor, g->device);
	}
	/* Four and two hex digits: always fits. */
	if (!(g->revision >= 0 ? cfa_snprintf(g->pci_id, sizeof(g->pci_id), "%04x:%04x rev %02x",
	                                      g->vendor, g->device, (unsigned)g->revision)
	                       : cfa_snprintf(g->pci_id, sizeof(g->pci_id), "%04x:%04x", g->vendor,
	                                      g->device)))
		g->pci_id[0] = '\0';
	t = g->gfx[0] ? cfapkg_gpu_target_find(ctx, g->gfx) : NULL;
	if (t) {
		cfa_fit_text(g->generation, sizeof(g->generation), "%s", t->generation);
		g->status = (int)t->status;
		g->integrated = t->apu;
	}
}

/* A GPU whose KFD facts could not be read: what that means, once, with
 * the name gpus.json gives its PCI id. */
static void warn_unread(struct cfapkg_machine *m, const struct cfapkg_gpu *g)
{
	cfa_machine_warn(m, "GPU %u, %s (%s), could not be read: %s. It is listed from its PCI "
	                 "identity and %s%s%s; ROCm reads the same KFD facts and may not see it "
	                 "either. cfapkg plans for it only when no readable GPU is left",
	                 g->index, g->name, g->pci_id, g->problem,
	                 g->gfx[0] ? "its target " : "its target is unknown", g->gfx,
	                 g->gfx[0] ? " comes from gpus.json" : "");
}

/* Among the GPUs read in full, else those with a known target, else all:
 * the discrete one with the most memory, else the one with the most. */
static int choose(const struct cfapkg_machine *m)
{
	int best = -1, pass;
	unsigned i;

	for (pass = 0; pass < 3 && best < 0; pass++)
		for (i = 0; i < m->ngpus; i++) {
			const struct cfapkg_gpu *g = &m->gpus[i], *b = best >= 0 ? &m->gpus[best] : NULL;
			if ((pass == 0 && g->problem[0]) || (pass == 1 && !g->gfx[0]))
				continue;
			if (!b || (b->integrated && !g->integrated) ||
			    (b->integrated == g->integrated && g->vram_bytes > b->vram_bytes))
				best = (int)i;
		}
	return best;
}

/* An integrated GPU chosen while another, not integrated, is present (one
 * that could not be read, as a readable one would have been chosen): the
 * plan is probably not for the GPU the user means, so say so.  Without a
 * target the other GPU's kind is unknown, and the warning says as much. */
static void check_choice(struct cfapkg_machine *m)
{
	const struct cfapkg_gpu *sel = &m->gpus[m->selected], *other;
	unsigned i;

	if (!sel->integrated)
		return;
	for (i = 0; i < m->ngpus && m->passed_over < 0; i++)
		if (!m->gpus[i].integrated)
			m->passed_over = (int)i;
	if (m->passed_over < 0)
		return;
	other = &m->gpus[m->passed_over];
	cfa_machine_warn(m, "GPU %u, %s, is integrated, yet it is the GPU chosen: %sGPU %u, %s, "
	                 "could not be read%s. Planning for GPU %u is probably not what you mean",
	                 sel->index, sel->name, other->gfx[0] ? "discrete " : "", other->index,
	                 other->name, other->gfx[0] ? "" : " and may be a discrete one", sel->index);
}

enum cfapkg_err cfapkg_detect(struct cfapkg_ctx *ctx, int gpu_index, struct cfapkg_machine *m)
{
	const char *root = getenv("CFAPKG_SYSROOT");
	const char *override = getenv("HSA_OVERRIDE_GFX_VERSION");
	enum cfapkg_err e;
	unsigned i;

	memset(m, 0, sizeof(*m));
	m->selected = -1;
	m->passed_over = -1;
	cfa_machine_set(m, m->os, sizeof(m->os), "system name", cfa_plat_os());
	cfa_machine_set(m, m->arch, sizeof(m->arch), "architecture", cfa_plat_arch());
	if ((e = cfapkg_recipes_load(ctx)))
		return e; /* detail set by the loader: the GPU table is needed */
	if (root && *root) {
		size_t n = strlen(root);
		char *trimmed;
		while (n > 1 && (root[n - 1] == '/' || root[n - 1] == '\\'))
			n--;
		if (!(trimmed = cfa_strndup(root, n)))
			return cfa_nomem(ctx);
		/* A sysroot holds a Linux machine, whatever runs cfapkg. */
		cfa_machine_set(m, m->os, sizeof(m->os), "system name", "linux");
		e = cfa_detect_sysfs(ctx, trimmed, m);
		cfa_free(trimmed);
	}
	else if (strcmp(cfa_plat_os(), "windows") == 0)
		e = cfa_detect_windows(ctx, m);
	else
		e = cfa_detect_sysfs(ctx, "", m);
	if (e)
		return e; /* detail set by the backend */
	for (i = 0; i < m->ngpus; i++) {
		describe(ctx, m, &m->gpus[i]);
		if (m->gpus[i].problem[0])
			warn_unread(m, &m->gpus[i]);
	}
	/* Only ROCm on Linux reads the variable; the Windows HIP runtime never does. */
	if (override && *override && strcmp(m->os, "linux") != 0)
		cfa_machine_warn(m, "HSA_OVERRIDE_GFX_VERSION=%s is ignored: only ROCm on Linux "
		                 "reads it", override);
	else if (override && *override && !cfa_gfx_from_override(override, m->gfx_override))
		cfa_machine_warn(m, "HSA_OVERRIDE_GFX_VERSION=%s is not major.minor.stepping; ignored",
		                 override);
	if (gpu_index >= 0) {
		if ((unsigned)gpu_index >= m->ngpus)
			return cfa_fail(ctx, CFAPKG_E_NOTFOUND,
			                "GPU index %d was not found: this machine has %u AMD GPU%s "
			                "(cfapkg detect lists them)",
			                gpu_index, m->ngpus, m->ngpus == 1 ? "" : "s");
		m->selected = gpu_index;
	} else if ((m->selected = choose(m)) >= 0) {
		check_choice(m);
	}
	return CFAPKG_E_OK;
}

/* A copy between fixed fields; one that does not fit leaves the fact
 * unknown ("") rather than a cut value that would plan for something else. */
static void copy_fact(char *dst, size_t len, const char *value)
{
	if (!cfa_snprintf(dst, len, "%s", value))
		dst[0] = '\0';
}

void cfapkg_machine_facts(const struct cfapkg_machine *m, struct cfapkg_facts *f)
{
	const struct cfapkg_gpu *g = m->selected >= 0 ? &m->gpus[m->selected] : NULL;
	struct cfa_ver v;
	unsigned i;

	copy_fact(f->os, sizeof(f->os), m->os);
	copy_fact(f->arch, sizeof(f->arch), m->arch);
	if (m->gfx_override[0] && g)
		copy_fact(f->gfx, sizeof(f->gfx), m->gfx_override);
	else if (g)
		copy_fact(f->gfx, sizeof(f->gfx), g->gfx);
	/* Only a driver version that compares (not "6.1.0-18-amd64"). */
	if (m->driver[0] && cfa_ver_parse(m->driver, strlen(m->driver), &v, NULL))
		copy_fact(f->driver, sizeof(f->driver), m->driver);
	copy_fact(f->glibc, sizeof(f->glibc), m->glibc);
	f->hip_runtimes_known = true;
	f->nhip_runtimes = 0;
	for (i = 0; i < m->nhip_runtimes && i < CFAPKG_FACTS_MAX; i++)
		f->hip_runtimes[f->nhip_runtimes++] = m->hip_runtimes[i];
	f->hip_sdks_known = true;
	f->nhip_sdks = 0;
	for (i = 0; i < m->nhip_sdks && i < CFAPKG_FACTS_MAX; i++)
		if (cfa_snprintf(f->hip_sdks[f->nhip_sdks], sizeof(f->hip_sdks[0]), "%s",
		                 m->hip_sdks[i].version))
			f->nhip_sdks++;
}
