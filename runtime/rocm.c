/*
 * rocm.c - what people set by hand to run CUDA programs on ROCm, set from
 * the environment and gpus.json instead: the HIP runtime the environment
 * brings (HIP_PATH, ROCM_PATH, its library folder first, other ROCm
 * folders off the path so two HIP runtimes never mix), the GPU the plan
 * was made for (HIP_VISIBLE_DEVICES: never an iGPU by accident), and the
 * target's HSA_OVERRIDE_GFX_VERSION and DISABLE_ADDMM_CUDA_LT (set when
 * the environment's hipBLASLt has no kernel files for the target, or,
 * without a hipBLASLt folder to read, when gpus.json says none has).
 */
#include "runtime/rocm.h"

#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

struct dir_match {
	const char *head, *tail;
	char *found; /* the first name that matched (cfa_free) */
	bool failed;
};

/* Folding with | 0x20 is enough for what is compared here: library names and
 * "rocm", letters, digits, dots and underscores. */
static bool same_nocase(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((a[i] | 0x20) != (b[i] | 0x20))
			return false;
	return true;
}

static int match_name(const char *name, void *arg)
{
	struct dir_match *d = arg;
	size_t n = strlen(name), h = strlen(d->head), t = strlen(d->tail);

	if (n >= h + t && same_nocase(name, d->head, h) && same_nocase(name + n - t, d->tail, t)) {
		d->found = cfa_strdup(name);
		d->failed = !d->found;
		return 1; /* stop at the first match */
	}
	return 0;
}

char *cfa_rocm_dir_find(const char *dir, const char *head, const char *tail)
{
	struct dir_match d = {head, tail, NULL, false};

	cfa_plat_list_dir(dir, match_name, &d);
	return d.found;
}

bool cfa_rocm_dir_has(const char *dir, const char *head, const char *tail)
{
	char *name = cfa_rocm_dir_find(dir, head, tail);

	cfa_free(name);
	return name != NULL;
}

const char *cfa_rocm_var(const struct cfapkg_runtime *rt, const char *name)
{
	size_t i;

	for (i = 0; i < rt->nenv; i++)
		if (strcmp(rt->env[i].name, name) == 0)
			return rt->env[i].value;
	return NULL;
}

bool cfa_rocm_user_set(const char *name)
{
	char *value = NULL;
	/* Set to "" counts as not set: an empty value names nothing. */
	bool set = cfa_plat_getenv_dup(name, &value) == 0 && value && value[0];

	free(value); /* the platform's allocation */
	return set;
}

/* Sets a variable of rt, replacing its value or using the room resolve.c
 * left; the value is kept in rt's arena. */
static enum cfapkg_err set_var(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt,
                               const char *name, const char *value)
{
	struct cfapkg_env_var *vars = (struct cfapkg_env_var *)rt->env;
	const char *kept = cfa_arena_strdup(rt->arena, value);
	size_t i;

	if (!kept)
		return cfa_nomem(ctx);
	for (i = 0; i < rt->nenv && strcmp(vars[i].name, name) != 0; i++)
		;
	/* A new name goes into the room resolve.c left (CFA_ROCM_EXTRA_VARS):
	 * this file sets five names at most, so it always fits. */
	vars[i].name = name; /* callers pass literals */
	vars[i].value = kept;
	rt->nenv += i == rt->nenv;
	return CFAPKG_E_OK;
}

char cfa_rocm_sep(void)
{
	return strcmp(cfa_plat_os(), "windows") == 0 ? '\\' : '/';
}

/* A part's folder holding a HIP runtime library: Linux lib/libamdhip64.so*,
 * Windows bin/amdhip64*.dll. */
static bool holds_hip_runtime(const struct cfapkg_runtime *rt, const char *prefix)
{
	bool win = strcmp(rt->os, "windows") == 0;
	char *dir = cfa_aprintf("%s%c%s", prefix, cfa_rocm_sep(), win ? "bin" : "lib");
	bool found = dir && (win ? cfa_rocm_dir_has(dir, "amdhip64", ".dll")
	                         : cfa_rocm_dir_has(dir, "libamdhip64.so", ""));

	cfa_free(dir);
	return found;
}

/* The ROCm the environment brings: what a part's own HIP_PATH or ROCM_PATH
 * says, else the last part holding a HIP runtime. */
static const char *own_rocm(const struct cfapkg_runtime *rt)
{
	const char *named = cfa_rocm_var(rt, "HIP_PATH");
	size_t i;

	if (!named)
		named = cfa_rocm_var(rt, "ROCM_PATH");
	if (named && named[0])
		return named;
	/* From the last part back: a later part overrides an earlier one, so
	 * the last HIP runtime in the lock is the one programs are given. */
	for (i = rt->nparts; i-- > 0;)
		if (rt->parts[i].prefix && rt->parts[i].kind != CFAPKG_KIND_META &&
		    holds_hip_runtime(rt, rt->parts[i].prefix))
			return rt->parts[i].prefix;
	return NULL;
}

