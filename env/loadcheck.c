/*
 * loadcheck.c - does an environment hold what its libraries load?  Every
 * ELF library and program in a part's runtime folders (the folders that
 * 'cfapkg run' puts on the library path) is read for its DT_NEEDED names,
 * and each name must be found where the loader will look: a file of that
 * name in any part's runtime folder, in a folder its own RUNPATH or RPATH
 * names relative to $ORIGIN, or a library of the C library itself (the
 * machine's, like the driver).  A name found nowhere would make the
 * library fail to load (a hand-written Debian set once lacked comgr's
 * libLLVM.so.21.1 and said nothing); a name found only among this
 * system's own libraries works here but not on a machine without them.
 *
 * For a Debian set the report says which package should carry the name:
 * one that a member's Depends names and the set lacks, when it matches
 * the name Debian gives a library of that soname (libLLVM.so.21.1 is in
 * libllvm21, libamd_comgr.so.3 in libamd-comgr3), else that name alone.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/debindex.h"
#include "core/elf.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* A folder where the loader looks, and the part it belongs to (NULL: a
 * folder outside the environment, a system ROCm's). */
struct search_dir {
	const char *path;
	const char *part, *version;
	const char **names;       /* its entries, sorted */
	size_t nnames;
};

struct checker {
	struct cfapkg_ctx *ctx;
	struct cfa_arena arena;
	struct search_dir *dirs;
	size_t ndirs, cap;
	const char *host_root;    /* "" or CFAPKG_SYSROOT */
	cfapkg_load_issue_fn fn;
	void *arg;
	size_t missing, host;
	bool nomem;
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct lister {
	struct checker *c;
	struct search_dir *d;
	size_t cap;
};

/* Adds one entry name to the folder's list.  The arena cannot grow a block in
 * place, so a full list doubles into a new one and the old block stays until
 * the arena goes; doubling keeps that waste below the list's final size.
 * Running out of memory stops the listing (1). */
static int take_name(const char *name, void *arg)
{
	struct lister *l = arg;
	const char **more;

	if (l->d->nnames == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		if (!(more = cfa_arena_alloc(&l->c->arena, cap * sizeof(*more)))) {
			l->c->nomem = true;
			return 1;
		}
		if (l->d->nnames)
			memcpy(more, l->d->names, l->d->nnames * sizeof(*more));
		l->d->names = more;
		l->cap = cap;
	}
	if (!(l->d->names[l->d->nnames] = cfa_arena_strdup(&l->c->arena, name))) {
		l->c->nomem = true;
		return 1;
	}
	l->d->nnames++;
	return 0;
}

static void add_dir(struct checker *c, const char *path, const char *part, const char *version)
{
	struct search_dir *d;
	struct lister l;
	size_t i;

	/* A folder that two parts' PATH entries both name is listed once. */
	for (i = 0; i < c->ndirs; i++)
		if (strcmp(c->dirs[i].path, path) == 0)
			return;
	if (cfa_grow((void **)&c->dirs, &c->cap, c->ndirs + 1, sizeof(*c->dirs)) != 0) {
		c->nomem = true;
		return;
	}
	d = &c->dirs[c->ndirs++];
	memset(d, 0, sizeof(*d));
	d->path = cfa_arena_strdup(&c->arena, path);
	d->part = part;
	d->version = version;
	l = (struct lister){c, d, 0};
	c->nomem |= !d->path;
	if (d->path)
		cfa_plat_list_dir(path, take_name, &l); /* a folder not there holds nothing */
	/* Sorted so that a lookup is a binary search: every needed name of
	 * every object is looked up in every folder. */
	if (d->nnames)
		qsort(d->names, d->nnames, sizeof(*d->names), name_cmp);
}

static bool dir_has(const struct search_dir *d, const char *name)
{
	return bsearch(&name, d->names, d->nnames, sizeof(*d->names), name_cmp) != NULL;
}

/* A name in any folder counts, not only in the part's own: the loader searches
 * the whole library path. */
static bool env_has(const struct checker *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->ndirs; i++)
		if (dir_has(&c->dirs[i], name))
			return true;
	return false;
}

/* A RUNPATH or RPATH folder relative to the library's own ($ORIGIN). */
static bool origin_has(const char *runpath, const char *libdir, const char *name)
{
	const char *s = runpath;
	bool found = false;

	/* Only an entry relative to $ORIGIN can point into the environment;
	 * an absolute one names a fixed folder of some machine, which the
	 * check does not count on. */
	while (s && *s && !found) {
		size_t n = strcspn(s, ":");
		const char *rest = NULL;
		if (n >= 7 && strncmp(s, "$ORIGIN", 7) == 0)
			rest = s + 7;
		else if (n >= 9 && strncmp(s, "${ORIGIN}", 9) == 0)
			rest = s + 9;
		if (rest) {
			char *path = cfa_aprintf("%s%.*s/%s", libdir, (int)(n - (size_t)(rest - s)), rest,
			                         name);
			found = path && cfa_plat_is_file(path);
			cfa_free(path);
		}
		s += n + (s[n] == ':');
	}
	return found;
}

