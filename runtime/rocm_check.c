/*
 * rocm_check.c - what 'cfapkg doctor' says about ROCm: which one a runtime
 * uses (the environment's or the system's), whether rocBLAS finds Tensile
 * files for the GPU where rocBLAS itself looks, whether hipBLASLt has
 * kernels for it (its own kernel files, where it has a folder of them;
 * else gpus.json), and whether MIOpen is there.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "detect/detect.h"
#include "platform/platform.h"
#include "runtime/rocm.h"

struct checker {
	struct cfapkg_ctx *ctx;
	const struct cfapkg_runtime *rt;
	struct cfapkg_rocm_report *r;
	bool win;
	bool failed; /* out of memory */
};

/* s kept in the report's arena (NULL stays NULL); takes s (cfa_free). */
static const char *keep(struct checker *c, char *s)
{
	const char *kept = s ? cfa_arena_strdup(c->r->arena, s) : NULL;

	c->failed |= s && !kept;
	cfa_free(s);
	return kept;
}

/* A variable as a program would see it: rt's, else the user's (a copy). */
static char *effective(const struct cfapkg_runtime *rt, const char *name)
{
	const char *own = cfa_rocm_var(rt, name);
	char *user = NULL, *copy;

	if (own)
		return cfa_strdup(own);
	if (cfa_plat_getenv_dup(name, &user) != 0 || !user)
		return NULL;
	/* An empty value names nothing, so it counts as unset. */
	copy = user[0] ? cfa_strdup(user) : NULL;
	free(user); /* the platform's allocation */
	return copy;
}

/* The system's ROCm: what ROCM_PATH or HIP_PATH names, else the first
 * one detection found. */
static char *system_rocm(const struct cfapkg_runtime *rt, const struct cfapkg_machine *m)
{
	char *named = effective(rt, "ROCM_PATH");

	if (!named)
		named = effective(rt, "HIP_PATH");
	if (!named && m && m->nhip_sdks)
		named = cfa_strdup(m->hip_sdks[0].path);
	return named;
}

/* The target kernels are looked up for: HSA_OVERRIDE_GFX_VERSION's when set. */
static char *kernel_gfx(const struct cfapkg_runtime *rt)
{
	char *override = effective(rt, "HSA_OVERRIDE_GFX_VERSION"), gfx[16];
	/* The override is read by the Linux runtime only; on Windows the GPU's
	 * own target is what kernels are looked up for. */
	bool mapped = override && strcmp(rt->os, "linux") == 0 &&
	              cfa_gfx_from_override(override, gfx);

	cfa_free(override);
	return cfa_strdup(mapped ? gfx : rt->gfx);
}

/* rocBLAS's folder: ROCBLAS_TENSILE_LIBPATH verbatim, else rocblas/library
 * beside its library; a per-target sub-folder wins when there is one. */
static void tensile(struct checker *c)
{
	/* rocBLAS's own order: lazy index, per-target index, the one for all */
	static const char *const names[] = {"TensileLibrary_lazy_", "TensileLibrary_"};
	char *dir = effective(c->rt, "ROCBLAS_TENSILE_LIBPATH"), *sub = NULL, *file;
	const char sep = cfa_rocm_sep();
	size_t i;

	if (!dir && c->r->prefix)
		dir = cfa_aprintf("%s%c%s%crocblas%clibrary", c->r->prefix, sep, c->win ? "bin" : "lib",
		                  sep, sep);
	/* A folder of the target's own beside the shared one is where rocBLAS
	 * looks first, so it is the one reported. */
	if (dir && (sub = cfa_aprintf("%s%c%s", dir, sep, c->r->gfx)) && cfa_plat_is_dir(sub)) {
		cfa_free(dir);
		dir = sub;
	} else if (dir) {
		cfa_free(sub);
	}
	c->r->tensile_dir = keep(c, dir ? cfa_strdup(dir) : NULL);
	/* The first file that is there is the one rocBLAS would read, so the
	 * search stops at it. */
	for (i = 0; dir && i < 3 && !c->r->tensile_file; i++) {
		file = i < 2 ? cfa_aprintf("%s%c%s%s.dat", dir, sep, names[i], c->r->gfx)
		             : cfa_aprintf("%s%cTensileLibrary.dat", dir, sep);
		c->failed |= !file;
		if (file && cfa_plat_is_file(file))
			c->r->tensile_file = keep(c, file);
		else
			cfa_free(file);
	}
	cfa_free(dir);
}

