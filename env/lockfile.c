/*
 * lockfile.c - the exact set of an environment: made from a solved plan,
 * written as JSON (a generation's lock.json, 'cfapkg lock') and read back
 * for 'install --locked' (lockcheck.c checks it before anything is
 * installed).  Version 2 records, per part, what the checks need without
 * the recipes: its requirements and provides on the lock's machine and
 * its status on the lock's GPU.  Version 1 is still read, for generations
 * an older cfapkg wrote, and brought up to date from the recipes by
 * cfapkg_lockfile_upgrade.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/dep.h"
#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "env/env.h"

#define LOCK_MAGIC "cfapkg-lock"

/* An empty lockfile whose strings all live in its own arena: freeing the lock
 * frees everything read or copied into it at once. */
struct cfapkg_lockfile *cfa_lock_new(void)
{
	struct cfapkg_lockfile *l = cfa_calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->arena = cfa_calloc(1, sizeof(*l->arena));
	if (!l->arena) {
		cfa_free(l);
		return NULL;
	}
	cfa_arena_init(l->arena);
	l->format = CFAPKG_LOCK_FORMAT;
	return l;
}

void cfapkg_lockfile_free(struct cfapkg_lockfile *lock)
{
	if (!lock)
		return;
	cfapkg_facts_clear(&lock->facts);
	cfa_arena_fini(lock->arena);
	cfa_free(lock->arena);
	cfa_free(lock);
}

void cfapkg_free(void *p)
{
	cfa_free(p);
}

/* Requirements on the driver, the HIP runtime and glibc are decided by machine
 * facts, not by parts of the set (solver/pool.c). */
static bool fact_backed(struct cfapkg_ctx *ctx, const char *name)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(ctx, name);

	return r && r->kind == CFAPKG_KIND_SYSTEM && r->fact &&
	       (strcmp(r->fact, "driver") == 0 || strcmp(r->fact, "hip_runtime") == 0 ||
	        strcmp(r->fact, "glibc") == 0);
}

/* The texts of the deps that apply on f, copied into the lock.
 * Only what applies on the lock's machine is written: the lock records one
 * machine's set, not the recipe's conditions. */
static enum cfapkg_err dep_texts(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *l,
                                 const struct cfapkg_facts *f, const struct cfapkg_dep *deps,
                                 size_t ndeps, bool requirements, const char *const **out,
                                 size_t *n)
{
	const char **v = cfa_arena_alloc(l->arena, (ndeps ? ndeps : 1) * sizeof(*v));
	size_t i;

	*n = 0;
	if (!v)
		return cfa_nomem(ctx);
	for (i = 0; i < ndeps; i++) {
		if (!cfa_dep_applies(f, &deps[i]) || (requirements && fact_backed(ctx, deps[i].name)))
			continue;
		if (!(v[*n] = cfa_arena_strdup(l->arena, deps[i].text)))
			return cfa_nomem(ctx);
		(*n)++;
	}
	*out = v;
	return CFAPKG_E_OK;
}

/* What cfapkg_lockfile_verify re-checks, from the part's recipe version. */
static enum cfapkg_err fill_trust(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *l,
                                  struct cfapkg_lockfile_part *p, const struct cfapkg_version *v,
                                  const struct cfapkg_facts *f, enum cfapkg_status status)
{
	enum cfapkg_err e;

	if ((e = dep_texts(ctx, l, f, v->requires, v->nrequires, true, &p->requires,
	                   &p->nrequires)) ||
	    (e = dep_texts(ctx, l, f, v->provides, v->nprovides, false, &p->provides,
	                   &p->nprovides)))
		return e;
	/* A status is only known for a GPU that was known. */
	p->status = f->gfx[0] ? (int)status : -1;
	return CFAPKG_E_OK;
}

