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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "detect/detect.h"
#include "platform/platform.h"

/* The Display adapters device setup class: a numbered subkey (0000,
 * 0001, ...) per installed display driver instance, each with its
 * MatchingDeviceId, DriverDesc and DriverVersion. */
#define DISPLAY_CLASS \
	"SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}"
/* hipInfo starts the HIP runtime, which can take seconds on a cold
 * driver; a hung driver must not hang detection. */
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

	/* Matched without regard to case: MatchingDeviceId is often written in
	 * lower case ("pci\ven_1002&dev_744c"). */
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
	/* MatchingDeviceId is the id the driver's INF matched, often without
	 * REV_: the revision is then unknown. */
	*revision = hwid_field(id, "REV_", 2, &r) ? (int)r : -1;
	return true;
}

/* Every display adapter DXGI lists (the platform fills at most the room
 * given, so a full list is asked for again with twice the room); NULL
 * when out of memory. */
static struct cfa_plat_adapter *all_adapters(size_t *n)
{
	struct cfa_plat_adapter *a = NULL, *bigger;
	size_t room = 8;

	for (;;) {
		if (room > SIZE_MAX / 2 / sizeof(*a) ||
		    !(bigger = cfa_realloc(a, room * sizeof(*a)))) {
			cfa_free(a);
			return NULL;
		}
		a = bigger;
		if ((*n = cfa_plat_adapters(a, room)) < room)
			return a;
		room *= 2;
	}
}

