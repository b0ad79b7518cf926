/*
 * facts.c - machine facts from flags and facts files.  Every value is
 * checked here so the solver can trust what it is given, and held whole:
 * text allocated, lists grown one entry at a time; copied and freed here
 * too, so that no holder shares another's text.
 */
#include <string.h>

#include "core/json.h"
#include "core/gpus.h"
#include "core/json_build.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "platform/platform.h"

/* The SDK list emptied; whether it is known is the caller's. */
static void free_sdks(struct cfapkg_facts *f)
{
	size_t i;

	for (i = 0; i < f->nhip_sdks; i++)
		cfa_free(f->hip_sdks[i]);
	CFA_FREE(f->hip_sdks);
	f->nhip_sdks = 0;
}

void cfapkg_facts_clear(struct cfapkg_facts *f)
{
	if (!f)
		return;
	cfa_free(f->arch);
	cfa_free(f->driver);
	cfa_free(f->glibc);
	cfa_free(f->hip_runtimes);
	free_sdks(f);
	memset(f, 0, sizeof(*f));
}

void cfa_facts_forget(struct cfapkg_facts *f, const char *key)
{
	if (strcmp(key, "driver") == 0) {
		CFA_FREE(f->driver);
	} else if (strcmp(key, "hip-runtime") == 0) {
		CFA_FREE(f->hip_runtimes);
		f->nhip_runtimes = 0;
		f->hip_runtimes_known = false;
	} else if (strcmp(key, "hip-sdk") == 0) {
		free_sdks(f);
		f->hip_sdks_known = false;
	}
}

/* A copy of text that may be unknown: false only when out of memory. */
static bool copy_text(char **dst, const char *src)
{
	return !src || (*dst = cfa_strdup(src));
}

/* Each list copied entry by entry into to (cleared), counted as it
 * goes so that a failure leaves to for cfapkg_facts_clear; false when
 * out of memory. */
static bool copy_lists(const struct cfapkg_facts *from, struct cfapkg_facts *to)
{
	size_t i;

	if (from->nhip_runtimes &&
	    !(to->hip_runtimes = cfa_calloc(from->nhip_runtimes, sizeof(*to->hip_runtimes))))
		return false;
	for (i = 0; i < from->nhip_runtimes; i++)
		to->hip_runtimes[to->nhip_runtimes++] = from->hip_runtimes[i];
	if (from->nhip_sdks && !(to->hip_sdks = cfa_calloc(from->nhip_sdks, sizeof(*to->hip_sdks))))
		return false;
	for (i = 0; i < from->nhip_sdks; i++)
		if (!(to->hip_sdks[to->nhip_sdks++] = cfa_strdup(from->hip_sdks[i])))
			return false; /* counted: the NULL is freed with the rest */
	return true;
}

enum cfapkg_err cfapkg_facts_copy(const struct cfapkg_facts *from, struct cfapkg_facts *to)
{
	if (from == to)
		return CFAPKG_E_OK;
	cfapkg_facts_clear(to);
	memcpy(to->os, from->os, sizeof(to->os));
	memcpy(to->gfx, from->gfx, sizeof(to->gfx));
	to->hip_runtimes_known = from->hip_runtimes_known;
	to->hip_sdks_known = from->hip_sdks_known;
	if (copy_text(&to->arch, from->arch) && copy_text(&to->driver, from->driver) &&
	    copy_text(&to->glibc, from->glibc) && copy_lists(from, to))
		return CFAPKG_E_OK;
	cfapkg_facts_clear(to);
	return CFAPKG_E_NOMEM;
}

enum cfapkg_err cfapkg_facts_init_host(struct cfapkg_facts *f)
{
	cfapkg_facts_clear(f);
	/* The platform's names are the closed set's: "linux", "windows". */
	if (!cfa_snprintf(f->os, sizeof(f->os), "%s", cfa_plat_os()))
		f->os[0] = '\0';
	return (f->arch = cfa_strdup(cfa_plat_arch())) ? CFAPKG_E_OK : CFAPKG_E_NOMEM;
}