static enum cfapkg_err part_from_item(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *l,
                                      const struct cfapkg_plan_item *it,
                                      const struct cfapkg_facts *f, struct cfapkg_lockfile_part *p)
{
	const struct cfapkg_version *v = it->version;
	const struct cfapkg_source *s = it->source;
	enum cfapkg_err e;

	/* Most fields are borrowed from the loaded recipes, so such a lock
	 * must not outlive them; the dependency texts and the store name are
	 * copied into its arena. */
	p->name = v->recipe->name;
	p->version = v->version;
	p->kind = v->recipe->kind;
	p->requested = it->requested;
	p->size = -1;
	p->max_size = -1;
	p->gfx = v->gfx;
	p->ngfx = v->ngfx;
	p->layout = v->layout;
	p->nlayout = v->nlayout;
	p->launcher = v->launcher;
	p->path = v->path;
	p->npath = v->npath;
	p->env = v->env;
	p->nenv = v->nenv;
	p->stage = v->stage;
	p->nstage = v->nstage;
	p->user_files = v->user_files;
	p->nuser_files = v->nuser_files;
	if ((e = fill_trust(ctx, l, p, v, f, it->status)))
		return e;
	if (p->kind != CFAPKG_KIND_PACKAGE)
		return CFAPKG_E_OK;
	/* A package without a hash to check (a file's, its artifacts', or an
	 * APT index's) is never written into a lock: every download must be
	 * verified. */
	if (!it->installable || !s || (!s->sha256 && !s->nartifacts && !s->apt))
		return cfa_fail(ctx, CFAPKG_E_UNSUPPORTED, "%s %s cannot be installed: %s", p->name,
		                p->version, it->why_not ? it->why_not : "no verified source");
	p->unpacked_size = s->unpacked_size > 0 ? (uint64_t)s->unpacked_size : 0;
	if (s->nartifacts)
		return cfa_lock_set_artifacts(ctx, l, p, s->artifacts, s->nartifacts);
	if (s->apt) {
		/* Its .debs are known only once the pinned index is read, so
		 * their URLs and hashes are filled in later. */
		p->apt = s->apt; /* resolved by cfapkg_lockfile_resolve */
		p->format = "deb";
		return CFAPKG_E_OK;
	}
	p->url = s->url;
	p->mirrors = s->mirrors;
	p->nmirrors = s->nmirrors;
	p->sha256 = s->sha256;
	p->size = s->size;
	p->max_size = s->max_size;
	p->format = s->format;
	p->strip = s->strip;
	/* The store folder is named from the name, version and hash, so two
	 * builds of one version never share a folder. */
	char *store = cfa_store_name(p->name, p->version, p->sha256);
	p->store = store ? cfa_arena_strdup(l->arena, store) : NULL;
	cfa_free(store);
	return p->store ? CFAPKG_E_OK : cfa_nomem(ctx);
}

enum cfapkg_err cfapkg_lockfile_from_plan(struct cfapkg_ctx *ctx, const struct cfapkg_plan *plan,
                                      const char *const *specs, size_t nspecs,
                                      struct cfapkg_lockfile **out)
{
	size_t i, n;
	const struct cfapkg_plan_item *items = cfapkg_plan_items(plan, &n);
	struct cfapkg_lockfile *l;
	struct cfapkg_lockfile_part *parts;
	const char **req;
	enum cfapkg_err e = CFAPKG_E_OK;

	/* Only a solved plan is a set; a caller that forgot to check gets a
	 * usage error rather than a partial lock. */
	if (!cfapkg_plan_solved(plan))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "the plan is not solved");
	if (!(l = cfa_lock_new()))
		return cfa_nomem(ctx);
	parts = cfa_arena_alloc(l->arena, (n ? n : 1) * sizeof(*parts));
	req = cfa_arena_alloc(l->arena, (nspecs ? nspecs : 1) * sizeof(*req));
	if (!parts || !req) {
		cfapkg_lockfile_free(l);
		return cfa_nomem(ctx);
	}
	/* Parts are zeroed first: a field part_from_item leaves alone is NULL
	 * or 0, as the JSON writer expects. */
	memset(parts, 0, (n ? n : 1) * sizeof(*parts));
	for (i = 0; i < nspecs && !e; i++)
		if (!(req[i] = cfa_arena_strdup(l->arena, specs[i])))
			e = cfa_nomem(ctx);
	for (i = 0; i < n && !e; i++)
		e = part_from_item(ctx, l, &items[i], cfapkg_plan_facts(plan), &parts[i]);
	if (!e && cfapkg_facts_copy(cfapkg_plan_facts(plan), &l->facts))
		e = cfa_nomem(ctx);
	if (e) {
		cfapkg_lockfile_free(l);
		return e;
	}
	l->requests = req;
	l->nrequests = nspecs;
	l->parts = parts;
	l->nparts = n;
	*out = l;
	return CFAPKG_E_OK;
}

