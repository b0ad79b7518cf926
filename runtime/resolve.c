/*
 * resolve.c - a generation's runtime.json made concrete for this machine:
 * {prefix} becomes the part's view folder (packages) or where the system
 * part was found (HIP SDK, ROCm), {gfx} the GPU target; and the process
 * environment set from it, undoably, so one process can alternate
 * environments (cfapkg bench).
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

#define MAX_ITEMS 256

struct resolver {
	struct cfapkg_ctx *ctx;
	struct cfapkg_runtime *rt;
	const struct cfapkg_machine *m;
	char gendir[CFA_PATH_MAX];
	const char *warn[MAX_ITEMS];
	size_t nwarn;
};

static char *keep(struct resolver *r, const char *s)
{
	return cfa_arena_strdup(r->rt->arena, s);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* The HIP SDK or ROCm of that version on this machine (same major.minor
 * when the exact version is not listed). */
static const char *system_prefix(const struct cfapkg_machine *m, const char *version)
{
	size_t i, mm = strcspn(version, ".");

	if (version[mm] == '.')
		mm += 1 + strcspn(version + mm + 1, ".");
	for (i = 0; m && i < m->nhip_sdks; i++)
		if (strcmp(m->hip_sdks[i].version, version) == 0)
			return m->hip_sdks[i].path;
	for (i = 0; m && i < m->nhip_sdks; i++)
		if (strncmp(m->hip_sdks[i].version, version, mm) == 0 &&
		    (m->hip_sdks[i].version[mm] == '\0' || m->hip_sdks[i].version[mm] == '.'))
			return m->hip_sdks[i].path;
	return NULL;
}

/* The folder a part's {prefix} stands for, or NULL after a warning. */
static const char *prefix_of(struct resolver *r, const cJSON *item, char *buf, size_t len)
{
	const char *part = str_of(item, "part"), *p;
	char line[512];
	size_t i;

	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "system"))) {
		cfa_snprintf(buf, len, "%s/view/%s", r->gendir, part);
		return buf;
	}
	if ((p = system_prefix(r->m, str_of(item, "version")))) {
		cfa_snprintf(buf, len, "%s", p);
		return buf;
	}
	cfa_snprintf(line, sizeof(line), "%s %s was not found on this machine; what it sets is "
	             "left out", part, str_of(item, "version"));
	for (i = 0; i < r->nwarn && strcmp(r->warn[i], line) != 0; i++)
		;
	if (i == r->nwarn && r->nwarn < MAX_ITEMS)
		r->warn[r->nwarn++] = keep(r, line);
	return NULL;
}

/* Expands {prefix} and {gfx}; "/{gfx}" at the end falls back to the
 * parent folder when the per-target folder does not exist. */
static void expand(const char *in, const char *prefix, const char *gfx, char *out, size_t len)
{
	char tmp[CFA_PATH_MAX];
	size_t n = 0;

	while (*in && n + 1 < sizeof(tmp)) {
		if (strncmp(in, "{prefix}", 8) == 0 && prefix) {
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s", prefix);
			in += 8;
		} else if (strncmp(in, "{gfx}", 5) == 0) {
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s", gfx);
			in += 5;
		} else {
			tmp[n++] = *in++;
		}
		n = n < sizeof(tmp) ? n : sizeof(tmp) - 1;
	}
	tmp[n] = '\0';
	n = strlen(tmp);
	if (gfx[0] && n > strlen(gfx) && strcmp(tmp + n - strlen(gfx), gfx) == 0 &&
	    tmp[n - strlen(gfx) - 1] == '/' && !cfa_plat_is_dir(tmp))
		tmp[n - strlen(gfx) - 1] = '\0';
	if (strcmp(cfa_plat_os(), "windows") == 0)
		for (n = 0; tmp[n]; n++)
			tmp[n] = tmp[n] == '/' ? '\\' : tmp[n];
	cfa_snprintf(out, len, "%s", tmp);
}

