/*
 * windows.c - the Windows detection backend, in portable C over the
 * platform's Windows queries (which answer "not here" elsewhere, so this
 * file builds everywhere and its parsers are tested everywhere).
 *
 * Sources, in order:
 *   GPUs         DXGI adapters of vendor 0x1002; else the display driver's
 *                registry keys (MatchingDeviceId);
 *   gfx target   hipInfo.exe's gcnArchName when an SDK has it, else the
 *                GPU table;
 *   driver       RadeonSoftwareVersion (the Adrenalin release), else the
 *                driver's DriverVersion mapped through a table of known
 *                releases;
 *   HIP runtime  amdhip64_6.dll / amdhip64_7.dll (amdhip64.dll: HIP 5) in
 *                System32;
 *   HIP SDKs     HIP_PATH, HIP_PATH_xx, %ProgramFiles%\AMD\ROCm\<version>.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "detect/detect.h"
#include "platform/platform.h"

#define DISPLAY_CLASS \
	"SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}"
#define HIPINFO_TIMEOUT_MS 15000

/* Windows display driver versions of known Adrenalin releases (AMD
 * publishes no formula; the registry's RadeonSoftwareVersion wins). */
static const struct {
	const char *driver, *adrenalin;
} releases[] = {
	{"32.0.21025.15011", "25.9.2"}, {"32.0.21025.10016", "25.9.1"},
	{"32.0.21025.1024", "25.8.1"},  {"32.0.21013.9005", "25.6.3"},
	{"32.0.21013.4013", "25.6.2"},  {"32.0.21013.1000", "25.6.1"},
	{"32.0.21001.9024", "25.5.1"},  {"32.0.13031.8021", "25.4.1"},
	{"32.0.13031.4034", "25.3.2"},  {"32.0.13031.3015", "25.3.1"},
	{"32.0.12033.5029", "25.2.1"},  {"32.0.12033.5010", "25.1.1"},
	{"32.0.12033.1030", "24.12.1"}, {"32.0.12019.1028", "24.10.1"},
	{"32.0.12011.1036", "24.9.1"},
};

const char *cfa_adrenalin_of(const char *driver_version)
{
	size_t i;

	for (i = 0; i < sizeof(releases) / sizeof(releases[0]); i++)
		if (strcmp(releases[i].driver, driver_version) == 0)
			return releases[i].adrenalin;
	return NULL;
}

/* The hex number after key ("VEN_") in a hardware id. */
static bool hwid_field(const char *id, const char *key, size_t digits, uint64_t *out)
{
	const char *p = id;
	size_t klen = strlen(key);

	for (; *p; p++) {
		size_t k;
		for (k = 0; k < klen && p[k]; k++)
			if ((p[k] & ~0x20) != (key[k] & ~0x20) && p[k] != key[k])
				break;
		if (k == klen)
			return cfa_parse_hex(p + klen, digits, UINT64_MAX, out);
	}
	return false;
}

/* "PCI\VEN_1002&DEV_744C&SUBSYS_0E3A1002&REV_C8" */
bool cfa_parse_hwid(const char *id, uint16_t *vendor, uint16_t *device, int *revision)
{
	uint64_t v, d, r;

	if (!hwid_field(id, "VEN_", 4, &v) || !hwid_field(id, "DEV_", 4, &d))
		return false;
	*vendor = (uint16_t)v;
	*device = (uint16_t)d;
	*revision = hwid_field(id, "REV_", 2, &r) ? (int)r : -1;
	return true;
}

static void from_adapters(struct cfapkg_machine *m)
{
	/* Room for other vendors' adapters too, and one AMD GPU too many (so
	 * that it is said); a full list says that it may not be all. */
	struct cfa_plat_adapter a[4 * CFAPKG_MAX_GPUS];
	size_t n = cfa_plat_adapters(a, sizeof(a) / sizeof(a[0])), i;

	if (n == sizeof(a) / sizeof(a[0]))
		cfa_machine_warn(m, "DXGI lists %lu display adapters or more: those past them are not "
		                 "read", (unsigned long)n);

	for (i = 0; i < n; i++) {
		struct cfapkg_gpu *g;
		if (a[i].vendor != 0x1002 || !(g = cfa_machine_add_gpu(m)))
			continue;
		g->vendor = 0x1002;
		g->device = (uint16_t)a[i].device;
		g->revision = (int)a[i].revision;
		g->vram_bytes = a[i].dedicated_memory;
		cfa_fit_text(g->name, sizeof(g->name), "%s", a[i].description);
		cfa_fit_text(g->source, sizeof(g->source), "dxgi");
	}
}

