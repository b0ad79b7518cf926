/*
 * gpus.c - loading and looking up the GPU table.
 */
#include "core/gpus.h"

#include <string.h>

#include "core/json.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"

static const char *const top_keys[] = {"format", "targets", "devices", NULL};
static const char *const target_keys[] = {"gfx", "generation", "kfd", "status",
                                          "min_hip_sdk", "apu", "hsa_override",
                                          "hipblaslt", "rocblas_overlay", NULL};
static const char *const device_keys[] = {"pci", "revision", "chip", "gfx", "name", NULL};

/* "major.minor.stepping", each a small number: what the HSA runtime accepts. */
static bool valid_hsa_override(const char *s)
{
	unsigned parts = 0;

	while (parts < 3) {
		size_t n = strspn(s, "0123456789");
		/* Two digits at most: HSA reads each part as a small number. */
		if (n == 0 || n > 2)
			return false;
		s += n;
		parts++;
		if (*s != '.')
			break;
		s++;
	}
	return parts == 3 && *s == '\0';
}

/* The ROCm facts of a target; hipblaslt defaults to true, as most have kernels. */
static enum cfapkg_err parse_rocm_facts(struct cfa_jr *jr, const cJSON *o,
                                        struct cfapkg_gpu_target *t)
{
	enum cfapkg_err e;

	t->hipblaslt = true;
	if ((e = cfa_jr_bool(jr, o, "hipblaslt", &t->hipblaslt)) ||
	    (e = cfa_jr_bool(jr, o, "rocblas_overlay", &t->rocblas_overlay)) ||
	    (e = cfa_jr_string(jr, o, "hsa_override", false, &t->hsa_override)))
		return e;
	if (t->hsa_override && !valid_hsa_override(t->hsa_override))
		return cfa_jr_fail(jr, "hsa_override \"%s\" must be major.minor.stepping (10.3.0)",
		                   t->hsa_override);
	return CFAPKG_E_OK;
}

static enum cfapkg_err parse_target(struct cfa_jr *jr, const cJSON *o,
                                    struct cfapkg_gpu_target *t)
{
	const char *status = NULL;
	int64_t kfd = 0;
	enum cfapkg_err e;

	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, target_keys)) ||
	    (e = cfa_jr_string(jr, o, "gfx", true, &t->gfx)) ||
	    (e = cfa_jr_string(jr, o, "generation", true, &t->generation)) ||
	    (e = cfa_jr_int(jr, o, "kfd", 0, 9999999, false, &kfd)) ||
	    (e = cfa_jr_string(jr, o, "status", true, &status)) ||
	    (e = cfa_jr_string(jr, o, "min_hip_sdk", false, &t->min_hip_sdk)) ||
	    (e = cfa_jr_bool(jr, o, "apu", &t->apu)) || (e = parse_rocm_facts(jr, o, t)))
		return e;
	/* Bounded to 9999999 above: KFD's major*10000+minor*100+step fits. */
	t->kfd_version = (uint32_t)kfd;
	if (!cfa_valid_gfx(t->gfx))
		return cfa_jr_fail(jr, "\"%s\" is not a GPU target (gfx1200)", t->gfx);
	if (!cfa_status_parse(status, &t->status))
		return cfa_jr_fail(jr, "status must be validated, candidate or experimental");
	return CFAPKG_E_OK;
}

static enum cfapkg_err parse_pci(struct cfa_jr *jr, const char *pci,
                                 struct cfapkg_gpu_device *d)
{
	uint64_t vendor, device;

	/* Exactly VVVV:DDDD, as lspci -n prints it, so that an id is copied
	 * from its output as it is. */
	if (strlen(pci) != 9 || pci[4] != ':' || !cfa_parse_hex(pci, 4, 0xffff, &vendor) ||
	    !cfa_parse_hex(pci + 5, 4, 0xffff, &device))
		return cfa_jr_fail(jr, "pci must be VVVV:DDDD in hex (1002:7590)");
	d->vendor = (uint16_t)vendor;
	d->device = (uint16_t)device;
	return CFAPKG_E_OK;
}