static enum cfapkg_err resolve_paths(struct resolver *r, const cJSON *doc)
{
	const char *dirs[MAX_ITEMS];
	char prefix[CFA_PATH_MAX], value[CFA_PATH_MAX];
	const cJSON *it;
	size_t n = 0, i;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "path"))
	{
		const char *p = prefix_of(r, it, prefix, sizeof(prefix));
		if (!p || n == MAX_ITEMS)
			continue;
		expand(str_of(it, "dir"), p, r->rt->gfx, value, sizeof(value));
		/* "{prefix}/." is the part's own folder */
		i = strlen(value);
		if (i > 2 && value[i - 1] == '.' && (value[i - 2] == '/' || value[i - 2] == '\\'))
			value[i - 2] = '\0';
		if (!(dirs[n++] = keep(r, value)))
			return cfa_nomem(r->ctx);
	}
	r->rt->path = cfa_arena_alloc(r->rt->arena, (n ? n : 1) * sizeof(*dirs));
	if (!r->rt->path)
		return cfa_nomem(r->ctx);
	memcpy((void *)r->rt->path, dirs, n * sizeof(*dirs));
	r->rt->npath = n;
	return CFAPKG_E_OK;
}

/* Later parts override earlier ones: one entry per name, the last value. */
static enum cfapkg_err resolve_env(struct resolver *r, const cJSON *doc, int gpu_index)
{
	struct cfapkg_env_var *vars;
	char prefix[CFA_PATH_MAX], value[CFA_PATH_MAX], idx[16];
	const cJSON *it;
	size_t n = 0, i;

	vars = cfa_arena_alloc(r->rt->arena, (MAX_ITEMS + 1) * sizeof(*vars));
	if (!vars)
		return cfa_nomem(r->ctx);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "env"))
	{
		const char *raw = str_of(it, "value"), *p = NULL;
		if (strstr(raw, "{prefix}") && !(p = prefix_of(r, it, prefix, sizeof(prefix))))
			continue;
		expand(raw, p, r->rt->gfx, value, sizeof(value));
		for (i = 0; i < n && strcmp(vars[i].name, str_of(it, "name")) != 0; i++)
			;
		if (i == MAX_ITEMS)
			continue;
		vars[i].name = keep(r, str_of(it, "name"));
		vars[i].value = keep(r, value);
		n += i == n;
	}
	if (gpu_index >= 0 && n < MAX_ITEMS) {
		cfa_snprintf(idx, sizeof(idx), "%d", gpu_index);
		vars[n].name = "HIP_VISIBLE_DEVICES";
		vars[n++].value = keep(r, idx);
	}
	r->rt->env = vars;
	r->rt->nenv = n;
	return CFAPKG_E_OK;
}

static enum cfapkg_err resolve_parts(struct resolver *r, const cJSON *doc)
{
	static const enum cfapkg_kind kinds[] = {CFAPKG_KIND_PACKAGE, CFAPKG_KIND_SYSTEM,
	                                         CFAPKG_KIND_META, CFAPKG_KIND_USER};
	struct cfapkg_runtime_part *parts;
	char prefix[CFA_PATH_MAX];
	const cJSON *it;
	size_t n = 0, k;

	parts = cfa_arena_alloc(r->rt->arena, (MAX_ITEMS + 1) * sizeof(*parts));
	if (!parts)
		return cfa_nomem(r->ctx);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "parts"))
	{
		const char *p;
		if (n == MAX_ITEMS)
			break;
		parts[n].name = keep(r, str_of(it, "part"));
		parts[n].version = keep(r, str_of(it, "version"));
		parts[n].kind = CFAPKG_KIND_META;
		for (k = 0; k < 4; k++)
			if (strcmp(str_of(it, "kind"), cfapkg_kind_name(kinds[k])) == 0)
				parts[n].kind = kinds[k];
		p = parts[n].kind == CFAPKG_KIND_META ? NULL : prefix_of(r, it, prefix, sizeof(prefix));
		parts[n++].prefix = p ? keep(r, p) : NULL;
	}
	r->rt->parts = parts;
	r->rt->nparts = n;
	return CFAPKG_E_OK;
}

static enum cfapkg_err resolve_files(struct resolver *r, const cJSON *doc)
{
	struct cfapkg_stage_file *st;
	char path[CFA_PATH_MAX];
	const cJSON *it, *l = cJSON_GetObjectItemCaseSensitive(doc, "launcher");
	size_t n = 0;

