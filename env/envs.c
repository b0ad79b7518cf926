/*
 * envs.c - environments by name: where they live, which generation is
 * current, their pins, and the safe way to replace a file or remove a
 * folder (write-flush-rename; rename into the trash, then delete).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache.h"
#include "core/dep.h"
#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* A name is a folder under ROOT/envs: only characters that are safe in a path
 * on every OS, none first that would make it hidden or an option. */
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

/* A new environment's name is a folder's that Windows can have: refused
 * alike on every system, so that a root moves between them (one made
 * before this rule stays usable, and removable). */
static enum cfapkg_err check_new_name(struct cfapkg_ctx *ctx, const char *env)
{
	size_t n = strlen(env);

	if (cfa_device_name(env, n))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "\"%s\" cannot be an environment's name: Windows "
		                "keeps it for a device (CON, PRN, AUX, NUL, COM0-9, LPT0-9, CONIN$, "
		                "CONOUT$, in any case and with any extension); choose another", env);
	if (env[n - 1] == '.')
		return cfa_fail(ctx, CFAPKG_E_USAGE, "\"%s\" cannot be an environment's name: Windows "
		                "drops a folder name's last dot; choose one that ends in a letter, "
		                "digit, '_' or '-'", env);
	return CFAPKG_E_OK;
}

/* ROOT/envs/ENV for a valid name; the check comes first, so no caller can
 * build a path from a name like "../x". */
enum cfapkg_err cfa_env_dir(struct cfapkg_ctx *ctx, const char *env, char **out)
{
	enum cfapkg_err e = cfapkg_env_check_name(ctx, env);

	*out = NULL;
	if (e)
		return e;
	*out = cfa_root_path(ctx, CFA_ENVS, env);
	return *out ? CFAPKG_E_OK : ctx->err_code;
}

/* The number is not checked against what exists: a caller that needs an
 * existing generation looks for its lock.json (marks.c, existing_gen). */
enum cfapkg_err cfa_gen_dir(struct cfapkg_ctx *ctx, const char *env, unsigned gen, char **out)
{
	char *dir;
	enum cfapkg_err e = cfa_env_dir(ctx, env, &dir);

	*out = NULL;
	if (!e)
		e = cfa_path(ctx, out, "%s/%u", dir, gen);
	cfa_free(dir);
	return e;
}

/* Generation 0 is the current one; an environment with nothing installed has
 * none, which is NOTFOUND with what to do about it. */
enum cfapkg_err cfa_gen_file(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                             const char *what, char **out)
{
	char *dir = NULL;
	enum cfapkg_err e;

	*out = NULL;
	if (gen == 0 && (e = cfapkg_env_current(ctx, env, &gen)))
		return e;
	if (gen == 0)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has nothing installed "
		                "yet: run 'cfapkg install --env %s NAME'", env, env);
	if (!(e = cfa_gen_dir(ctx, env, gen, &dir)))
		e = cfa_path(ctx, out, "%s/%s", dir, what);
	cfa_free(dir);
	return e;
}

/* A path that does not fit the caller's buffer is an error, never a shortened
 * path that would name another file. */
enum cfapkg_err cfapkg_gen_path(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                const char *what, char *buf, size_t len)
{
	char *path;
	enum cfapkg_err e = cfa_gen_file(ctx, env, gen, what, &path);

	if (!e && !cfa_snprintf(buf, len, "%s", path))
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: path too long (%lu bytes) for the caller's buffer",
		             path, (unsigned long)strlen(path));
	cfa_free(path);
	return e;
}

enum cfapkg_err cfa_make_dir(struct cfapkg_ctx *ctx, const char *path)
{
	int rc = cfa_plat_mkdir_p(path);

	return rc ? cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create the folder: %s", path,
	                     cfa_plat_strerror(rc))
	          : CFAPKG_E_OK;
}

/* *f NULL with no error when the file is not there: for the callers, a missing
 * file is an empty one.  Any other failure to open is an error. */
enum cfapkg_err cfa_open_if_there(struct cfapkg_ctx *ctx, const char *path, FILE **f)
{
	int rc;

