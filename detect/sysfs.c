/*
 * sysfs.c - the Linux detection backend.  Everything is read below a root
 * folder ("" on a live system, CFAPKG_SYSROOT in tests), so it is plain
 * file reading and runs, and is tested, on any OS.
 *
 * Sources, in order of authority (see the GPU reference notes):
 *   gfx target   KFD topology gfx_target_version (decimal major*10000 +
 *                minor*100 + stepping), not the PCI id;
 *   PCI identity /sys/class/drm/renderD<minor>/device, for the name;
 *   VRAM         the node's memory banks of heap type 1 and 2 (framebuffer);
 *   driver       /sys/module/amdgpu/version, else the kernel release;
 *   ROCm         /opt/rocm* (.info/version, else the folder name) and
 *                libamdhip64.so.N for the HIP runtime majors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/version.h"
#include "detect/detect.h"
#include "platform/platform.h"

#define KFD_NODES "/sys/class/kfd/kfd/topology/nodes"

/* Reads a small file below root; 0 or an errno-style code.  A missing file
 * is ENOENT, anything else also gets a warning naming the file. */
static int read_small(struct cfapkg_machine *m, const char *root, const char *rel, char *buf,
                      size_t len)
{
	char path[4096];
	FILE *f;
	size_t n;
	int err;

	if (!cfa_snprintf(path, sizeof(path), "%s%s", root, rel))
		return ENAMETOOLONG;
	f = cfa_plat_fopen(path, "rb");
	if (!f) {
		err = errno ? errno : ENOENT;
		if (err != ENOENT)
			cfa_machine_warn(m, "cannot read %s: %s", path, cfa_plat_strerror(err));
		return err;
	}
	n = fread(buf, 1, len - 1, f);
	err = ferror(f) ? (errno ? errno : EIO) : 0;
	fclose(f);
	if (err) {
		cfa_machine_warn(m, "cannot read %s: %s", path, cfa_plat_strerror(err));
		return err;
	}
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* The value of "key N" in a KFD properties text, or fallback. */
static unsigned long long prop(const char *text, const char *key, unsigned long long fallback)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		uint64_t v;
		if (len > klen + 1 && strncmp(p, key, klen) == 0 && p[klen] == ' ' &&
		    cfa_parse_u64(p + klen + 1, len - klen - 1, UINT64_MAX, &v))
			return v;
		p = eol ? eol + 1 : NULL;
	}
	return fallback;
}

static bool hex_file(struct cfapkg_machine *m, const char *root, const char *rel,
                     uint64_t max, uint64_t *out)
{
	char buf[64];
	const char *s = buf;

	if (read_small(m, root, rel, buf, sizeof(buf)) != 0)
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	return cfa_parse_hex(s, strlen(s), max, out);
}

struct names {
	char items[64][256];
	size_t n;
};

static int collect_name(const char *name, void *arg)
{
	struct names *ns = arg;

	if (ns->n < sizeof(ns->items) / sizeof(ns->items[0]))
		cfa_snprintf(ns->items[ns->n++], sizeof(ns->items[0]), "%s", name);
	return 0;
}

