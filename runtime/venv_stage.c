/*
 * venv_stage.c - an environment's ZLUDA libraries staged into a Python
 * environment under the names its torch loads, with the wheel's own
 * files kept beside them for an exact undo (stage.c's record, in the
 * venv's folder), and the root's list of staged venvs (ROOT/venvs/ID.json:
 * the folder and the environment it follows), which lets an install,
 * update, repair or rollback stage them again and verify check them.
 *
 * What the community installers do by hand, as facts: ComfyUI-Zluda's
 * install scripts copy lshqqytiger's cublas.dll, cusparse.dll, cufft.dll
 * and cufftw.dll over torch\lib's cublas64_11.dll, cusparse64_11.dll,
 * cufft64_10.dll and cufftw64_10.dll, and copy the wheel's
 * nvrtc64_112_0.dll to nvrtc_cuda.dll before ZLUDA's nvrtc.dll takes its
 * name (ZLUDA's nvrtc loads the real one as nvrtc_cuda.dll unless
 * ZLUDA_NVRTC_LIB names it).  SD.Next makes the same names inside its
 * own ZLUDA folder and loads them before torch does.  vosen's ZLUDA
 * builds ship the versioned names themselves (cublas64_11.dll ...
 * cublas64_13.dll, libcublas.so.11 ... .13).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "runtime/stage.h"
#include "runtime/venv.h"

#define MAX_SOURCES 32
#define MAX_PLACED 80
#define NVRTC_REAL "nvrtc_cuda.dll" /* the name a ZLUDA nvrtc loads NVIDIA's by */

struct source {
	const char *part, *version, *dir; /* dir: the part's view folder */
};

struct stager {
	struct cfapkg_ctx *ctx;
	const struct cfapkg_runtime *rt;
	struct cfapkg_venv *v;
	struct cfapkg_venv_staged *out;
	struct source src[MAX_SOURCES];
	size_t nsrc;
	struct cfapkg_stage_file files[MAX_PLACED];
	struct cfapkg_venv_placed placed[MAX_PLACED];
	size_t nfiles;
	const char *left[MAX_PLACED];
	size_t nleft;
	bool failed;               /* out of memory */
};

/* Text kept in the result's arena, so that what the result points at is freed
 * with it.  A failure only marks s->failed; the caller turns that into one
 * out-of-memory error at the end of its step. */
static char *keep(struct stager *s, const char *text)
{
	char *k = text ? cfa_arena_strdup(s->out->arena, text) : NULL;

	s->failed |= text && !k;
	return k;
}

static char *keepf(struct stager *s, const char *fmt, ...) CFA_PRINTF(2, 3);
static char *keepf(struct stager *s, const char *fmt, ...)
{
	va_list ap;
	char *text, *k;

	va_start(ap, fmt);
	text = cfa_vaprintf(fmt, ap);
	va_end(ap);
	k = keep(s, text);
	s->failed |= !text;
	cfa_free(text);
	return k;
}

/* A part needing a CUDA driver is a CUDA program (LibTorch): its own
 * NVIDIA copies are what is being replaced, never a source. */
static bool cuda_program(const struct cfapkg_lockfile_part *p)
{
	size_t i;

	for (i = 0; p && i < p->nrequires; i++)
		if (cfapkg_spec_names(p->requires[i], "cuda-driver-api"))
			return true;
	return false;
}

/* ZLUDA and what extends it, in dependency order (an overlay after the
 * ZLUDA it needs: the later wins). */
static enum cfapkg_err find_sources(struct stager *s)
{
	struct cfapkg_lockfile *lock = NULL;
	enum cfapkg_err e = cfapkg_env_lockfile(s->ctx, s->rt->env_name, s->rt->generation, &lock);
	size_t i;

