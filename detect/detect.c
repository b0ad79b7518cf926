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
#include "core/registry.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "detect/detect.h"
#include "platform/platform.h"

/* The PCI id as text: four and two hex digits always fit. */
static void set_pci_id(struct cfapkg_gpu *g)
{
	if (!(g->revision >= 0 ? cfa_snprintf(g->pci_id, sizeof(g->pci_id), "%04x:%04x rev %02x",
	                                      g->vendor, g->device, (unsigned)g->revision)
	                       : cfa_snprintf(g->pci_id, sizeof(g->pci_id), "%04x:%04x", g->vendor,
	                                      g->device)))
		g->pci_id[0] = '\0';
}

/* Name, chip, target facts and status from gpus.json; false when out of
 * memory. */
static bool describe(struct cfapkg_ctx *ctx, struct cfapkg_gpu *g)
{
	const struct cfapkg_gpu_device *d = cfapkg_gpu_device_find(ctx, g->vendor, g->device,
	                                                          g->revision);
	const struct cfapkg_gpu_target *t;

	if (d) {
		g->known = true;
		if (!cfa_machine_setf(&g->name, "%s", d->name) ||
		    !cfa_machine_setf(&g->chip, "%s", d->chip))
			return false;
		/* The loader checked it is a target: it fits. */
		if (!g->gfx[0])
			CFA_MACHINE_NAME(g->gfx, d->gfx);
	} else if (!g->name && !cfa_machine_setf(&g->name, "AMD GPU %04x:%04x (not in gpus.json)",
	                                         g->vendor, g->device)) {
		return false;
	}
	set_pci_id(g);
	t = g->gfx[0] ? cfapkg_gpu_target_find(ctx, g->gfx) : NULL;
	if (t) {
		if (!cfa_machine_setf(&g->generation, "%s", t->generation))
			return false;
		g->status = (int)t->status;
		g->integrated = t->apu;
	}
	return true;
}

/* A GPU whose KFD facts could not be read: what that means, once, with
 * the name gpus.json gives its PCI id. */
static bool warn_unread(struct cfapkg_machine *m, const struct cfapkg_gpu *g)
{
	return cfa_machine_warn(m, "GPU %u, %s (%s), could not be read: %s. It is listed from its "
	                        "PCI identity and %s%s%s; ROCm reads the same KFD facts and may not "
	                        "see it either. cfapkg plans for it only when no readable GPU is "
	                        "left", g->index, g->name, g->pci_id, g->problem,
	                        g->gfx[0] ? "its target " : "its target is unknown", g->gfx,
	                        g->gfx[0] ? " comes from gpus.json" : "");
}

/* Among the GPUs read in full, else those with a known target, else all:
 * the discrete one with the most memory, else the one with the most. */
