/*
 * envs.c - environments by name: where they live, which generation is
 * current, their pins, and the safe way to replace a file or remove a
 * folder (write-flush-rename; rename into the trash, then delete).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/layout.h"
#include "core/dep.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

enum cfapkg_err cfapkg_env_check_name(struct cfapkg_ctx *ctx, const char *env)
{
	size_t i, n = env ? strlen(env) : 0;

	for (i = 0; i < n; i++) {
		char c = env[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      ((c == '.' || c == '_' || c == '-') && i > 0)))
			break;
	}
	if (n == 0 || n > 64 || i < n)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "\"%s\" is not an environment name: use up to 64 "
		                "letters, digits, '.', '_' and '-', starting with a letter or digit",
		                env ? env : "");
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_env_dir(struct cfapkg_ctx *ctx, const char *env, char *buf, size_t len)
{
	enum cfapkg_err e = cfapkg_env_check_name(ctx, env);

	if (e)
		return e;
	return cfa_root_path_buf(ctx, CFA_ENVS, env, buf, len);
}

enum cfapkg_err cfa_gen_dir(struct cfapkg_ctx *ctx, const char *env, unsigned gen, char *buf,
                            size_t len)
{
	char dir[CFA_PATH_MAX];
	enum cfapkg_err e = cfa_env_dir(ctx, env, dir, sizeof(dir));

	if (e)
		return e;
	if (!cfa_snprintf(buf, len, "%s/%u", dir, gen))
		return cfa_fail(ctx, CFAPKG_E_IO, "the root folder's path is too long");
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_gen_path(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                const char *what, char *buf, size_t len)
{
	char dir[CFA_PATH_MAX];
	enum cfapkg_err e;

	if (gen == 0 && (e = cfapkg_env_current(ctx, env, &gen)))
		return e;
	if (gen == 0)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has nothing installed "
		                "yet: run 'cfapkg install --env %s NAME'", env, env);
	if ((e = cfa_gen_dir(ctx, env, gen, dir, sizeof(dir))))
		return e;
	if (!cfa_snprintf(buf, len, "%s/%s", dir, what))
		return cfa_fail(ctx, CFAPKG_E_IO, "the root folder's path is too long");
	return CFAPKG_E_OK;
}

void cfa_utc_now(char buf[32])
{
	time_t t = time(NULL);
	struct tm *tm = gmtime(&t);

	if (!tm || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", tm))
		cfa_snprintf(buf, 32, "1970-01-01T00:00:00Z");
}

enum cfapkg_err cfa_write_atomic(struct cfapkg_ctx *ctx, const char *path, const char *data,
                                 size_t len)
{
	char tmp[CFA_PATH_MAX], dir[CFA_PATH_MAX];
	FILE *f;
	int rc = 0;

	if (!cfa_snprintf(tmp, sizeof(tmp), "%s.tmp", path))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: path too long", path);
	if (!(f = cfa_plat_fopen(tmp, "wb")))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot write: %s", tmp,
		                cfa_plat_strerror(cfa_plat_write_errno()));
	if (fwrite(data, 1, len, f) != len)
		rc = cfa_plat_write_errno();
	if (!rc)
		rc = cfa_plat_fsync(f);
	if (fclose(f) != 0 && !rc)
		rc = cfa_plat_write_errno();
	cfa_crash_point();
	if (!rc)
		rc = cfa_plat_rename(tmp, path);
	if (rc) {
		cfa_plat_remove(tmp);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot write: %s", path,
		                cfa_plat_strerror(rc));
	}
	cfa_snprintf(dir, sizeof(dir), "%s", path);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	cfa_plat_sync_dir(dir);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_write_json(struct cfapkg_ctx *ctx, const char *path, cJSON *doc)
{
	char *text = doc ? cJSON_Print(doc) : NULL;
	enum cfapkg_err e;

	cJSON_Delete(doc);
	if (!text)
		return cfa_nomem(ctx);
	e = cfa_write_atomic(ctx, path, text, strlen(text));
	cJSON_free(text);
	return e;
}

enum cfapkg_err cfa_trash(struct cfapkg_ctx *ctx, const char *path)
{
	static unsigned counter;
	char trash[CFA_PATH_MAX], dst[CFA_PATH_MAX];
	unsigned i;

	if (cfa_root_path_buf(ctx, CFA_TRASH, NULL, trash, sizeof(trash)))
		return ctx->err_code;
	if (cfa_plat_mkdir_p(trash) != 0)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create the folder", trash);
	for (i = 0; i < 1000; i++) {
		cfa_snprintf(dst, sizeof(dst), "%s/%.0f-%u", trash, cfa_plat_now() * 1e6, counter++);
		if (!cfa_plat_is_dir(dst) && !cfa_plat_is_file(dst))
			break;
	}
	if (cfa_plat_rename(path, dst) != 0)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot move it out of the way (is a program "
		                "using it?)", path);
	cfa_plat_sync_dir(trash);
	cfa_crash_point();
	cfa_plat_remove_tree(dst); /* what is left here, recovery removes */
	return CFAPKG_E_OK;
}