	if (e)
		return e;
	/* Only packages and user parts have files of their own.  The lock is
	 * read for each part's requirements, which the runtime does not
	 * carry. */
	for (i = 0; i < s->rt->nparts && s->nsrc < MAX_SOURCES; i++) {
		const struct cfapkg_runtime_part *p = &s->rt->parts[i];
		if ((p->kind != CFAPKG_KIND_PACKAGE && p->kind != CFAPKG_KIND_USER) || !p->prefix ||
		    cuda_program(cfapkg_lockfile_find(lock, p->name)))
			continue;
		s->src[s->nsrc++] = (struct source){p->name, p->version, p->prefix};
	}
	cfapkg_lockfile_free(lock);
	return CFAPKG_E_OK;
}

struct name_scan {
	const char *want;
	bool windows;
	char *found;               /* the name as the folder spells it */
};

static int name_one(const char *name, void *arg)
{
	struct name_scan *n = arg;

	if (!n->found && cfa_venv_same_name(name, n->want, n->windows))
		n->found = cfa_strdup(name);
	return 0;
}

/* The source of a library name: the last part whose view folder holds a
 * file of that name (*path: its file, kept in the result's arena). */
static const struct source *source_of(struct stager *s, const char *name, const char **path)
{
	size_t i = s->nsrc;

	*path = NULL;
	/* From the last part back, so that an overlay wins over the ZLUDA it
	 * extends.  The folder is listed rather than the name opened, so that
	 * on Windows a name in another case is found and staged as the folder
	 * spells it. */
	while (i-- > 0) {
		struct name_scan n = {name, s->v->windows, NULL};
		cfa_plat_list_dir(s->src[i].dir, name_one, &n);
		if (n.found)
			*path = keepf(s, "%s/%s", s->src[i].dir, n.found);
		cfa_free(n.found);
		if (*path)
			return &s->src[i];
	}
	return NULL;
}

/* "cublas = 11", "cublas=11": the version a provide gives name, 0 when it
 * is about another name or has none. */
static unsigned provide_major(const char *text, const char *name)
{
	size_t n = cfapkg_spec_name_len(text);
	uint64_t v = 0;
	const char *p = text + n;

	if (n != strlen(name) || strncmp(text, name, n) != 0)
		return 0;
	p += strspn(p, " ");
	if (*p != '=' || p[1] == '=')
		return 0;
	p += 1 + strspn(p + 1, " ");
	return cfa_parse_u64(p, strlen(p), 999, &v) ? (unsigned)v : 0;
}

/* The recipe versions that provide family at major, as "zluda 7-preview.10,
 * ..." (at most four, so that the message stays readable), and the majors the
 * recipes provide at all; seen covers majors 1 to 99, far past any cuBLAS there
 * is. */
static void who_provides(struct stager *s, const char *family, unsigned major, struct cfa_buf *who,
                         struct cfa_buf *majors)
{
	bool seen[100] = {false};
	size_t i, j, k, n = 0, shown = 0;
	const struct cfapkg_recipe *const *all = NULL;

	/* Only a message's detail: recipes that cannot be read name no one. */
	if (cfapkg_recipes_load(s->ctx) == CFAPKG_E_OK)
		all = cfapkg_recipes(s->ctx, &n);
	cfapkg_ctx_clear_error(s->ctx);

	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *r = all[i];
		for (j = 0; j < r->nversions; j++)
			for (k = 0; k < r->versions[j].nprovides; k++) {
				unsigned m = provide_major(r->versions[j].provides[k].text, family);
				if (m && m < 100)
					seen[m] = true;
				if (m == major && shown++ < 4)
					cfa_buf_printf(who, "%s%s %s", who->len ? ", " : "", r->name,
					               r->versions[j].version);
			}
	}
	for (i = 1; i < 100; i++)
		if (seen[i])
			cfa_buf_printf(majors, "%s%lu", majors->len ? ", " : "", (unsigned long)i);
}

/* A torch whose cuBLAS the environment has no file for cannot run on it. */
static enum cfapkg_err refuse(struct stager *s, const struct cfapkg_torch_lib *l)
{
	struct cfa_buf who, majors;
	enum cfapkg_err e;

