/*
 * sysfs_libc.c - the machine's C library, a fact like the driver: Debian
 * builds ask for it in their Depends (libc6 (>= 2.38)), conda and pixi
 * check it as __glibc.  On the live system it is the glibc this process
 * runs on; below a detection root (a fixture, another machine's tree) it
 * is read from that root's libc.so.6: the newest GLIBC_X.Y version the
 * library defines is its own version, as every glibc release adds one.
 */
#include <string.h>

#include "core/arena.h"
#include "core/elf.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "detect/sysfs.h"
#include "platform/platform.h"

/* The newest "GLIBC_X.Y[.Z]" of a version list, or NULL. */
static const char *newest_glibc(const struct cfa_elf *e)
{
	struct cfa_ver best, v;
	const char *found = NULL;
	size_t i;

	for (i = 0; i < e->nverdefs; i++) {
		const char *name = e->verdefs[i];
		if (strncmp(name, "GLIBC_", 6) != 0 || name[6] < '0' || name[6] > '9' ||
		    !cfa_ver_parse(name + 6, strlen(name + 6), &v, NULL))
			continue; /* GLIBC_PRIVATE and the library's own name */
		if (!found || cfa_ver_cmp(&v, &best) > 0) {
			best = v;
			found = name + 6;
		}
	}
	return found;
}

/* The library is read as ELF, never loaded or run: below a root it may be
 * another machine's, even another architecture's. */
static bool from_file(struct cfa_sys *s, const char *path)
{
	struct cfapkg_machine *m = s->m;
	struct cfa_arena a;
	struct cfa_elf e;
	const char *why = NULL, *version = NULL;

	cfa_arena_init(&a);
	if (cfa_elf_read_file(path, &a, &e, &why) == CFA_ELF_OK)
		version = newest_glibc(&e);
	if (version)
		s->nomem |= !cfa_machine_setf(&m->glibc, "%s", version) ||
		            !cfa_machine_setf(&m->glibc_source, "%s", path);
	else if (cfa_plat_is_file(path))
		cfa_sys_warn(s, "%s: not a glibc whose version could be read%s%s", path,
		             why ? ": " : "", why ? why : "");
	cfa_arena_fini(&a);
	return version != NULL;
}

void cfa_sys_detect_glibc(struct cfa_sys *s)
{
	struct cfapkg_machine *m = s->m;
	/* glibc's versions are a few digits and dots: a longer answer is not
	 * one, and the files are read instead. */
	char running[64];
	size_t i;

	/* On the live system the running library answers: it is the one that
	 * programs load, whatever copies lie in the folders. */
	if (!s->root[0] && cfa_plat_glibc_version(running, sizeof(running))) {
		s->nomem |= !cfa_machine_setf(&m->glibc, "%s", running) ||
		            !cfa_machine_setf(&m->glibc_source,
		                              "the running C library (gnu_get_libc_version)");
		return;
	}
	for (i = 0; i < cfa_elf_nsystem_dirs && !s->nomem; i++) {
		char *path = cfa_sys_path(s, "%s/libc.so.6", cfa_elf_system_dirs[i]);
		bool found = path && cfa_plat_is_file(path) && from_file(s, path);
		cfa_free(path);
		if (found)
			return;
	}
}