static bool is_sep(char c)
{
	return c == '/' || c == '\\';
}

/* What follows prefix in dir, or NULL when dir does not start with it,
 * whichever separator spelled either: a plan made on Windows for a Linux
 * machine mixes "/" from recipes with the host's "\\", and on Windows a
 * part's folder is the generation's ".../view/PART" while the paths from
 * runtime.json have the host's separators. */
static const char *after(const char *dir, const char *prefix)
{
	for (; *prefix; dir++, prefix++)
		if (is_sep(*dir) != is_sep(*prefix) || (!is_sep(*dir) && *dir != *prefix))
			return NULL;
	return dir;
}

/* dir under prefix (or prefix itself)? */
static bool inside(const char *dir, const char *prefix)
{
	const char *rest = after(dir, prefix);
	size_t n = strlen(prefix);

	return rest && (*rest == '\0' || is_sep(*rest) || (n && is_sep(prefix[n - 1])));
}

/* The same folder whichever separator spelled it. */
static bool same_dir(const char *a, const char *b)
{
	const char *rest = after(a, b);

	return rest && *rest == '\0';
}

/* The ROCm library folder first on the path, once. */
static enum cfapkg_err put_first(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt)
{
	bool win = strcmp(rt->os, "windows") == 0;
	char *lib = cfa_aprintf("%s%c%s", rt->rocm_prefix, cfa_rocm_sep(), win ? "bin" : "lib");
	const char **path;
	size_t i, n = 0;

	if (!lib || !(path = cfa_arena_alloc(rt->arena, (rt->npath + 1) * sizeof(*path))) ||
	    !(path[n++] = cfa_arena_strdup(rt->arena, lib))) {
		cfa_free(lib);
		return cfa_nomem(ctx);
	}
	/* The library folder is dropped where it already stands, so that it is
	 * on the path once, in front. */
	for (i = 0; i < rt->npath; i++)
		if (!same_dir(rt->path[i], lib))
			path[n++] = rt->path[i];
	/* A folder that is not there (a named prefix without lib) is not added. */
	if (!cfa_plat_is_dir(lib) && n > rt->npath)
		memmove(path, path + 1, --n * sizeof(*path));
	cfa_free(lib);
	rt->path = path;
	rt->npath = n;
	return CFAPKG_E_OK;
}

/* A rocBLAS overlay's folders before the ROCm's: Windows finds rocblas.dll
 * by searching PATH in order, and the overlay's must win over the SDK's. */
static void overlay_first(struct cfapkg_runtime *rt)
{
	const char *prefix = NULL, **path = (const char **)rt->path;
	size_t i, front = 0;

	for (i = 0; rt->rocblas_overlay && i < rt->nparts; i++)
		if (strcmp(rt->parts[i].name, rt->rocblas_overlay) == 0)
			prefix = rt->parts[i].prefix;
	/* path[0..front) holds the overlay's folders found so far, in their
	 * order; each one found next moves down to front, the rest shifting up
	 * behind it. */
	for (i = 0; prefix && i < rt->npath; i++) {
		const char *dir = path[i];
		if (!inside(dir, prefix))
			continue;
		memmove(path + front + 1, path + front, (i - front) * sizeof(*path));
		path[front++] = dir;
	}
}

/* A folder of another ROCm: a path part named rocm* (/opt/rocm-6.4.2/lib,
 * C:\Program Files\AMD\ROCm\6.4\bin), or one holding both a HIP runtime
 * and rocBLAS (a HIP SDK or TheRock bin; System32 has no rocBLAS). */
static bool other_rocm(const struct cfapkg_runtime *rt, const char *dir)
{
	const char *c = dir;
	size_t i;

	/* Folders of the ROCm in use, and any the runtime itself puts on the
	 * path, are never taken off, whatever their names. */
	if (inside(dir, rt->rocm_prefix))
		return false;
	for (i = 0; i < rt->npath; i++)
		if (same_dir(rt->path[i], dir))
			return false;
	while (*c) {
		c += strspn(c, "/\\");
		if (same_nocase(c, "rocm", 4)) /* stops at the end of c */
			return true;
		c += strcspn(c, "/\\");
	}
	return (cfa_rocm_dir_has(dir, "amdhip64", ".dll") && cfa_rocm_dir_has(dir, "rocblas", ".dll")) ||
	       (cfa_rocm_dir_has(dir, "libamdhip64.so", "") && cfa_rocm_dir_has(dir, "librocblas.so", ""));
}