/* A closed set's name into its field: the caller checked it, so it fits. */
static void set_name(char *dst, size_t len, const char *value)
{
	/* Should it not fit after all, the fact is left unknown rather than
	 * cut: a cut target would be another one. */
	if (!cfa_snprintf(dst, len, "%s", value))
		dst[0] = '\0';
}

/* The old value is kept until the new one is held: a failed set leaves
 * the fact as it was. */
static enum cfapkg_err set_text(struct cfapkg_ctx *ctx, char **dst, const char *value)
{
	char *copy = cfa_strdup(value);

	if (!copy)
		return cfa_nomem(ctx);
	cfa_free(*dst);
	*dst = copy;
	return CFAPKG_E_OK;
}

static enum cfapkg_err add_runtime(struct cfapkg_ctx *ctx, struct cfapkg_facts *f,
                                   const char *value)
{
	uint64_t major;
	size_t i;

	f->hip_runtimes_known = true;
	/* "none" says there are none, which differs from not knowing: a plan
	 * can then refuse what needs one, rather than assume one is there. */
	if (strcmp(value, "none") == 0) {
		CFA_FREE(f->hip_runtimes);
		f->nhip_runtimes = 0;
		return CFAPKG_E_OK;
	}
	if (!cfa_parse_u64(value, strlen(value), 99, &major) || major == 0)
		return cfa_fail(ctx, CFAPKG_E_FACTS,
		                "hip-runtime \"%s\": give the HIP major version (6, 7) or none",
		                value);
	/* A runtime given twice is kept once. */
	for (i = 0; i < f->nhip_runtimes; i++)
		if (f->hip_runtimes[i] == major)
			return CFAPKG_E_OK;
	if (cfa_grow_one((void **)&f->hip_runtimes, f->nhip_runtimes, sizeof(*f->hip_runtimes)))
		return cfa_nomem(ctx);
	f->hip_runtimes[f->nhip_runtimes++] = (unsigned)major;
	return CFAPKG_E_OK;
}

static enum cfapkg_err add_sdk(struct cfapkg_ctx *ctx, struct cfapkg_facts *f, const char *value)
{
	struct cfa_ver v;
	const char *why = NULL;
	char *copy;
	size_t i;

	f->hip_sdks_known = true;
	if (strcmp(value, "none") == 0) {
		free_sdks(f);
		return CFAPKG_E_OK;
	}
	if (!cfa_ver_parse(value, strlen(value), &v, &why))
		return cfa_fail(ctx, CFAPKG_E_FACTS, "hip-sdk \"%s\": %s", value, why);
	for (i = 0; i < f->nhip_sdks; i++)
		if (strcmp(f->hip_sdks[i], value) == 0)
			return CFAPKG_E_OK;
	if (!(copy = cfa_strdup(value)) ||
	    cfa_grow_one((void **)&f->hip_sdks, f->nhip_sdks, sizeof(*f->hip_sdks))) {
		cfa_free(copy);
		return cfa_nomem(ctx);
	}
	f->hip_sdks[f->nhip_sdks++] = copy;
	return CFAPKG_E_OK;
}

/* A name, PCI id or target, kept as the one known target it names. */
static enum cfapkg_err set_gpu(struct cfapkg_ctx *ctx, struct cfapkg_facts *f, const char *value)
{
	struct cfapkg_gpu_lookup l;
	enum cfapkg_err e = cfapkg_gpu_lookup(ctx, value, &l);

	if (e)
		return e; /* detail set by the recipe loader */
	/* A name that fits several targets, or none, is refused with what it
	 * could mean: a plan for a guessed GPU would install the wrong
	 * kernels. */
	if (l.match != CFAPKG_GPU_FOUND)
		return cfa_gpu_lookup_fail(ctx, value, &l);
	/* The loader checked gpus.json's targets: it fits. */
	set_name(f->gfx, sizeof(f->gfx), l.gfx);
	return CFAPKG_E_OK;
}

/* A lockfile's target, as written: it must stay readable when gpus.json
 * changes, and with no recipes at all (repair). */
