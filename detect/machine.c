/*
 * machine.c - filling in what a backend found (sysfs.c on Linux,
 * windows.c on Windows): warnings, text fields, GPUs, HIP runtimes and
 * SDKs, each held whole (text allocated, lists grown as they fill), and
 * freeing it all; and gfx names from the driver's and HSA's version
 * numbers.
 */
#include <stdarg.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "detect/detect.h"

bool cfa_machine_vwarn(struct cfapkg_machine *m, const char *fmt, va_list ap)
{
	char *text = cfa_vaprintf(fmt, ap);

	if (!text || cfa_grow_one((void **)&m->warnings, m->nwarnings, sizeof(*m->warnings))) {
		cfa_free(text);
		return false;
	}
	m->warnings[m->nwarnings++] = text;
	return true;
}

bool cfa_machine_warn(struct cfapkg_machine *m, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = cfa_machine_vwarn(m, fmt, ap);
	va_end(ap);
	return ok;
}

bool cfa_machine_setf(char **dst, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = cfa_vaprintf(fmt, ap);
	va_end(ap);
	if (!text)
		return false;
	cfa_free(*dst);
	*dst = text;
	return true;
}

void cfa_machine_name(char *dst, size_t len, const char *name)
{
	/* Every name of the set fits its field; one that did not would be a
	 * mistake here, and is left out rather than shown cut. */
	if (!cfa_snprintf(dst, len, "%s", name))
		dst[0] = '\0';
}

/* Revision and status start at -1 rather than 0, which is a real PCI
 * revision and CFAPKG_STATUS_VALIDATED: a fact not found must not read
 * as either. */
struct cfapkg_gpu *cfa_machine_add_gpu(struct cfapkg_machine *m)
{
	struct cfapkg_gpu *g;

	if (cfa_grow_one((void **)&m->gpus, m->ngpus, sizeof(*m->gpus)))
		return NULL;
	g = &m->gpus[m->ngpus];
	memset(g, 0, sizeof(*g));
	g->index = (unsigned)m->ngpus++;
	g->revision = -1;
	g->status = -1;
	return g;
}

bool cfa_machine_add_runtime(struct cfapkg_machine *m, unsigned major, const char *file)
{
	struct cfapkg_hip_runtime *r;
	size_t i;

	/* One major shows in several folders (/opt/rocm-X/lib, /usr/lib, an
	 * LD_LIBRARY_PATH entry): the first file found names it. */
	for (i = 0; i < m->nhip_runtimes; i++)
		if (m->hip_runtimes[i].major == major)
			return true;
	if (cfa_grow_one((void **)&m->hip_runtimes, m->nhip_runtimes, sizeof(*m->hip_runtimes)))
		return false;
	r = &m->hip_runtimes[m->nhip_runtimes];
	if (!(r->file = cfa_strdup(file)))
		return false;
	r->major = major;
	m->nhip_runtimes++;
	return true;
}

bool cfa_machine_add_sdk(struct cfapkg_machine *m, const char *version, const char *path,
                         const char *source)
{
	struct cfapkg_hip_sdk *s;
	size_t i;

	/* /opt/rocm is most often a link to /opt/rocm-X.Y.Z, and HIP_PATH names
	 * the same folder as one HIP_PATH_xx: one SDK per version. */
	for (i = 0; i < m->nhip_sdks; i++)
		if (strcmp(m->hip_sdks[i].version, version) == 0)
			return true;
	if (cfa_grow_one((void **)&m->hip_sdks, m->nhip_sdks, sizeof(*m->hip_sdks)))
		return false;
	s = &m->hip_sdks[m->nhip_sdks];
	memset(s, 0, sizeof(*s));
	s->version = cfa_strdup(version);
	s->path = cfa_strdup(path);
	/* The count is raised only for a whole entry, so clearing the machine
	 * never frees a half-made one. */
	if (!s->version || !s->path) {
		cfa_free(s->version);
		cfa_free(s->path);
		return false;
	}
	CFA_MACHINE_NAME(s->source, source);
	m->nhip_sdks++;
	return true;
}

static void gpu_clear(struct cfapkg_gpu *g)
{
	cfa_free(g->name);
	cfa_free(g->generation);
	cfa_free(g->chip);
	cfa_free(g->problem);
}

/* Safe on a machine left half-filled by running out of memory: a counted
 * entry holds NULL in any text not yet set, and a list keeps its array
 * when it could not grow.  The result is zeroed, an empty machine, so
 * clearing twice (cfapkg_detect clears before it fills) is harmless. */
void cfapkg_machine_clear(struct cfapkg_machine *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->ngpus; i++)
		gpu_clear(&m->gpus[i]);
	for (i = 0; i < m->nhip_runtimes; i++)
		cfa_free(m->hip_runtimes[i].file);
	for (i = 0; i < m->nhip_sdks; i++) {
		cfa_free(m->hip_sdks[i].version);
		cfa_free(m->hip_sdks[i].path);
	}
	for (i = 0; i < m->nwarnings; i++)
		cfa_free(m->warnings[i]);
	cfa_free(m->gpus);
	cfa_free(m->hip_runtimes);
	cfa_free(m->hip_sdks);
	cfa_free(m->warnings);
	cfa_free(m->arch);
	cfa_free(m->os_build);
	cfa_free(m->driver);
	cfa_free(m->driver_source);
	cfa_free(m->driver_detail);
	cfa_free(m->glibc);
	cfa_free(m->glibc_source);
	memset(m, 0, sizeof(*m));
}

/* The minor and stepping are one hex digit each in the name (90010 ->
 * gfx90a), so either above 15 has no name; 0 is what KFD gives a node
 * without a compute target. */
bool cfa_gfx_from_kfd(unsigned long v, char out[16])
{
	unsigned long major = v / 10000 % 100, minor = v / 100 % 100, step = v % 100;

	if (v == 0 || minor > 15 || step > 15)
		return false;
	return cfa_snprintf(out, 16, "gfx%lu%lx%lx", major, minor, step);
}

/* ROCm reads the variable as exactly three plain numbers: an epoch, a
 * label or a revision, which cfa_ver's grammar would take, is refused. */
bool cfa_gfx_from_override(const char *s, char out[16])
{
	struct cfa_ver v;

	/* Minor and stepping are one hex digit each of the target's name
	 * (9.0.10 is gfx90a): a larger one would spill into the field beside
	 * it once packed as KFD packs them (9.0.110 would read as gfx91a). */
	if (!cfa_ver_parse(s, strlen(s), &v, NULL) || v.nrel != 3 || v.rank != CFA_RANK_FINAL ||
	    v.labellen || v.epoch || v.revlen || v.rel[0] > 63 || v.rel[1] > 15 || v.rel[2] > 15)
		return false;
	return cfa_gfx_from_kfd(v.rel[0] * 10000ul + v.rel[1] * 100ul + v.rel[2], out);
}
