/*
 * runtime_json.c - a generation's runtime.json, from its lock (written
 * with the generation, so it lives with the environments; runtime/ reads
 * it when a program starts): every part's PATH
 * folders in dependency order (what a library needs is found before the
 * library that needs it... and a replacement before what it replaces),
 * its variables in the same order (later parts override), the launcher,
 * and the files to stage, with "*.ext" patterns expanded against the view.
 */
#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* One entry of a runtime.json list; a failed step marks jb. */
static cJSON *entry(struct cfa_json_build *jb, const struct cfapkg_lockfile_part *p, const char *key,
                    const char *value)
{
	cJSON *o = cfa_json_new_object(jb);

	cfa_json_add_string(jb, o, "part", p->name);
	cfa_json_add_string(jb, o, "version", p->version);
	cfa_json_add_bool(jb, o, "system", p->kind == CFAPKG_KIND_SYSTEM);
	cfa_json_add_string(jb, o, key, value);
	return o;
}

/* "{gfx}" becomes the target; "{prefix}" stays for the loader.  NULL when
 * out of memory. */
static char *expand_gfx(const char *in, const char *gfx)
{
	const char *at = strstr(in, "{gfx}");

	/* With no target in the lock the value is kept as written:
	 * runtime/ expands the marks it still holds when a program starts
	 * (resolve.c). */
	if (!at || !gfx[0])
		return cfa_strdup(in);
	return cfa_aprintf("%.*s%s%s", (int)(at - in), in, gfx, at + 5);
}

/* The names in a part's view that match "*.ext", however many. */
struct stage_scan {
	const char *suffix;
	char **names;
	size_t n, cap;
	bool failed;
};

/* Case is ignored as Windows ignores it, so "*.dll" matches FOO.DLL.  Folding
 * with | 0x20 is enough for what a suffix holds: letters, digits and dots. */
static bool ends_with_nocase(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix), i;

	if (m > n)
		return false;
	for (i = 0; i < m; i++)
		if ((s[n - m + i] | 0x20) != (suffix[i] | 0x20))
			return false;
	return true;
}

/* One stage entry.  "from" is relative to the generation, like every package
 * path in runtime.json, so it holds whether the generation is reached through
 * its numbered folder or through the active link. */
static void add_stage(struct cfa_json_build *jb, cJSON *list, const struct cfapkg_lockfile_part *p,
                      const char *file, const char *as)
{
	char *from = cfa_aprintf("view/%s/%s", p->name, file);
	cJSON *o = cfa_json_new_object(jb);

	if (!from)
		jb->failed = true;
	cfa_json_add_string(jb, o, "part", p->name);
	cfa_json_add_string(jb, o, "from", from);
	cfa_json_add_string(jb, o, "as", as);
	cfa_json_append(jb, list, o);
	cfa_free(from);
}