/* The part named name; NULL when the set lacks it (or lock is NULL). Borrowed
 * from lock. */
const struct cfapkg_lockfile_part *cfapkg_lockfile_find(const struct cfapkg_lockfile *lock, const char *name)
{
	size_t i;

	for (i = 0; lock && i < lock->nparts; i++)
		if (strcmp(lock->parts[i].name, name) == 0)
			return &lock->parts[i];
	return NULL;
}

/* The array is written even when empty; callers leave out the optional
 * ones themselves. */
static void add_strings(struct cfa_json_build *jb, cJSON *o, const char *key,
                        const char *const *v, size_t n)
{
	cJSON *a = cfa_json_add_array(jb, o, key);
	size_t i;

	for (i = 0; i < n; i++)
		cfa_json_append_string(jb, a, v[i]);
}

/* -1 is a status not known (no GPU known when the lock was made). */
static const char *status_text(int status)
{
	return status < 0 ? "unknown" : cfapkg_status_name((enum cfapkg_status)status);
}

/* Where a package comes from and where it is unpacked. */
static void source_json(struct cfa_json_build *jb, cJSON *o, const struct cfapkg_lockfile_part *p)
{
	if (p->nartifacts) {
		cfa_lock_artifacts_json(jb, o, p);
		cfa_json_add_string(jb, o, "sha256", p->sha256);
		cfa_json_add_number(jb, o, "size", (double)p->size);
		cfa_json_add_string(jb, o, "store", p->store);
		return;
	}
	cfa_json_add_string(jb, o, "url", p->url);
	if (p->nmirrors)
		add_strings(jb, o, "mirrors", p->mirrors, p->nmirrors);
	cfa_json_add_string(jb, o, "sha256", p->sha256);
	if (p->size >= 0)
		cfa_json_add_number(jb, o, "size", (double)p->size);
	else if (p->max_size > 0) /* the recipe's cap, until the size is learned */
		cfa_json_add_number(jb, o, "max_size", (double)p->max_size);
	cfa_json_add_string(jb, o, "format", p->format);
	cfa_json_add_number(jb, o, "strip", p->strip);
	cfa_json_add_string(jb, o, "store", p->store);
}

/* {first: a, second: b} appended to arr. */
static void append_pair(struct cfa_json_build *jb, cJSON *arr, const char *first, const char *a,
                        const char *second, const char *b)
{
	cJSON *r = cfa_json_new_object(jb);

	cfa_json_add_string(jb, r, first, a);
	cfa_json_add_string(jb, r, second, b);
	cfa_json_append(jb, arr, r);
}

/* A part's runtime settings, only those it has. */
static void runtime_json(struct cfa_json_build *jb, cJSON *o, const struct cfapkg_lockfile_part *p)
{
	cJSON *rt = cfa_json_add_object(jb, o, "runtime"), *env;
	size_t i;

	if (p->npath)
		add_strings(jb, rt, "path", p->path, p->npath);
	if (p->nstage)
		add_strings(jb, rt, "stage", p->stage, p->nstage);
	if (p->nenv) {
		env = cfa_json_add_object(jb, rt, "env");
		for (i = 0; i < p->nenv; i++)
			cfa_json_add_string(jb, env, p->env[i].name, p->env[i].value);
	}
}

/* A version 1 lock is written back as version 1, without the fields
 * version 2 adds. */
