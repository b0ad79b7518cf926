/*
 * resolve.c - a generation's runtime.json made concrete for this machine:
 * {prefix} becomes the part's view folder (packages) or where the system
 * part was found (HIP SDK, ROCm), {gfx} the GPU target; and the process
 * environment set from it, undoably, so one process can alternate
 * environments (cfapkg bench).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "runtime/rocm.h"

struct resolver {
	struct cfapkg_ctx *ctx;
	struct cfapkg_runtime *rt;
	const struct cfapkg_machine *m;
	char *gendir;              /* the generation's folder (owned) */
	const char **warn;         /* in the runtime's arena; the array is owned */
	size_t nwarn, warn_cap;
};

/* Everything the runtime points at lives in its arena, so that
 * cfapkg_runtime_free frees it all at once; NULL when out of memory. */
static char *keep(struct resolver *r, const char *s)
{
	return cfa_arena_strdup(r->rt->arena, s);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Room in the runtime's arena for the members of doc[key] and extra more:
 * every item is kept, however many the generation has. */
static void *room_for(struct resolver *r, const cJSON *doc, const char *key, size_t extra,
                      size_t size)
{
	size_t n = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, key)) + extra;

	return cfa_arena_alloc(r->rt->arena, (n ? n : 1) * size);
}

/* The HIP SDK or ROCm of that version on this machine (same major.minor
 * when the exact version is not listed). */
static const char *system_prefix(const struct cfapkg_machine *m, const char *version)
{
	size_t i, mm = strcspn(version, ".");

	/* mm ends as the length of "major.minor", so that 6.2 matches 6.2.4 but
	 * never 6.20. */
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

/* Warns once that a system part is not on this machine. */
static enum cfapkg_err warn_missing(struct resolver *r, const cJSON *item)
{
	char *line = cfa_aprintf("%s %s was not found on this machine; what it sets is left out",
	                         str_of(item, "part"), str_of(item, "version"));
	size_t i;

	if (!line)
		return cfa_nomem(r->ctx);
	/* A missing part leaves out several values at once; it is named
	 * once. */
	for (i = 0; i < r->nwarn && strcmp(r->warn[i], line) != 0; i++)
		;
	if (i == r->nwarn &&
	    (cfa_grow((void **)&r->warn, &r->warn_cap, r->nwarn + 1, sizeof(*r->warn)) != 0 ||
	     !(r->warn[r->nwarn++] = keep(r, line)))) {
		cfa_free(line);
		return cfa_nomem(r->ctx);
	}
	cfa_free(line);
	return CFAPKG_E_OK;
}

/* Windows gets its own separators: a folder joined from the generation's
 * and a recipe's "/" would otherwise mix both in one path. */
static void host_separators(char *path)
{
	size_t n;

	if (path && strcmp(cfa_plat_os(), "windows") == 0)
		for (n = 0; path[n]; n++)
			path[n] = path[n] == '/' ? '\\' : path[n];
}

/* The folder a part's {prefix} stands for (*out, cfa_free), or NULL in
 * *out after a warning when the system part is not on this machine. */
static enum cfapkg_err prefix_of(struct resolver *r, const cJSON *item, char **out)
{
	const char *p;

	*out = NULL;
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "system")))
		host_separators(*out = cfa_aprintf("%s/view/%s", r->gendir, str_of(item, "part")));
	else if ((p = system_prefix(r->m, str_of(item, "version"))))
		*out = cfa_strdup(p);
	else
		return warn_missing(r, item);
	return *out ? CFAPKG_E_OK : cfa_nomem(r->ctx);
}

/* "/{gfx}" at the end falls back to the parent folder when the per-target
 * folder does not exist; Windows gets its own separators. */
static void finish_path(char *path, const char *gfx)
{
	size_t n = strlen(path), g = strlen(gfx);

	if (g && n > g && strcmp(path + n - g, gfx) == 0 && path[n - g - 1] == '/' &&
	    !cfa_plat_is_dir(path))
		path[n - g - 1] = '\0';
	host_separators(path);
}