static bool from_adapters(struct cfapkg_machine *m)
{
	size_t n, i;
	struct cfa_plat_adapter *a = all_adapters(&n);
	bool ok = a != NULL;

	for (i = 0; ok && i < n; i++) {
		struct cfapkg_gpu *g;
		/* DXGI also lists other vendors' adapters and the Microsoft Basic
		 * Render Driver (0x1414); only AMD's are GPUs here. */
		if (a[i].vendor != 0x1002)
			continue;
		if (!(g = cfa_machine_add_gpu(m)) ||
		    !cfa_machine_setf(&g->name, "%s", a[i].description)) {
			ok = false;
			break;
		}
		g->vendor = 0x1002;
		g->device = (uint16_t)a[i].device;
		g->revision = (int)a[i].revision;
		g->vram_bytes = a[i].dedicated_memory;
		CFA_MACHINE_NAME(g->source, "dxgi");
	}
	cfa_free(a);
	return ok;
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

/* The driver's version, its source and its DriverVersion, from one
 * display key. */
static void driver_from_key(struct class_scan *cs, const char *key)
{
	struct cfapkg_machine *m = cs->m;
	char *dv = reg_value(&cs->nomem, key, "DriverVersion");
	char *rsv = reg_value(&cs->nomem, key, "RadeonSoftwareVersion");
	const char *adrenalin = dv ? cfa_adrenalin_of(dv) : NULL;
	bool ok = true;

	if (dv)
		ok = cfa_machine_setf(&m->driver_detail, "DriverVersion %s", dv);
	if (ok && rsv)
		ok = cfa_machine_setf(&m->driver, "%s", rsv) &&
		     cfa_machine_setf(&m->driver_source, "registry RadeonSoftwareVersion");
	else if (ok && adrenalin)
		ok = cfa_machine_setf(&m->driver, "%s", adrenalin) &&
		     cfa_machine_setf(&m->driver_source, "DriverVersion table");
	cs->nomem |= !ok;
	cfa_free(dv);
	cfa_free(rsv);
}

static void gpu_from_key(struct class_scan *cs, const char *key, uint16_t ven, uint16_t dev,
                         int rev)
{
	struct cfapkg_gpu *g = cfa_machine_add_gpu(cs->m);
	char *desc;

	if (!g) {
		cs->nomem = true;
		return;
	}
	g->vendor = ven;
	g->device = dev;
	g->revision = rev;
	CFA_MACHINE_NAME(g->source, "registry");
	if ((desc = reg_value(&cs->nomem, key, "DriverDesc")))
		cs->nomem |= !cfa_machine_setf(&g->name, "%s", desc);
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
	/* Keys without a MatchingDeviceId (the class's Properties key) and
	 * other vendors' adapters are passed over. */
	if (id && cfa_parse_hwid(id, &ven, &dev, &rev) && ven == 0x1002) {
		if (cs->add_gpus)
			gpu_from_key(cs, key, ven, dev, rev);
		if (!cs->m->driver && !cs->nomem)
			driver_from_key(cs, key);
	}
	cfa_free(id);
	cfa_free(key);
	return cs->nomem ? ENOMEM : 0;
}

static bool from_registry(struct cfapkg_machine *m)
{
	/* The registry adds GPUs only when DXGI listed none (its list already
	 * holds them, with their memory); it is read for the driver either way. */
	struct class_scan cs = {m, m->ngpus == 0, false};
	char *rsv;

	cfa_plat_reg_subkeys(DISPLAY_CLASS, display_key, &cs);
	if (!cs.nomem && !m->driver &&
	    (rsv = reg_value(&cs.nomem, "SOFTWARE\\AMD\\CN", "RadeonSoftwareVersion"))) {
		cs.nomem |= !cfa_machine_setf(&m->driver, "%s", rsv) ||
		            !cfa_machine_setf(&m->driver_source, "registry AMD\\CN");
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

/* The HIP runtime on Windows is the display driver's, in System32, where
 * programs load it from before PATH; amdhip64.dll is HIP 5's name, from
 * before the major was part of it. */
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
			nomem = !label || !cfa_machine_add_runtime(m, dlls[i].major, label);
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

	/* The last part of the path, a trailing separator not counting:
	 * "...\ROCm\6.4\" is 6.4. */
	for (; *p; p++)
		if ((*p == '\\' || *p == '/') && p[1])
			last = p + 1;
	leaf = cfa_strndup(last, strcspn(last, "\\/"));
	bin = cfa_aprintf("%s\\bin", dir);
	if ((ok = leaf && bin)) {
		/* hipInfo.exe and the compilers live in bin: a folder without
		 * it is no SDK to use, whatever names it. */
		if (!cfa_plat_is_dir(bin))
			ok = cfa_machine_warn(m, "%s (%s) has no bin folder; not counted as a HIP SDK",
			                      dir, source);
		else if (!cfa_ver_parse(leaf, strlen(leaf), &v, NULL))
			ok = cfa_machine_warn(m, "HIP SDK at %s: cannot tell its version from the "
			                      "folder name", dir);
		else
			ok = cfa_machine_add_sdk(m, leaf, dir, source);
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
	/* A drive root ("C:\") keeps its separator: "C:" alone names the
	 * drive's current folder. */
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

	/* The HIP SDK installer sets HIP_PATH to the SDK last installed and
	 * HIP_PATH_<major><minor> (HIP_PATH_62) for each; the platform lists no
	 * environment, so each such name is asked for. */
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

/* The hipInfo.exe of the first SDK that has one (allocated), NULL when
 * none has: *nomem when out of memory. */
static char *find_hipinfo(const struct cfapkg_machine *m, bool *nomem)
{
	size_t s;

	for (s = 0; s < m->nhip_sdks; s++) {
		char *exe = cfa_aprintf("%s\\bin\\hipInfo.exe", m->hip_sdks[s].path);
		if (!exe) {
			*nomem = true;
			return NULL;
		}
		if (cfa_plat_is_file(exe))
			return exe;
		cfa_free(exe);
	}
	return NULL;
}

/* One hipInfo device's facts into a GPU: its name and memory when DXGI
 * and the registry gave none, its target when it is one. */
static bool from_device(struct cfapkg_machine *m, struct cfapkg_gpu *g,
                        const struct cfa_hipinfo_device *d, const char *exe)
{
	char gfx[16];

	/* No name at all is left to gpus.json (detect.c names every GPU). */
	if (!g->name && d->name_len &&
	    !cfa_machine_setf(&g->name, "%.*s", (int)d->name_len, d->name))
		return false;
	if (!g->vram_bytes)
		g->vram_bytes = d->memory;
	if (!d->gfx_len)
		return true;
	/* A target is "gfx" and a few hex digits; anything else is none
	 * rather than one that would match no recipe. */
	if (!cfa_snprintf(gfx, sizeof(gfx), "%.*s", (int)d->gfx_len, d->gfx) || !cfa_valid_gfx(gfx))
		return cfa_machine_warn(m, "%s names GPU %u's target \"%.*s\", which is not one (gfx "
		                        "and a few hex digits); it is left unknown", exe, g->index,
		                        (int)d->gfx_len, d->gfx);
	memcpy(g->gfx, gfx, sizeof(g->gfx)); /* the same size */
	CFA_MACHINE_NAME(g->source, "hipinfo");
	return true;
}

/* What hipInfo printed, each device into the GPU of its index (a new one
 * past those found). */
static bool from_hipinfo_text(struct cfapkg_machine *m, const char *out, const char *exe)
{
	size_t n = cfa_hipinfo_parse(out, NULL, 0), i;
	struct cfa_hipinfo_device *devs = n ? cfa_calloc(n, sizeof(*devs)) : NULL;
	bool ok = !n || devs;

	if (devs)
		cfa_hipinfo_parse(out, devs, n);
	for (i = 0; ok && i < n; i++) {
		struct cfapkg_gpu *g = i < m->ngpus ? &m->gpus[i] : cfa_machine_add_gpu(m);
		ok = g && from_device(m, g, &devs[i], exe);
	}
	cfa_free(devs);
	return ok;
}

/* hipInfo prints a few lines per device: 64 KiB is far more than any
 * machine's listing (the platform keeps at most this much). */
#define HIPINFO_OUTPUT_MAX 65536

/* exe's listing, read into out (HIPINFO_OUTPUT_MAX bytes). */
static bool read_hipinfo(struct cfapkg_machine *m, const char *exe, char *out)
{
	const char *argv[2] = {exe, NULL};
	int status = 0, rc = cfa_plat_run_capture(argv, HIPINFO_TIMEOUT_MS, out, HIPINFO_OUTPUT_MAX,
	                                          &status);
	bool ok;

	if (rc)
		ok = cfa_machine_warn(m, "%s: %s", exe,
		                      rc == ETIMEDOUT ? "timed out" : cfa_plat_strerror(rc));
	else if (!cfa_hipinfo_parse(out, NULL, 0))
		ok = cfa_machine_warn(m, "%s exited %d and listed no device", exe, status);
	else
		ok = from_hipinfo_text(m, out, exe);
	/* A full buffer means the platform cut the output there. */
	if (ok && !rc && strlen(out) == HIPINFO_OUTPUT_MAX - 1)
		ok = cfa_machine_warn(m, "%s printed more than %lu bytes; devices listed past that are "
		                      "not read", exe, (unsigned long)HIPINFO_OUTPUT_MAX - 1);
	return ok;
}

/* hipInfo.exe of the first SDK that has one (HIP_PATH's first) names each
 * device's target. */
static bool run_hipinfo(struct cfapkg_machine *m)
{
	bool nomem = false, ok;
	char *exe = find_hipinfo(m, &nomem), *out;

	if (!exe)
		return !nomem;
	if (!(out = cfa_malloc(HIPINFO_OUTPUT_MAX))) {
		cfa_free(exe);
		return false;
	}
	ok = read_hipinfo(m, exe, out);
	cfa_free(out);
	cfa_free(exe);
	return ok;
}

/* The OS and its build: the platform writes "Windows" and three numbers,
 * far shorter than the room given. */
static bool os_build(struct cfapkg_machine *m)
{
	char build[128];

	cfa_plat_os_build(build, sizeof(build));
	return !build[0] || cfa_machine_setf(&m->os_build, "%s", build);
}

/* The order matters: the registry adds GPUs only when DXGI found none,
 * hipInfo is found in the SDKs' folders, and it fills in, by index, the
 * GPUs found before it. */
enum cfapkg_err cfa_detect_windows(struct cfapkg_ctx *ctx, struct cfapkg_machine *m)
{
	if (!os_build(m) || !from_adapters(m) || !from_registry(m) || !hip_runtimes(m) ||
	    !hip_sdks(m) || !run_hipinfo(m))
		return cfa_nomem(ctx);
	return CFAPKG_E_OK;
}