static cJSON *part_json(struct cfa_json_build *jb, const struct cfapkg_lockfile_part *p, unsigned format)
{
	cJSON *o = cfa_json_new_object(jb), *a = NULL;
	size_t i;

	cfa_json_add_string(jb, o, "name", p->name);
	cfa_json_add_string(jb, o, "version", p->version);
	cfa_json_add_string(jb, o, "kind", cfapkg_kind_name(p->kind));
	cfa_json_add_bool(jb, o, "requested", p->requested);
	if (format >= 2) {
		add_strings(jb, o, "requires", p->requires, p->nrequires);
		add_strings(jb, o, "provides", p->provides, p->nprovides);
		cfa_json_add_string(jb, o, "status", status_text(p->status));
	}
	if (p->kind == CFAPKG_KIND_PACKAGE)
		source_json(jb, o, p);
	if (p->ngfx)
		add_strings(jb, o, "gfx", p->gfx, p->ngfx);
	if (p->nlayout)
		a = cfa_json_add_array(jb, o, "layout");
	for (i = 0; i < p->nlayout; i++)
		append_pair(jb, a, "path", p->layout[i].path, "as", p->layout[i].as);
	cfa_json_add_string(jb, o, "launcher", p->launcher); /* NULL: left out */
	if (p->nuser_files)
		a = cfa_json_add_array(jb, o, "user_files");
	for (i = 0; i < p->nuser_files; i++)
		append_pair(jb, a, "name", p->user_files[i].name, "sha256", p->user_files[i].sha256);
	if (p->npath || p->nenv || p->nstage)
		runtime_json(jb, o, p);
	return o;
}

/* The whole lock as a document; NULL when memory ran out while building it
 * (cfa_json_finish freed the rest). */
cJSON *cfa_lock_json(const struct cfapkg_lockfile *lock)
{
	struct cfa_json_build jb = {false};
	cJSON *o = cfa_json_new_object(&jb), *a;
	size_t i;

	cfa_json_add_string(&jb, o, "format", LOCK_MAGIC);
	cfa_json_add_number(&jb, o, "version", lock->format);
	cfa_json_add_item(&jb, o, "facts", cfa_facts_json(&lock->facts));
	add_strings(&jb, o, "requests", lock->requests, lock->nrequests);
	a = cfa_json_add_array(&jb, o, "packages");
	for (i = 0; i < lock->nparts && !jb.failed; i++)
		cfa_json_append(&jb, a, part_json(&jb, &lock->parts[i], lock->format));
	return cfa_json_finish(&jb, o);
}

/* The lock as text, as 'cfapkg lock' prints it.  Owned: cfapkg_free. */
enum cfapkg_err cfapkg_lockfile_text(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                 char **out)
{
	cJSON *doc = cfa_lock_json(lock);
	char *text = doc ? cJSON_Print(doc) : NULL;

	cJSON_Delete(doc);
	if (!text)
		return cfa_nomem(ctx);
	*out = cfa_strdup(text);
	cJSON_free(text);
	return *out ? CFAPKG_E_OK : cfa_nomem(ctx);
}

/* The keys each version may hold: any other key is an error, so a misspelt
 * field is not silently dropped. */
static const char *const part_keys_v1[] = {"name", "version", "kind", "requested", "url",
                                           "mirrors", "sha256", "size", "format", "strip",
                                           "store", "gfx", "layout", "launcher", "runtime",
                                           "user_files", NULL};
static const char *const part_keys[] = {"name", "version", "kind", "requested", "requires",
                                        "provides", "status", "url", "mirrors", "sha256",
                                        "size", "max_size", "format", "strip", "store",
                                        "artifacts", "gfx", "layout", "launcher", "runtime",
                                        "user_files", NULL};

/* The kind as cfapkg_kind_name writes it: the same four words both ways. */
static enum cfapkg_err read_kind(struct cfa_jr *jr, const char *s, enum cfapkg_kind *out)
{
	static const enum cfapkg_kind kinds[] = {CFAPKG_KIND_PACKAGE, CFAPKG_KIND_SYSTEM,
	                                         CFAPKG_KIND_META, CFAPKG_KIND_USER};
	size_t i;

	for (i = 0; i < 4; i++)
		if (strcmp(s, cfapkg_kind_name(kinds[i])) == 0) {
			*out = kinds[i];
			return CFAPKG_E_OK;
		}
	return cfa_jr_fail(jr, "kind: expected package, system, meta or user");
}

/* The download and store fields of a package part. */
static enum cfapkg_err read_source(struct cfa_jr *jr, const cJSON *o, struct cfapkg_lockfile_part *p)
{
	int64_t size = -1, strip = 0;
	enum cfapkg_err e;
	char *expect;

