/*
 * sysfs.c - the Linux detection backend.  Everything is read below a root
 * folder ("" on a live system, CFAPKG_SYSROOT in tests), so it is plain
 * file reading and runs, and is tested, on any OS.  This file finds the
 * GPUs; sysfs_rocm.c the OS, driver and ROCm.
 *
 * Sources, in order of authority (see the GPU reference notes):
 *   gfx target   KFD topology gfx_target_version (decimal major*10000 +
 *                minor*100 + stepping), not the PCI id;
 *   PCI identity the device behind /sys/class/drm/renderD<minor> (through
 *                any of its DRM nodes), for the name; a GPU KFD cannot
 *                tell about is listed from it alone, marked unread;
 *   VRAM         the node's memory banks of heap type 1 and 2 (framebuffer).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "detect/sysfs.h"
#include "platform/platform.h"

/* Every KFD node, CPU or GPU, is a numbered folder here. */
#define KFD_NODES "/sys/class/kfd/kfd/topology/nodes"

/* 1 PiB: more memory than any GPU has, and still exact as a JSON number. */
#define VRAM_MAX ((uint64_t)1 << 50)
/* gfx_target_version is major*10000 + minor*100 + stepping, two digits each. */
#define GFX_TARGET_MAX 999999u
/* DRM node numbers and KFD render minors stay far below this. */
#define DRM_NODE_MAX 65535u

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
		/* KFD writes one "name value" per line, one space between; the
		 * space is matched too, so that a key is never taken for a longer
		 * one that starts with it. */
		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			const char *v = p + klen + 1;
			size_t vlen = len - klen - 1;
			while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == ' '))
				vlen--;
			/* Only quoted in a warning: a long value shows cut, marked. */
			cfa_fit_text(r.text, sizeof(r.text), "%.*s%s", (int)(vlen > 24 ? 24 : vlen), v,
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
static bool hex_file(struct cfa_sys *s, const char *path, uint64_t max, uint64_t *out)
{
	char buf[64];
	const char *p = buf;

	if (cfa_sys_read(s, path, buf, sizeof(buf)) != 0)
		return false;
	/* sysfs prints PCI ids with "0x" (vendor 0x1002, class 0x030000);
	 * cfa_parse_hex takes the digits alone. */
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (cfa_parse_hex(p, strlen(p), max, out))
		return true;
	cfa_sys_warn(s, "%s: \"%.24s\" is not a hex number up to 0x%llx; ignored", path, buf,
	             (unsigned long long)max);
	return false;
}

/* Adds one memory bank's size when it is framebuffer memory (heap types 1
 * and 2); false, with a warning naming its file, when the size is not one
 * to believe: a wrapped or truncated total would show a wrong size. */
static bool add_bank(struct cfa_sys *s, const char *path, const char *text, uint64_t *total)
{
	struct prop heap = prop(text, "heap_type", UINT64_MAX);
	struct prop size = prop(text, "size_in_bytes", VRAM_MAX);

	/* KFD's heap types: 0 is system memory (an APU's banks), 1 the
	 * framebuffer the CPU reaches through the PCI BAR and 2 the rest of it.
	 * The board's VRAM is 1 and 2 together. */
	if (heap.state != PROP_OK || (heap.value != 1 && heap.value != 2))
		return true;
	if (size.state == PROP_BAD || (size.state == PROP_OK && *total > VRAM_MAX - size.value)) {
		cfa_sys_warn(s, "%s: size_in_bytes %s %s; the VRAM size is left unknown", path,
		             size.text, size.state == PROP_BAD ? "is not a size up to 1 PiB"
		             : "makes the banks add up to over 1 PiB");
		*total = 0;
		return false;
	}
	*total += size.value;
	return true;
}

/* The node's framebuffer memory; false when a bank's size is not one to
 * believe (then 0: unknown). */
static bool node_vram(struct cfa_sys *s, const char *node, uint64_t *total)
{
	struct cfa_names banks = {0};
	char *dir = cfa_sys_path(s, KFD_NODES "/%s/mem_banks", node), text[2048];
	bool ok = true;
	size_t i;

	*total = 0;
	cfa_sys_list(s, dir, &banks, cfa_sys_cmp_numeric_name);
	/* Once a bank is not believed the total stays 0, unknown: later banks
	 * are not added to it. */
	for (i = 0; i < banks.n && ok; i++) {
		char *path = cfa_aprintf("%s/%s/properties", dir, banks.items[i]);
		s->nomem |= !path;
		if (path && cfa_sys_read(s, path, text, sizeof(text)) == 0)
			ok = add_bank(s, path, text, total);
		cfa_free(path);
	}
	cfa_sys_names_free(&banks);
	cfa_free(dir);
	return ok;
}

/* An AMD GPU on the PCI bus as its DRM nodes (cardN, renderDN) show it. */
struct pci_gpu {
	int card, render;          /* node numbers, -1 when absent */
	uint16_t vendor, device;   /* 0 when unknown */
	uint32_t cls;              /* PCI class, 0 when unknown */
	int revision;              /* -1 when unknown */
	bool claimed;              /* a readable KFD node describes it */
	char *problem;             /* what its KFD node lacked, when that is known (owned) */
};

/* What one pass over the KFD topology and the DRM nodes found. */
struct scan {
	struct cfa_sys *sys;
	struct pci_gpu *pci;       /* every PCI device with a DRM node */
	size_t npci, pci_cap;
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

/* One PCI fact of a DRM node's device, when not known yet. */
static bool pci_fact(struct scan *s, const char *node, const char *file, uint64_t max,
                     uint64_t *out)
{
	char *path = cfa_sys_path(s->sys, "/sys/class/drm/%s/device/%s", node, file);
	bool ok = path && hex_file(s->sys, path, max, out);

	cfa_free(path);
	return ok;
}

/* Each PCI fact from the first of the device's nodes that shows it: a
 * broken tree may hold the revision only below card*, not renderD*. */
static void pci_facts(struct scan *s, const char *node, struct pci_gpu *p)
{
	uint64_t v;

	if (!p->vendor && pci_fact(s, node, "vendor", 0xffff, &v))
		p->vendor = (uint16_t)v;
	if (!p->device && pci_fact(s, node, "device", 0xffff, &v))
		p->device = (uint16_t)v;
	if (p->revision < 0 && pci_fact(s, node, "revision", 0xff, &v))
		p->revision = (int)v;
	if (!p->cls && pci_fact(s, node, "class", 0xffffff, &v))
		p->cls = (uint32_t)v;
}

/* The DRM nodes of the PCI device behind one node: the kernel lists them
 * in the device's drm/ folder; a tree without it pairs cardN with
 * renderD(128+N), the usual numbering. */
static void pci_siblings(struct scan *s, const char *node, const struct cfa_names *all,
                         struct pci_gpu *p)
{
	struct cfa_names sib = {0};
	char *dir = cfa_sys_path(s->sys, "/sys/class/drm/%s/device/drm", node), partner[32];
	size_t i;
	bool listed = cfa_sys_list(s->sys, dir, &sib, cfa_sys_cmp_name) == 0 && sib.n;

	for (i = 0; i < sib.n; i++)
		set_node(p, sib.items[i]);
	cfa_sys_names_free(&sib);
	cfa_free(dir);
	/* An empty drm/ folder tells nothing either: the partner is guessed as
	 * for a missing one. */
	if (listed)
		return;
	/* Node numbers up to DRM_NODE_MAX: the names always fit. */
	if (!(p->card >= 0 ? cfa_snprintf(partner, sizeof(partner), "renderD%d", p->card + 128)
	      : p->render >= 128 ? cfa_snprintf(partner, sizeof(partner), "card%d", p->render - 128)
	                         : false))
		return;
	for (i = 0; i < all->n; i++)
		if (strcmp(all->items[i], partner) == 0)
			set_node(p, partner);
}

/* A new PCI device in the scan; NULL when out of memory. */
static struct pci_gpu *pci_add(struct scan *s)
{
	struct pci_gpu *p;

	if (cfa_grow((void **)&s->pci, &s->pci_cap, s->npci + 1, sizeof(*s->pci)) != 0) {
		s->sys->nomem = true;
		return NULL;
	}
	p = &s->pci[s->npci++];
	memset(p, 0, sizeof(*p));
	p->card = p->render = p->revision = -1;
	return p;
}

/* Every PCI device with a DRM node, once, whatever its vendor. */
static void pci_gather(struct scan *s)
{
	struct cfa_names all = {0};
	char name[32];
	size_t i;
	int rc = cfa_sys_list_rel(s->sys, "/sys/class/drm", &all, cfa_sys_cmp_name);

	/* No /sys/class/drm at all is the answer of a machine without a GPU,
	 * and ENOMEM is already sticky on the pass: neither needs a warning. */
	if (rc && rc != ENOENT && rc != ENOMEM)
		cfa_sys_warn(s->sys, "cannot list %s/sys/class/drm: %s; GPUs are known only from the "
		             "KFD topology", s->sys->root, cfa_plat_strerror(rc));
	for (i = 0; i < all.n; i++) {
		struct pci_gpu *p;
		bool render;
		int num;
		/* A device's other nodes were placed with its first (pci_siblings):
		 * a node already placed is not a second device. */
		if (!drm_node(all.items[i], &render, &num) || pci_by_node(s, render, num))
			continue;
		if (!(p = pci_add(s)))
			break;
		set_node(p, all.items[i]);
		pci_siblings(s, all.items[i], &all, p);
		if (p->render >= 0 && cfa_snprintf(name, sizeof(name), "renderD%d", p->render))
			pci_facts(s, name, p);
		if (p->card >= 0 && cfa_snprintf(name, sizeof(name), "card%d", p->card))
			pci_facts(s, name, p);
	}
	cfa_sys_names_free(&all);
}

/* A CPU node has gpu_id 0; without that file, it has no SIMDs. */
static bool cpu_node(struct scan *s, const char *node, const char *props)
{
	char *path = cfa_sys_path(s->sys, KFD_NODES "/%s/gpu_id", node), buf[32];
	uint64_t id;
	struct prop simd;
	bool read = cfa_sys_read(s->sys, path, buf, sizeof(buf)) == 0 &&
	            cfa_parse_u64(buf, strlen(buf), UINT64_MAX, &id);

	cfa_free(path);
	if (read)
		return id == 0;
	/* Neither file read: the node is taken for a GPU, so that whatever
	 * kept it from being read is told rather than hidden. */
	if (!props)
		return false;
	simd = prop(props, "simd_count", UINT64_MAX);
	return simd.state == PROP_OK && simd.value == 0;
}

struct node_facts {
	char gfx[16];
	uint64_t vendor, device, minor;
};

static bool no_facts(char **why, const char *fmt, ...) CFA_PRINTF(2, 3);

/* Says why a node's facts cannot be used (text for people; NULL when out
 * of memory) and returns false. */
static bool no_facts(char **why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	*why = cfa_vaprintf(fmt, ap);
	va_end(ap);
	return false;
}

/* A GPU node's facts, or false and why they cannot be trusted: a value out
 * of range would otherwise be truncated into a wrong target or device. */
static bool node_facts(const char *text, struct node_facts *f, char **why)
{
	struct prop gtv = prop(text, "gfx_target_version", GFX_TARGET_MAX);
	struct prop vendor = prop(text, "vendor_id", 0xffff);
	struct prop device = prop(text, "device_id", 0xffff);
	struct prop minor = prop(text, "drm_render_minor", DRM_NODE_MAX);

	/* Set before the checks: a node whose facts fail still names its render
	 * minor, which ties the reason to its PCI device. */
	f->vendor = vendor.value;
	f->device = device.value;
	f->minor = minor.value;
	if (gtv.state == PROP_ABSENT)
		return no_facts(why, "no gfx_target_version (the file is empty or is not KFD "
		                "properties)");
	if (gtv.state == PROP_BAD)
		return no_facts(why, "gfx_target_version %s is out of range", gtv.text);
	if (gtv.value == 0)
		return no_facts(why, "gfx_target_version 0: the driver gives it no compute target");
	if (!cfa_gfx_from_kfd((unsigned long)gtv.value, f->gfx))
		return no_facts(why, "gfx_target_version %s does not decode to a target", gtv.text);
	if (vendor.state == PROP_BAD || device.state == PROP_BAD)
		return no_facts(why, "%s %s is not a 16-bit PCI id",
		                vendor.state == PROP_BAD ? "vendor_id" : "device_id",
		                vendor.state == PROP_BAD ? vendor.text : device.text);
	if (minor.state == PROP_BAD)
		return no_facts(why, "drm_render_minor %s is out of range", minor.text);
	return true;
}

/* A GPU node that cannot be used: its PCI device, when the node names one,
 * is listed later with the reason; otherwise only the warning remains. */
static void bad_node(struct scan *s, const char *node, const char *path, bool unreadable,
                     const char *why, struct pci_gpu *p)
{
	cfa_sys_warn(s->sys, "KFD node %s is not used: %s%s: %s", node,
	             unreadable ? "cannot read " : "", path, why);
	/* A device keeps the first reason given for it; a reason no unclaimed
	 * device can carry is only counted, for unclaimed_problem's wording. */
	if (p && !p->claimed && !p->problem)
		s->sys->nomem |= !cfa_machine_setf(&p->problem, "KFD node %s: %s", node, why);
	else
		s->bad_nodes++;
}

/* One KFD node's GPU, from its properties file at path. */
static void kfd_gpu(struct scan *s, const char *node, const char *path)
{
	char text[8192], *why = NULL;
	struct node_facts f = {0};
	struct pci_gpu *p;
	struct cfapkg_gpu *g;
	int err = cfa_sys_read_quiet(path, text, sizeof(text));

	if (err) {
		if (!cpu_node(s, node, NULL)) /* a container, a cgroup, a broken driver */
			bad_node(s, node, path, true, err == EFBIG ? "larger than expected"
			                                           : cfa_plat_strerror(err), NULL);
		return;
	}
	if (cpu_node(s, node, text))
		return;
	if (!node_facts(text, &f, &why)) {
		if (why)
			bad_node(s, node, path, false, why,
			         f.minor ? pci_by_node(s, true, (int)f.minor) : NULL);
		s->sys->nomem |= !why;
		cfa_free(why);
		return;
	}
	if (!(g = cfa_machine_add_gpu(s->sys->m))) {
		s->sys->nomem = true;
		return;
	}
	CFA_MACHINE_NAME(g->source, "kfd");
	memcpy(g->gfx, f.gfx, sizeof(g->gfx)); /* the same size */
	g->vendor = (uint16_t)f.vendor;
	g->device = (uint16_t)f.device;
	node_vram(s->sys, node, &g->vram_bytes);
	/* drm_render_minor 0 is no render node (renderD numbers start at 128):
	 * the node then matches no PCI device. */
	p = f.minor ? pci_by_node(s, true, (int)f.minor) : NULL;
	if (!p)
		return;
	p->claimed = true;
	/* Only the PCI device gives the revision, which gpus.json needs to tell
	 * apart boards that share a device id; its ids, where it has them, go
	 * with it. */
	g->vendor = p->vendor ? p->vendor : g->vendor;
	g->device = p->device ? p->device : g->device;
	g->revision = p->revision;
}

static void kfd_node(struct scan *s, const char *node)
{
	char *path = cfa_sys_path(s->sys, KFD_NODES "/%s/properties", node);

	if (path)
		kfd_gpu(s, node, path);
	cfa_free(path);
}

/* Why a PCI device no readable KFD node describes is listed so, into
 * *out (left NULL when nothing is known). */
static void unclaimed_problem(const struct scan *s, const struct pci_gpu *p, char **out)
{
	bool ok = true;

	/* The most particular reason first: the node's own, then the topology
	 * as a whole, then nodes that could not be read, then a topology that just lacks it. */
	if (p->problem)
		ok = cfa_machine_setf(out, "%s", p->problem);
	else if (s->topology_err && s->topology_err != ENOENT)
		ok = cfa_machine_setf(out, "the KFD topology could not be read (%s)",
		                      cfa_plat_strerror(s->topology_err));
	else if (s->bad_nodes)
		ok = cfa_machine_setf(out, "no readable KFD node describes it");
	else if (!s->topology_err)
		ok = cfa_machine_setf(out, "no KFD node describes it (the driver gave it no compute "
		                      "support)");
	s->sys->nomem |= !ok;
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
		/* 0x1002 is AMD's PCI vendor id; base class 0x03 is a display
		 * controller.  A device a KFD node pointed at is a GPU whatever
		 * class it reports. */
		if (p->claimed || p->vendor != 0x1002 || (!p->problem && (p->cls >> 16) != 0x03))
			continue;
		if (!(g = cfa_machine_add_gpu(s->sys->m))) {
			s->sys->nomem = true;
			return;
		}
		g->vendor = p->vendor;
		g->device = p->device;
		g->revision = p->revision;
		CFA_MACHINE_NAME(g->source, "pci");
		unclaimed_problem(s, p, &g->problem);
	}
}

void cfa_sys_detect_gpus(struct cfa_sys *sys)
{
	struct scan s;
	struct cfa_names nodes = {0};
	size_t i;

	memset(&s, 0, sizeof(s));
	s.sys = sys;
	/* The PCI devices first: each KFD node is matched to one by its render
	 * minor as it is read, and those left over are listed after. */
	pci_gather(&s);
	s.topology_err = cfa_sys_list_rel(sys, KFD_NODES, &nodes, cfa_sys_cmp_numeric_name);
	if (s.topology_err && s.topology_err != ENOENT && s.topology_err != ENOMEM)
		cfa_sys_warn(sys, "cannot list %s" KFD_NODES ": %s; the GPUs' compute targets are "
		             "unknown: check the folder's permissions, that the amdgpu driver is "
		             "loaded, and in a container that /dev/kfd and /sys/class/kfd are passed "
		             "in", sys->root, cfa_plat_strerror(s.topology_err));
	for (i = 0; i < nodes.n && !sys->nomem; i++)
		kfd_node(&s, nodes.items[i]);
	if (!sys->nomem)
		pci_unclaimed(&s);
	cfa_sys_names_free(&nodes);
	for (i = 0; i < s.npci; i++)
		cfa_free(s.pci[i].problem);
	cfa_free(s.pci);
}

/* Once memory ran out the pass ends in CFAPKG_E_NOMEM whatever the later
 * steps would find, so they are skipped. */
enum cfapkg_err cfa_detect_sysfs(struct cfapkg_ctx *ctx, const char *root,
                                 struct cfapkg_machine *m)
{
	struct cfa_sys s = {m, root, false};

	cfa_sys_detect_os(&s);
	cfa_sys_detect_gpus(&s);
	if (!s.nomem)
		cfa_sys_detect_driver(&s);
	if (!s.nomem)
		cfa_sys_detect_rocm(&s);
	if (!s.nomem)
		cfa_sys_detect_glibc(&s);
	return s.nomem ? cfa_nomem(ctx) : CFAPKG_E_OK;
}
