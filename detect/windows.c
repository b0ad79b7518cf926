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
#include <string.h>

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
	struct cfa_plat_adapter a[CFAPKG_MAX_GPUS];
	size_t n = cfa_plat_adapters(a, CFAPKG_MAX_GPUS), i;

	for (i = 0; i < n; i++) {
		struct cfapkg_gpu *g;
		if (a[i].vendor != 0x1002 || !(g = cfa_machine_add_gpu(m)))
			continue;
		g->vendor = 0x1002;
		g->device = (uint16_t)a[i].device;
		g->revision = (int)a[i].revision;
		g->vram_bytes = a[i].dedicated_memory;
		cfa_snprintf(g->name, sizeof(g->name), "%s", a[i].description);
		cfa_snprintf(g->source, sizeof(g->source), "dxgi");
	}
}

struct class_scan {
	struct cfapkg_machine *m;
	bool add_gpus;
};

static int display_key(const char *sub, void *arg)
{
	struct class_scan *cs = arg;
	struct cfapkg_machine *m = cs->m;
	char key[512], id[256], desc[256], dv[64], rsv[64];
	uint16_t ven, dev;
	int rev;

	cfa_snprintf(key, sizeof(key), "%s\\%s", DISPLAY_CLASS, sub);
	if (cfa_plat_reg_string(key, "MatchingDeviceId", id, sizeof(id)) != 0 ||
	    !cfa_parse_hwid(id, &ven, &dev, &rev) || ven != 0x1002)
		return 0;
	if (cs->add_gpus) {
		struct cfapkg_gpu *g = cfa_machine_add_gpu(m);
		if (g) {
			g->vendor = ven;
			g->device = dev;
			g->revision = rev;
			cfa_snprintf(g->source, sizeof(g->source), "registry");
			if (cfa_plat_reg_string(key, "DriverDesc", desc, sizeof(desc)) == 0)
				cfa_snprintf(g->name, sizeof(g->name), "%s", desc);
		}
	}
	if (m->driver[0])
		return 0;
	if (cfa_plat_reg_string(key, "DriverVersion", dv, sizeof(dv)) == 0)
		cfa_snprintf(m->driver_detail, sizeof(m->driver_detail), "DriverVersion %s", dv);
	else
		dv[0] = '\0';
	if (cfa_plat_reg_string(key, "RadeonSoftwareVersion", rsv, sizeof(rsv)) == 0) {
		cfa_snprintf(m->driver, sizeof(m->driver), "%s", rsv);
		cfa_snprintf(m->driver_source, sizeof(m->driver_source),
		             "registry RadeonSoftwareVersion");
	} else if (dv[0] && cfa_adrenalin_of(dv)) {
		cfa_snprintf(m->driver, sizeof(m->driver), "%s", cfa_adrenalin_of(dv));
		cfa_snprintf(m->driver_source, sizeof(m->driver_source), "DriverVersion table");
	}
	return 0;
}

static void from_registry(struct cfapkg_machine *m)
{
	struct class_scan cs = {m, m->ngpus == 0};
	char rsv[64];

	cfa_plat_reg_subkeys(DISPLAY_CLASS, display_key, &cs);
	if (!m->driver[0] &&
	    cfa_plat_reg_string("SOFTWARE\\AMD\\CN", "RadeonSoftwareVersion", rsv, sizeof(rsv)) == 0) {
		cfa_snprintf(m->driver, sizeof(m->driver), "%s", rsv);
		cfa_snprintf(m->driver_source, sizeof(m->driver_source), "registry AMD\\CN");
	}
}

static void hip_runtimes(struct cfapkg_machine *m)
{
	static const struct {
		const char *dll;
		unsigned major;
	} dlls[] = {{"amdhip64_7.dll", 7}, {"amdhip64_6.dll", 6}, {"amdhip64.dll", 5}};
	char sys[1024], path[1280], ver[64], label[1400];
	size_t i;

	if (cfa_plat_system_dir(sys, sizeof(sys)) != 0)
		return;
	for (i = 0; i < sizeof(dlls) / sizeof(dlls[0]); i++) {
		cfa_snprintf(path, sizeof(path), "%s\\%s", sys, dlls[i].dll);
		if (!cfa_plat_is_file(path))
			continue;
		if (cfa_plat_file_version(path, ver, sizeof(ver)) == 0)
			cfa_snprintf(label, sizeof(label), "%s (%s)", path, ver);
		else
			cfa_snprintf(label, sizeof(label), "%s", path);
		cfa_machine_add_runtime(m, dlls[i].major, label);
	}
}