static enum cfapkg_err parse_device(struct cfa_jr *jr, const cJSON *o,
                                    struct cfapkg_gpu_device *d)
{
	const char *pci = NULL, *rev = NULL;
	enum cfapkg_err e;
	uint64_t r;

	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, device_keys)) ||
	    (e = cfa_jr_string(jr, o, "pci", true, &pci)) ||
	    (e = cfa_jr_string(jr, o, "revision", false, &rev)) ||
	    (e = cfa_jr_string(jr, o, "chip", true, &d->chip)) ||
	    (e = cfa_jr_string(jr, o, "gfx", true, &d->gfx)) ||
	    (e = cfa_jr_string(jr, o, "name", true, &d->name)) || (e = parse_pci(jr, pci, d)))
		return e;
	/* No revision: the entry names every revision of that PCI id. */
	d->revision = -1;
	if (rev && !cfa_parse_hex(rev, strlen(rev), 0xff, &r))
		return cfa_jr_fail(jr, "revision must be two hex digits (c0)");
	if (rev)
		d->revision = (int)r;
	if (!cfa_valid_gfx(d->gfx))
		return cfa_jr_fail(jr, "\"%s\" is not a GPU target (gfx1200)", d->gfx);
	return CFAPKG_E_OK;
}

static enum cfapkg_err target_fn(struct cfa_jr *jr, const cJSON *o, void *p, void *arg)
{
	(void)arg;
	return parse_target(jr, o, p);
}

static enum cfapkg_err device_fn(struct cfa_jr *jr, const cJSON *o, void *p, void *arg)
{
	(void)arg;
	return parse_device(jr, o, p);
}

enum cfapkg_err cfa_gpus_load_json(struct cfapkg_ctx *ctx, const char *path, const cJSON *root)
{
	struct cfa_gpus *g = cfa_calloc(1, sizeof(*g));
	struct cfa_jr jr;
	int64_t format = 0;
	enum cfapkg_err e;

	if (!g)
		return cfa_nomem(ctx);
	cfa_arena_init(&g->arena);
	cfa_jr_init(&jr, ctx, &g->arena, path, CFAPKG_E_RECIPE);
	if (!(e = cfa_jr_object(&jr, root)) && !(e = cfa_jr_keys(&jr, root, top_keys)) &&
	    !(e = cfa_jr_int(&jr, root, "format", 1, 1, true, &format)) &&
	    !(e = cfa_jr_array(&jr, root, "targets", sizeof(*g->targets), true, target_fn, NULL,
	                       (void **)&g->targets, &g->ntargets)) &&
	    !(e = cfa_jr_array(&jr, root, "devices", sizeof(*g->devices), true, device_fn, NULL,
	                       (void **)&g->devices, &g->ndevices)) &&
	    (!g->ntargets || !g->ndevices)) /* the two lists are the table */
		e = cfa_jr_fail(&jr, "needs \"targets\" and \"devices\", each a non-empty array");
	/* The table is replaced whole or not at all: a bad one leaves the
	 * previous table (a channel's, the built-in one) in use. */
	if (e)
		cfa_gpus_free(g);
	else
		cfa_gpus_take(ctx, g);
	return e;
}

void cfa_gpus_take(struct cfapkg_ctx *ctx, struct cfa_gpus *g)
{
	cfa_gpus_free(ctx->gpus);
	ctx->gpus = g;
}

enum cfapkg_err cfa_gpus_load(struct cfapkg_ctx *ctx, const char *path)
{
	cJSON *root = NULL;
	enum cfapkg_err e = cfa_json_read_file(ctx, path, CFAPKG_E_RECIPE, &root);

	if (e)
		return e; /* detail set by the reader */
	e = cfa_gpus_load_json(ctx, path, root);
	cJSON_Delete(root);
	return e;
}

const struct cfapkg_gpu_target *cfa_gpus_target(const struct cfapkg_ctx *ctx, const char *gfx)
{
	size_t i;

	/* NULL without a table too: callers take an unknown target for one with
	 * no known needs, not for an error. */
	if (!ctx->gpus)
		return NULL;
	for (i = 0; i < ctx->gpus->ntargets; i++)
		if (strcmp(ctx->gpus->targets[i].gfx, gfx) == 0)
			return &ctx->gpus->targets[i];
	return NULL;
}