/* Expands {prefix} and {gfx} into a new string (cfa_free), or NULL when
 * out of memory. */
static char *expand(const char *in, const char *prefix, const char *gfx)
{
	struct cfa_buf b;

	cfa_buf_init(&b, SIZE_MAX);
	cfa_buf_add(&b, "", 0); /* "" rather than nothing for an empty value */
	while (*in) {
		size_t n;
		if (strncmp(in, "{prefix}", 8) == 0 && prefix) {
			cfa_buf_adds(&b, prefix);
			in += 8;
		} else if (strncmp(in, "{gfx}", 5) == 0) {
			cfa_buf_adds(&b, gfx);
			in += 5;
		} else {
			n = 1 + strcspn(in + 1, "{");
			cfa_buf_add(&b, in, n);
			in += n;
		}
	}
	if (b.failed) {
		cfa_buf_fini(&b);
		return NULL;
	}
	finish_path(b.data, gfx);
	return b.data; /* the buffer's memory is the caller's now */
}

/* An item's value with {prefix} and {gfx} expanded, kept in the arena:
 * *out NULL (no error) when its system part is not here. */
static enum cfapkg_err resolve_value(struct resolver *r, const cJSON *it, const char *raw,
                                     bool dir, const char **out)
{
	char *prefix = NULL, *value;
	enum cfapkg_err e;
	size_t i;

	*out = NULL;
	/* A folder always needs its part's prefix, and so does a value that
	 * names it; a plain setting stands even when its system part is not
	 * here. */
	if ((dir || strstr(raw, "{prefix}")) && ((e = prefix_of(r, it, &prefix)) || !prefix))
		return e;
	value = expand(raw, prefix, r->rt->gfx);
	cfa_free(prefix);
	if (!value)
		return cfa_nomem(r->ctx);
	/* "{prefix}/." is the part's own folder */
	i = strlen(value);
	if (dir && i > 2 && value[i - 1] == '.' && (value[i - 2] == '/' || value[i - 2] == '\\'))
		value[i - 2] = '\0';
	*out = keep(r, value);
	cfa_free(value);
	return *out ? CFAPKG_E_OK : cfa_nomem(r->ctx);
}

static enum cfapkg_err resolve_paths(struct resolver *r, const cJSON *doc)
{
	const char **dirs = room_for(r, doc, "path", 0, sizeof(*dirs));
	const cJSON *it;
	enum cfapkg_err e;
	size_t n = 0;

	if (!dirs)
		return cfa_nomem(r->ctx);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "path"))
	{
		if ((e = resolve_value(r, it, str_of(it, "dir"), true, &dirs[n])))
			return e;
		/* A folder of a missing system part is left out, not kept as a
		 * hole. */
		n += dirs[n] != NULL;
	}
	r->rt->path = dirs;
	r->rt->npath = n;
	return CFAPKG_E_OK;
}

/* Later parts override earlier ones: one entry per name, the last value;
 * but a package's ROCBLAS_TENSILE_LIBPATH (a rocBLAS overlay) wins over a
 * system ROCm's, whatever the order. */
static enum cfapkg_err resolve_env(struct resolver *r, const cJSON *doc)
{
	/* With room for the variables cfa_rocm_settle adds afterwards. */
	struct cfapkg_env_var *vars = room_for(r, doc, "env", CFA_ROCM_EXTRA_VARS, sizeof(*vars));
	const cJSON *it;
	enum cfapkg_err e;
	size_t n = 0, i;

	if (!vars)
		return cfa_nomem(r->ctx);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "env"))
	{
		const char *value, *name = str_of(it, "name");
		bool system = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "system"));
		bool tensile = strcmp(name, "ROCBLAS_TENSILE_LIBPATH") == 0;
		if ((e = resolve_value(r, it, str_of(it, "value"), false, &value)))
			return e;
		if (!value || (tensile && system && r->rt->rocblas_overlay))
			continue;
		if (tensile && !system && !(r->rt->rocblas_overlay = keep(r, str_of(it, "part"))))
			return cfa_nomem(r->ctx);
		for (i = 0; i < n && strcmp(vars[i].name, name) != 0; i++)
			;
		if (!(vars[i].name = keep(r, name)))
			return cfa_nomem(r->ctx);
		vars[i].value = value;
		n += i == n;
	}
	r->rt->env = vars;
	r->rt->nenv = n;
	return CFAPKG_E_OK;
}