/* MIOpen in the ROCm in use or in any folder of the runtime's path. */
static void miopen(struct checker *c)
{
	const char *head = c->win ? "MIOpen" : "libMIOpen.so", *tail = c->win ? ".dll" : "";
	char *lib = c->r->prefix ? cfa_aprintf("%s%c%s", c->r->prefix, cfa_rocm_sep(),
	                                       c->win ? "bin" : "lib")
	                         : NULL;
	size_t i;

	/* The ROCm in use first, then each folder of the runtime's path in
	 * order: the first MIOpen found is the one a program would load. */
	for (i = 0; !c->r->miopen && i <= c->rt->npath; i++) {
		const char *dir = i == 0 ? lib : c->rt->path[i - 1];
		char *name = dir ? cfa_rocm_dir_find(dir, head, tail) : NULL;
		if (name)
			c->r->miopen = keep(c, cfa_aprintf("%s%c%s", dir, cfa_rocm_sep(), name));
		cfa_free(name);
	}
	cfa_free(lib);
}

/* hipBLASLt's kernel files for the target, where there is a folder. */
static void hipblaslt(struct checker *c, const struct cfapkg_gpu_target *t)
{
	char *dir = cfa_rocm_hipblaslt_dir(c->rt, c->r->prefix), *file = NULL;
	int has = cfa_rocm_hipblaslt_kernel(dir, c->r->gfx, &file);

	/* Without a kernel folder to look in (has < 0), the target table
	 * decides, and a target it does not know is assumed to have kernels:
	 * this is advice, and a wrong warning would send people after a problem
	 * they do not have. */
	c->r->hipblaslt = has < 0 ? !t || t->hipblaslt : has == 1;
	if (has >= 0)
		c->r->hipblaslt_dir = keep(c, cfa_strdup(dir));
	c->r->hipblaslt_file = keep(c, file);
	cfa_free(dir);
}

/* The part of the environment whose folder holds the ROCm in use. */
static void rocm_part(struct checker *c)
{
	size_t i, n;

	for (i = 0; c->r->from_env && i < c->rt->nparts; i++) {
		const struct cfapkg_runtime_part *p = &c->rt->parts[i];
		/* The part's folder must end where a separator follows, so that
		 * /x/rocm is not taken for the part at /x/ro. */
		if (!p->prefix || strncmp(c->r->prefix, p->prefix, n = strlen(p->prefix)) != 0 ||
		    (c->r->prefix[n] && c->r->prefix[n] != '/' && c->r->prefix[n] != '\\'))
			continue;
		c->r->rocm_part = keep(c, cfa_aprintf("%s %s", p->name, p->version));
		return;
	}
}

void cfapkg_rocm_report_free(struct cfapkg_rocm_report *r)
{
	if (!r)
		return;
	cfa_arena_fini(r->arena);
	cfa_free(r->arena);
	cfa_free(r);
}

enum cfapkg_err cfapkg_rocm_check(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                                  const struct cfapkg_machine *m,
                                  struct cfapkg_rocm_report **out)
{
	struct checker c = {ctx, rt, NULL, strcmp(rt->os, "windows") == 0, false};
	const struct cfapkg_gpu_target *t;
	char *lt;

	if (!(c.r = cfa_calloc(1, sizeof(*c.r))) || !(c.r->arena = cfa_calloc(1, sizeof(*c.r->arena)))) {
		cfa_free(c.r);
		return cfa_nomem(ctx);
	}
	cfa_arena_init(c.r->arena);
	/* The environment's own ROCm, when it has one, is the one its programs
	 * use; only without one does the system's matter. */
	c.r->from_env = rt->rocm_prefix != NULL;
	c.r->prefix = keep(&c, rt->rocm_prefix ? cfa_strdup(rt->rocm_prefix) : system_rocm(rt, m));
	c.r->gfx = keep(&c, kernel_gfx(rt));
	c.r->rocblas_overlay = rt->rocblas_overlay;
	t = c.r->gfx ? cfapkg_gpu_target_find(ctx, rt->gfx) : NULL;
	cfapkg_ctx_clear_error(ctx); /* an unknown target: kernels assumed */
	lt = effective(rt, "DISABLE_ADDMM_CUDA_LT");
	c.r->addmm_lt_disabled = lt && strcmp(lt, "1") == 0;
	cfa_free(lt);
	if (c.r->gfx) {
		tensile(&c);
		hipblaslt(&c, t);
		miopen(&c);
	}
	if (c.r->prefix)
		rocm_part(&c);
	if (c.failed || !c.r->gfx) {
		cfapkg_rocm_report_free(c.r);
		return cfa_nomem(ctx);
	}
	*out = c.r;
	return CFAPKG_E_OK;
}