	if ((*f = cfa_plat_fopen(path, "rb")) != NULL)
		return CFAPKG_E_OK;
	rc = cfa_plat_write_errno(); /* fopen's errno */
	return rc == ENOENT ? CFAPKG_E_OK
	                    : cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot read: %s", path,
	                               cfa_plat_strerror(rc));
}

/* A last line without its newline is returned with *whole false, so a
 * reader such as add_switches can skip it as torn. */
bool cfa_read_line(FILE *f, struct cfa_buf *line, bool *whole)
{
	int c;

	cfa_buf_reset(line);
	*whole = false;
	while ((c = fgetc(f)) != EOF) {
		char ch = (char)c;
		if (ch == '\n') {
			*whole = true;
			return true;
		}
		cfa_buf_add(line, &ch, 1);
	}
	return line->len > 0;
}

/* A name in the trash no one else has taken (1000 tries, then the last).
 * The time in microseconds and a counter make a clash unlikely; a name already
 * taken is skipped. */
static enum cfapkg_err trash_slot(struct cfapkg_ctx *ctx, const char *trash, char **dst)
{
	static unsigned counter;
	unsigned i;

	*dst = NULL;
	for (i = 0; i < 1000; i++) {
		cfa_free(*dst);
		if (cfa_path(ctx, dst, "%s/%.0f-%u", trash, cfa_plat_now() * 1e6, counter++))
			return ctx->err_code;
		if (!cfa_plat_is_dir(*dst) && !cfa_plat_is_file(*dst))
			break;
	}
	return CFAPKG_E_OK;
}

/* A folder is removed by renaming it into the trash first: the rename is one
 * step, so a kill during the slow delete leaves nothing half-removed under its
 * old name, and recovery empties the trash. */
enum cfapkg_err cfa_trash(struct cfapkg_ctx *ctx, const char *path)
{
	char *trash = cfa_root_path(ctx, CFA_TRASH, NULL), *dst = NULL;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (!trash)
		return ctx->err_code;
	if (!(e = cfa_make_dir(ctx, trash)) && !(e = trash_slot(ctx, trash, &dst)) &&
	    cfa_plat_rename(path, dst) != 0)
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot move it out of the way (is a program "
		             "using it?)", path);
	if (!e) {
		/* The rename is flushed before the slow delete starts, so that
		 * after a crash the folder is found in the trash, where
		 * recovery looks, and not back under its old name
		 * half-deleted. */
		cfa_plat_sync_dir(trash);
		cfa_crash_point();
		cfa_plat_remove_tree(dst); /* what is left here, recovery removes */
	}
	cfa_free(trash);
	cfa_free(dst);
	return e;
}

/* The default environment always exists, even before its folder does: it is
 * where an install goes when no --env is given. */
bool cfapkg_env_exists(struct cfapkg_ctx *ctx, const char *env)
{
	char *dir;
	bool there;

	/* A name that is not valid names no environment: that is an answer, not
	 * an error, so the reason is dropped. */
	if (cfa_env_dir(ctx, env, &dir)) {
		cfapkg_ctx_clear_error(ctx);
		return false;
	}
	there = cfa_plat_is_dir(dir) || strcmp(env, CFAPKG_DEFAULT_ENV) == 0;
	cfa_free(dir);
	return there;
}

enum cfapkg_err cfapkg_env_create(struct cfapkg_ctx *ctx, const char *env)
{
	char *dir;
	enum cfapkg_err e = cfa_env_dir(ctx, env, &dir);

	/* The general check comes first (cfa_env_dir); the Windows rules apply
	 * only to new names, so that an existing environment is never locked
	 * out. */
	if (e || (e = check_new_name(ctx, env))) {
		cfa_free(dir);
		return e;
	}
	/* Creating an existing environment is refused rather than ignored, so
	 * a script does not take someone else's environment for a new one. */
	if (cfa_plat_is_dir(dir))
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "environment \"%s\" already exists", env);
	else
		e = cfa_make_dir(ctx, dir);
	cfa_free(dir);
	return e;
}

/* The whole environment goes to the trash in one rename; its store folders
 * stay until gc finds no generation that uses them. */
enum cfapkg_err cfapkg_env_remove(struct cfapkg_ctx *ctx, const char *env)
{
	char *dir;
	enum cfapkg_err e = cfa_env_dir(ctx, env, &dir);