	cfa_buf_init(&who, 4096);
	cfa_buf_init(&majors, 1024);
	who_provides(s, l->family, l->major, &who, &majors);
	if (who.failed || majors.failed)
		e = cfa_nomem(s->ctx);
	else if (who.len)
		e = cfa_fail(s->ctx, CFAPKG_E_UNSUPPORTED, "torch %s in %s (CUDA %s) loads %s; "
		             "environment \"%s\" (generation %u) has no file of that name. Versions "
		             "that provide cuBLAS %u: %s ('cfapkg pin --env %s NAME==VERSION', then "
		             "'cfapkg update --env %s')", s->v->torch_version, s->v->root, s->v->cuda,
		             l->name, s->rt->env_name, s->rt->generation, l->major, cfa_buf_str(&who),
		             s->rt->env_name, s->rt->env_name);
	else
		e = cfa_fail(s->ctx, CFAPKG_E_UNSUPPORTED, "torch %s in %s is built for CUDA %s and "
		             "loads %s: no ZLUDA version cfapkg knows provides cuBLAS %u (they provide "
		             "cuBLAS %s); install a torch built for one of those in the venv",
		             s->v->torch_version, s->v->root, s->v->cuda, l->name, l->major,
		             majors.len ? cfa_buf_str(&majors) : "none");
	cfa_buf_fini(&who);
	cfa_buf_fini(&majors);
	return e;
}

/* Past MAX_PLACED, far above what a torch build loads, the rest are not staged
 * rather than written past the arrays. */
static void add_file(struct stager *s, const char *from, const char *rel, const char *part,
                     const char *version)
{
	if (s->nfiles == MAX_PLACED)
		return;
	s->files[s->nfiles] = (struct cfapkg_stage_file){part, from, rel};
	s->placed[s->nfiles] = (struct cfapkg_venv_placed){rel, part, version, false};
	s->nfiles++;
}

/* Windows' ZLUDA nvrtc loads NVIDIA's as nvrtc_cuda.dll: the wheel's
 * own file (the saved one, once cfapkg's stands in its place) goes there
 * first. */
static void add_nvrtc_real(struct stager *s, const struct cfapkg_torch_lib *l)
{
	const char *rel = keepf(s, "%s/%s", l->dir, l->name);
	const char *saved = keepf(s, "%s/%s%s", s->v->root, rel, CFA_STAGE_SAVED);
	const char *wheel = keepf(s, "%s/%s", s->v->root, rel);

	if (rel && saved && wheel)
		add_file(s, cfa_plat_is_file(saved) ? saved : wheel,
		         keepf(s, "%s/%s", l->dir, NVRTC_REAL), NULL, NULL);
}

/* What goes where: every library the build loads that the environment
 * has a file of that name for. */
static enum cfapkg_err plan(struct stager *s)
{
	const char *from;
	size_t i;
	bool cublas = false;

	for (i = 0; i < s->v->nlibs && !s->failed; i++) {
		const struct cfapkg_torch_lib *l = &s->v->libs[i];
		const struct source *src = l->dir ? source_of(s, l->name, &from) : NULL;
		bool is_cublas = strcmp(l->family, "cublas") == 0 && l->dir;
		/* cuBLAS is what torch cannot start without, so a missing one
		 * refuses the staging; any other name the environment lacks
		 * keeps the wheel's file and is listed as left. */
		if (is_cublas && !src)
			return refuse(s, l);
		cublas |= is_cublas;
		if (!src) {
			if (s->nleft < MAX_PLACED)
				s->left[s->nleft++] = l->name;
			continue;
		}
		/* Before ZLUDA's nvrtc takes the name: the files are staged in
		 * order, so the wheel's nvrtc is copied to its new name while
		 * it still is the wheel's. */
		if (s->v->windows && strcmp(l->family, "nvrtc") == 0)
			add_nvrtc_real(s, l);
		add_file(s, from, keepf(s, "%s/%s", l->dir, l->name), src->part, src->version);
	}
	if (!s->failed && !cublas)
		return cfa_fail(s->ctx, CFAPKG_E_NOTFOUND, "torch %s in %s loads no cuBLAS the venv "
		                "holds (%s): its nvidia-* wheels are missing; reinstall torch",
		                s->v->torch_version, s->v->root,
		                s->v->windows ? "no cublas64_N.dll in torch\\lib"
		                              : "no libcublas.so.N in the folders its RPATH names");
	return s->failed ? cfa_nomem(s->ctx) : CFAPKG_E_OK;
}