static enum cfapkg_err resolve_parts(struct resolver *r, const cJSON *doc)
{
	static const enum cfapkg_kind kinds[] = {CFAPKG_KIND_PACKAGE, CFAPKG_KIND_SYSTEM,
	                                         CFAPKG_KIND_META, CFAPKG_KIND_USER};
	struct cfapkg_runtime_part *parts = room_for(r, doc, "parts", 0, sizeof(*parts));
	const cJSON *it;
	enum cfapkg_err e;
	size_t n = 0, k;

	if (!parts)
		return cfa_nomem(r->ctx);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "parts"))
	{
		char *p = NULL;
		parts[n].name = keep(r, str_of(it, "part"));
		parts[n].version = keep(r, str_of(it, "version"));
		/* A kind this cfapkg does not know (a newer runtime.json) is
		 * read as meta, which has no folder, rather than failing the
		 * program's start. */
		parts[n].kind = CFAPKG_KIND_META;
		for (k = 0; k < 4; k++)
			if (strcmp(str_of(it, "kind"), cfapkg_kind_name(kinds[k])) == 0)
				parts[n].kind = kinds[k];
		if (parts[n].kind != CFAPKG_KIND_META && (e = prefix_of(r, it, &p)))
			return e;
		parts[n].prefix = p ? keep(r, p) : NULL;
		cfa_free(p);
		if (!parts[n].name || !parts[n].version || (p && !parts[n].prefix))
			return cfa_nomem(r->ctx);
		n++;
	}
	r->rt->parts = parts;
	r->rt->nparts = n;
	return CFAPKG_E_OK;
}

/* A path kept in the arena with the host's separators; NULL when out of
 * memory. */
static const char *keep_host(struct resolver *r, const char *path)
{
	char *copy = keep(r, path);

	host_separators(copy);
	return copy;
}

static const char *keep_path(struct resolver *r, const char *fmt, ...) CFA_PRINTF(2, 3);

/* gendir/ + the formatted rest, kept in the arena; NULL when out of memory. */
static const char *keep_path(struct resolver *r, const char *fmt, ...)
{
	char *rel, *path = NULL;
	const char *kept = NULL;
	va_list ap;

	va_start(ap, fmt);
	rel = cfa_vaprintf(fmt, ap);
	va_end(ap);
	if (rel && (path = cfa_aprintf("%s/%s", r->gendir, rel))) {
		host_separators(path);
		kept = keep(r, path);
	}
	cfa_free(rel);
	cfa_free(path);
	return kept;
}

static enum cfapkg_err resolve_files(struct resolver *r, const cJSON *doc)
{
	struct cfapkg_stage_file *st = room_for(r, doc, "stage", 0, sizeof(*st));
	const cJSON *it, *l = cJSON_GetObjectItemCaseSensitive(doc, "launcher");
	size_t n = 0;

