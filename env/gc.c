/*
 * gc.c - keeping a root tidy and honest: recovery after an interrupted
 * run, garbage collection of what no kept generation uses, and
 * verification of installed files against their manifests.
 */
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

struct walk {
	struct cfapkg_ctx *ctx;
	const char *dir;
	const char *prefix;       /* entries to act on start with this ("" all) */
	const char *suffix;       /* ... or end with this (NULL: not used) */
	unsigned count;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int remove_matching(const char *name, void *arg)
{
	struct walk *w = arg;
	char path[CFA_PATH_MAX];

	if (strncmp(name, w->prefix, strlen(w->prefix)) != 0 &&
	    !(w->suffix && ends_with(name, w->suffix)))
		return 0;
	cfa_snprintf(path, sizeof(path), "%s/%s", w->dir, name);
	if (cfa_plat_is_dir(path) ? cfa_plat_remove_tree(path) == 0 : cfa_plat_remove(path) == 0)
		w->count++;
	return 0;
}

/* A file being replaced inside a generation (its "good" mark). */
static int recover_gen(const char *name, void *arg)
{
	struct walk *w = arg, inner = {w->ctx, NULL, "\x01", ".tmp", 0};
	char dir[CFA_PATH_MAX];

	cfa_snprintf(dir, sizeof(dir), "%s/%s", w->dir, name);
	if (name[0] < '1' || name[0] > '9' || !cfa_plat_is_dir(dir))
		return 0;
	inner.dir = dir;
	cfa_plat_list_dir(dir, remove_matching, &inner);
	w->count += inner.count;
	return 0;
}

static int recover_env(const char *name, void *arg)
{
	struct walk *w = arg, inner = {w->ctx, NULL, ".new-", ".tmp", 0};
	char dir[CFA_PATH_MAX];

	cfa_snprintf(dir, sizeof(dir), "%s/%s", w->dir, name);
	inner.dir = dir;
	cfa_plat_list_dir(dir, remove_matching, &inner);
	cfa_plat_list_dir(dir, recover_gen, &inner);
	w->count += inner.count;
	return 0;
}

enum cfapkg_err cfapkg_recover(struct cfapkg_ctx *ctx, unsigned *cleaned)
{
	char dir[CFA_PATH_MAX];
	struct walk w = {ctx, dir, "", NULL, 0};
	const char *root = cfapkg_ctx_root(ctx);

	cfa_snprintf(dir, sizeof(dir), "%s/trash", root);
	cfa_plat_list_dir(dir, remove_matching, &w);
	cfa_snprintf(dir, sizeof(dir), "%s/store", root);
	w.prefix = ".staging-";
	cfa_plat_list_dir(dir, remove_matching, &w);
	cfa_snprintf(dir, sizeof(dir), "%s/envs", root);
	cfa_plat_list_dir(dir, recover_env, &w);
	*cleaned = w.count;
	return CFAPKG_E_OK;
}

/* Names (store folders, hashes) that kept generations use. */
struct keep_set {
	char **v;
	size_t n, cap;
	bool failed;
};

static void keep_add(struct keep_set *k, const char *s)
{
	if (cfa_grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v)) != 0 ||
	    !(k->v[k->n] = cfa_strdup(s)))
		k->failed = true;
	else
		k->n++;
}

static bool kept(const struct keep_set *k, const char *s)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->v[i], s) == 0)
			return true;
	return false;
}

static void keep_fini(struct keep_set *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		cfa_free(k->v[i]);
	cfa_free(k->v);
}

static enum cfapkg_err keep_lock(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                 struct keep_set *k)
{
	struct cfapkg_lock *lock = NULL;
	enum cfapkg_err e = cfapkg_env_lock(ctx, env, gen, &lock);
	size_t i;

	if (e)
		return e;
	for (i = 0; i < lock->nparts; i++)
		if (lock->parts[i].kind == CFAPKG_KIND_PACKAGE) {
			keep_add(k, lock->parts[i].store);
			keep_add(k, lock->parts[i].sha256);
		}
	cfapkg_lock_free(lock);
	return k->failed ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

/* Drops old generations of one environment and notes what the rest use. */
static enum cfapkg_err gc_env(struct cfapkg_ctx *ctx, const char *env, unsigned keep,
                              struct keep_set *k, struct cfapkg_gc_result *r)
{
	struct cfapkg_history_entry *h = NULL;
	char dir[CFA_PATH_MAX];
	size_t n, i, newer = 0;
	unsigned cur;
	enum cfapkg_err e;