struct removed {
	const char **dirs;
	size_t n, cap;
};

static enum cfapkg_err note_removed(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt,
                                    struct removed *r, const char *dir, size_t len)
{
	char *one = cfa_strndup(dir, len);
	size_t i;

	if (!one)
		return cfa_nomem(ctx);
	/* A folder named twice (in PATH and LD_LIBRARY_PATH) is noted once. */
	for (i = 0; i < r->n && strcmp(r->dirs[i], one) != 0; i++)
		;
	if (i == r->n && other_rocm(rt, one)) {
		if (cfa_grow((void **)&r->dirs, &r->cap, r->n + 1, sizeof(*r->dirs)) != 0 ||
		    !(r->dirs[r->n++] = cfa_arena_strdup(rt->arena, one))) {
			cfa_free(one);
			return cfa_nomem(ctx);
		}
	}
	cfa_free(one);
	return CFAPKG_E_OK;
}

/* Other ROCm folders on the variable's current value.  Only the user's value is
 * scanned: what the runtime adds is its own, and apply puts it in front of what
 * is left. */
static enum cfapkg_err scan_list(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt,
                                 struct removed *r, const char *var)
{
	char *value = NULL, sep = cfa_plat_path_list_sep();
	const char *at;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (cfa_plat_getenv_dup(var, &value) != 0 || !value)
		return CFAPKG_E_OK;
	for (at = value; *at && !e; at += *at == sep) {
		size_t n = strcspn(at, (char[]){sep, '\0'});
		if (n)
			e = note_removed(ctx, rt, r, at, n);
		at += n;
	}
	free(value); /* the platform's allocation */
	return e;
}

static enum cfapkg_err take_off_path(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt)
{
	struct removed r = {NULL, 0, 0};
	enum cfapkg_err e = scan_list(ctx, rt, &r, "PATH");
	const char **kept;

	if (!e && strcmp(cfa_plat_os(), "windows") != 0)
		e = scan_list(ctx, rt, &r, "LD_LIBRARY_PATH");
	if (!e && r.n) {
		if (!(kept = cfa_arena_alloc(rt->arena, r.n * sizeof(*kept))))
			e = cfa_nomem(ctx);
		else
			memcpy(kept, r.dirs, r.n * sizeof(*kept));
		rt->path_removed = kept;
		rt->npath_removed = e ? 0 : r.n;
	}
	cfa_free(r.dirs);
	return e;
}

/* The GPU the plan was made for, by its index among the detected AMD GPUs:
 * one of the generation's target (or any, under the user's override),
 * discrete before integrated, then the most memory; else detection's pick. */
static int plan_gpu(const struct cfapkg_machine *m, const char *gfx)
{
	int best = -1;
	unsigned i;

	for (i = 0; i < m->ngpus; i++) {
		const struct cfapkg_gpu *g = &m->gpus[i], *b = best >= 0 ? &m->gpus[best] : NULL;
		if (strcmp(g->gfx, gfx) != 0 && strcmp(m->gfx_override, gfx) != 0)
			continue;
		if (!b || (b->integrated && !g->integrated) ||
		    (b->integrated == g->integrated && g->vram_bytes > b->vram_bytes))
			best = (int)i;
	}
	/* No GPU of the target: detection's pick.  The answer is the index
	 * detection gave the GPU among the AMD GPUs, not its place in
	 * m->gpus. */
	if (best < 0)
		best = m->selected;
	return best < 0 ? -1 : (int)m->gpus[best].index;
}

static enum cfapkg_err set_gpu(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt,
                               const struct cfapkg_machine *m, int gpu_index)
{
	char idx[16];

	/* With one GPU there is nothing to choose, so HIP_VISIBLE_DEVICES is
	 * set only when the caller names one. */
	if (gpu_index < 0 && m && m->ngpus > 1)
		gpu_index = plan_gpu(m, rt->gfx);
	rt->gpu_index = gpu_index;
	if (gpu_index < 0)
		return CFAPKG_E_OK;
	if (!cfa_snprintf(idx, sizeof(idx), "%d", gpu_index))
		return cfa_nomem(ctx); /* an int always fits */
	return set_var(ctx, rt, "HIP_VISIBLE_DEVICES", idx);
}

/* Whether name is a hipBLASLt kernel file for gfx: the target as a whole
 * word of the name ("TensileLibrary_lazy_gfx1100.dat", "Kernels.so-000-
 * gfx1100.hsaco", "extop_gfx1100.co"; not the start of a longer target). */
static bool kernel_for(const char *name, const char *gfx)
{
	size_t n = strlen(gfx);
	const char *at = name;

	while ((at = strstr(at, gfx)) != NULL) {
		char before = at == name ? '_' : at[-1], after = at[n];
		if ((before == '_' || before == '-') && (after == '.' || after == '_' || after == '-'))
			return true;
		at += n;
	}
	return false;
}