/* What a pass over the registry's display keys needs; out of memory is
 * sticky and ends detection in CFAPKG_E_NOMEM. */
struct class_scan {
	struct cfapkg_machine *m;
	bool add_gpus;
	bool nomem;
};

/* A registry string (allocated, cfa_free), or NULL when it is not there. */
static char *reg_value(bool *nomem, const char *key, const char *value)
{
	char *raw = NULL, *copy;
	int rc = cfa_plat_reg_string(key, value, &raw);

	*nomem |= rc == ENOMEM;
	if (rc)
		return NULL;
	/* The platform allocates with the C library: take it into ours. */
	copy = cfa_strdup(raw);
	free(raw);
	*nomem |= !copy;
	return copy;
}

static void driver_from_key(struct class_scan *cs, const char *key)
{
	struct cfapkg_machine *m = cs->m;
	char *dv = reg_value(&cs->nomem, key, "DriverVersion");
	char *rsv = reg_value(&cs->nomem, key, "RadeonSoftwareVersion");

	if (dv)
		cfa_fit_text(m->driver_detail, sizeof(m->driver_detail), "DriverVersion %s", dv);
	if (rsv && cfa_machine_set(m, m->driver, sizeof(m->driver), "RadeonSoftwareVersion", rsv))
		cfa_fit_text(m->driver_source, sizeof(m->driver_source),
		             "registry RadeonSoftwareVersion");
	else if (!rsv && dv && cfa_adrenalin_of(dv) &&
	         cfa_machine_set(m, m->driver, sizeof(m->driver), "Adrenalin release",
	                         cfa_adrenalin_of(dv)))
		cfa_fit_text(m->driver_source, sizeof(m->driver_source), "DriverVersion table");
	cfa_free(dv);
	cfa_free(rsv);
}

static void gpu_from_key(struct class_scan *cs, const char *key, uint16_t ven, uint16_t dev,
                         int rev)
{
	struct cfapkg_gpu *g = cfa_machine_add_gpu(cs->m);
	char *desc;

	if (!g)
		return;
	g->vendor = ven;
	g->device = dev;
	g->revision = rev;
	cfa_fit_text(g->source, sizeof(g->source), "registry");
	if ((desc = reg_value(&cs->nomem, key, "DriverDesc")))
		cfa_fit_text(g->name, sizeof(g->name), "%s", desc);
	cfa_free(desc);
}

static int display_key(const char *sub, void *arg)
{
	struct class_scan *cs = arg;
	char *key = cfa_aprintf("%s\\%s", DISPLAY_CLASS, sub), *id;
	uint16_t ven, dev;
	int rev;

	if (!key) {
		cs->nomem = true;
		return ENOMEM;
	}
	id = reg_value(&cs->nomem, key, "MatchingDeviceId");
	if (id && cfa_parse_hwid(id, &ven, &dev, &rev) && ven == 0x1002) {
		if (cs->add_gpus)
			gpu_from_key(cs, key, ven, dev, rev);
		if (!cs->m->driver[0])
			driver_from_key(cs, key);
	}
	cfa_free(id);
	cfa_free(key);
	return cs->nomem ? ENOMEM : 0;
}

static bool from_registry(struct cfapkg_machine *m)
{
	struct class_scan cs = {m, m->ngpus == 0, false};
	char *rsv;

	cfa_plat_reg_subkeys(DISPLAY_CLASS, display_key, &cs);
	if (!m->driver[0] &&
	    (rsv = reg_value(&cs.nomem, "SOFTWARE\\AMD\\CN", "RadeonSoftwareVersion"))) {
		if (cfa_machine_set(m, m->driver, sizeof(m->driver), "RadeonSoftwareVersion", rsv))
			cfa_fit_text(m->driver_source, sizeof(m->driver_source), "registry AMD\\CN");
		cfa_free(rsv);
	}
	return !cs.nomem;
}

