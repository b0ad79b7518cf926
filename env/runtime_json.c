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

#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

static cJSON *entry(const struct cfapkg_locked *p, const char *key, const char *value)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "part", p->name);
	cJSON_AddStringToObject(o, "version", p->version);
	cJSON_AddBoolToObject(o, "system", p->kind == CFAPKG_KIND_SYSTEM);
	cJSON_AddStringToObject(o, key, value);
	return o;
}

/* "{gfx}" becomes the target; "{prefix}" stays for the loader. */
static void expand_gfx(const char *in, const char *gfx, char *out, size_t len)
{
	const char *at = strstr(in, "{gfx}");

	if (!at || !gfx[0]) {
		cfa_snprintf(out, len, "%s", in);
		return;
	}
	cfa_snprintf(out, len, "%.*s%s%s", (int)(at - in), in, gfx, at + 5);
}

struct stage_scan {
	const char *suffix;
	char names[128][256];  /* matches, sorted before they are listed */
	size_t n;
};

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

static void add_stage(cJSON *list, const struct cfapkg_locked *p, const char *file,
                      const char *as)
{
	char from[CFA_PATH_MAX];
	cJSON *o = cJSON_CreateObject();

	cfa_snprintf(from, sizeof(from), "view/%s/%s", p->name, file);
	cJSON_AddStringToObject(o, "part", p->name);
	cJSON_AddStringToObject(o, "from", from);
	cJSON_AddStringToObject(o, "as", as);
	cJSON_AddItemToArray(list, o);
}

static int stage_match(const char *name, void *arg)
{
	struct stage_scan *s = arg;

	if (ends_with_nocase(name, s->suffix) && s->n < 128)
		cfa_snprintf(s->names[s->n++], sizeof(s->names[0]), "%s", name);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void stage_part(cJSON *list, const struct cfapkg_locked *p, const char *gendir)
{
	char view[CFA_PATH_MAX], path[CFA_PATH_MAX];
	size_t i;

	cfa_snprintf(view, sizeof(view), "%s/view/%s", gendir, p->name);
	for (i = 0; i < p->nstage; i++) {
		static struct stage_scan s;
		size_t k;
		cfa_snprintf(path, sizeof(path), "%s/%s", view, p->stage[i]);
		if (p->stage[i][0] == '*') {
			s.suffix = p->stage[i] + 1;
			s.n = 0;
			cfa_plat_list_dir(view, stage_match, &s);
			qsort(s.names, s.n, sizeof(s.names[0]), by_name);
			for (k = 0; k < s.n; k++)
				add_stage(list, p, s.names[k], s.names[k]);
		} else if (cfa_plat_is_file(path))
			add_stage(list, p, p->stage[i], p->stage[i]);
	}
	for (i = 0; i < p->nlayout; i++)
		add_stage(list, p, p->layout[i].as, p->layout[i].as);
}

cJSON *cfa_runtime_json(struct cfapkg_ctx *ctx, const struct cfapkg_lock *lock,
                        const char *gendir)
{
	cJSON *o = cJSON_CreateObject(), *path, *env, *stage, *parts;
	const struct cfapkg_locked *launcher = NULL;
	char value[CFA_PATH_MAX];
	size_t i, k;

	(void)ctx;
	cJSON_AddNumberToObject(o, "format", 1);
	cJSON_AddStringToObject(o, "os", lock->facts.os);
	cJSON_AddStringToObject(o, "gfx", lock->facts.gfx);
	path = cJSON_AddArrayToObject(o, "path");
	env = cJSON_AddArrayToObject(o, "env");
	stage = cJSON_AddArrayToObject(o, "stage");
	parts = cJSON_AddArrayToObject(o, "parts");
	for (i = 0; i < lock->nparts; i++) {
		const struct cfapkg_locked *p = &lock->parts[i];
		cJSON *part = entry(p, "kind", cfapkg_kind_name(p->kind));
		cJSON_AddItemToArray(parts, part);
		for (k = 0; k < p->npath; k++) {
			cfa_snprintf(value, sizeof(value), "{prefix}/%s", p->path[k]);
			cJSON_AddItemToArray(path, entry(p, "dir", value));
		}
		for (k = 0; k < p->nenv; k++) {
			cJSON *e;
			expand_gfx(p->env[k].value, lock->facts.gfx, value, sizeof(value));
			e = entry(p, "value", value);
			cJSON_AddStringToObject(e, "name", p->env[k].name);
			cJSON_AddItemToArray(env, e);
		}
		/* Only Windows looks in a program's own folder first. */
		if ((p->kind == CFAPKG_KIND_PACKAGE || p->kind == CFAPKG_KIND_USER) &&
		    strcmp(lock->facts.os, "windows") == 0)
			stage_part(stage, p, gendir);
		if (p->launcher && p->kind == CFAPKG_KIND_PACKAGE)
			launcher = p;
	}
	if (launcher)
		cJSON_AddItemToObject(o, "launcher", entry(launcher, "file", launcher->launcher));
	return o;
}