static enum cfapkg_err set_gfx_as_written(struct cfapkg_ctx *ctx, struct cfapkg_facts *f,
                                          const char *value)
{
	if (!cfa_valid_gfx(value))
		return cfa_fail(ctx, CFAPKG_E_FACTS,
		                "gpu \"%s\": give a GPU target such as gfx1200 (cfapkg gpus lists "
		                "the known ones)", value);
	set_name(f->gfx, sizeof(f->gfx), value);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_facts_set(struct cfapkg_ctx *ctx, struct cfapkg_facts *f,
                                 const char *key, const char *value)
{
	struct cfa_ver v;
	const char *why = NULL;

	if (strcmp(key, "os") == 0) {
		if (!cfa_valid_os(value))
			return cfa_fail(ctx, CFAPKG_E_FACTS, "os \"%s\": use windows or linux", value);
		set_name(f->os, sizeof(f->os), value);
		return CFAPKG_E_OK;
	}
	if (strcmp(key, "arch") == 0) {
		if (!cfa_valid_arch(value))
			return cfa_fail(ctx, CFAPKG_E_FACTS, "arch \"%s\": use x86_64, aarch64 or x86",
			                value);
		return set_text(ctx, &f->arch, value);
	}
	if (strcmp(key, "gpu") == 0)
		return set_gpu(ctx, f, value);
	if (strcmp(key, "driver") == 0) {
		if (!cfa_ver_parse(value, strlen(value), &v, &why))
			return cfa_fail(ctx, CFAPKG_E_FACTS, "driver \"%s\": %s", value, why);
		return set_text(ctx, &f->driver, value);
	}
	if (strcmp(key, "glibc") == 0) {
		/* Plain release numbers: glibc spells its versions 2.36, 2.41. */
		if (!cfa_ver_parse(value, strlen(value), &v, &why) || v.labellen || v.revlen ||
		    v.rank != CFA_RANK_FINAL)
			return cfa_fail(ctx, CFAPKG_E_FACTS, "glibc \"%s\": give the C library's "
			                "version as ldd --version prints it (2.36)", value);
		return set_text(ctx, &f->glibc, value);
	}
	if (strcmp(key, "hip-runtime") == 0)
		return add_runtime(ctx, f, value);
	if (strcmp(key, "hip-sdk") == 0)
		return add_sdk(ctx, f, value);
	/* The keys come from the caller's own tables (the front end's flags, a
	 * facts file's members), so an unknown one is the caller's mistake. */
	return cfa_fail(ctx, CFAPKG_E_USAGE, "unknown fact \"%s\"", key);
}

/* Puts the file's name in front of a value's own complaint. */
static enum cfapkg_err name_file(struct cfapkg_ctx *ctx, const char *path)
{
	char *detail = cfa_strdup(cfapkg_ctx_error(ctx));
	enum cfapkg_err e;

	if (!detail)
		return cfa_nomem(ctx); /* the complaint stays, without the file */
	cfapkg_ctx_clear_error(ctx);
	e = cfa_fail(ctx, CFAPKG_E_FACTS, "%s: %s", path, detail);
	cfa_free(detail);
	return e;
}

static const char *const facts_keys[] = {"os", "arch", "gpu", "driver", "glibc",
                                         "hip_runtimes", "hip_sdks", NULL};

/* A JSON array of numbers or strings, each passed to cfapkg_facts_set. */
static enum cfapkg_err load_list(struct cfa_jr *jr, const cJSON *root, const char *key,
                                 const char *fact, struct cfapkg_facts *f)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key), *item;
	char num[32];
	enum cfapkg_err e;

	if (!a)
		return CFAPKG_E_OK;
	if (!cJSON_IsArray(a))
		return cfa_jr_fail(jr, "%s: expected an array", key);
	/* An empty list is a known "none". */
	if ((e = cfapkg_facts_set(jr->ctx, f, fact, "none")))
		return e;
	/* A number is taken as the whole number it is, so that 6 and "6" are
	 * one runtime; one out of range is no version at all. */
	cJSON_ArrayForEach(item, a)
	{
		const char *s = NULL;
		if (cJSON_IsString(item))
			s = item->valuestring;
		else if (cJSON_IsNumber(item) && item->valuedouble >= 0 && item->valuedouble < 1e6 &&
		         cfa_snprintf(num, sizeof(num), "%u", (unsigned)item->valuedouble))
			s = num;
		if (!s)
			return cfa_jr_fail(jr, "%s: expected numbers or strings", key);
		if (cfapkg_facts_set(jr->ctx, f, fact, s))
			return name_file(jr->ctx, jr->file);
	}
	return CFAPKG_E_OK;
}

