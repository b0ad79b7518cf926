/*
 * sysfs.c - the Linux detection backend.  Everything is read below a root
 * folder ("" on a live system, CFAPKG_SYSROOT in tests), so it is plain
 * file reading and runs, and is tested, on any OS.
 *
 * Sources, in order of authority (see the GPU reference notes):
 *   gfx target   KFD topology gfx_target_version (decimal major*10000 +
 *                minor*100 + stepping), not the PCI id;
 *   PCI identity the device behind /sys/class/drm/renderD<minor> (through
 *                any of its DRM nodes), for the name; a GPU KFD cannot
 *                tell about is listed from it alone, marked unread;
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

/* 1 PiB: more memory than any GPU has, and still exact as a JSON number. */
#define VRAM_MAX ((uint64_t)1 << 50)
/* gfx_target_version is major*10000 + minor*100 + stepping, two digits each. */
#define GFX_TARGET_MAX 999999u
/* DRM node numbers and KFD render minors stay far below this. */
#define DRM_NODE_MAX 65535u
#define MAX_PCI 16

/* Reads a small file below root; 0 or an errno-style code. */
static int read_quiet(const char *root, const char *rel, char *buf, size_t len)
{
	char path[4096];
	FILE *f;
	size_t n;
	int err;

	if (!cfa_snprintf(path, sizeof(path), "%s%s", root, rel))
		return ENAMETOOLONG;
	f = cfa_plat_fopen(path, "rb");
	if (!f)
		return errno ? errno : ENOENT;
	n = fread(buf, 1, len - 1, f);
	err = ferror(f) ? (errno ? errno : EIO) : 0;
	fclose(f);
	if (err)
		return err;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* The same; a file that exists but cannot be read gets a warning naming it
 * (a missing one is common: not every tree has every file). */
static int read_small(struct cfapkg_machine *m, const char *root, const char *rel, char *buf,
                      size_t len)
{
	int err = read_quiet(root, rel, buf, len);

	if (err && err != ENOENT)
		cfa_machine_warn(m, "cannot read %s%s: %s", root, rel, cfa_plat_strerror(err));
	return err;
}

/* One "key N" line of a KFD properties text: absent, a number up to the
 * key's maximum, or bad (not a number, or too large), with the text kept
 * for the warning. */
enum prop_state { PROP_ABSENT, PROP_OK, PROP_BAD };
struct prop {
	enum prop_state state;
	uint64_t value;
	char text[32];
};

static struct prop prop(const char *text, const char *key, uint64_t max)
{
	struct prop r = {PROP_ABSENT, 0, ""};
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			const char *v = p + klen + 1;
			size_t vlen = len - klen - 1;
			while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == ' '))
				vlen--;
			cfa_snprintf(r.text, sizeof(r.text), "%.*s%s", (int)(vlen > 24 ? 24 : vlen), v,
			             vlen > 24 ? "..." : "");
			r.state = cfa_parse_u64(v, vlen, max, &r.value) ? PROP_OK : PROP_BAD;
			return r;
		}
		p = eol ? eol + 1 : NULL;
	}
	return r;
}

/* A sysfs hex value ("0x1002") up to max.  False when absent, unreadable
 * or out of range; the last two with a warning naming the file. */
