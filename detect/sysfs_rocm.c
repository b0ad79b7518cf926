/*
 * sysfs_rocm.c - the Linux machine's software, read below the detection
 * root: the OS release, the amdgpu driver (or the kernel that carries
 * it), and ROCm: /opt/rocm* (.info/version, else the folder name) and
 * libamdhip64.so.N for the HIP runtime majors.
 */
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "detect/sysfs.h"
#include "platform/platform.h"

void cfa_sys_detect_driver(struct cfa_sys *s)
{
	struct cfapkg_machine *m = s->m;
	char module[128], kernel[128];
	/* The version file exists only for an out-of-tree (DKMS) amdgpu
	 * module; the in-tree driver has none and goes with the kernel's
	 * release. */
	bool has_module = cfa_sys_read_rel(s, "/sys/module/amdgpu/version", module,
	                                   sizeof(module)) == 0 && module[0];
	bool has_kernel = cfa_sys_read_rel(s, "/proc/sys/kernel/osrelease", kernel,
	                                   sizeof(kernel)) == 0;
	bool ok = true;

	if (has_module)
		ok = cfa_machine_setf(&m->driver, "%s", module) &&
		     cfa_machine_setf(&m->driver_source, "amdgpu module");
	else if (has_kernel)
		ok = cfa_machine_setf(&m->driver, "%s", kernel) &&
		     cfa_machine_setf(&m->driver_source, "kernel release (in-tree amdgpu)");
	if (ok && has_kernel)
		ok = cfa_machine_setf(&m->driver_detail, "kernel %s", kernel);
	s->nomem |= !ok;
}

/* libamdhip64.so.N files in a folder give the runtime majors. */
static void runtimes_in(struct cfa_sys *s, const char *dir)
{
	struct cfa_names files = {.prefix = "libamdhip64.so."};
	size_t i;

	cfa_sys_list(s, dir, &files, cfa_sys_cmp_name); /* a folder not there has none */
	for (i = 0; i < files.n && !s->nomem; i++) {
		const char *f = files.items[i];
		uint64_t major;
		char *path;
		/* "libamdhip64.so.6.4.60402": the first number after ".so."
		 * is the major. */
		if (!cfa_parse_u64(f + 15, strcspn(f + 15, "."), 99, &major) || major == 0)
			continue;
		path = cfa_aprintf("%s/%s", dir, f);
		s->nomem |= !path || !cfa_machine_add_runtime(s->m, (unsigned)major, path);
		cfa_free(path);
	}
	cfa_sys_names_free(&files);
}

/* "6.4.2-120" -> "6.4.2"; "rocm-6.4.2" -> "6.4.2".  Allocated; NULL
 * when there is none (or out of memory: s->nomem). */
static char *rocm_version(struct cfa_sys *s, const char *dir, const char *name)
{
	char *path = cfa_aprintf("%s/.info/version", dir), buf[64], *v = NULL;
	struct cfa_ver ver;
	bool read = cfa_sys_read(s, path, buf, sizeof(buf)) == 0;

	s->nomem |= !path;
	cfa_free(path);
	/* The build number after '-' is the packaging's, not part of the
	 * ROCm version. */
	if (read)
		buf[strcspn(buf, "-\n ")] = '\0';
	/* Without a version in .info the folder's name gives it, when it has
	 * one: /opt/rocm, most often a link, has none. */
	if (read && cfa_ver_parse(buf, strlen(buf), &ver, NULL))
		v = cfa_strdup(buf);
	else if (strncmp(name, "rocm-", 5) == 0 &&
	         cfa_ver_parse(name + 5, strlen(name + 5), &ver, NULL))
		v = cfa_strdup(name + 5);
	else
		return NULL;
	s->nomem |= !v;
	return v;
}

/* /opt/rocm*: an SDK each, and their HIP runtimes. */
static void rocm_in_opt(struct cfa_sys *s)
{
	struct cfa_names opt = {0};
	size_t i;

	cfa_sys_list_rel(s, "/opt", &opt, cfa_sys_cmp_name);
	for (i = 0; i < opt.n && !s->nomem; i++) {
		char *dir, *lib, *version;
		if (strncmp(opt.items[i], "rocm", 4) != 0)
			continue;
		dir = cfa_sys_path(s, "/opt/%s", opt.items[i]);
		lib = dir ? cfa_aprintf("%s/lib", dir) : NULL;
		s->nomem |= !lib;
		version = dir ? rocm_version(s, dir, opt.items[i]) : NULL;
		if (version)
			s->nomem |= !cfa_machine_add_sdk(s->m, version, dir, "/opt");
		/* Its runtimes count even when its version cannot be told: the
		 * libraries are there all the same. */
		if (lib)
			runtimes_in(s, lib);
		cfa_free(version);
		cfa_free(lib);
		cfa_free(dir);
	}
	cfa_sys_names_free(&opt);
}

void cfa_sys_detect_rocm(struct cfa_sys *s)
{
	/* Distributions that package ROCm themselves put libamdhip64 in the
	 * system's library folder: the multiarch one on Debian and Ubuntu,
	 * lib64 on Fedora, lib elsewhere. */
	static const char *const libdirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"};
	const char *ld = getenv("LD_LIBRARY_PATH");
	size_t i;

	rocm_in_opt(s);
	for (i = 0; i < sizeof(libdirs) / sizeof(libdirs[0]) && !s->nomem; i++) {
		char *dir = cfa_sys_path(s, "%s", libdirs[i]);
		if (dir)
			runtimes_in(s, dir);
		cfa_free(dir);
	}
	/* LD_LIBRARY_PATH is this process's: it describes this machine, and
	 * so is read only when no other root is (CFAPKG_SYSROOT), its
	 * folders as given.  Empty entries are skipped. */
	if (s->root[0])
		ld = NULL;
	while (ld && *ld && !s->nomem) {
		size_t n = strcspn(ld, ":");
		char *dir = n ? cfa_strndup(ld, n) : NULL;
		s->nomem |= n && !dir;
		if (dir)
			runtimes_in(s, dir);
		cfa_free(dir);
		ld += n + (ld[n] == ':');
	}
}

void cfa_sys_detect_os(struct cfa_sys *s)
{
	char text[16384], kernel[128] = "";
	const char *pretty;
	struct cfapkg_machine *m = s->m;
	bool ok = true;

	if (cfa_sys_read_rel(s, "/proc/sys/kernel/osrelease", kernel, sizeof(kernel)) != 0)
		kernel[0] = '\0';
	/* os-release(5): PRETTY_NAME is the distribution's own display name,
	 * possibly quoted. */
	if (cfa_sys_read_rel(s, "/etc/os-release", text, sizeof(text)) == 0 &&
	    (pretty = strstr(text, "PRETTY_NAME=")) != NULL) {
		pretty += 12;
		if (*pretty == '"')
			pretty++;
		/* The value ends at its closing quote, or at the line's end when it
		 * is not quoted. */
		ok = cfa_machine_setf(&m->os_build, "%.*s%s%s", (int)strcspn(pretty, "\"\n"), pretty,
		                      kernel[0] ? ", kernel " : "", kernel);
	} else if (kernel[0]) {
		ok = cfa_machine_setf(&m->os_build, "Linux, kernel %s", kernel);
	}
	s->nomem |= !ok;
}