/* lookup: the gpu fact as --gpu takes it (a facts file); otherwise a
 * target as written (a lockfile). */
static enum cfapkg_err parse_facts(struct cfa_jr *jr, const cJSON *obj, struct cfapkg_facts *f,
                                   bool lookup)
{
	static const char *const scalar[] = {"os", "arch", "gpu", "driver", "glibc"};
	enum cfapkg_err e;
	size_t i;

	if ((e = cfa_jr_object(jr, obj)) || (e = cfa_jr_keys(jr, obj, facts_keys)))
		return e;
	for (i = 0; i < sizeof(scalar) / sizeof(scalar[0]); i++) {
		const char *s = NULL;
		if ((e = cfa_jr_string(jr, obj, scalar[i], false, &s)))
			return e;
		/* An empty value is as if absent: the fact stays unknown rather
		 * than being set to nothing. */
		if (!s || !*s)
			continue;
		if (!lookup && strcmp(scalar[i], "gpu") == 0)
			e = set_gfx_as_written(jr->ctx, f, s);
		else
			e = cfapkg_facts_set(jr->ctx, f, scalar[i], s);
		if (e)
			return e == CFAPKG_E_FACTS ? name_file(jr->ctx, jr->file) : e;
	}
	if (!(e = load_list(jr, obj, "hip_runtimes", "hip-runtime", f)))
		e = load_list(jr, obj, "hip_sdks", "hip-sdk", f);
	return e;
}

enum cfapkg_err cfa_facts_parse(struct cfa_jr *jr, const cJSON *obj, struct cfapkg_facts *f)
{
	return parse_facts(jr, obj, f, false);
}

cJSON *cfa_facts_json(const struct cfapkg_facts *f)
{
	struct cfa_json_build jb = {false};
	cJSON *o = cfa_json_new_object(&jb), *a;
	size_t i;

	/* An unknown arch or driver is written "", as it always was. */
	cfa_json_add_string(&jb, o, "os", f->os);
	cfa_json_add_string(&jb, o, "arch", f->arch ? f->arch : "");
	cfa_json_add_string(&jb, o, "gpu", f->gfx);
	cfa_json_add_string(&jb, o, "driver", f->driver ? f->driver : "");
	cfa_json_add_string(&jb, o, "glibc", f->glibc);
	if (f->hip_runtimes_known) {
		a = cfa_json_add_array(&jb, o, "hip_runtimes");
		for (i = 0; i < f->nhip_runtimes; i++)
			cfa_json_append_number(&jb, a, f->hip_runtimes[i]);
	}
	if (f->hip_sdks_known) {
		a = cfa_json_add_array(&jb, o, "hip_sdks");
		for (i = 0; i < f->nhip_sdks; i++)
			cfa_json_append_string(&jb, a, f->hip_sdks[i]);
	}
	return cfa_json_finish(&jb, o);
}

/* The GPU a report planned for: the override when one was in effect (as
 * detection plans), else the selected GPU's target; NULL when none. */
static const char *report_gpu(const cJSON *root)
{
	const cJSON *over = cJSON_GetObjectItemCaseSensitive(root, "gfx_override");
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(root, "selected");
	const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus"), *g;

	/* The override wins, as it did on that machine: it is what the kernels
	 * there were looked up for. */
	if (cJSON_IsString(over) && over->valuestring[0])
		return over->valuestring;
	/* Compared before the cast: a double past int's range does not
	 * convert (1e30 would be undefined behaviour). */
	if (!cJSON_IsNumber(sel) || !cJSON_IsArray(gpus) || sel->valuedouble < 0 ||
	    sel->valuedouble >= (double)cJSON_GetArraySize(gpus) ||
	    !(g = cJSON_GetArrayItem(gpus, (int)sel->valuedouble)))
		return NULL;
	g = cJSON_GetObjectItemCaseSensitive(g, "gfx");
	return cJSON_IsString(g) ? g->valuestring : NULL;
}