static int choose(const struct cfapkg_machine *m)
{
	int best = -1, pass;
	size_t i;

	for (pass = 0; pass < 3 && best < 0; pass++)
		for (i = 0; i < m->ngpus; i++) {
			const struct cfapkg_gpu *g = &m->gpus[i], *b = best >= 0 ? &m->gpus[best] : NULL;
			if ((pass == 0 && g->problem) || (pass == 1 && !g->gfx[0]))
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
 * target the other GPU's kind is unknown, and the warning says as much.
 * False when out of memory. */
static bool check_choice(struct cfapkg_machine *m)
{
	const struct cfapkg_gpu *sel = &m->gpus[m->selected], *other;
	size_t i;

	if (!sel->integrated)
		return true;
	for (i = 0; i < m->ngpus && m->passed_over < 0; i++)
		if (!m->gpus[i].integrated)
			m->passed_over = (int)i;
	if (m->passed_over < 0)
		return true;
	other = &m->gpus[m->passed_over];
	return cfa_machine_warn(m, "GPU %u, %s, is integrated, yet it is the GPU chosen: %sGPU %u, "
	                        "%s, could not be read%s. Planning for GPU %u is probably not what "
	                        "you mean", sel->index, sel->name, other->gfx[0] ? "discrete " : "",
	                        other->index, other->name,
	                        other->gfx[0] ? "" : " and may be a discrete one", sel->index);
}

/* What the backend found, described from gpus.json, and
 * HSA_OVERRIDE_GFX_VERSION; false when out of memory. */
static bool finish(struct cfapkg_ctx *ctx, struct cfapkg_machine *m)
{
	const char *override = getenv("HSA_OVERRIDE_GFX_VERSION");
	size_t i;

	for (i = 0; i < m->ngpus; i++)
		if (!describe(ctx, &m->gpus[i]) ||
		    (m->gpus[i].problem && !warn_unread(m, &m->gpus[i])))
			return false;
	if (!override || !*override)
		return true;
	/* Only ROCm on Linux reads the variable; the Windows HIP runtime never does. */
	if (strcmp(m->os, "linux") != 0)
		return cfa_machine_warn(m, "HSA_OVERRIDE_GFX_VERSION=%s is ignored: only ROCm on "
		                        "Linux reads it", override);
	if (!cfa_gfx_from_override(override, m->gfx_override))
		return cfa_machine_warn(m, "HSA_OVERRIDE_GFX_VERSION=%s is not major.minor.stepping; "
		                        "ignored", override);
	return true;
}

/* Runs the backend for this OS, or the Linux one below CFAPKG_SYSROOT. */
static enum cfapkg_err run_backend(struct cfapkg_ctx *ctx, struct cfapkg_machine *m)
{
	const char *root = getenv("CFAPKG_SYSROOT");
	enum cfapkg_err e;
	size_t n;
	char *trimmed;

	if (!root || !*root)
		return strcmp(cfa_plat_os(), "windows") == 0 ? cfa_detect_windows(ctx, m)
		                                             : cfa_detect_sysfs(ctx, "", m);
	n = strlen(root);
	while (n > 1 && (root[n - 1] == '/' || root[n - 1] == '\\'))
		n--;
	if (!(trimmed = cfa_strndup(root, n)))
		return cfa_nomem(ctx);
	/* A sysroot holds a Linux machine, whatever runs cfapkg. */
	CFA_MACHINE_NAME(m->os, "linux");
	e = cfa_detect_sysfs(ctx, trimmed, m);
	cfa_free(trimmed);
	return e;
}

enum cfapkg_err cfapkg_detect(struct cfapkg_ctx *ctx, int gpu_index, struct cfapkg_machine *m)
{
	enum cfapkg_err e;

	cfapkg_machine_clear(m);
	m->selected = -1;
	m->passed_over = -1;
	CFA_MACHINE_NAME(m->os, cfa_plat_os());
	if (!cfa_machine_setf(&m->arch, "%s", cfa_plat_arch()))
		return cfa_nomem(ctx);
	if ((e = cfa_gpus_ensure(ctx)))
		return e; /* detail set by the loader: the GPU table is needed */
	if ((e = run_backend(ctx, m)))
		return e; /* detail set by the backend */
	if (!finish(ctx, m))
		return cfa_nomem(ctx);
	if (gpu_index >= 0) {
		if ((size_t)gpu_index >= m->ngpus)
			return cfa_fail(ctx, CFAPKG_E_NOTFOUND,
			                "GPU index %d was not found: this machine has %lu AMD GPU%s "
			                "(cfapkg detect lists them)",
			                gpu_index, (unsigned long)m->ngpus, m->ngpus == 1 ? "" : "s");
		m->selected = gpu_index;
	} else if ((m->selected = choose(m)) >= 0 && !check_choice(m)) {
		return cfa_nomem(ctx);
	}
	return CFAPKG_E_OK;
}

/* The GPU's target and the driver's version, as planning takes them. */
static bool gpu_and_driver(const struct cfapkg_machine *m, struct cfapkg_facts *f)
{
	const struct cfapkg_gpu *g = m->selected >= 0 ? &m->gpus[m->selected] : NULL;
	struct cfa_ver v;

	/* Both are names of the closed set of targets, as the fields are. */
	if (g)
		CFA_MACHINE_NAME(f->gfx, m->gfx_override[0] ? m->gfx_override : g->gfx);
	/* Only a driver version that compares (not "6.1.0-18-amd64"). */
	return !m->driver || !cfa_ver_parse(m->driver, strlen(m->driver), &v, NULL) ||
	       (f->driver = cfa_strdup(m->driver));
}

/* Every HIP runtime and SDK found, each list known (empty: none). */
static bool hip_lists(const struct cfapkg_machine *m, struct cfapkg_facts *f)
{
	size_t i;

	f->hip_runtimes_known = true;
	f->hip_sdks_known = true;
	if (m->nhip_runtimes &&
	    !(f->hip_runtimes = cfa_calloc(m->nhip_runtimes, sizeof(*f->hip_runtimes))))
		return false;
	for (i = 0; i < m->nhip_runtimes; i++)
		f->hip_runtimes[f->nhip_runtimes++] = m->hip_runtimes[i].major;
	if (m->nhip_sdks && !(f->hip_sdks = cfa_calloc(m->nhip_sdks, sizeof(*f->hip_sdks))))
		return false;
	for (i = 0; i < m->nhip_sdks; i++)
		if (!(f->hip_sdks[f->nhip_sdks++] = cfa_strdup(m->hip_sdks[i].version)))
			return false; /* counted: the NULL is freed with the rest */
	return true;
}

enum cfapkg_err cfapkg_machine_facts(const struct cfapkg_machine *m, struct cfapkg_facts *f)
{
	cfapkg_facts_clear(f);
	CFA_MACHINE_NAME(f->os, m->os);
	if ((!m->arch || (f->arch = cfa_strdup(m->arch))) &&
	    (!m->glibc || (f->glibc = cfa_strdup(m->glibc))) && gpu_and_driver(m, f) &&
	    hip_lists(m, f))
		return CFAPKG_E_OK;
	cfapkg_facts_clear(f);
	return CFAPKG_E_NOMEM;
}