	if (e)
		return e;
	if (strcmp(env, CFAPKG_DEFAULT_ENV) == 0)
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "environment \"%s\" always exists and cannot "
		             "be removed; to empty it, 'cfapkg remove' its requests ('cfapkg list' "
		             "shows them)", env);
	else if (cfa_plat_is_dir(dir))
		e = cfa_trash(ctx, dir);
	else
		e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "no environment \"%s\" ('cfapkg env list' "
		             "shows them)", env);
	cfa_free(dir);
	return e;
}

struct name_list {
	char **v;
	size_t n, cap;
	bool failed;
};

/* Names starting with "." are never environments (cfapkg_env_check_name
 * refuses them), so such folders are skipped.  The list is kept NULL-ended. */
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
	char *dir = cfa_root_path(ctx, CFA_ENVS, NULL);
	size_t i;

	if (!dir)
		return ctx->err_code;
	cfa_plat_list_dir(dir, add_name, &l);
	cfa_free(dir);
	/* The default environment is listed even before anything was installed
	 * into it. */
	for (i = 0; i < l.n && strcmp(l.v[i], CFAPKG_DEFAULT_ENV) != 0; i++)
		;
	if (i == l.n)
		add_name(CFAPKG_DEFAULT_ENV, &l);
	if (l.failed || !(*names = pack_names(&l)))
		return cfa_nomem(ctx);
	/* Sorted because a listing comes in no set order: every front end shows
	 * the environments alike, and the default one among them by name. */
	qsort(*names, l.n, sizeof(char *), by_name);
	*n = l.n;
	return CFAPKG_E_OK;
}

char *cfa_env_link_path(const char *envdir)
{
	return cfa_aprintf("%s/%s", envdir, CFA_ENV_ACTIVE);
}

/* The generation the link names, read back from the link itself.  Anything else
 * (no link, a target that is not a generation number) is 0, so that the caller
 * relinks rather than trusts it. */
unsigned cfa_env_linked(const char *envdir)
{
	char *link = cfa_env_link_path(envdir), *name = NULL;
	uint64_t gen = 0;

	if (link && cfa_plat_dir_link_read(link, &name) == 0 &&
	    !cfa_parse_u64(name, strlen(name), 1000000000u, &gen))
		gen = 0;
	free(name); /* the platform's allocation */
	cfa_free(link);
	return (unsigned)gen;
}

unsigned cfa_env_linked_whole(const char *envdir)
{
	unsigned gen = cfa_env_linked(envdir);
	char *lock = gen ? cfa_aprintf("%s/%u/lock.json", envdir, gen) : NULL;
	bool whole = lock && cfa_plat_is_file(lock);

	cfa_free(lock);
	return whole ? gen : 0;
}

enum cfapkg_err cfa_env_read_current(struct cfapkg_ctx *ctx, const char *envdir, unsigned *gen,
                                     bool *torn)
{
	char *path, text[32];
	uint64_t v;
	size_t len;
	FILE *f = NULL;
	enum cfapkg_err e = cfa_path(ctx, &path, "%s/current", envdir);

	*gen = 0;
	*torn = false;
	if (!e)
		e = cfa_open_if_there(ctx, path, &f);
	cfa_free(path);
	if (e || !f)
		return e; /* no file: nothing installed yet */
	/* A number and a newline; anything longer does not parse below. */
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	/* A file edited by hand on Windows may end in "\r\n"; either end is
	 * dropped. */
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	/* 0 is never a generation: a 'current' that says 0 is damage, not
	 * "nothing installed", and the bound keeps the number in an
	 * unsigned. */
	if (!cfa_parse_u64(text, len, 1000000000u, &v) || v == 0)
		*torn = true;
	else
		*gen = (unsigned)v;
	return CFAPKG_E_OK;
}

/* *gen 0 with no error: nothing installed yet.  A 'current' that does not
 * hold a number is read through the active link, which a power cut can
 * leave the only whole record (cfa_env_make_current); with no link to go
 * by, it is an error that says how to set it again, never taken for
 * "nothing installed". */
enum cfapkg_err cfapkg_env_current(struct cfapkg_ctx *ctx, const char *env, unsigned *gen)
{
	char *dir;
	bool torn;
	enum cfapkg_err e = cfa_env_dir(ctx, env, &dir);