	if (cJSON_HasObjectItem(o, "artifacts"))
		return cfa_lock_read_artifacts(jr, o, p);
	if ((e = cfa_jr_string(jr, o, "url", true, &p->url)) ||
	    (e = cfa_jr_strings(jr, o, "mirrors", &p->mirrors, &p->nmirrors)) ||
	    (e = cfa_jr_string(jr, o, "sha256", true, &p->sha256)) ||
	    (e = cfa_jr_int(jr, o, "size", 0, INT64_MAX, false, &size)) ||
	    (e = cfa_jr_int(jr, o, "max_size", 1, INT64_MAX, false, &p->max_size)) ||
	    (e = cfa_jr_string(jr, o, "format", true, &p->format)) ||
	    (e = cfa_jr_int(jr, o, "strip", 0, 16, false, &strip)) ||
	    (e = cfa_jr_string(jr, o, "store", true, &p->store)))
		return e;
	/* Lower case only: the hash is compared as text with the store's name
	 * and the cache's. */
	if (!cfa_valid_sha256(p->sha256))
		return cfa_jr_fail(jr, "sha256 must be 64 lower-case hex digits");
	p->size = size;
	p->strip = (unsigned)strip;
	/* The store folder is derived, never trusted: a lockfile cannot point
	 * outside ROOT/store. */
	if (!(expect = cfa_store_name(p->name, p->version, p->sha256)))
		return cfa_nomem(jr->ctx);
	e = strcmp(expect, p->store) != 0 ? cfa_jr_fail(jr, "store must be \"%s\"", expect)
	                                  : CFAPKG_E_OK;
	cfa_free(expect);
	return e;
}

/* requires or provides: each a constraint as the recipes write them.
 * Each constraint must parse as a recipe's would; a provide may name at
 * most one exact version, as in recipes. */
static enum cfapkg_err read_deps(struct cfa_jr *jr, const cJSON *o, const char *key,
                                 bool provides, const char *const **out, size_t *n)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, mark;

	if (!cJSON_GetObjectItemCaseSensitive(o, key)) {
		mark = cfa_jr_push_key(jr, key);
		e = cfa_jr_fail(jr, "missing: a version 2 lockfile records each part's requires, "
		                "provides and status; re-create it with 'cfapkg lock'");
		cfa_jr_pop(jr, mark);
		return e;
	}
	if ((e = cfa_jr_strings(jr, o, key, out, n)))
		return e;
	for (i = 0; i < *n && !e; i++) {
		struct cfa_range r;
		const char *why = NULL;
		mark = cfa_jr_push_key(jr, key);
		cfa_jr_push_index(jr, i);
		if (!cfa_range_parse(jr->arena, (*out)[i], &r, &why))
			e = why ? cfa_jr_fail(jr, "\"%s\": %s", (*out)[i], why) : cfa_nomem(jr->ctx);
		else if (provides && (r.nclauses > 1 || (r.nclauses && r.clauses[0].op != CFA_OP_EQ)))
			e = cfa_jr_fail(jr, "\"%s\": a provide takes at most one '= version'", (*out)[i]);
		cfa_jr_pop(jr, mark);
	}
	return e;
}

/* "unknown" is the status of a part in a lock made without a GPU. */
static enum cfapkg_err read_trust(struct cfa_jr *jr, const cJSON *o, struct cfapkg_lockfile_part *p)
{
	enum cfapkg_status st;
	const char *status = NULL;
	enum cfapkg_err e;

	if ((e = read_deps(jr, o, "requires", false, &p->requires, &p->nrequires)) ||
	    (e = read_deps(jr, o, "provides", true, &p->provides, &p->nprovides)) ||
	    (e = cfa_jr_string(jr, o, "status", true, &status)))
		return e;
	if (strcmp(status, "unknown") == 0) {
		p->status = -1;
		return CFAPKG_E_OK;
	}
	if (!cfa_status_parse(status, &st)) {
		size_t mark = cfa_jr_push_key(jr, "status");
		e = cfa_jr_fail(jr, "expected validated, candidate, experimental or unknown");
		cfa_jr_pop(jr, mark);
		return e;
	}
	p->status = (int)st;
	return CFAPKG_E_OK;
}