	if ((e = cfapkg_env_current(ctx, env, &cur)) || (e = cfapkg_env_history(ctx, env, &h, &n)))
		return e;
	for (i = n; i-- > 0 && !e;) {
		if (h[i].is_switch)
			continue;
		newer++;
		if (h[i].generation == cur || keep == 0 || newer <= keep) {
			e = keep_lock(ctx, env, h[i].generation, k);
			continue;
		}
		if (!(e = cfa_gen_dir(ctx, env, h[i].generation, dir, sizeof(dir))) &&
		    !(e = cfa_trash(ctx, dir)))
			r->generations++;
	}
	cfa_free(h);
	return e;
}

static uint64_t manifest_bytes(struct cfapkg_ctx *ctx, const char *store)
{
	char path[CFA_PATH_MAX];
	cJSON *doc = NULL, *f, *size;
	uint64_t total = 0;

	cfa_snprintf(path, sizeof(path), "%s/.cfapkg/manifest.json", store);
	if (cfa_json_read_file(ctx, path, CFAPKG_E_IO, &doc) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(ctx);
		return 0;
	}
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "files"))
	{
		if (cJSON_IsNumber(size = cJSON_GetObjectItemCaseSensitive(f, "size")))
			total += (uint64_t)size->valuedouble;
	}
	cJSON_Delete(doc);
	return total;
}

struct sweep {
	struct cfapkg_ctx *ctx;
	const struct keep_set *keep;
	const char *dir;
	struct cfapkg_gc_result *r;
	bool downloads;
	enum cfapkg_err err;
};

static bool user_file_hash(struct cfapkg_ctx *ctx, const char *hex)
{
	size_t i, j, k;

	for (i = 0; i < cfapkg_recipe_count(ctx); i++) {
		const struct cfapkg_recipe *rc = cfapkg_recipe_at(ctx, i);
		for (j = 0; j < rc->nversions; j++)
			for (k = 0; k < rc->versions[j].nuser_files; k++)
				if (strcmp(rc->versions[j].user_files[k].sha256, hex) == 0)
					return true;
	}
	return false;
}

static int sweep_one(const char *name, void *arg)
{
	struct sweep *s = arg;
	char path[CFA_PATH_MAX];
	long long size;

	if (name[0] == '.' || kept(s->keep, name) || s->err)
		return 0;
	cfa_snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	if (s->downloads) {
		if (strlen(name) != 64 || strchr(name, '.') || user_file_hash(s->ctx, name))
			return 0; /* partial downloads resume later; user files stay */
		size = cfa_plat_file_size(path);
		if (cfa_plat_remove(path) == 0) {
			s->r->downloads++;
			s->r->bytes += size > 0 ? (uint64_t)size : 0;
		}
		return 0;
	}
	if (!cfa_plat_is_dir(path))
		return 0;
	s->r->bytes += manifest_bytes(s->ctx, path);
	if (!(s->err = cfa_trash(s->ctx, path)))
		s->r->prefixes++;
	return 0;
}

enum cfapkg_err cfapkg_gc(struct cfapkg_ctx *ctx, unsigned keep, struct cfapkg_gc_result *out)
{
	struct keep_set k = {0};
	char **envs = NULL, dir[CFA_PATH_MAX];
	struct sweep s = {ctx, &k, dir, out, false, CFAPKG_E_OK};
	size_t n, i;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if ((e = cfapkg_recipes_load(ctx)) || (e = cfapkg_env_list(ctx, &envs, &n)))
		return e;
	for (i = 0; i < n && !e; i++)
		e = gc_env(ctx, envs[i], keep, &k, out);
	cfa_free(envs);
	if (!e) {
		cfa_snprintf(dir, sizeof(dir), "%s/store", cfapkg_ctx_root(ctx));
		cfa_plat_list_dir(dir, sweep_one, &s);
		s.downloads = true;
		cfa_snprintf(dir, sizeof(dir), "%s/downloads", cfapkg_ctx_root(ctx));
		if (!s.err)
			cfa_plat_list_dir(dir, sweep_one, &s);
		e = s.err;
	}
	keep_fini(&k);
	return e;
}

struct verifier {
	struct cfapkg_ctx *ctx;
	void (*fn)(void *arg, const char *problem);
	void *arg;
	size_t files, problems;
};

static void problem(struct verifier *v, const struct cfapkg_locked *p, const char *file,
                    const char *what)
{
	char line[CFA_PATH_MAX + 256];

	cfa_snprintf(line, sizeof(line), "%s %s: %s %s", p->name, p->version, file, what);
	v->problems++;
	if (v->fn)
		v->fn(v->arg, line);
}