bool cfapkg_env_exists(struct cfapkg_ctx *ctx, const char *env)
{
	char dir[CFA_PATH_MAX];

	if (cfa_env_dir(ctx, env, dir, sizeof(dir))) {
		cfapkg_ctx_clear_error(ctx);
		return false;
	}
	return cfa_plat_is_dir(dir) || strcmp(env, CFAPKG_DEFAULT_ENV) == 0;
}

enum cfapkg_err cfapkg_env_create(struct cfapkg_ctx *ctx, const char *env)
{
	char dir[CFA_PATH_MAX];
	enum cfapkg_err e = cfa_env_dir(ctx, env, dir, sizeof(dir));

	if (e)
		return e;
	if (cfa_plat_is_dir(dir))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "environment \"%s\" already exists", env);
	if (cfa_plat_mkdir_p(dir) != 0)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create the folder", dir);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_env_remove(struct cfapkg_ctx *ctx, const char *env)
{
	char dir[CFA_PATH_MAX];
	enum cfapkg_err e = cfa_env_dir(ctx, env, dir, sizeof(dir));

	if (e)
		return e;
	if (!cfa_plat_is_dir(dir))
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "no environment \"%s\" ('cfapkg env list' "
		                "shows them)", env);
	return cfa_trash(ctx, dir);
}

struct name_list {
	char **v;
	size_t n, cap;
	bool failed;
};