/* This system's own copy of name, if its loader would find one. */
static char *host_copy(const struct checker *c, const char *name)
{
	size_t i;

	for (i = 0; i < cfa_elf_nsystem_dirs; i++) {
		char *path = cfa_aprintf("%s%s/%s", c->host_root, cfa_elf_system_dirs[i], name);
		if (path && cfa_plat_is_file(path))
			return path;
		cfa_free(path);
	}
	return NULL;
}

/* The name Debian gives the package of a soname: "libLLVM.so.21.1" ->
 * "libllvm21", "libamd_comgr.so.3" -> "libamd-comgr3", "libamdhip64.so.6"
 * -> "libamdhip64-6" (a digit before the version takes a hyphen). */
static char *debian_name(const char *soname)
{
	const char *so = strstr(soname, ".so."), *ver;
	size_t n, v, i;
	char *out;

	if (!so)
		return NULL;
	n = (size_t)(so - soname);
	ver = so + 4;
	v = strcspn(ver, ".");
	if (!v || !(out = cfa_malloc(n + v + 2)))
		return NULL;
	for (i = 0; i < n; i++) {
		char ch = soname[i];
		out[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch == '_' ? '-' : ch;
	}
	if (n && soname[n - 1] >= '0' && soname[n - 1] <= '9')
		out[n++] = '-';
	memcpy(out + n, ver, v);
	out[n + v] = '\0';
	return out;
}

struct carrier {
	const struct cfapkg_apt_source *apt;
	const char *want, *found;
};

/* A name of some Depends that the set does not hold. */
static bool absent_dep(const char *name, void *arg)
{
	struct carrier *k = arg;
	size_t i;

	if (strcmp(name, k->want) != 0)
		return true;
	for (i = 0; i < k->apt->npackages; i++)
		if (strcmp(k->apt->pins[i].name, name) == 0)
			return true; /* in the set: not the one missing */
	k->found = name;
	return false;
}

/* The Debian set a part was pinned from, if it was. */
static const struct cfapkg_apt_source *pinned_set(struct cfapkg_ctx *ctx, const char *part,
                                                  const char *version)
{
	const struct cfapkg_recipe *r = part ? cfapkg_recipe_find(ctx, part) : NULL;
	size_t i;

	cfapkg_ctx_clear_error(ctx); /* no recipe: no Debian set to name */
	for (i = 0; r && i < r->nversions; i++) {
		const struct cfapkg_source *s =
			strcmp(r->versions[i].version, version) == 0
				? cfapkg_version_source(&r->versions[i], "linux", cfa_plat_arch())
				: NULL;
		if (s && s->apt && s->apt->pins)
			return s->apt;
	}
	return NULL;
}

/* A part pinned from a Debian set also gets a guess at the package that should
 * carry the name: Debian's name for a library of that soname, said to be named
 * in a member's Depends when one names it and the set lacks it. */
static void report(struct checker *c, const struct search_dir *d, const char *file,
                   const char *needed, const char *host)
{
	const struct cfapkg_apt_source *apt = pinned_set(c->ctx, d->part, d->version);
	struct cfapkg_load_issue is = {d->part, d->version, file, needed, host, NULL, NULL};
	char *guess = debian_name(needed), *why = NULL;
	struct carrier k = {apt, guess, NULL};
	size_t i;

	for (i = 0; apt && guess && i < apt->npackages && !k.found; i++)
		if (!cfa_deb_depends_each(apt->pins[i].depends, absent_dep, &k))
			why = cfa_aprintf("named in %s's Depends", apt->pins[i].name);
	if (apt && guess) {
		is.carrier = guess;
		is.carrier_why = why ? why : "Debian's name for a library of that soname";
	}
	c->fn(c->arg, &is);
	cfa_free(guess);
	cfa_free(why);
}

static void check_needed(struct checker *c, const struct search_dir *d, const char *file,
                         const struct cfa_elf *e, const char *name)
{
	char *host;

	/* A name with a '/' is a path the loader opens as it is, never searched
	 * for; the C library's names are the machine's by definition.  RUNPATH
	 * is used before RPATH because the loader ignores RPATH when RUNPATH is
	 * there. */
	if (strchr(name, '/') || cfa_elf_glibc_name(name) || env_has(c, name) ||
	    origin_has(e->runpath ? e->runpath : e->rpath, d->path, name))
		return;
	host = host_copy(c, name);
	if (host)
		c->host++;
	else
		c->missing++;
	report(c, d, file, name, host);
	cfa_free(host);
}

/* Every ELF object directly in a part's folder. */
static void check_dir(struct checker *c, const struct search_dir *d)
{
	size_t i, k;

	for (i = 0; i < d->nnames && !c->nomem; i++) {
		char *path = cfa_aprintf("%s/%s", d->path, d->names[i]);
		long long size;
		int mode;
		struct cfa_elf e;
		const char *why;
		struct cfa_arena a;
		/* A link is the file it names, which is checked under its own name. */
		if (!path || !cfa_plat_regular_file(path, &size, &mode)) {
			c->nomem |= !path;
			cfa_free(path);
			continue;
		}
		cfa_arena_init(&a);
		/* Only what the loader loads, shared objects and programs, has
		 * needs to meet; an object file beside them has none. */
		if (cfa_elf_read_file(path, &a, &e, &why) == CFA_ELF_OK &&
		    (e.type == CFA_ELF_DYN || e.type == CFA_ELF_EXEC))
			for (k = 0; k < e.nneeded; k++)
				check_needed(c, d, path, &e, e.needed[k]);
		cfa_arena_fini(&a);
		cfa_free(path);
	}
}

static enum cfapkg_err run(struct checker *c, size_t *missing, size_t *host)
{
	size_t i;

	/* Folders of no part (a system ROCm's) only serve for finding names:
	 * their own libraries are not the environment's to check. */
	for (i = 0; i < c->ndirs && !c->nomem; i++)
		if (c->dirs[i].part)
			check_dir(c, &c->dirs[i]);
	if (missing)
		*missing = c->missing;
	if (host)
		*host = c->host;
	cfa_free(c->dirs);
	cfa_arena_fini(&c->arena);
	return c->nomem ? cfa_nomem(c->ctx) : CFAPKG_E_OK;
}

static void init(struct checker *c, struct cfapkg_ctx *ctx, cfapkg_load_issue_fn fn, void *arg)
{
	/* CFAPKG_SYSROOT puts the system's library folders under a test's
	 * made-up root, as detect/ does with the rest of the system. */
	const char *root = getenv("CFAPKG_SYSROOT");

	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	cfa_arena_init(&c->arena);
	c->host_root = root ? root : "";
	c->fn = fn;
	c->arg = arg;
}

enum cfapkg_err cfa_load_check_gen(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                   const char *gendir, cfapkg_load_issue_fn fn, void *arg,
                                   size_t *missing, size_t *host)
{
	struct checker c;
	size_t i, j;

	init(&c, ctx, fn, arg);
	if (strcmp(lock->facts.os, "linux") != 0)
		return run(&c, missing, host); /* DLLs are found by other rules */
	for (i = 0; i < lock->nparts && !c.nomem; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		/* Only the packages' folders are in the view.  A system part's
		 * are found on the machine when a program starts, so there is
		 * nothing of theirs to read when a generation is made. */
		for (j = 0; p->kind == CFAPKG_KIND_PACKAGE && j < p->npath; j++) {
			char *dir = cfa_aprintf("%s/view/%s/%s", gendir, p->name, p->path[j]);
			c.nomem |= !dir;
			if (dir)
				add_dir(&c, dir, p->name, p->version);
			cfa_free(dir);
		}
	}
	return run(&c, missing, host);
}

/* The part whose folder holds dir, if any. */
static const struct cfapkg_runtime_part *owner(const struct cfapkg_runtime *rt, const char *dir)
{
	size_t i, n;

	for (i = 0; i < rt->nparts; i++) {
		const struct cfapkg_runtime_part *p = &rt->parts[i];
		if (p->kind != CFAPKG_KIND_PACKAGE || !p->prefix)
			continue;
		n = strlen(p->prefix);
		/* The prefix must end at a separator, so that "/x/torch2" is
		 * not taken for a folder of "/x/torch". */
		if (strncmp(dir, p->prefix, n) == 0 && (dir[n] == '/' || dir[n] == '\0'))
			return p;
	}
	return NULL;
}

enum cfapkg_err cfapkg_load_check(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                                  cfapkg_load_issue_fn fn, void *arg, size_t *missing,
                                  size_t *host)
{
	struct checker c;
	size_t i;

	init(&c, ctx, fn, arg);
	if (strcmp(rt->os, "linux") != 0)
		return run(&c, missing, host);
	/* Every folder of the library path counts for finding a name; only
	 * the environment's own are checked. */
	for (i = 0; i < rt->npath && !c.nomem; i++) {
		const struct cfapkg_runtime_part *p = owner(rt, rt->path[i]);
		add_dir(&c, rt->path[i], p ? p->name : NULL, p ? p->version : NULL);
	}
	return run(&c, missing, host);
}