/* Each item's key of a report's list ("hip_sdks": [{"version": ...}])
 * as a fact; the list is known (empty: none). */
static enum cfapkg_err report_list(struct cfa_jr *jr, const cJSON *root, const char *list,
                                   const char *key, const char *fact, struct cfapkg_facts *f)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, list), *item;
	enum cfapkg_err e;
	char num[32];

	if (!cJSON_IsArray(a))
		return cfa_jr_fail(jr, "%s: expected an array (is this a cfapkg report?)", list);
	if ((e = cfapkg_facts_set(jr->ctx, f, fact, "none")))
		return e;
	cJSON_ArrayForEach(item, a)
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, key);
		const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
		if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e6 &&
		    cfa_snprintf(num, sizeof(num), "%u", (unsigned)v->valuedouble))
			s = num;
		if (!s)
			return cfa_jr_fail(jr, "%s: each item needs \"%s\"", list, key);
		if (cfapkg_facts_set(jr->ctx, f, fact, s))
			return name_file(jr->ctx, jr->file);
	}
	return CFAPKG_E_OK;
}

/* What 'cfapkg report' wrote on someone's machine, as that machine's
 * facts: its OS, GPU (as detection chose it), driver, HIP runtimes and
 * SDKs.  Its other members (GPU names, paths, warnings) are not facts. */
static enum cfapkg_err parse_report(struct cfa_jr *jr, const cJSON *root, struct cfapkg_facts *f)
{
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "report_format");
	const cJSON *drv = cJSON_GetObjectItemCaseSensitive(root, "driver");
	static const char *const scalar[] = {"os", "arch"};
	const char *gpu = report_gpu(root), *version = NULL;
	enum cfapkg_err e = CFAPKG_E_OK;
	struct cfa_ver v;
	size_t i;

	if (!cJSON_IsNumber(fmt) || fmt->valuedouble != 1)
		return cfa_jr_fail(jr, "report_format: this cfapkg reads reports of format 1");
	for (i = 0; i < 2 && !e; i++) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, scalar[i]);
		if (cJSON_IsString(s) && s->valuestring[0])
			e = cfapkg_facts_set(jr->ctx, f, scalar[i], s->valuestring);
	}
	if (!e && gpu)
		e = set_gfx_as_written(jr->ctx, f, gpu);
	if (!e && cJSON_IsObject(drv) &&
	    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(drv, "version")))
		version = cJSON_GetObjectItemCaseSensitive(drv, "version")->valuestring;
	/* Only a driver version that compares, as detection keeps it. */
	if (!e && version && cfa_ver_parse(version, strlen(version), &v, NULL))
		e = cfapkg_facts_set(jr->ctx, f, "driver", version);
	if (e)
		return e == CFAPKG_E_FACTS ? name_file(jr->ctx, jr->file) : e;
	if (!(e = report_list(jr, root, "hip_runtimes", "major", "hip-runtime", f)))
		e = report_list(jr, root, "hip_sdks", "version", "hip-sdk", f);
	return e;
}

enum cfapkg_err cfapkg_facts_load(struct cfapkg_ctx *ctx, struct cfapkg_facts *f,
                                  const char *path)
{
	struct cfa_arena a;
	struct cfa_jr jr;
	cJSON *root = NULL;
	enum cfapkg_err e;

	e = cfa_json_read_file(ctx, path, CFAPKG_E_FACTS, &root);
	if (e)
		return e; /* detail set by the reader */
	cfa_arena_init(&a);
	cfa_jr_init(&jr, ctx, &a, path, CFAPKG_E_FACTS);
	/* A report is told by its format member; anything else is a facts file. */
	if (cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "report_format"))
		e = parse_report(&jr, root, f);
	else
		e = parse_facts(&jr, root, f, true);
	cJSON_Delete(root);
	cfa_arena_fini(&a);
	return e;
}