static int add_name(const char *name, void *arg)
{
	struct name_list *l = arg;

	if (name[0] == '.' || l->failed)
		return 0;
	if (cfa_grow((void **)&l->v, &l->cap, l->n + 2, sizeof(*l->v)) != 0 ||
	    !(l->v[l->n] = cfa_strdup(name))) {
		l->failed = true;
		return 0;
	}
	l->v[++l->n] = NULL;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One allocation holding the pointers and the strings, for cfapkg_free. */
static char **pack_names(struct name_list *l)
{
	size_t i, bytes = (l->n + 1) * sizeof(char *);
	char **out, *p;

	for (i = 0; i < l->n; i++)
		bytes += strlen(l->v[i]) + 1;
	if ((out = cfa_malloc(bytes))) {
		p = (char *)(out + l->n + 1);
		for (i = 0; i < l->n; i++) {
			size_t len = strlen(l->v[i]) + 1;
			out[i] = memcpy(p, l->v[i], len);
			p += len;
		}
		out[l->n] = NULL;
	}
	for (i = 0; i < l->n; i++)
		cfa_free(l->v[i]);
	cfa_free(l->v);
	return out;
}

enum cfapkg_err cfapkg_env_list(struct cfapkg_ctx *ctx, char ***names, size_t *n)
{
	struct name_list l = {0};
	char dir[CFA_PATH_MAX];
	size_t i;

	if (cfa_root_path_buf(ctx, CFA_ENVS, NULL, dir, sizeof(dir)))
		return ctx->err_code;
	cfa_plat_list_dir(dir, add_name, &l);
	for (i = 0; i < l.n && strcmp(l.v[i], CFAPKG_DEFAULT_ENV) != 0; i++)
		;
	if (i == l.n)
		add_name(CFAPKG_DEFAULT_ENV, &l);
	if (l.failed || !(*names = pack_names(&l)))
		return cfa_nomem(ctx);
	qsort(*names, l.n, sizeof(char *), by_name);
	*n = l.n;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_env_current(struct cfapkg_ctx *ctx, const char *env, unsigned *gen)
{
	char path[CFA_PATH_MAX], text[32];
	uint64_t v;
	size_t len;
	FILE *f;
	enum cfapkg_err e = cfa_env_dir(ctx, env, path, sizeof(path));

	*gen = 0;
	if (e)
		return e;
	cfa_snprintf(path + strlen(path), sizeof(path) - strlen(path), "/current");
	if (!(f = cfa_plat_fopen(path, "rb")))
		return CFAPKG_E_OK;
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (!cfa_parse_u64(text, len, 1000000000u, &v) || v == 0)
		return cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s: does not hold a generation number; "
		                "'cfapkg rollback --env %s --to N' sets it again", path, env);
	*gen = (unsigned)v;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_env_lock(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                struct cfapkg_lock **out)
{
	char path[CFA_PATH_MAX];
	enum cfapkg_err e = cfapkg_gen_path(ctx, env, gen, "lock.json", path, sizeof(path));

	return e ? e : cfapkg_lock_read(ctx, path, out);
}

static enum cfapkg_err pins_path(struct cfapkg_ctx *ctx, const char *env, char *buf, size_t len)
{
	enum cfapkg_err e = cfa_env_dir(ctx, env, buf, len);

	if (!e)
		cfa_snprintf(buf + strlen(buf), len - strlen(buf), "/pins.json");
	return e;
}

enum cfapkg_err cfapkg_env_pins(struct cfapkg_ctx *ctx, const char *env, char ***pins, size_t *n)
{
	struct name_list l = {0};
	char path[CFA_PATH_MAX];
	cJSON *doc = NULL, *it;
	enum cfapkg_err e;

	if ((e = pins_path(ctx, env, path, sizeof(path))))
		return e;
	if (cfa_plat_is_file(path) &&
	    (e = cfa_json_read_file(ctx, path, CFAPKG_E_LOCKFILE, &doc)))
		return e;
	cJSON_ArrayForEach(it, doc)
	{
		if (cJSON_IsString(it))
			add_name(it->valuestring, &l);
	}
	cJSON_Delete(doc);
	if (l.failed || !(*pins = pack_names(&l)))
		return cfa_nomem(ctx);
	*n = l.n;
	return CFAPKG_E_OK;
}

/* Pins are replaced by name: the name is what a spec starts with. */
static size_t spec_name_len(const char *spec)
{
	return strcspn(spec, " <>=!");
}

static enum cfapkg_err write_pins(struct cfapkg_ctx *ctx, const char *env, char **pins,
                                  const char *skip, const char *add)
{
	cJSON *a = cJSON_CreateArray();
	char path[CFA_PATH_MAX];
	enum cfapkg_err e;
	size_t i;

	for (i = 0; pins[i]; i++)
		if (!skip || spec_name_len(pins[i]) != strlen(skip) ||
		    strncmp(pins[i], skip, strlen(skip)) != 0)
			cJSON_AddItemToArray(a, cJSON_CreateString(pins[i]));
	if (add)
		cJSON_AddItemToArray(a, cJSON_CreateString(add));
	if ((e = pins_path(ctx, env, path, sizeof(path)))) {
		cJSON_Delete(a);
		return e;
	}
	*strrchr(path, '/') = '\0';
	if (cfa_plat_mkdir_p(path) != 0) {
		cJSON_Delete(a);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create the folder", path);
	}
	cfa_snprintf(path + strlen(path), sizeof(path) - strlen(path), "/pins.json");
	return cfa_write_json(ctx, path, a);
}

enum cfapkg_err cfapkg_env_pin(struct cfapkg_ctx *ctx, const char *env, const char *spec)
{
	struct cfa_range r;
	struct cfa_arena a;
	char **pins = NULL, name[256];
	const char *why = NULL;
	size_t n;
	enum cfapkg_err e = CFAPKG_E_OK;

	cfa_arena_init(&a);
	if (cfa_range_parse(&a, spec, &r, &why))
		cfa_snprintf(name, sizeof(name), "%s", r.name);
	else
		e = why ? cfa_fail(ctx, CFAPKG_E_VERSION, "pin \"%s\": %s", spec, why)
		        : cfa_nomem(ctx);
	cfa_arena_fini(&a);
	if (e || (e = cfapkg_env_pins(ctx, env, &pins, &n)))
		return e;
	e = write_pins(ctx, env, pins, name, spec);
	cfa_free(pins);
	return e;
}

enum cfapkg_err cfapkg_env_unpin(struct cfapkg_ctx *ctx, const char *env, const char *name)
{
	char **pins = NULL;
	size_t i, n;
	enum cfapkg_err e = cfapkg_env_pins(ctx, env, &pins, &n);

	if (e)
		return e;
	for (i = 0; i < n; i++)
		if (spec_name_len(pins[i]) == strlen(name) && strncmp(pins[i], name, strlen(name)) == 0)
			break;
	e = i == n ? cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s is not pinned in environment \"%s\" "
	                      "('cfapkg pins --env %s' lists the pins)", name, env, env)
	           : write_pins(ctx, env, pins, name, NULL);
	cfa_free(pins);
	return e;
}