/* The venv's entry in the root's list is written after its files are placed, so
 * that the list never names a venv that holds none of cfapkg's files. */
static enum cfapkg_err remember(struct cfapkg_ctx *ctx, const char *root, const char *env)
{
	struct cfa_json_build jb = {false};
	cJSON *o = cfa_json_new_object(&jb);
	char *path = NULL, *dir = cfa_root_path(ctx, CFA_VENVS, NULL);
	enum cfapkg_err e;

	cfa_json_add_string(&jb, o, "dir", root);
	cfa_json_add_string(&jb, o, "env", env);
	o = cfa_json_finish(&jb, o);
	if (!dir || !o)
		e = dir ? cfa_nomem(ctx) : ctx->err_code;
	else if (!(e = cfa_make_dir(ctx, dir)) && !(e = cfa_venv_list_entry(ctx, root, &path))) {
		e = cfa_write_json(ctx, path, o); /* consumed */
		o = NULL;
	}
	cJSON_Delete(o);
	cfa_free(path);
	cfa_free(dir);
	return e;
}

/* Entries of an earlier staging the new plan has no file for: their
 * wheel files come back. */
static enum cfapkg_err drop_unserved(struct stager *s, cJSON *doc)
{
	cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "files"), *e = files ? files->child : NULL;
	enum cfapkg_err err = CFAPKG_E_OK;
	size_t i, count = 0;

	while (e && !err) {
		/* Taken first, since this entry may be detached and freed
		 * below. */
		cJSON *next = e->next;
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
		for (i = 0; i < s->nfiles && !(cJSON_IsString(n) &&
		                               strcmp(n->valuestring, s->files[i].as) == 0); i++)
			;
		if (i == s->nfiles && !(err = cfa_unstage_entry(s->ctx, s->v->root, e, true, NULL,
		                                                NULL, &count)))
			cJSON_Delete(cJSON_DetachItemViaPointer(files, e));
		e = next;
	}
	s->out->restored = count;
	return err;
}

static void note_venv(struct cfa_json_build *jb, cJSON *doc, const struct cfapkg_venv *v)
{
	cJSON *o = cfa_json_new_object(jb);

	cfa_json_add_string(jb, o, "torch", v->torch_version);
	cfa_json_add_string(jb, o, "cuda", v->cuda);
	cfa_json_set_item(jb, doc, "venv", o);
}

/* The torch the record was made for is still the one installed. */
static bool same_torch(const cJSON *doc, const struct cfapkg_venv *v)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(doc, "venv"), "torch");

	/* No record yet counts as the same torch: there is nothing staged that
	 * another torch's wheel could have replaced. */
	return !doc || (cJSON_IsString(t) && strcmp(t->valuestring, v->torch_version) == 0);
}

static enum cfapkg_err place(struct stager *s)
{
	struct cfa_json_build jb = {false};
	cJSON *doc = NULL, *entry;
	enum cfa_stage_changed changed;
	enum cfapkg_err e;
	size_t i;