	*gen = 0;
	if (e)
		return e;
	e = cfa_env_read_current(ctx, dir, gen, &torn);
	if (!e && torn && !(*gen = cfa_env_linked_whole(dir)))
		e = cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s/current: does not hold a generation number; "
		             "'cfapkg rollback --env %s --to N' sets it again", dir, env);
	cfa_free(dir);
	return e;
}

/* The lock.json of generation gen (0: the current one), from the image
 * beside it where it still matches (lockimage.c), unless caches are off.
 * Owned: cfapkg_lockfile_free. */
enum cfapkg_err cfapkg_env_lockfile(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                struct cfapkg_lockfile **out)
{
	char *path, *image = NULL;
	enum cfapkg_err e = cfa_gen_file(ctx, env, gen, "lock.json", &path);

	*out = NULL;
	/* Named from the JSON's own path: the generation is read once. */
	if (!e && !ctx->no_index &&
	    !(image = cfa_aprintf("%.*slock.img", (int)(strlen(path) - strlen("lock.json")), path)))
		e = cfa_nomem(ctx);
	if (!e && image)
		e = cfa_lock_image_load(ctx, path, image, out);
	if (!e && !*out)
		e = cfapkg_lockfile_read(ctx, path, out);
	cfa_free(image);
	cfa_free(path);
	return e;
}

/* Only the facts: the caller plans a later change for the same machine
 * without keeping the whole set. */
enum cfapkg_err cfapkg_env_facts(struct cfapkg_ctx *ctx, const char *env, unsigned *gen,
                                 struct cfapkg_facts *out)
{
	struct cfapkg_lockfile *lock = NULL;
	enum cfapkg_err e;

	*gen = 0;
	cfapkg_facts_clear(out);
	if ((e = cfapkg_env_current(ctx, env, gen)))
		return e;
	if (*gen == 0)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has nothing installed",
		                env);
	if ((e = cfapkg_env_lockfile(ctx, env, *gen, &lock)))
		return e;
	/* Moved, not copied: the lock is freed without them. */
	*out = lock->facts;
	memset(&lock->facts, 0, sizeof(lock->facts));
	cfapkg_lockfile_free(lock);
	return CFAPKG_E_OK;
}

/* ROOT/envs/ENV/pins.json, and with dir the folder it is in. */
static enum cfapkg_err pins_path(struct cfapkg_ctx *ctx, const char *env, char **path,
                                 char **dir)
{
	char *envdir;
	enum cfapkg_err e = cfa_env_dir(ctx, env, &envdir);

	*path = NULL;
	if (!e)
		e = cfa_path(ctx, path, "%s/pins.json", envdir);
	if (dir && !e)
		*dir = envdir;
	else
		cfa_free(envdir);
	return e;
}

/* No pins.json means no pins.  The list is NULL-ended; owned: cfapkg_free. */
enum cfapkg_err cfapkg_env_pins(struct cfapkg_ctx *ctx, const char *env, char ***pins, size_t *n)
{
	char *path;
	cJSON *doc = NULL;
	enum cfapkg_err e;

	if ((e = pins_path(ctx, env, &path, NULL)))
		return e;
	if (cfa_plat_is_file(path))
		e = cfa_json_read_file(ctx, path, CFAPKG_E_LOCKFILE, &doc);
	cfa_free(path);
	if (e)
		return e;
	*pins = cfa_json_strings(doc, n);
	cJSON_Delete(doc);
	return *pins ? CFAPKG_E_OK : cfa_nomem(ctx);
}

/* The pins file is rewritten whole: the pins but the one named skip, then add,
 * replaced atomically by cfa_write_json. */
static enum cfapkg_err write_pins(struct cfapkg_ctx *ctx, const char *env, char **pins,
                                  const char *skip, const char *add)
{
	struct cfa_json_build jb = {false};
	cJSON *a = cfa_json_new_array(&jb);
	char *path, *dir = NULL;
	enum cfapkg_err e;
	size_t i;

	for (i = 0; pins[i]; i++)
		if (!skip || !cfapkg_spec_names(pins[i], skip))
			cfa_json_append_string(&jb, a, pins[i]);
	if (add)
		cfa_json_append_string(&jb, a, add);
	a = cfa_json_finish(&jb, a);
	/* The environment's folder may not exist yet: the default environment
	 * can be pinned before anything is installed into it. */
	if (!(e = pins_path(ctx, env, &path, &dir)))
		e = cfa_make_dir(ctx, dir);
	if (e)
		cJSON_Delete(a);
	else
		e = cfa_write_json(ctx, path, a); /* NULL a: out of memory, nothing written */
	cfa_free(path);
	cfa_free(dir);
	return e;
}