/* The SDK's version is its folder's name ("6.4" under Program Files). */
static void add_sdk_dir(struct cfapkg_machine *m, const char *dir, const char *source)
{
	char leaf[128], bin[1200];
	const char *p = dir, *last = dir;
	size_t n;
	struct cfa_ver v;

	for (; *p; p++)
		if ((*p == '\\' || *p == '/') && p[1])
			last = p + 1;
	n = strcspn(last, "\\/");
	cfa_snprintf(leaf, sizeof(leaf), "%.*s", (int)n, last);
	cfa_snprintf(bin, sizeof(bin), "%s\\bin", dir);
	if (!cfa_plat_is_dir(bin)) {
		cfa_machine_warn(m, "%s (%s) has no bin folder; not counted as a HIP SDK", dir, source);
		return;
	}
	if (!cfa_ver_parse(leaf, strlen(leaf), &v, NULL)) {
		cfa_machine_warn(m, "HIP SDK at %s: cannot tell its version from the folder name", dir);
		return;
	}
	cfa_machine_add_sdk(m, leaf, dir, source);
}

struct rocm_scan {
	struct cfapkg_machine *m;
	const char *base;
};

static int rocm_entry(const char *name, void *arg)
{
	struct rocm_scan *rs = arg;
	char dir[1024];

	cfa_snprintf(dir, sizeof(dir), "%s\\%s", rs->base, name);
	if (cfa_plat_is_dir(dir))
		add_sdk_dir(rs->m, dir, "Program Files");
	return 0;
}

static void hip_sdks(struct cfapkg_machine *m)
{
	char buf[1024], base[1100], name[32];
	struct rocm_scan rs = {m, base};
	unsigned major, minor;

	if (cfa_plat_getenv("HIP_PATH", buf, sizeof(buf))) {
		size_t n = strlen(buf);
		while (n > 3 && (buf[n - 1] == '\\' || buf[n - 1] == '/'))
			buf[--n] = '\0'; /* the installer leaves a trailing backslash */
		add_sdk_dir(m, buf, "HIP_PATH");
	}
	for (major = 5; major <= 9; major++)
		for (minor = 0; minor <= 9; minor++) {
			cfa_snprintf(name, sizeof(name), "HIP_PATH_%u%u", major, minor);
			if (cfa_plat_getenv(name, buf, sizeof(buf))) {
				size_t n = strlen(buf);
				while (n > 3 && (buf[n - 1] == '\\' || buf[n - 1] == '/'))
					buf[--n] = '\0';
				add_sdk_dir(m, buf, name);
			}
		}
	if (cfa_plat_getenv("ProgramFiles", buf, sizeof(buf)) &&
	    cfa_snprintf(base, sizeof(base), "%s\\AMD\\ROCm", buf))
		cfa_plat_list_dir(base, rocm_entry, &rs);
}

/* hipInfo.exe of the newest SDK that has one names each device's target. */
static void run_hipinfo(struct cfapkg_machine *m)
{
	static char out[65536];
	struct cfa_hipinfo_device devs[CFAPKG_MAX_GPUS];
	char exe[1200];
	const char *argv[2];
	size_t n, i;
	int status = 0, rc;
	unsigned s;

	for (s = 0; s < m->nhip_sdks; s++) {
		cfa_snprintf(exe, sizeof(exe), "%s\\bin\\hipInfo.exe", m->hip_sdks[s].path);
		if (cfa_plat_is_file(exe))
			break;
	}
	if (s == m->nhip_sdks)
		return;
	argv[0] = exe;
	argv[1] = NULL;
	rc = cfa_plat_run_capture(argv, HIPINFO_TIMEOUT_MS, out, sizeof(out), &status);
	if (rc) {
		cfa_machine_warn(m, "%s: %s", exe,
		                 rc == ETIMEDOUT ? "timed out" : cfa_plat_strerror(rc));
		return;
	}
	n = cfa_hipinfo_parse(out, devs, CFAPKG_MAX_GPUS);
	if (n == 0)
		cfa_machine_warn(m, "%s exited %d and listed no device", exe, status);
	for (i = 0; i < n; i++) {
		struct cfapkg_gpu *g = i < m->ngpus ? &m->gpus[i] : cfa_machine_add_gpu(m);
		if (!g)
			break;
		if (!g->name[0])
			cfa_snprintf(g->name, sizeof(g->name), "%s", devs[i].name);
		if (!g->vram_bytes)
			g->vram_bytes = devs[i].memory;
		if (devs[i].gfx[0]) {
			cfa_snprintf(g->gfx, sizeof(g->gfx), "%s", devs[i].gfx);
			cfa_snprintf(g->source, sizeof(g->source), "hipinfo");
		}
	}
}

enum cfapkg_err cfa_detect_windows(struct cfapkg_ctx *ctx, struct cfapkg_machine *m)
{
	(void)ctx;
	cfa_plat_os_build(m->os_build, sizeof(m->os_build));
	from_adapters(m);
	from_registry(m);
	hip_runtimes(m);
	hip_sdks(m);
	run_hipinfo(m);
	return CFAPKG_E_OK;
}
