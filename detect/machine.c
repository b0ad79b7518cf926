/*
 * machine.c - filling in what a backend found (sysfs.c on Linux,
 * windows.c on Windows): warnings, text fields, GPUs, HIP runtimes and
 * SDKs, each bounded by the public struct's room and said when it does not
 * fit, and gfx names from the driver's and HSA's version numbers.
 */
#include <stdarg.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/version.h"
#include "detect/detect.h"

/* How many entries a fixed array of the public struct holds. */
#define MACHINE_SLOTS(arr) (sizeof(arr) / sizeof((arr)[0]))

void cfa_machine_warn(struct cfapkg_machine *m, const char *fmt, ...)
{
	va_list ap;

	if (m->nwarnings == CFAPKG_MAX_WARNINGS)
		return;
	/* The last slot says that more went unsaid, rather than dropping it silently. */
	if (m->nwarnings == CFAPKG_MAX_WARNINGS - 1) {
		cfa_fit_text(m->warnings[m->nwarnings++], sizeof(m->warnings[0]),
		             "more warnings were left out");
		return;
	}
	va_start(ap, fmt);
	cfa_vfit_text(m->warnings[m->nwarnings++], sizeof(m->warnings[0]), fmt, ap);
	va_end(ap);
}

bool cfa_machine_set(struct cfapkg_machine *m, char *dst, size_t len, const char *what,
                     const char *value)
{
	if (cfa_snprintf(dst, len, "%s", value))
		return true;
	dst[0] = '\0';
	cfa_machine_warn(m, "%s \"%s\" is longer than %lu bytes; left out", what, value,
	                 (unsigned long)(len - 1));
	return false;
}

struct cfapkg_gpu *cfa_machine_add_gpu(struct cfapkg_machine *m)
{
	struct cfapkg_gpu *g;

	if (m->ngpus == CFAPKG_MAX_GPUS) {
		cfa_machine_warn(m, "more than %d GPUs; the rest are not listed", CFAPKG_MAX_GPUS);
		return NULL;
	}
	g = &m->gpus[m->ngpus];
	memset(g, 0, sizeof(*g));
	g->index = m->ngpus++;
	g->revision = -1;
	g->status = -1;
	return g;
}

void cfa_machine_add_runtime(struct cfapkg_machine *m, unsigned major, const char *file)
{
	unsigned i;

	for (i = 0; i < m->nhip_runtimes; i++)
		if (m->hip_runtimes[i] == major)
			return;
	if (m->nhip_runtimes == MACHINE_SLOTS(m->hip_runtimes)) {
		cfa_machine_warn(m, "HIP runtime %u (%s) is not listed: more than %lu runtimes", major,
		                 file, (unsigned long)MACHINE_SLOTS(m->hip_runtimes));
		return;
	}
	/* The major is the fact that counts; a file name too long to keep is
	 * left out whole (with a warning), not shown cut. */
	m->hip_runtimes[m->nhip_runtimes] = major;
	cfa_machine_set(m, m->hip_runtime_files[m->nhip_runtimes++], sizeof(m->hip_runtime_files[0]),
	                "HIP runtime file", file);
}

void cfa_machine_add_sdk(struct cfapkg_machine *m, const char *version, const char *path,
                         const char *source)
{
	struct cfapkg_hip_sdk *s;
	unsigned i;

	for (i = 0; i < m->nhip_sdks; i++)
		if (strcmp(m->hip_sdks[i].version, version) == 0)
			return;
	if (m->nhip_sdks == MACHINE_SLOTS(m->hip_sdks)) {
		cfa_machine_warn(m, "HIP SDK %s at %s is not listed: more than %lu SDKs", version, path,
		                 (unsigned long)MACHINE_SLOTS(m->hip_sdks));
		return;
	}
	/* Programs are pointed at the SDK's folder: one that does not fit is
	 * not listed at all rather than listed cut. */
	s = &m->hip_sdks[m->nhip_sdks];
	if (!cfa_snprintf(s->version, sizeof(s->version), "%s", version) ||
	    !cfa_snprintf(s->path, sizeof(s->path), "%s", path)) {
		cfa_machine_warn(m, "HIP SDK %s at %s is not listed: its version or folder is longer "
		                 "than cfapkg can record (%lu and %lu bytes)", version, path,
		                 (unsigned long)sizeof(s->version) - 1, (unsigned long)sizeof(s->path) - 1);
		memset(s, 0, sizeof(*s));
		return;
	}
	cfa_fit_text(s->source, sizeof(s->source), "%s", source);
	m->nhip_sdks++;
}

bool cfa_gfx_from_kfd(unsigned long v, char out[16])
{
	unsigned long major = v / 10000 % 100, minor = v / 100 % 100, step = v % 100;

	if (v == 0 || minor > 15 || step > 15)
		return false;
	return cfa_snprintf(out, 16, "gfx%lu%lx%lx", major, minor, step);
}

bool cfa_gfx_from_override(const char *s, char out[16])
{
	struct cfa_ver v;

	if (!cfa_ver_parse(s, strlen(s), &v, NULL) || v.nrel != 3 || v.rank != CFA_RANK_FINAL ||
	    v.labellen || v.epoch || v.revlen || v.rel[0] > 63)
		return false;
	return cfa_gfx_from_kfd(v.rel[0] * 10000ul + v.rel[1] * 100ul + v.rel[2], out);
}