static int stage_match(const char *name, void *arg)
{
	struct stage_scan *s = arg;

	if (s->failed || !ends_with_nocase(name, s->suffix))
		return 0;
	if (cfa_grow((void **)&s->names, &s->cap, s->n + 1, sizeof(*s->names)) != 0 ||
	    !(s->names[s->n] = cfa_strdup(name)))
		s->failed = true;
	else
		s->n++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file of view matching pattern ("*.dll"), sorted, as stage entries. */
static void stage_pattern(struct cfa_json_build *jb, cJSON *list, const struct cfapkg_lockfile_part *p,
                          const char *view, const char *pattern)
{
	struct stage_scan s = {pattern + 1, NULL, 0, 0, false};
	size_t k;

	cfa_plat_list_dir(view, stage_match, &s);
	/* Sorted, when read whole, because a listing comes in no set order and
	 * the same view must give the same runtime.json. */
	if (s.failed)
		jb->failed = true;
	else if (s.n)
		qsort(s.names, s.n, sizeof(*s.names), by_name);
	for (k = 0; k < s.n; k++) {
		if (!s.failed)
			add_stage(jb, list, p, s.names[k], s.names[k]);
		cfa_free(s.names[k]);
	}
	cfa_free(s.names);
}

static void stage_part(struct cfa_json_build *jb, cJSON *list, const struct cfapkg_lockfile_part *p,
                       const char *gendir)
{
	char *view = cfa_aprintf("%s/view/%s", gendir, p->name), *path;
	size_t i;

	if (!view) {
		jb->failed = true;
		return;
	}
	for (i = 0; i < p->nstage && !jb->failed; i++) {
		if (p->stage[i][0] == '*') {
			stage_pattern(jb, list, p, view, p->stage[i]);
		} else if (!(path = cfa_aprintf("%s/%s", view, p->stage[i]))) {
			jb->failed = true;
		} else {
			if (cfa_plat_is_file(path))
				add_stage(jb, list, p, p->stage[i], p->stage[i]);
			cfa_free(path);
		}
	}
	/* Layout names are staged without a look: the view's check (view.c) has
	 * already refused a part whose layout name is missing. */
	for (i = 0; i < p->nlayout; i++)
		add_stage(jb, list, p, p->layout[i].as, p->layout[i].as);
	cfa_free(view);
}

/* A part's PATH folders and variables. */
static void part_runtime(struct cfa_json_build *jb, cJSON *path, cJSON *env,
                         const struct cfapkg_lockfile_part *p, const char *gfx)
{
	char *value;
	size_t k;

	for (k = 0; k < p->npath && !jb->failed; k++) {
		if (!(value = cfa_aprintf("{prefix}/%s", p->path[k])))
			jb->failed = true;
		else
			cfa_json_append(jb, path, entry(jb, p, "dir", value));
		cfa_free(value);
	}
	for (k = 0; k < p->nenv && !jb->failed; k++) {
		cJSON *e;
		if (!(value = expand_gfx(p->env[k].value, gfx))) {
			jb->failed = true;
			break;
		}
		e = entry(jb, p, "value", value);
		cfa_json_add_string(jb, e, "name", p->env[k].name);
		cfa_json_append(jb, env, e);
		cfa_free(value);
	}
}

cJSON *cfa_runtime_json(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                        const char *gendir)
{
	struct cfa_json_build jb = {false};
	cJSON *o = cfa_json_new_object(&jb), *path, *env, *stage, *parts;
	const struct cfapkg_lockfile_part *launcher = NULL;
	size_t i;

	(void)ctx;
	cfa_json_add_number(&jb, o, "format", 1);
	cfa_json_add_string(&jb, o, "os", lock->facts.os);
	cfa_json_add_string(&jb, o, "gfx", lock->facts.gfx);
	path = cfa_json_add_array(&jb, o, "path");
	env = cfa_json_add_array(&jb, o, "env");
	stage = cfa_json_add_array(&jb, o, "stage");
	parts = cfa_json_add_array(&jb, o, "parts");
	for (i = 0; i < lock->nparts && !jb.failed; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		cfa_json_append(&jb, parts, entry(&jb, p, "kind", cfapkg_kind_name(p->kind)));
		part_runtime(&jb, path, env, p, lock->facts.gfx);
		/* Only Windows looks in a program's own folder first. */
		if ((p->kind == CFAPKG_KIND_PACKAGE || p->kind == CFAPKG_KIND_USER) &&
		    strcmp(lock->facts.os, "windows") == 0)
			stage_part(&jb, stage, p, gendir);
		/* Should two packages name a launcher, the later one in the
		 * lock wins, as a later part's variables override an earlier
		 * one's. */
		if (p->launcher && p->kind == CFAPKG_KIND_PACKAGE)
			launcher = p;
	}
	if (launcher)
		cfa_json_add_item(&jb, o, "launcher", entry(&jb, launcher, "file", launcher->launcher));
	return cfa_json_finish(&jb, o);
}
