/*
 * venv_follow.c - the venvs an environment was staged into, after the
 * staging: staged again when the environment moves to another generation
 * (an install, update, repair or rollback), and checked by verify (each
 * file there with the hash it was placed with, from the generation that
 * is current).  The list is ROOT/venvs/ID.json, one small file per venv,
 * so no two stagings write the same file.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "runtime/stage.h"
#include "runtime/venv.h"

struct listed {
	struct cfapkg_ctx *ctx;
	const char *env;           /* only this environment's (NULL: all) */
	const char *folder;        /* ROOT/venvs */
	enum cfapkg_err (*fn)(void *arg, const char *dir, const char *env);
	void *arg;
	enum cfapkg_err err;
};

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Only NAME.json entries count: anything else in the folder is skipped, and an
 * entry that cannot be read names no venv. */
static int listed_one(const char *name, void *arg)
{
	struct listed *l = arg;
	char *path = NULL;
	cJSON *doc = NULL;
	const char *dir, *env;
	size_t n = strlen(name);

	if (l->err || n < 6 || strcmp(name + n - 5, ".json") != 0)
		return 0;
	if (cfa_path(l->ctx, &path, "%s/%s", l->folder, name)) {
		l->err = l->ctx->err_code;
		return 0;
	}
	if (cfa_json_read_file(l->ctx, path, CFAPKG_E_IO, &doc) != CFAPKG_E_OK)
		cfapkg_ctx_clear_error(l->ctx); /* a torn entry names no venv */
	dir = str_of(doc, "dir");
	env = str_of(doc, "env");
	/* The first error stops the walk: the rest of the listing is skipped,
	 * and each_venv returns it. */
	if (dir && env && (!l->env || strcmp(env, l->env) == 0))
		l->err = l->fn(l->arg, dir, env);
	cJSON_Delete(doc);
	cfa_free(path);
	return 0;
}

/* Calls fn for each venv staged from env (NULL: from any). */
static enum cfapkg_err each_venv(struct cfapkg_ctx *ctx, const char *env,
                                 enum cfapkg_err (*fn)(void *, const char *, const char *),
                                 void *arg)
{
	struct listed l = {ctx, env, NULL, fn, arg, CFAPKG_E_OK};
	char *folder = cfa_root_path(ctx, CFA_VENVS, NULL);

	if (!folder)
		return ctx->err_code;
	l.folder = folder;
	cfa_plat_list_dir(folder, listed_one, &l);
	cfa_free(folder);
	return l.err;
}

/* The runtime is loaded once, for the first venv that needs it, and shared by
 * the others: they all follow the same environment. */
struct follower {
	struct cfapkg_ctx *ctx;
	const char *env;
	struct cfapkg_runtime *rt; /* loaded for the first venv: none, no work */
	void (*fn)(void *arg, const char *note);
	void *arg;
	size_t count;
};

static void say(void (*fn)(void *, const char *), void *arg, const char *fmt, ...)
	CFA_PRINTF(3, 4);
static void say(void (*fn)(void *, const char *), void *arg, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = cfa_vaprintf(fmt, ap);
	va_end(ap);
	if (fn)
		fn(arg, text ? text : "out of memory");
	cfa_free(text);
}

static enum cfapkg_err follow_one(void *arg, const char *dir, const char *env)
{
	struct follower *f = arg;
	struct cfapkg_venv_staged *st = NULL;
	enum cfapkg_err e;

	/* A venv that was deleted is forgotten rather than reported again at
	 * every later change. */
	if (!cfa_plat_is_dir(dir)) {
		say(f->fn, f->arg, "%s is gone: no longer staged from \"%s\"", dir, env);
		cfa_venv_forget(f->ctx, dir);
		return CFAPKG_E_OK;
	}
	/* No machine: only the view's files matter here, not system parts. */
	if (!f->rt && (e = cfapkg_runtime_load(f->ctx, env, 0, NULL, -1, &f->rt)))
		return e;
	if ((e = cfapkg_venv_stage(f->ctx, f->rt, dir, &st))) {
		/* Out of memory stops the follow; any other failure is this
		 * venv's own. */
		if (e == CFAPKG_E_NOMEM)
			return e;
		/* The others are still staged; this one keeps its files. */
		say(f->fn, f->arg, "%s keeps what generation it was staged from gave it: %s", dir,
		    cfapkg_ctx_error(f->ctx));
		cfapkg_ctx_clear_error(f->ctx);
		return CFAPKG_E_OK;
	}
	f->count++;
	say(f->fn, f->arg, "%s now has generation %u's libraries (%lu file%s)", dir,
	    f->rt->generation, (unsigned long)st->nplaced, st->nplaced == 1 ? "" : "s");
	cfapkg_venv_staged_free(st);
	return CFAPKG_E_OK;
}

/* count: the venvs staged again.  An environment staged into no venv costs
 * only the listing. */