	if ((e = cfa_stage_record_read(s->ctx, s->v->root, &doc)))
		return e;
	/* With the torch the record was made for, a changed staged file is ours
	 * to write over; after a torch upgrade it is the new wheel's, and is
	 * kept as the original instead (stage.h). */
	changed = same_torch(doc, s->v) ? CFA_CHANGED_REPLACE : CFA_CHANGED_KEEP;
	if (doc && !cfa_stage_nested(doc)) {
		cJSON_Delete(doc);
		return cfa_fail(s->ctx, CFAPKG_E_USAGE, "%s: 'cfapkg stage DIR' placed files here; "
		                "'cfapkg unstage %s' first", s->v->root, s->v->root);
	}
	/* Entries the new plan no longer serves are undone first, so that their
	 * wheel files are back before the record is written again. */
	if (!(e = drop_unserved(s, doc))) {
		doc = cfa_stage_record_start(&jb, doc, s->rt);
		note_venv(&jb, doc, s->v);
	}
	for (i = 0; i < s->nfiles && !e; i++)
		if (!(e = cfa_stage_file(s->ctx, s->v->root, &jb, doc, &s->files[i], changed, &entry))) {
			cfa_json_set_string(&jb, entry, "part", s->placed[i].part);
			cfa_json_set_string(&jb, entry, "version", s->placed[i].version);
			s->placed[i].saved = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(entry, "saved"));
		}
	if (!e)
		e = cfa_stage_record_write(s->ctx, s->v->root, &jb, doc);
	cJSON_Delete(doc);
	return e;
}

static enum cfapkg_err finish(struct stager *s)
{
	struct cfapkg_venv_staged *o = s->out;
	struct cfapkg_venv_placed *placed = cfa_arena_alloc(o->arena, (s->nfiles + 1) * sizeof(*placed));
	const char **left = cfa_arena_alloc(o->arena, (s->nleft + 1) * sizeof(*left));

	if (!placed || !left)
		return cfa_nomem(s->ctx);
	memcpy(placed, s->placed, s->nfiles * sizeof(*placed));
	memcpy(left, s->left, s->nleft * sizeof(*left));
	o->placed = placed;
	o->nplaced = s->nfiles;
	o->left = left;
	o->nleft = s->nleft;
	o->venv = s->v;
	return CFAPKG_E_OK;
}

static enum cfapkg_err stage(struct stager *s, const char *dir)
{
	enum cfapkg_err e;

	if ((e = cfapkg_venv_open(s->ctx, dir, &s->v)))
		return e;
	/* A Windows torch loads DLLs and a Linux one shared objects: files
	 * from an environment made for the other system would only break the
	 * venv. */
	if (s->v->windows != (strcmp(s->rt->os, "windows") == 0))
		return cfa_fail(s->ctx, CFAPKG_E_USAGE, "torch %s in %s is a %s build; environment "
		                "\"%s\" was made for %s: stage from an environment made for %s",
		                s->v->torch_version, s->v->root, s->v->windows ? "Windows" : "Linux",
		                s->rt->env_name, s->rt->os, s->v->windows ? "windows" : "linux");
	if ((e = find_sources(s)) || (e = plan(s)) || (e = place(s)) ||
	    (e = remember(s->ctx, s->v->root, s->rt->env_name)))
		return e;
	return finish(s);
}

enum cfapkg_err cfapkg_venv_stage(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                                  const char *dir, struct cfapkg_venv_staged **out)
{
	struct stager *s = cfa_calloc(1, sizeof(*s));
	enum cfapkg_err e;

	*out = NULL;
	if (!s || !(s->out = cfa_calloc(1, sizeof(*s->out))) ||
	    !(s->out->arena = cfa_calloc(1, sizeof(*s->out->arena)))) {
		if (s)
			cfa_free(s->out);
		cfa_free(s);
		return cfa_nomem(ctx);
	}
	cfa_arena_init(s->out->arena);
	s->ctx = ctx;
	s->rt = rt;
	e = stage(s, dir);
	if (e) {
		/* On failure the venv is freed here and unhooked from the
		 * result, so that freeing the result does not free it twice. */
		cfapkg_venv_free(s->v);
		s->out->venv = NULL;
		cfapkg_venv_staged_free(s->out);
	} else {
		*out = s->out;
	}
	cfa_free(s);
	return e;
}

void cfapkg_venv_staged_free(struct cfapkg_venv_staged *s)
{
	if (!s)
		return;
	cfapkg_venv_free((struct cfapkg_venv *)s->venv);
	cfa_arena_fini(s->arena);
	cfa_free(s->arena);
	cfa_free(s);
}