/* Versions of a recipe, newest first: "7-preview.10, 6-preview.69".
 * For the error message only: the bound is far past any recipe's list. */
static char *version_list(const struct cfapkg_recipe *rec)
{
	struct cfa_buf b;
	char *out;
	size_t i;

	cfa_buf_init(&b, 65536);
	for (i = 0; i < rec->nversions; i++)
		cfa_buf_printf(&b, "%s%s", i ? ", " : "", rec->versions[i].version);
	out = b.failed ? NULL : cfa_strdup(cfa_buf_str(&b));
	cfa_buf_fini(&b);
	return out;
}

/* A pin on a name no recipe has binds nothing (a typo the user would never
 * notice), and one no version meets blocks every later solve: both are
 * refused before anything is written. */
static enum cfapkg_err check_pin(struct cfapkg_ctx *ctx, const char *spec,
                                 const struct cfa_range *r)
{
	const struct cfapkg_recipe *rec = cfapkg_recipe_find(ctx, r->name);
	const char *rest = spec + cfapkg_spec_name_len(spec);
	enum cfapkg_err e;
	char *list;
	size_t i;

	if (!rec) {
		list = cfapkg_recipe_suggest(ctx, r->name);
		e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "pin \"%s\": no recipe named %s%s%s", spec,
		             r->name, list ? "; did you mean: " : " (cfapkg search lists them)",
		             list ? list : "");
		cfa_free(list);
		return e;
	}
	/* A version that does not parse as a version is not ruled out by the
	 * range, so it lets the pin stand. */
	for (i = 0; i < rec->nversions; i++)
		if (!rec->versions[i].parsed || cfa_range_match(r, rec->versions[i].parsed))
			return CFAPKG_E_OK;
	list = version_list(rec);
	e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "pin \"%s\": no version of %s matches %s; "
	             "versions: %s", spec, r->name, rest + strspn(rest, " "), list ? list : "?");
	cfa_free(list);
	return e;
}

enum cfapkg_err cfapkg_env_pin(struct cfapkg_ctx *ctx, const char *env, const char *spec)
{
	struct cfa_range r;
	struct cfa_arena a;
	char **pins = NULL;
	const char *why = NULL;
	size_t n;
	enum cfapkg_err e = CFAPKG_E_OK;

	cfa_arena_init(&a); /* holds r.name, the pin's name, to the end */
	if (!cfa_range_parse(&a, spec, &r, &why))
		e = why ? cfa_fail(ctx, CFAPKG_E_VERSION, "pin \"%s\": %s", spec, why)
		        : cfa_nomem(ctx);
	/* The recipes are loaded only now: a pin that does not parse is
	 * refused without reading them. */
	if (!e && !(e = cfapkg_recipes_load(ctx)))
		e = check_pin(ctx, spec, &r);
	/* An earlier pin of the same name is replaced, not kept beside the new
	 * one: there is one pin per name. */
	if (!e && !(e = cfapkg_env_pins(ctx, env, &pins, &n)))
		e = write_pins(ctx, env, pins, r.name, spec);
	cfa_free(pins);
	cfa_arena_fini(&a);
	return e;
}

enum cfapkg_err cfapkg_env_unpin(struct cfapkg_ctx *ctx, const char *env, const char *name)
{
	char **pins = NULL;
	size_t i, n;
	enum cfapkg_err e = cfapkg_env_pins(ctx, env, &pins, &n);

	if (e)
		return e;
	/* Unpinning matches the pin's name, whatever constraint the pin
	 * has. */
	for (i = 0; i < n; i++)
		if (cfapkg_spec_names(pins[i], name))
			break;
	e = i == n ? cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s is not pinned in environment \"%s\" "
	                      "('cfapkg pins --env %s' lists the pins)", name, env, env)
	           : write_pins(ctx, env, pins, name, NULL);
	cfa_free(pins);
	return e;
}