struct kernel_find {
	const char *gfx;
	char *found;
	bool failed;
};

static int match_kernel(const char *name, void *arg)
{
	struct kernel_find *k = arg;

	if (!kernel_for(name, k->gfx))
		return 0;
	k->found = cfa_strdup(name);
	k->failed = !k->found;
	return 1;
}

char *cfa_rocm_hipblaslt_dir(const struct cfapkg_runtime *rt, const char *prefix)
{
	const char *own = cfa_rocm_var(rt, "HIPBLASLT_TENSILE_LIBPATH");
	char sep = cfa_rocm_sep();

	if (own && own[0])
		return cfa_strdup(own);
	if (!prefix)
		return NULL;
	return cfa_aprintf("%s%c%s%chipblaslt%clibrary", prefix, sep,
	                   strcmp(rt->os, "windows") == 0 ? "bin" : "lib", sep, sep);
}

int cfa_rocm_hipblaslt_kernel(const char *dir, const char *gfx, char **file)
{
	struct kernel_find k = {gfx, NULL, false};

	*file = NULL;
	if (!dir || !cfa_plat_is_dir(dir))
		return -1;
	cfa_plat_list_dir(dir, match_kernel, &k);
	if (k.found)
		*file = cfa_aprintf("%s%c%s", dir, cfa_rocm_sep(), k.found);
	cfa_free(k.found);
	return *file ? 1 : 0;
}

/* Whether the environment's hipBLASLt lacks kernels for the target: its
 * own files say, where it has a folder of them; else gpus.json. */
static bool hipblaslt_lacks(const struct cfapkg_runtime *rt, const struct cfapkg_gpu_target *t)
{
	char *dir = cfa_rocm_hipblaslt_dir(rt, rt->rocm_prefix), *file = NULL;
	int has = cfa_rocm_hipblaslt_kernel(dir, rt->gfx, &file);

	cfa_free(dir);
	cfa_free(file);
	return has < 0 ? !t->hipblaslt : has == 0;
}

/* The target's own needs: a variable the user or a part already set stays. */
static enum cfapkg_err target_vars(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt)
{
	const struct cfapkg_gpu_target *t = cfapkg_gpu_target_find(ctx, rt->gfx);
	enum cfapkg_err e;

	cfapkg_ctx_clear_error(ctx); /* an unknown target has no needs */
	if (!t)
		return CFAPKG_E_OK;
	/* The override is for the Linux runtime, which reads it.  A value the
	 * user or a part set stays, so that a setting made by hand always
	 * wins. */
	if (t->hsa_override && strcmp(rt->os, "linux") == 0 &&
	    !cfa_rocm_user_set("HSA_OVERRIDE_GFX_VERSION") &&
	    !cfa_rocm_var(rt, "HSA_OVERRIDE_GFX_VERSION") &&
	    (e = set_var(ctx, rt, "HSA_OVERRIDE_GFX_VERSION", t->hsa_override)))
		return e;
	if (hipblaslt_lacks(rt, t) && !cfa_rocm_user_set("DISABLE_ADDMM_CUDA_LT") &&
	    !cfa_rocm_var(rt, "DISABLE_ADDMM_CUDA_LT") &&
	    (e = set_var(ctx, rt, "DISABLE_ADDMM_CUDA_LT", "1")))
		return e;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_rocm_settle(struct cfapkg_ctx *ctx, struct cfapkg_runtime *rt,
                                const struct cfapkg_machine *m, int gpu_index)
{
	const char *own = own_rocm(rt);
	enum cfapkg_err e;
	char *prefix, *c;

	if (own) {
		if (!(rt->rocm_prefix = prefix = cfa_arena_strdup(rt->arena, own)))
			return cfa_nomem(ctx);
		/* Programs get one spelling: a part's folder is the generation's
		 * "/view/PART", which on Windows is given its separators here. */
		for (c = prefix; cfa_rocm_sep() == '\\' && *c; c++)
			*c = *c == '/' ? '\\' : *c;
		if ((e = set_var(ctx, rt, "HIP_PATH", prefix)) ||
		    (e = set_var(ctx, rt, "ROCM_PATH", prefix)) || (e = put_first(ctx, rt)) ||
		    (e = take_off_path(ctx, rt)))
			return e;
	}
	/* After put_first: the overlay's folders must come before even the
	 * ROCm's library folder, which put_first, when it ran, put in front. */
	overlay_first(rt);
	if ((e = set_gpu(ctx, rt, m, gpu_index)))
		return e;
	return target_vars(ctx, rt);
}