static bool hex_file(struct cfapkg_machine *m, const char *root, const char *rel,
                     uint64_t max, uint64_t *out)
{
	char buf[64];
	const char *s = buf;

	if (read_small(m, root, rel, buf, sizeof(buf)) != 0)
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (cfa_parse_hex(s, strlen(s), max, out))
		return true;
	cfa_machine_warn(m, "%s%s: \"%.24s\" is not a hex number up to 0x%llx; ignored", root, rel,
	                 buf, (unsigned long long)max);
	return false;
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

/* 0, or why the folder could not be listed (ENOENT: it does not exist). */
static int list_names(const char *root, const char *rel, struct names *ns)
{
	char path[4096];
	int rc;

	ns->n = 0;
	if (!cfa_snprintf(path, sizeof(path), "%s%s", root, rel))
		return ENAMETOOLONG;
	rc = cfa_plat_list_dir(path, collect_name, ns);
	/* Windows reports every failure as ENOENT: tell a file or a locked
	 * folder from a missing one. */
	if (rc == ENOENT && cfa_plat_is_dir(path))
		rc = EACCES;
	else if (rc == ENOENT && cfa_plat_file_size(path) >= 0)
		rc = ENOTDIR;
	return rc;
}

/* The node's framebuffer memory (heap types 1 and 2).  False, with a
 * warning naming the file, when a size is not one to believe: a wrapped or
 * truncated total would show a wrong size. */
static bool node_vram(struct cfapkg_machine *m, const char *root, const char *node,
                      uint64_t *total)
{
	struct names banks;
	char rel[512], text[2048];
	size_t i;

	*total = 0;
	cfa_snprintf(rel, sizeof(rel), KFD_NODES "/%s/mem_banks", node);
	list_names(root, rel, &banks);
	qsort(banks.items, banks.n, sizeof(banks.items[0]), cmp_numeric_name);
	for (i = 0; i < banks.n; i++) {
		struct prop heap, size;
		cfa_snprintf(rel, sizeof(rel), KFD_NODES "/%s/mem_banks/%s/properties", node,
		             banks.items[i]);
		if (read_small(m, root, rel, text, sizeof(text)) != 0)
			continue;
		heap = prop(text, "heap_type", UINT64_MAX);
		if (heap.state != PROP_OK || (heap.value != 1 && heap.value != 2))
			continue;
		size = prop(text, "size_in_bytes", VRAM_MAX);
		if (size.state == PROP_BAD || (size.state == PROP_OK && *total > VRAM_MAX - size.value)) {
			cfa_machine_warn(m, "%s%s: size_in_bytes %s %s; the VRAM size is left unknown", root,
			                 rel, size.text, size.state == PROP_BAD ?
			                 "is not a size up to 1 PiB" : "makes the banks add up to over 1 PiB");
			*total = 0;
			return false;
		}
		*total += size.value;
	}
	return true;
}

/* An AMD GPU on the PCI bus as its DRM nodes (cardN, renderDN) show it. */
struct pci_gpu {
	int card, render;          /* node numbers, -1 when absent */
	uint16_t vendor, device;   /* 0 when unknown */
	uint32_t cls;              /* PCI class, 0 when unknown */
	int revision;              /* -1 when unknown */
	bool claimed;              /* a readable KFD node describes it */
	char problem[160];         /* what its KFD node lacked, when that is known */
};

/* What one pass over the KFD topology and the DRM nodes found. */
struct scan {
	struct cfapkg_machine *m;
	const char *root;
	struct pci_gpu pci[MAX_PCI];
	size_t npci;
	int topology_err;          /* listing the KFD nodes: 0, ENOENT (no KFD) or why not */
	unsigned bad_nodes;        /* GPU nodes not usable and not matched to a PCI device */
};

/* "card0" or "renderD128"; not a connector such as "card0-DP-1". */
static bool drm_node(const char *name, bool *render, int *num)
{
	const char *digits = name;
	uint64_t v;

	*render = strncmp(name, "renderD", 7) == 0;
	if (*render)
		digits += 7;
	else if (strncmp(name, "card", 4) == 0)
		digits += 4;
	else
		return false;
	if (!cfa_parse_u64(digits, strlen(digits), DRM_NODE_MAX, &v))
		return false;
	*num = (int)v;
	return true;
}

static struct pci_gpu *pci_by_node(struct scan *s, bool render, int num)
{
	size_t i;

	for (i = 0; i < s->npci; i++)
		if ((render ? s->pci[i].render : s->pci[i].card) == num)
			return &s->pci[i];
	return NULL;
}

static void set_node(struct pci_gpu *p, const char *name)
{
	bool render;
	int num;

	if (drm_node(name, &render, &num))
		*(render ? &p->render : &p->card) = num;
}

/* Each PCI fact from the first of the device's nodes that shows it: a
 * broken tree may hold the revision only below card*, not renderD*. */
static void pci_facts(struct scan *s, const char *node, struct pci_gpu *p)
{
	char rel[512];
	uint64_t v;

	cfa_snprintf(rel, sizeof(rel), "/sys/class/drm/%s/device/vendor", node);
	if (!p->vendor && hex_file(s->m, s->root, rel, 0xffff, &v))
		p->vendor = (uint16_t)v;
	cfa_snprintf(rel, sizeof(rel), "/sys/class/drm/%s/device/device", node);
	if (!p->device && hex_file(s->m, s->root, rel, 0xffff, &v))
		p->device = (uint16_t)v;
	cfa_snprintf(rel, sizeof(rel), "/sys/class/drm/%s/device/revision", node);
	if (p->revision < 0 && hex_file(s->m, s->root, rel, 0xff, &v))
		p->revision = (int)v;
	cfa_snprintf(rel, sizeof(rel), "/sys/class/drm/%s/device/class", node);
	if (!p->cls && hex_file(s->m, s->root, rel, 0xffffff, &v))
		p->cls = (uint32_t)v;
}

/* The DRM nodes of the PCI device behind one node: the kernel lists them
 * in the device's drm/ folder; a tree without it pairs cardN with
 * renderD(128+N), the usual numbering. */
static void pci_siblings(struct scan *s, const char *node, const struct names *all,
                         struct pci_gpu *p)
{
	struct names sib;
	char rel[512], partner[32];
	size_t i;

	cfa_snprintf(rel, sizeof(rel), "/sys/class/drm/%s/device/drm", node);
	if (list_names(s->root, rel, &sib) == 0 && sib.n) {
		for (i = 0; i < sib.n; i++)
			set_node(p, sib.items[i]);
		return;
	}
	if (p->card >= 0)
		cfa_snprintf(partner, sizeof(partner), "renderD%d", p->card + 128);
	else if (p->render >= 128)
		cfa_snprintf(partner, sizeof(partner), "card%d", p->render - 128);
	else
		return;
	for (i = 0; i < all->n; i++)
		if (strcmp(all->items[i], partner) == 0)
			set_node(p, partner);
}

/* Every PCI device with a DRM node, once, whatever its vendor. */
static void pci_gather(struct scan *s)
{
	struct names all;
	char name[32];
	size_t i;
	int rc = list_names(s->root, "/sys/class/drm", &all);

	if (rc && rc != ENOENT)
		cfa_machine_warn(s->m, "cannot list %s/sys/class/drm: %s; GPUs are known only from "
		                 "the KFD topology", s->root, cfa_plat_strerror(rc));
	qsort(all.items, all.n, sizeof(all.items[0]), cmp_name);
	for (i = 0; i < all.n && s->npci < MAX_PCI; i++) {
		struct pci_gpu *p = &s->pci[s->npci];
		bool render;
		int num;
		if (!drm_node(all.items[i], &render, &num) || pci_by_node(s, render, num))
			continue;
		memset(p, 0, sizeof(*p));
		p->card = p->render = p->revision = -1;
		set_node(p, all.items[i]);
		pci_siblings(s, all.items[i], &all, p);
		if (p->render >= 0 && cfa_snprintf(name, sizeof(name), "renderD%d", p->render))
			pci_facts(s, name, p);
		if (p->card >= 0 && cfa_snprintf(name, sizeof(name), "card%d", p->card))
			pci_facts(s, name, p);
		s->npci++;
	}
}

/* A CPU node has gpu_id 0; without that file, it has no SIMDs. */
static bool cpu_node(struct scan *s, const char *node, const char *props)
{
	char rel[512], buf[32];
	uint64_t id;
	struct prop simd;

	cfa_snprintf(rel, sizeof(rel), KFD_NODES "/%s/gpu_id", node);
	if (read_small(s->m, s->root, rel, buf, sizeof(buf)) == 0 &&
	    cfa_parse_u64(buf, strlen(buf), UINT64_MAX, &id))
		return id == 0;
	if (!props)
		return false;
	simd = prop(props, "simd_count", UINT64_MAX);
	return simd.state == PROP_OK && simd.value == 0;
}

struct node_facts {
	char gfx[16];
	uint64_t vendor, device, minor;
};

/* A GPU node's facts, or false and why they cannot be trusted: a value out
 * of range would otherwise be truncated into a wrong target or device. */
static bool node_facts(const char *text, struct node_facts *f, char *why, size_t len)
{
	struct prop gtv = prop(text, "gfx_target_version", GFX_TARGET_MAX);
	struct prop vendor = prop(text, "vendor_id", 0xffff);
	struct prop device = prop(text, "device_id", 0xffff);
	struct prop minor = prop(text, "drm_render_minor", DRM_NODE_MAX);

	f->vendor = vendor.value;
	f->device = device.value;
	f->minor = minor.value;
	if (gtv.state == PROP_ABSENT)
		return !cfa_snprintf(why, len, "no gfx_target_version (the file is empty or is not "
		                     "KFD properties)");
	if (gtv.state == PROP_BAD)
		return !cfa_snprintf(why, len, "gfx_target_version %s is out of range", gtv.text);
	if (gtv.value == 0)
		return !cfa_snprintf(why, len, "gfx_target_version 0: the driver gives it no "
		                     "compute target");
	if (!cfa_gfx_from_kfd((unsigned long)gtv.value, f->gfx))
		return !cfa_snprintf(why, len, "gfx_target_version %s does not decode to a target",
		                     gtv.text);
	if (vendor.state == PROP_BAD || device.state == PROP_BAD)
		return !cfa_snprintf(why, len, "%s %s is not a 16-bit PCI id",
		                     vendor.state == PROP_BAD ? "vendor_id" : "device_id",
		                     vendor.state == PROP_BAD ? vendor.text : device.text);
	if (minor.state == PROP_BAD)
		return !cfa_snprintf(why, len, "drm_render_minor %s is out of range", minor.text);
	return true;
}

/* A GPU node that cannot be used: its PCI device, when the node names one,
 * is listed later with the reason; otherwise only the warning remains. */
static void bad_node(struct scan *s, const char *node, const char *rel, bool unreadable,
                     const char *why, struct pci_gpu *p)
{
	cfa_machine_warn(s->m, "KFD node %s is not used: %s%s%s: %s", node,
	                 unreadable ? "cannot read " : "", s->root, rel, why);
	if (p && !p->claimed && !p->problem[0])
		cfa_snprintf(p->problem, sizeof(p->problem), "KFD node %s: %s", node, why);
	else
		s->bad_nodes++;
}

static void kfd_node(struct scan *s, const char *node)
{
	char rel[512], text[8192], why[160];
	struct node_facts f = {0};
	struct pci_gpu *p;
	struct cfapkg_gpu *g;
	int err;

	cfa_snprintf(rel, sizeof(rel), KFD_NODES "/%s/properties", node);
	err = read_quiet(s->root, rel, text, sizeof(text));
	if (err) {
		if (!cpu_node(s, node, NULL)) /* a container, a cgroup, a broken driver */
			bad_node(s, node, rel, true, cfa_plat_strerror(err), NULL);
		return;
	}
	if (cpu_node(s, node, text))
		return;
	if (!node_facts(text, &f, why, sizeof(why))) {
		bad_node(s, node, rel, false, why, f.minor ? pci_by_node(s, true, (int)f.minor) : NULL);
		return;
	}
	g = cfa_machine_add_gpu(s->m);
	if (!g)
		return;
	snprintf(g->source, sizeof(g->source), "kfd");
	cfa_snprintf(g->gfx, sizeof(g->gfx), "%s", f.gfx);
	g->vendor = (uint16_t)f.vendor;
	g->device = (uint16_t)f.device;
	node_vram(s->m, s->root, node, &g->vram_bytes);
	p = f.minor ? pci_by_node(s, true, (int)f.minor) : NULL;
	if (!p)
		return;
	p->claimed = true;
	g->vendor = p->vendor ? p->vendor : g->vendor;
	g->device = p->device ? p->device : g->device;
	g->revision = p->revision;
}

/* AMD display devices no readable KFD node describes.  Without KFD at all
 * they are the GPUs (named and targeted from gpus.json); with KFD they are
 * GPUs it could not tell about, listed after the others (so the indexes of
 * the readable ones stay those HIP uses) and marked with why. */
static void pci_unclaimed(struct scan *s)
{
	size_t i;

	for (i = 0; i < s->npci; i++) {
		const struct pci_gpu *p = &s->pci[i];
		struct cfapkg_gpu *g;
		if (p->claimed || p->vendor != 0x1002 || (!p->problem[0] && (p->cls >> 16) != 0x03))
			continue;
		if (!(g = cfa_machine_add_gpu(s->m)))
			return;
		g->vendor = p->vendor;
		g->device = p->device;
		g->revision = p->revision;
		snprintf(g->source, sizeof(g->source), "pci");
		if (p->problem[0])
			cfa_snprintf(g->problem, sizeof(g->problem), "%s", p->problem);
		else if (s->topology_err && s->topology_err != ENOENT)
			cfa_snprintf(g->problem, sizeof(g->problem), "the KFD topology could not be read "
			             "(%s)", cfa_plat_strerror(s->topology_err));
		else if (s->bad_nodes)
			cfa_snprintf(g->problem, sizeof(g->problem), "no readable KFD node describes it");
		else if (!s->topology_err)
			cfa_snprintf(g->problem, sizeof(g->problem), "no KFD node describes it (the "
			             "driver gave it no compute support)");
	}
}

static void detect_gpus(struct cfapkg_machine *m, const char *root)
{
	struct scan s;
	struct names nodes;
	size_t i;

	memset(&s, 0, sizeof(s));
	s.m = m;
	s.root = root;
	pci_gather(&s);
	s.topology_err = list_names(root, KFD_NODES, &nodes);
	if (s.topology_err && s.topology_err != ENOENT)
		cfa_machine_warn(m, "cannot list %s" KFD_NODES ": %s; the GPUs' compute targets are "
		                 "unknown: check the folder's permissions, that the amdgpu driver is "
		                 "loaded, and in a container that /dev/kfd and /sys/class/kfd are "
		                 "passed in", root, cfa_plat_strerror(s.topology_err));
	qsort(nodes.items, nodes.n, sizeof(nodes.items[0]), cmp_numeric_name);
	for (i = 0; i < nodes.n; i++)
		kfd_node(&s, nodes.items[i]);
	pci_unclaimed(&s);
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