enum cfapkg_err cfapkg_venv_follow(struct cfapkg_ctx *ctx, const char *env,
                                   void (*fn)(void *arg, const char *note), void *arg,
                                   size_t *count)
{
	struct follower f = {ctx, env, NULL, fn, arg, 0};
	enum cfapkg_err e = each_venv(ctx, env, follow_one, &f);

	cfapkg_runtime_free(f.rt);
	*count = f.count;
	return e;
}

struct checker {
	struct cfapkg_ctx *ctx;
	void (*fn)(void *arg, const char *problem);
	void *arg;
	size_t files, problems;
};

/* Each staged file must be there with the hash it was placed with; a missing
 * or changed one is a problem, with the command that fixes it. */
static void check_file(struct checker *c, const char *dir, const cJSON *e, const char *env,
                       unsigned gen)
{
	const char *name = str_of(e, "name");
	char *path = name ? cfa_aprintf("%s/%s", dir, name) : NULL;

	if (!path)
		return;
	c->files++;
	if (!cfa_plat_is_file(path)) {
		c->problems++;
		say(c->fn, c->arg, "venv %s: %s is missing (staged from \"%s\" generation %u; 'cfapkg "
		    "stage --env %s --venv %s' places it again)", dir, name, env, gen, env, dir);
	} else if (!cfa_stage_same_hash(c->ctx, path, str_of(e, "sha256"))) {
		c->problems++;
		say(c->fn, c->arg, "venv %s: %s changed since it was staged from \"%s\" generation %u "
		    "('cfapkg stage --env %s --venv %s' places it again)", dir, name, env, gen, env, dir);
	}
	cfa_free(path);
}

static enum cfapkg_err check_one(void *arg, const char *dir, const char *env)
{
	struct checker *c = arg;
	cJSON *doc = NULL;
	const cJSON *e, *g;
	unsigned gen = 0, cur = 0;
	enum cfapkg_err err;

	if ((err = cfa_stage_record_read(c->ctx, dir, &doc)))
		return err;
	/* A venv without its staging record cannot be unstaged or checked, so
	 * it is a problem even if its files look right. */
	if (!doc || !cfa_stage_nested(doc)) {
		c->problems++;
		say(c->fn, c->arg, "venv %s: its record %s is gone ('cfapkg stage --env %s --venv %s' "
		    "stages it again)", dir, CFA_STAGE_RECORD, env, dir);
		cJSON_Delete(doc);
		return CFAPKG_E_OK;
	}
	g = cJSON_GetObjectItemCaseSensitive(doc, "generation");
	gen = cJSON_IsNumber(g) && g->valuedouble >= 0 && g->valuedouble < 4e9 ? (unsigned)g->valuedouble
	                                                                     : 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "files"))
		check_file(c, dir, e, env, gen);
	/* Files staged from a generation that is no longer current are whole
	 * but stale: the venv missed a follow. */
	if (cfapkg_env_current(c->ctx, env, &cur) != CFAPKG_E_OK)
		cfapkg_ctx_clear_error(c->ctx);
	else if (cur != gen) {
		c->problems++;
		say(c->fn, c->arg, "venv %s: staged from \"%s\" generation %u, but generation %u is "
		    "current ('cfapkg stage --env %s --venv %s')", dir, env, gen, cur, env, dir);
	}
	cJSON_Delete(doc);
	return CFAPKG_E_OK;
}

/* Every problem is reported through fn before the one error that counts
 * them. */
enum cfapkg_err cfapkg_venv_verify(struct cfapkg_ctx *ctx, const char *env,
                                   void (*fn)(void *arg, const char *problem), void *arg,
                                   size_t *files)
{
	struct checker c = {ctx, fn, arg, 0, 0};
	enum cfapkg_err e = each_venv(ctx, env, check_one, &c);

	*files = c.files;
	if (!e && c.problems)
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%lu problem%s with staged Python environments",
		             (unsigned long)c.problems, c.problems == 1 ? "" : "s");
	return e;
}

struct env_find {
	const char *root;
	char *env;
};

static enum cfapkg_err env_of(void *arg, const char *dir, const char *env)
{
	struct env_find *f = arg;

	if (!f->env && strcmp(dir, f->root) == 0 && !(f->env = cfa_strdup(env)))
		return CFAPKG_E_NOMEM;
	return CFAPKG_E_OK;
}

/* The record stores absolute folders, so dir is made absolute before it is
 * compared.  *env NULL when cfapkg staged nothing there. */
enum cfapkg_err cfapkg_venv_env(struct cfapkg_ctx *ctx, const char *dir, char **env)
{
	struct env_find f = {NULL, NULL};
	char *abs = NULL;
	enum cfapkg_err e;

	*env = NULL;
	if (cfa_venv_abs(dir, &abs) != 0)
		return cfa_nomem(ctx);
	f.root = abs;
	e = each_venv(ctx, NULL, env_of, &f);
	free(abs);
	if (e == CFAPKG_E_NOMEM)
		e = cfa_nomem(ctx);
	if (e)
		cfa_free(f.env);
	else
		*env = f.env;
	return e;
}