/* A platform string (given as raw when rc is 0) taken into the library's
 * allocator; NULL when the platform had none or when out of memory
 * (*nomem).  Called after the platform call, never in its argument list:
 * raw is only set once that call has run. */
static char *adopt(int rc, char *raw, bool *nomem)
{
	char *copy = rc ? NULL : cfa_strdup(raw);

	*nomem |= rc == ENOMEM || (!rc && !copy);
	if (!rc)
		free(raw); /* the platform allocates with the C library */
	return copy;
}

static bool hip_runtimes(struct cfapkg_machine *m)
{
	static const struct {
		const char *dll;
		unsigned major;
	} dlls[] = {{"amdhip64_7.dll", 7}, {"amdhip64_6.dll", 6}, {"amdhip64.dll", 5}};
	char *raw = NULL, *sys, ver[64];
	bool nomem = false;
	size_t i;
	int rc = cfa_plat_system_dir(&raw);

	sys = adopt(rc, raw, &nomem);
	for (i = 0; sys && !nomem && i < sizeof(dlls) / sizeof(dlls[0]); i++) {
		char *path = cfa_aprintf("%s\\%s", sys, dlls[i].dll), *label;
		if (!path) {
			nomem = true;
		} else if (cfa_plat_is_file(path)) {
			/* A version is four 16-bit numbers: it fits, or is left out. */
			label = cfa_plat_file_version(path, ver, sizeof(ver)) == 0
			        ? cfa_aprintf("%s (%s)", path, ver) : cfa_strdup(path);
			if (label)
				cfa_machine_add_runtime(m, dlls[i].major, label);
			nomem = !label;
			cfa_free(label);
		}
		cfa_free(path);
	}
	cfa_free(sys);
	return !nomem;
}

/* The SDK's version is its folder's name ("6.4" under Program Files). */
static bool add_sdk_dir(struct cfapkg_machine *m, const char *dir, const char *source)
{
	const char *p = dir, *last = dir;
	char *leaf, *bin;
	struct cfa_ver v;
	bool ok;

	for (; *p; p++)
		if ((*p == '\\' || *p == '/') && p[1])
			last = p + 1;
	leaf = cfa_strndup(last, strcspn(last, "\\/"));
	bin = cfa_aprintf("%s\\bin", dir);
	if ((ok = leaf && bin)) {
		if (!cfa_plat_is_dir(bin))
			cfa_machine_warn(m, "%s (%s) has no bin folder; not counted as a HIP SDK", dir,
			                 source);
		else if (!cfa_ver_parse(leaf, strlen(leaf), &v, NULL))
			cfa_machine_warn(m, "HIP SDK at %s: cannot tell its version from the folder name",
			                 dir);
		else
			cfa_machine_add_sdk(m, leaf, dir, source);
	}
	cfa_free(leaf);
	cfa_free(bin);
	return ok;
}

struct rocm_scan {
	struct cfapkg_machine *m;
	const char *base;
	bool nomem;
};

static int rocm_entry(const char *name, void *arg)
{
	struct rocm_scan *rs = arg;
	char *dir = cfa_aprintf("%s\\%s", rs->base, name);

	if (!dir || (cfa_plat_is_dir(dir) && !add_sdk_dir(rs->m, dir, "Program Files")))
		rs->nomem = true;
	cfa_free(dir);
	return rs->nomem ? ENOMEM : 0;
}

/* An SDK folder named by an environment variable (HIP_PATH, HIP_PATH_64). */
static bool sdk_from_env(struct cfapkg_machine *m, const char *name)
{
	char *raw = NULL, *dir;
	bool nomem = false;
	size_t n;
	int rc = cfa_plat_getenv_dup(name, &raw);

	if (!(dir = adopt(rc, raw, &nomem)))
		return !nomem;
	n = strlen(dir);
	while (n > 3 && (dir[n - 1] == '\\' || dir[n - 1] == '/'))
		dir[--n] = '\0'; /* the installer leaves a trailing backslash */
	nomem = !add_sdk_dir(m, dir, name);
	cfa_free(dir);
	return !nomem;
}