/* One part of "packages".  Names, versions and paths that could reach outside
 * the store or the package are refused here, before anything uses them: a
 * lockfile may come from anyone. */
static enum cfapkg_err part_item(struct cfa_jr *jr, const cJSON *o, void *elem, void *arg)
{
	const unsigned format = *(const unsigned *)arg;
	struct cfapkg_lockfile_part *p = elem;
	struct cfapkg_version v;
	struct cfa_ver pv;
	const char *kind = NULL;
	enum cfapkg_err e;

	memset(&v, 0, sizeof(v));
	p->size = -1;
	p->max_size = -1;
	p->status = -1;
	if ((e = cfa_jr_object(jr, o)) ||
	    (e = cfa_jr_keys(jr, o, format >= 2 ? part_keys : part_keys_v1)) ||
	    (e = cfa_jr_string(jr, o, "name", true, &p->name)) ||
	    (e = cfa_jr_string(jr, o, "version", true, &p->version)) ||
	    (e = cfa_jr_string(jr, o, "kind", true, &kind)) || (e = read_kind(jr, kind, &p->kind)) ||
	    (e = cfa_jr_bool(jr, o, "requested", &p->requested)) ||
	    (e = cfa_jr_strings(jr, o, "gfx", &p->gfx, &p->ngfx)) ||
	    (e = cfa_jr_string(jr, o, "launcher", false, &p->launcher)) ||
	    (e = cfa_parse_layout(jr, o, &v)) || (e = cfa_parse_runtime(jr, o, &v)) ||
	    (e = cfa_parse_user_files(jr, o, &v)))
		return e;
	if (!cfa_ver_parse(p->version, strlen(p->version), &pv, NULL))
		return cfa_jr_fail(jr, "version \"%s\" does not parse", p->version);
	/* Both separators are refused on every OS: a lock written on Linux may
	 * be installed on Windows. */
	if (strchr(p->name, '/') || strchr(p->name, '\\') || p->name[0] == '.')
		return cfa_jr_fail(jr, "name \"%s\" is not a package name", p->name);
	if (p->launcher && !cfa_safe_relative(p->launcher))
		return cfa_jr_fail(jr, "launcher must stay inside the package");
	if (format >= 2 && (e = read_trust(jr, o, p)))
		return e;
	p->layout = v.layout;
	p->nlayout = v.nlayout;
	p->path = v.path;
	p->npath = v.npath;
	p->env = v.env;
	p->nenv = v.nenv;
	p->stage = v.stage;
	p->nstage = v.nstage;
	p->user_files = v.user_files;
	p->nuser_files = v.nuser_files;
	return p->kind == CFAPKG_KIND_PACKAGE ? read_source(jr, o, p) : CFAPKG_E_OK;
}

static const char *const lock_keys[] = {"format", "version", "facts", "requests", "packages",
                                        NULL};

/* The magic first, then the version, so that a file that is no lockfile, or
 * one from a newer cfapkg, is named as such before any other error. */
static enum cfapkg_err parse_lock(struct cfa_jr *jr, const cJSON *root, struct cfapkg_lockfile *l)
{
	const char *magic = NULL;
	int64_t version = 0;
	size_t mark;
	enum cfapkg_err e;

	if ((e = cfa_jr_object(jr, root)) || (e = cfa_jr_string(jr, root, "format", true, &magic)))
		return e;
	if (strcmp(magic, LOCK_MAGIC) != 0)
		return cfa_jr_fail(jr, "format: not a cfapkg lockfile (expected \"%s\")", LOCK_MAGIC);
	if ((e = cfa_jr_int(jr, root, "version", 1, 1000, true, &version)))
		return e;
	if (version > CFAPKG_LOCK_FORMAT || version < CFAPKG_LOCK_FORMAT_OLDEST)
		return cfa_jr_fail(jr, "version %lld: this cfapkg reads lockfile versions %d to %d; "
		                   "use a cfapkg as new as the one that wrote it",
		                   (long long)version, CFAPKG_LOCK_FORMAT_OLDEST, CFAPKG_LOCK_FORMAT);
	l->format = (unsigned)version;
	if ((e = cfa_jr_keys(jr, root, lock_keys)))
		return e;
	memset(&l->facts, 0, sizeof(l->facts));
	mark = cfa_jr_push_key(jr, "facts");
	e = cfa_facts_parse(jr, cJSON_GetObjectItemCaseSensitive(root, "facts"), &l->facts);
	cfa_jr_pop(jr, mark);
	if (e || (e = cfa_jr_strings(jr, root, "requests", &l->requests, &l->nrequests)))
		return e;
	return cfa_jr_array(jr, root, "packages", sizeof(*l->parts), false, part_item, &l->format,
	                    (void **)&l->parts, &l->nparts);
}