	st = cfa_arena_alloc(r->rt->arena, (MAX_ITEMS + 1) * sizeof(*st));
	if (!st)
		return cfa_nomem(r->ctx);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "stage"))
	{
		size_t i;
		if (!cfa_safe_relative(str_of(it, "from")) || strpbrk(str_of(it, "as"), "/\\:") ||
		    !str_of(it, "as")[0])
			continue;
		/* one file per name: a later part's (an overlay's) replaces an earlier one's */
		for (i = 0; i < n && strcmp(st[i].as, str_of(it, "as")) != 0; i++)
			;
		if (i == MAX_ITEMS)
			continue;
		cfa_snprintf(path, sizeof(path), "%s/%s", r->gendir, str_of(it, "from"));
		st[i].part = keep(r, str_of(it, "part"));
		st[i].from = keep(r, path);
		st[i].as = keep(r, str_of(it, "as"));
		n += i == n;
	}
	r->rt->stage = st;
	r->rt->nstage = n;
	if (l && strcmp(r->rt->os, "windows") == 0 && cfa_safe_relative(str_of(l, "file"))) {
		cfa_snprintf(path, sizeof(path), "%s/view/%s/%s", r->gendir, str_of(l, "part"),
		             str_of(l, "file"));
		r->rt->launcher = keep(r, path);
	}
	return CFAPKG_E_OK;
}

void cfapkg_runtime_free(struct cfapkg_runtime *rt)
{
	if (!rt)
		return;
	cfa_arena_fini(rt->arena);
	cfa_free(rt->arena);
	cfa_free(rt);
}

static enum cfapkg_err resolve(struct resolver *r, const cJSON *doc, const char *env,
                               int gpu_index)
{
	struct cfapkg_runtime *rt = r->rt;
	enum cfapkg_err e;

	rt->env_name = keep(r, env);
	rt->os = keep(r, str_of(doc, "os"));
	rt->gfx = keep(r, str_of(doc, "gfx"));
	if (!rt->env_name || !rt->os || !rt->gfx)
		return cfa_nomem(r->ctx);
	if ((e = resolve_paths(r, doc)) || (e = resolve_env(r, doc, gpu_index)) ||
	    (e = resolve_files(r, doc)) || (e = resolve_parts(r, doc)))
		return e;
	rt->warnings = cfa_arena_alloc(rt->arena, (r->nwarn + 1) * sizeof(char *));
	if (!rt->warnings)
		return cfa_nomem(r->ctx);
	memcpy((void *)rt->warnings, r->warn, r->nwarn * sizeof(char *));
	rt->nwarnings = r->nwarn;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_runtime_load(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                    const struct cfapkg_machine *m, int gpu_index,
                                    struct cfapkg_runtime **out)
{
	struct resolver r = {ctx, NULL, m, "", {0}, 0};
	char path[CFA_PATH_MAX];
	cJSON *doc = NULL;
	enum cfapkg_err e;

	if (gen == 0 && (e = cfapkg_env_current(ctx, env, &gen)))
		return e;
	if ((e = cfapkg_gen_path(ctx, env, gen, "runtime.json", path, sizeof(path))) ||
	    (e = cfa_json_read_file(ctx, path, CFAPKG_E_LOCKFILE, &doc)))
		return e;
	cfa_snprintf(r.gendir, sizeof(r.gendir), "%s", path);
	*strrchr(r.gendir, '/') = '\0';
	if (!(r.rt = cfa_calloc(1, sizeof(*r.rt))) ||
	    !(r.rt->arena = cfa_calloc(1, sizeof(*r.rt->arena)))) {
		cfa_free(r.rt);
		cJSON_Delete(doc);
		return cfa_nomem(ctx);
	}
	cfa_arena_init(r.rt->arena);
	r.rt->generation = gen;
	e = resolve(&r, doc, env, gpu_index);
	cJSON_Delete(doc);
	if (e) {
		cfapkg_runtime_free(r.rt);
		return e;
	}
	*out = r.rt;
	return CFAPKG_E_OK;
}