/* Node folders are numbers: order 2 before 10. */
static int cmp_numeric_name(const void *a, const void *b)
{
	uint64_t x = 0, y = 0;

	cfa_parse_u64(a, strlen(a), UINT64_MAX, &x);
	cfa_parse_u64(b, strlen(b), UINT64_MAX, &y);
	return x != y ? (x > y) - (x < y) : strcmp(a, b);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void list_names(const char *root, const char *rel, struct names *ns)
{
	char path[4096];

	ns->n = 0;
	if (cfa_snprintf(path, sizeof(path), "%s%s", root, rel))
		cfa_plat_list_dir(path, collect_name, ns);
}

static uint64_t node_vram(struct cfapkg_machine *m, const char *root, const char *node)
{
	struct names banks;
	char rel[512], text[2048];
	uint64_t total = 0;
	size_t i;

	cfa_snprintf(rel, sizeof(rel), KFD_NODES "/%s/mem_banks", node);
	list_names(root, rel, &banks);
	for (i = 0; i < banks.n; i++) {
		unsigned long long heap;
		cfa_snprintf(rel, sizeof(rel), KFD_NODES "/%s/mem_banks/%s/properties", node,
		             banks.items[i]);
		if (read_small(m, root, rel, text, sizeof(text)) != 0)
			continue;
		heap = prop(text, "heap_type", 0);
		if (heap == 1 || heap == 2)
			total += prop(text, "size_in_bytes", 0);
	}
	return total;
}

/* PCI identity of the render node a KFD node drives. */
static void pci_identity(struct cfapkg_machine *m, const char *root, const char *dev,
                         struct cfapkg_gpu *g)
{
	char rel[512];
	uint64_t v;

	cfa_snprintf(rel, sizeof(rel), "%s/vendor", dev);
	if (hex_file(m, root, rel, 0xffff, &v))
		g->vendor = (uint16_t)v;
	cfa_snprintf(rel, sizeof(rel), "%s/device", dev);
	if (hex_file(m, root, rel, 0xffff, &v))
		g->device = (uint16_t)v;
	cfa_snprintf(rel, sizeof(rel), "%s/revision", dev);
	if (hex_file(m, root, rel, 0xff, &v))
		g->revision = (int)v;
}

static void kfd_node(struct cfapkg_machine *m, const char *root, const char *node)
{
	char rel[512], text[8192];
	unsigned long long gtv, minor;
	struct cfapkg_gpu *g;

	cfa_snprintf(rel, sizeof(rel), KFD_NODES "/%s/properties", node);
	if (read_small(m, root, rel, text, sizeof(text)) != 0)
		return; /* warned: unreadable node (a container, a cgroup) */
	gtv = prop(text, "gfx_target_version", 0);
	if (gtv == 0 || prop(text, "simd_count", 0) == 0)
		return; /* a CPU node */
	g = cfa_machine_add_gpu(m);
	if (!g)
		return;
	snprintf(g->source, sizeof(g->source), "kfd");
	if (!cfa_gfx_from_kfd((unsigned long)gtv, g->gfx))
		cfa_machine_warn(m, "KFD node %s: gfx_target_version %llu does not decode", node, gtv);
	g->vendor = (uint16_t)prop(text, "vendor_id", 0);
	g->device = (uint16_t)prop(text, "device_id", 0);
	g->vram_bytes = node_vram(m, root, node);
	minor = prop(text, "drm_render_minor", 0);
	if (minor) {
		cfa_snprintf(rel, sizeof(rel), "/sys/class/drm/renderD%llu/device", minor);
		pci_identity(m, root, rel, g);
	}
}

/* Without KFD (no amdgpu compute support loaded): AMD display devices on
 * the PCI bus, named and targeted from gpus.json. */
static void pci_only(struct cfapkg_machine *m, const char *root)
{
	struct names cards;
	char rel[512];
	size_t i;

	list_names(root, "/sys/class/drm", &cards);
	qsort(cards.items, cards.n, sizeof(cards.items[0]), cmp_name);
	for (i = 0; i < cards.n; i++) {
		struct cfapkg_gpu probe = {0};
		uint64_t cls;
		if (strncmp(cards.items[i], "card", 4) != 0 || strchr(cards.items[i], '-'))
			continue;
		probe.revision = -1;
		cfa_snprintf(rel, sizeof(rel), "/sys/class/drm/%s/device", cards.items[i]);
		pci_identity(m, root, rel, &probe);
		cfa_snprintf(rel, sizeof(rel), "/sys/class/drm/%s/device/class", cards.items[i]);
		if (probe.vendor != 0x1002 || !hex_file(m, root, rel, 0xffffff, &cls) ||
		    (cls >> 16) != 0x03)
			continue;
		struct cfapkg_gpu *g = cfa_machine_add_gpu(m);
		if (!g)
			return;
		probe.index = g->index;
		*g = probe;
		snprintf(g->source, sizeof(g->source), "pci");
	}
}

static void detect_gpus(struct cfapkg_machine *m, const char *root)
{
	struct names nodes;
	size_t i;

	list_names(root, KFD_NODES, &nodes);
	qsort(nodes.items, nodes.n, sizeof(nodes.items[0]), cmp_numeric_name);
	for (i = 0; i < nodes.n; i++)
		kfd_node(m, root, nodes.items[i]);
	if (m->ngpus == 0)
		pci_only(m, root);
}

static void detect_driver(struct cfapkg_machine *m, const char *root)
{
	char buf[128];

	if (read_small(m, root, "/sys/module/amdgpu/version", buf, sizeof(buf)) == 0 && buf[0]) {
		cfa_snprintf(m->driver, sizeof(m->driver), "%s", buf);
		cfa_snprintf(m->driver_source, sizeof(m->driver_source), "amdgpu module");
	} else if (read_small(m, root, "/proc/sys/kernel/osrelease", buf, sizeof(buf)) == 0) {
		cfa_snprintf(m->driver, sizeof(m->driver), "%s", buf);
		cfa_snprintf(m->driver_source, sizeof(m->driver_source),
		             "kernel release (in-tree amdgpu)");
	}
	if (read_small(m, root, "/proc/sys/kernel/osrelease", buf, sizeof(buf)) == 0)
		cfa_snprintf(m->driver_detail, sizeof(m->driver_detail), "kernel %s", buf);
}

/* libamdhip64.so.N files in a folder give the runtime majors. */
static void runtimes_in(struct cfapkg_machine *m, const char *dir)
{
	struct names files;
	size_t i;

	files.n = 0;
	cfa_plat_list_dir(dir, collect_name, &files);
	for (i = 0; i < files.n; i++) {
		const char *f = files.items[i];
		uint64_t major;
		char path[4096];
		if (strncmp(f, "libamdhip64.so.", 15) != 0)
			continue;
		if (!cfa_parse_u64(f + 15, strcspn(f + 15, "."), 99, &major) || major == 0)
			continue;
		cfa_snprintf(path, sizeof(path), "%s/%s", dir, f);
		cfa_machine_add_runtime(m, (unsigned)major, path);
	}
}

/* "6.4.2-120" -> "6.4.2"; "rocm-6.4.2" -> "6.4.2". */
static bool rocm_version(struct cfapkg_machine *m, const char *root, const char *name,
                         char *out, size_t len)
{
	char rel[512], buf[64];
	struct cfa_ver v;

	cfa_snprintf(rel, sizeof(rel), "/opt/%s/.info/version", name);
	if (read_small(m, root, rel, buf, sizeof(buf)) == 0) {
		buf[strcspn(buf, "-\n ")] = '\0';
		if (cfa_ver_parse(buf, strlen(buf), &v, NULL))
			return cfa_snprintf(out, len, "%s", buf);
	}
	if (strncmp(name, "rocm-", 5) == 0 && cfa_ver_parse(name + 5, strlen(name + 5), &v, NULL))
		return cfa_snprintf(out, len, "%s", name + 5);
	return false;
}

static void detect_rocm(struct cfapkg_machine *m, const char *root)
{
	static const char *const libdirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"};
	const char *ld = getenv("LD_LIBRARY_PATH");
	char dir[4096], version[64];
	struct names opt;
	size_t i;

	list_names(root, "/opt", &opt);
	qsort(opt.items, opt.n, sizeof(opt.items[0]), cmp_name);
	for (i = 0; i < opt.n; i++) {
		if (strncmp(opt.items[i], "rocm", 4) != 0)
			continue;
		cfa_snprintf(dir, sizeof(dir), "%s/opt/%s", root, opt.items[i]);
		if (rocm_version(m, root, opt.items[i], version, sizeof(version)))
			cfa_machine_add_sdk(m, version, dir, "/opt");
		cfa_snprintf(dir, sizeof(dir), "%s/opt/%s/lib", root, opt.items[i]);
		runtimes_in(m, dir);
	}
	for (i = 0; i < sizeof(libdirs) / sizeof(libdirs[0]); i++) {
		cfa_snprintf(dir, sizeof(dir), "%s%s", root, libdirs[i]);
		runtimes_in(m, dir);
	}
	while (ld && *ld) {
		size_t n = strcspn(ld, ":");
		if (n && n < sizeof(dir)) {
			memcpy(dir, ld, n);
			dir[n] = '\0';
			runtimes_in(m, dir);
		}
		ld += n + (ld[n] == ':');
	}
}

static void detect_os(struct cfapkg_machine *m, const char *root)
{
	char text[4096], kernel[128] = "";
	const char *pretty;

	read_small(m, root, "/proc/sys/kernel/osrelease", kernel, sizeof(kernel));
	if (read_small(m, root, "/etc/os-release", text, sizeof(text)) == 0 &&
	    (pretty = strstr(text, "PRETTY_NAME=")) != NULL) {
		pretty += 12;
		if (*pretty == '"')
			pretty++;
		cfa_snprintf(m->os_build, sizeof(m->os_build), "%.*s%s%s",
		             (int)strcspn(pretty, "\"\n"), pretty, kernel[0] ? ", kernel " : "", kernel);
	} else if (kernel[0]) {
		cfa_snprintf(m->os_build, sizeof(m->os_build), "Linux, kernel %s", kernel);
	}
}

enum cfapkg_err cfa_detect_sysfs(struct cfapkg_ctx *ctx, const char *root,
                                 struct cfapkg_machine *m)
{
	(void)ctx;
	detect_os(m, root);
	detect_gpus(m, root);
	detect_driver(m, root);
	detect_rocm(m, root);
	return CFAPKG_E_OK;
}