/* The manifest's "mode" ("0755") against the file's bits; false where
 * either is unknown (an older manifest, Windows). */
static bool mode_differs(const char *path, const cJSON *mode, char *was, size_t len)
{
	int now = cfa_plat_file_mode(path);
	unsigned want = 0;
	const char *s;

	if (now < 0 || !cJSON_IsString(mode) || !*mode->valuestring)
		return false;
	for (s = mode->valuestring; *s >= '0' && *s <= '7' && want < 07777; s++)
		want = want * 8 + (unsigned)(*s - '0');
	if (*s || ((unsigned)now & 0777) == (want & 0777))
		return false;
	cfa_snprintf(was, len, "has permissions %04o; it was installed with %04o",
	             (unsigned)now & 0777, want & 0777);
	return true;
}

static void verify_file(struct verifier *v, const struct cfapkg_locked *p, const cJSON *f,
                        const char *store, const char *view)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "path");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(f, "type");
	const cJSON *sha = cJSON_GetObjectItemCaseSensitive(f, "sha256");
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(f, "mode");
	char path[CFA_PATH_MAX], hex[65], bits[64];
	uint64_t size;

	if (!cJSON_IsString(name) || !cfa_safe_relative(name->valuestring))
		return;
	v->files++;
	cfa_snprintf(path, sizeof(path), "%s/%s", view, name->valuestring);
	if (!cfa_plat_is_file(path) && !cfa_plat_is_dir(path))
		problem(v, p, name->valuestring, "is missing from the environment's view");
	if (!cJSON_IsString(type) || strcmp(type->valuestring, "file") != 0 || !cJSON_IsString(sha))
		return;
	cfa_snprintf(path, sizeof(path), "%s/%s", store, name->valuestring);
	if (cfapkg_sha256_file(v->ctx, path, hex, &size) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(v->ctx);
		problem(v, p, name->valuestring, "is missing");
	} else if (strcmp(hex, sha->valuestring) != 0) {
		problem(v, p, name->valuestring, "changed since it was installed");
	} else if (mode_differs(path, mode, bits, sizeof(bits))) {
		problem(v, p, name->valuestring, bits);
	}
}

static enum cfapkg_err verify_part(struct verifier *v, const struct cfapkg_locked *p,
                                   const char *env)
{
	char store[CFA_PATH_MAX], view[CFA_PATH_MAX], path[CFA_PATH_MAX];
	cJSON *doc = NULL, *f;
	enum cfapkg_err e;

	if ((e = cfa_store_dir(v->ctx, p, store, sizeof(store))) ||
	    (e = cfapkg_gen_path(v->ctx, env, 0, "view/", view, sizeof(view))))
		return e;
	cfa_snprintf(view + strlen(view), sizeof(view) - strlen(view), "%s", p->name);
	cfa_snprintf(path, sizeof(path), "%s/.cfapkg/manifest.json", store);
	if (cfa_json_read_file(v->ctx, path, CFAPKG_E_INTEGRITY, &doc) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(v->ctx);
		problem(v, p, store, "is missing or has no manifest");
		return CFAPKG_E_OK;
	}
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "files"))
		verify_file(v, p, f, store, view);
	cJSON_Delete(doc);
	return CFAPKG_E_OK;
}

static enum cfapkg_err verify_env(struct verifier *v, const char *env)
{
	struct cfapkg_lock *lock = NULL;
	unsigned cur;
	size_t i;
	enum cfapkg_err e;

	if ((e = cfapkg_env_current(v->ctx, env, &cur)) || cur == 0 ||
	    (e = cfapkg_env_lock(v->ctx, env, cur, &lock)))
		return e;
	for (i = 0; i < lock->nparts && !e; i++)
		if (lock->parts[i].kind == CFAPKG_KIND_PACKAGE)
			e = verify_part(v, &lock->parts[i], env);
	cfapkg_lock_free(lock);
	return e;
}

enum cfapkg_err cfapkg_verify(struct cfapkg_ctx *ctx, const char *env,
                              void (*fn)(void *arg, const char *problem), void *arg,
                              size_t *files)
{
	struct verifier v = {ctx, fn, arg, 0, 0};
	char **envs = NULL;
	size_t n = 0, i;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (env)
		e = verify_env(&v, env);
	else if (!(e = cfapkg_env_list(ctx, &envs, &n)))
		for (i = 0; i < n && !e; i++)
			e = verify_env(&v, envs[i]);
	cfa_free(envs);
	if (files)
		*files = v.files;
	if (!e && v.problems)
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%lu installed file%s changed or went missing",
		             (unsigned long)v.problems, v.problems == 1 ? "" : "s");
	return e;
}