/* The lock read from path, its strings in its own arena.  Owned:
 * cfapkg_lockfile_free.  Only the format is checked here; what the set needs
 * on a machine is lockcheck.c's. */
enum cfapkg_err cfapkg_lockfile_read(struct cfapkg_ctx *ctx, const char *path,
                                 struct cfapkg_lockfile **out)
{
	struct cfapkg_lockfile *l;
	struct cfa_jr jr;
	cJSON *root = NULL;
	enum cfapkg_err e;

	if ((e = cfa_json_read_file(ctx, path, CFAPKG_E_LOCKFILE, &root)))
		return e; /* detail set by the reader */
	if (!(l = cfa_lock_new())) {
		cJSON_Delete(root);
		return cfa_nomem(ctx);
	}
	cfa_jr_init(&jr, ctx, l->arena, path, CFAPKG_E_LOCKFILE);
	if (!(l->file = cfa_arena_strdup(l->arena, path)))
		e = cfa_nomem(ctx);
	else
		e = parse_lock(&jr, root, l);
	cJSON_Delete(root);
	if (e) {
		cfapkg_lockfile_free(l);
		return e;
	}
	*out = l;
	return CFAPKG_E_OK;
}

const struct cfapkg_version *cfa_part_recipe_version(const struct cfapkg_ctx *ctx,
                                                    const struct cfapkg_lockfile_part *p)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(ctx, p->name);
	size_t i;

	for (i = 0; r && r->kind == p->kind && i < r->nversions; i++)
		if (strcmp(r->versions[i].version, p->version) == 0)
			return &r->versions[i];
	return NULL;
}

/* The recipe still names the download that was installed. */
static bool same_download(const struct cfapkg_version *v, const struct cfapkg_lockfile_part *p,
                          const struct cfapkg_facts *f)
{
	const struct cfapkg_source *s = cfapkg_version_source(v, f->os, f->arch);

	return p->kind != CFAPKG_KIND_PACKAGE ||
	       (s && s->sha256 && p->sha256 && strcmp(s->sha256, p->sha256) == 0);
}

enum cfapkg_err cfapkg_lockfile_upgrade(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock)
{
	/* The parts were read into the lock's own arena: changing them is safe. */
	struct cfapkg_lockfile_part *parts = (struct cfapkg_lockfile_part *)lock->parts;
	const struct cfapkg_facts *f = &lock->facts;
	enum cfapkg_err e;
	size_t i;

	/* A lock already at this version needs nothing, and no recipes are
	 * loaded for it. */
	if (lock->format >= CFAPKG_LOCK_FORMAT)
		return CFAPKG_E_OK;
	if ((e = cfapkg_recipes_load(ctx)))
		return e;
	for (i = 0; i < lock->nparts; i++) {
		const struct cfapkg_version *v = cfa_part_recipe_version(ctx, &parts[i]);
		/* A recipe that now names another download may require other
		 * things: its requirements cannot stand in for what was
		 * installed. */
		if (!v || !same_download(v, &parts[i], f))
			return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s %s: %s, so what it requires is not "
			                "known; 'cfapkg update' makes a new generation that 'cfapkg lock' "
			                "can write", parts[i].name, parts[i].version,
			                v ? "its recipe now names another download"
			                  : "no recipe describes this version any more");
		if ((e = fill_trust(ctx, lock, &parts[i], v, f,
		                    cfapkg_version_status(ctx, v, f->gfx))))
			return e;
	}
	lock->format = CFAPKG_LOCK_FORMAT;
	return CFAPKG_E_OK;
}