	if (!st)
		return cfa_nomem(r->ctx);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "stage"))
	{
		const char *as = str_of(it, "as");
		size_t i;
		/* A runtime.json edited by hand must not stage a file from
		 * outside the generation, nor onto a name outside the program's
		 * folder. */
		if (!cfa_safe_relative(str_of(it, "from")) || strpbrk(as, "/\\:") || !as[0])
			continue;
		/* one file per name: a later part's (an overlay's) replaces an earlier one's */
		for (i = 0; i < n && strcmp(st[i].as, as) != 0; i++)
			;
		st[i].part = keep(r, str_of(it, "part"));
		st[i].from = keep_path(r, "%s", str_of(it, "from"));
		st[i].as = keep(r, as);
		if (!st[i].part || !st[i].from || !st[i].as)
			return cfa_nomem(r->ctx);
		n += i == n;
	}
	r->rt->stage = st;
	r->rt->nstage = n;
	/* A launcher is used on Windows only, and like a staged file it must
	 * lie inside the generation. */
	if (l && strcmp(r->rt->os, "windows") == 0 && cfa_safe_relative(str_of(l, "file")) &&
	    !(r->rt->launcher = keep_path(r, "view/%s/%s", str_of(l, "part"), str_of(l, "file"))))
		return cfa_nomem(r->ctx);
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
	/* ROCm is settled last: it puts its folder first on the paths and adds
	 * to the variables, so both must be resolved already. */
	if ((e = resolve_paths(r, doc)) || (e = resolve_env(r, doc)) ||
	    (e = resolve_files(r, doc)) || (e = resolve_parts(r, doc)) ||
	    (e = cfa_rocm_settle(r->ctx, rt, r->m, gpu_index)))
		return e;
	/* One more than needed, so that even no warnings is a real array. */
	rt->warnings = cfa_arena_alloc(rt->arena, (r->nwarn + 1) * sizeof(char *));
	if (!rt->warnings)
		return cfa_nomem(r->ctx);
	if (r->nwarn)
		memcpy((void *)rt->warnings, r->warn, r->nwarn * sizeof(char *));
	rt->nwarnings = r->nwarn;
	return CFAPKG_E_OK;
}

/* The generation's runtime.json, parsed, and the folder programs are
 * given for it (*dir, owned): the environment's stable path when it names
 * this generation (*stable), so what a shell or launcher keeps follows
 * the next update or rollback. */
static enum cfapkg_err read_runtime(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                    char **dir, bool *stable, cJSON **doc)
{
	enum cfapkg_err e;
	char *path = NULL;

	if (gen == 0)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has nothing installed "
		                "yet: run 'cfapkg install --env %s NAME'", env, env);
	if ((e = cfa_env_program_dir(ctx, env, gen, dir, stable)))
		return e;
	if (!(e = cfa_path(ctx, &path, "%s/runtime.json", *dir)))
		e = cfa_json_read_file(ctx, path, CFAPKG_E_LOCKFILE, doc);
	cfa_free(path);
	if (e)
		CFA_FREE(*dir);
	/* The way back: repair writes a new generation with it from the same
	 * set. */
	return e && e != CFAPKG_E_NOMEM
	               ? cfa_fail_more(ctx, e, " ('cfapkg repair --env %s' writes it again)", env)
	               : e;
}

enum cfapkg_err cfapkg_runtime_load(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                    const struct cfapkg_machine *m, int gpu_index,
                                    struct cfapkg_runtime **out)
{
	struct resolver r = {ctx, NULL, m, NULL, NULL, 0, 0};
	cJSON *doc = NULL;
	bool stable = false;
	enum cfapkg_err e;

	/* 0 is resolved here, so that the runtime names the generation it was
	 * loaded from, never 0. */
	if (gen == 0 && (e = cfapkg_env_current(ctx, env, &gen)))
		return e;
	if ((e = read_runtime(ctx, env, gen, &r.gendir, &stable, &doc)))
		return e;
	if (!(r.rt = cfa_calloc(1, sizeof(*r.rt))) ||
	    !(r.rt->arena = cfa_calloc(1, sizeof(*r.rt->arena)))) {
		e = cfa_nomem(ctx);
	} else {
		cfa_arena_init(r.rt->arena);
		r.rt->generation = gen;
		if (stable && !(r.rt->stable_dir = keep_host(&r, r.gendir)))
			e = cfa_nomem(ctx);
		else
			e = resolve(&r, doc, env, gpu_index);
	}
	cJSON_Delete(doc);
	cfa_free(r.gendir);
	cfa_free(r.warn);
	if (e) {
		/* A runtime whose arena could not be had is freed by hand:
		 * cfapkg_runtime_free expects one. */
		if (r.rt && !r.rt->arena)
			CFA_FREE(r.rt);
		cfapkg_runtime_free(r.rt);
		return e;
	}
	*out = r.rt;
	return CFAPKG_E_OK;
}