static bool hip_sdks(struct cfapkg_machine *m)
{
	struct rocm_scan rs = {m, NULL, false};
	char name[32], *raw = NULL, *pf, *base = NULL;
	unsigned major, minor;
	bool ok = sdk_from_env(m, "HIP_PATH");
	int rc;

	for (major = 5; major <= 9 && ok; major++)
		for (minor = 0; minor <= 9 && ok; minor++)
			if (cfa_snprintf(name, sizeof(name), "HIP_PATH_%u%u", major, minor))
				ok = sdk_from_env(m, name); /* two digits: the name always fits */
	rc = cfa_plat_getenv_dup("ProgramFiles", &raw);
	pf = adopt(rc, raw, &rs.nomem);
	if (ok && pf && !(rs.base = base = cfa_aprintf("%s\\AMD\\ROCm", pf)))
		rs.nomem = true;
	if (base)
		cfa_plat_list_dir(base, rocm_entry, &rs);
	cfa_free(base);
	cfa_free(pf);
	return ok && !rs.nomem;
}

/* hipInfo.exe of the newest SDK that has one names each device's target. */
static bool run_hipinfo(struct cfapkg_machine *m)
{
	/* hipInfo prints a few lines per device: 64 KiB is far more than any
	 * machine's listing (the platform keeps at most this much). */
	static char out[65536];
	struct cfa_hipinfo_device devs[CFAPKG_MAX_GPUS + 1]; /* one too many is said */
	char *exe = NULL;
	const char *argv[2];
	size_t n, i;
	int status = 0, rc;
	unsigned s;

	for (s = 0; s < m->nhip_sdks; s++) {
		cfa_free(exe);
		if (!(exe = cfa_aprintf("%s\\bin\\hipInfo.exe", m->hip_sdks[s].path)))
			return false;
		if (cfa_plat_is_file(exe))
			break;
	}
	if (s == m->nhip_sdks) {
		cfa_free(exe);
		return true;
	}
	argv[0] = exe;
	argv[1] = NULL;
	rc = cfa_plat_run_capture(argv, HIPINFO_TIMEOUT_MS, out, sizeof(out), &status);
	n = rc ? 0 : cfa_hipinfo_parse(out, devs, CFAPKG_MAX_GPUS + 1);
	if (rc)
		cfa_machine_warn(m, "%s: %s", exe, rc == ETIMEDOUT ? "timed out" : cfa_plat_strerror(rc));
	else if (n == 0)
		cfa_machine_warn(m, "%s exited %d and listed no device", exe, status);
	if (!rc && strlen(out) == sizeof(out) - 1)
		cfa_machine_warn(m, "%s printed more than %lu bytes; devices listed past that are "
		                 "not read", exe, (unsigned long)sizeof(out) - 1);
	for (i = 0; i < n; i++) {
		struct cfapkg_gpu *g = i < m->ngpus ? &m->gpus[i] : cfa_machine_add_gpu(m);
		if (!g)
			break;
		if (!g->name[0])
			cfa_fit_text(g->name, sizeof(g->name), "%s", devs[i].name);
		if (!g->vram_bytes)
			g->vram_bytes = devs[i].memory;
		if (devs[i].gfx[0]) {
			memcpy(g->gfx, devs[i].gfx, sizeof(g->gfx)); /* the same size */
			cfa_fit_text(g->source, sizeof(g->source), "hipinfo");
		}
	}
	cfa_free(exe);
	return true;
}

enum cfapkg_err cfa_detect_windows(struct cfapkg_ctx *ctx, struct cfapkg_machine *m)
{
	cfa_plat_os_build(m->os_build, sizeof(m->os_build));
	from_adapters(m);
	if (!from_registry(m) || !hip_runtimes(m) || !hip_sdks(m) || !run_hipinfo(m))
		return cfa_nomem(ctx);
	return CFAPKG_E_OK;
}
