/*
 * verify.c - whether what is installed is still what was installed.
 *
 * Two things are checked.  Each store folder against its manifest: every
 * file's SHA-256 and permission bits (once per folder, however many
 * environments use it).  And each generation's view against the store:
 * an entry made as a hard link or a symbolic link must be the store's own
 * file (the same device and inode; volume and file index on Windows),
 * and an entry the generation lists as a copy (copies.json, written when
 * the view was made) must hash to the manifest's digest.  Identity, not
 * contents, is what catches a file replaced in a view (cp evil f.new &&
 * mv f.new f) and a view still linking the old files of a store folder
 * that was deleted and unpacked again.  A generation from before
 * copies.json existed is taken to have no copies.
 *
 * The same walk gives cfapkg_env_damage its list: per part, whether the
 * store folder is missing or damaged and whether the view needs linking
 * again.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* A part with more broken view entries than this gets a count for the
 * rest: a store folder unpacked again breaks every entry at once. */
#define VIEW_PROBLEMS_SHOWN 5

struct store_seen {            /* a store folder checked in this run */
	char *name;
	bool missing, damaged;
};

struct verifier {
	struct cfapkg_ctx *ctx;
	void (*fn)(void *arg, const char *problem);
	void *arg;
	size_t files, problems;
	const char *env;
	unsigned gen;
	char *gendir;              /* the generation being checked */
	cJSON *copies;             /* the generation's copies.json, or NULL */
	const char **copy_list;    /* its paths, sorted */
	size_t ncopies;
	struct store_seen *seen;
	size_t nseen, capseen;
	size_t view_bad;           /* broken view entries of the part being checked */
	struct cfapkg_damage *damage; /* per part, when collecting for a repair */
	size_t ndamage, capdamage;
	bool failed;               /* out of memory while collecting */
};

/* p, or NULL with v->failed set: out of memory ends the run with
 * CFAPKG_E_NOMEM, however far the walk went. */
static char *checked(struct verifier *v, char *p)
{
	if (!p)
		v->failed = true;
	return p;
}

static void say(struct verifier *v, bool counted, const char *fmt, ...) CFA_PRINTF(3, 4);

/* A line to fn, after the environment and generation; counted: one more
 * problem (a summary of problems already counted is not).  The line is
 * as long as it needs to be: it names paths. */
static void say(struct verifier *v, bool counted, const char *fmt, ...)
{
	char *text = NULL, *line = NULL;
	va_list ap;
	enum cfapkg_err e;

	v->problems += counted;
	va_start(ap, fmt);
	e = cfa_vpath(v->ctx, &text, fmt, ap);
	va_end(ap);
	if (e || cfa_path(v->ctx, &line, "%s generation %u: %s", v->env, v->gen, text))
		v->failed = true; /* the run ends out of memory */
	else if (v->fn)
		v->fn(v->arg, line);
	cfa_free(text);
	cfa_free(line);
}

#define problem(v, ...) say(v, true, __VA_ARGS__)

static void view_problem(struct verifier *v, const struct cfapkg_lockfile_part *p, const char *rel,
                         const char *what)
{
	/* Past the first few an entry is still counted, only not told, so that
	 * the totals stay true; verify_package adds one line for the rest. */
	if (++v->view_bad <= VIEW_PROBLEMS_SHOWN)
		problem(v, "view/%s/%s %s", p->name, rel, what);
	else
		v->problems++;
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
	/* The bound stops a long run of digits before it can overflow; what is
	 * left unread then makes the mode one that is not judged. */
	for (s = mode->valuestring; *s >= '0' && *s <= '7' && want < 07777; s++)
		want = want * 8 + (unsigned)(*s - '0');
	if (*s || ((unsigned)now & 0777) == (want & 0777))
		return false;
	/* Two 4-digit modes: it fits the caller's buffer, checked all the same. */
	return cfa_snprintf(was, len, "has permissions %04o; it was installed with %04o",
	                    (unsigned)now & 0777, want & 0777);
}

static const char *json_text(const cJSON *o, const char *key)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

static bool is_file_entry(const cJSON *f)
{
	const char *type = json_text(f, "type");
	return type && strcmp(type, "file") == 0 && json_text(f, "sha256");
}

/* Whether path hashes to hex; false when it cannot be read. */
static bool hashes_to(struct verifier *v, const char *path, const char *hex)
{
	char got[65];

	/* A file that cannot be read is a problem to report, not an error that
	 * ends the run, so the reason is dropped from ctx. */
	if (cfapkg_sha256_file(v->ctx, path, got, NULL) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(v->ctx);
		return false;
	}
	return hex && strcmp(got, hex) == 0;
}

/* One store file against its manifest entry; true when it matches. */
static bool store_file_ok(struct verifier *v, const struct cfapkg_lockfile_part *p, const cJSON *f,
                          const char *store)
{
	const char *name = json_text(f, "path");
	char *path = checked(v, cfa_aprintf("%s/%s", store, name)), hex[65], bits[80];
	bool ok = false;

	if (!path)
		return true; /* no verdict: the run ends out of memory */
	if (cfapkg_sha256_file(v->ctx, path, hex, NULL) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(v->ctx);
		problem(v, "%s %s: store/%s/%s is missing", p->name, p->version, p->store, name);
	} else if (strcmp(hex, json_text(f, "sha256")) != 0) {
		problem(v, "%s %s: store/%s/%s changed since it was installed", p->name, p->version,
		        p->store, name);
	} else if (mode_differs(path, cJSON_GetObjectItemCaseSensitive(f, "mode"), bits,
	                        sizeof(bits))) {
		problem(v, "%s %s: store/%s/%s %s", p->name, p->version, p->store, name, bits);
	} else {
		ok = true;
	}
	cfa_free(path);
	return ok;
}

/* A store folder is hashed once per run; later parts using it get the
 * verdict (and no second report). */
static struct store_seen *seen_store(struct verifier *v, const char *name, bool *fresh)
{
	size_t i;

	*fresh = false;
	for (i = 0; i < v->nseen; i++)
		if (strcmp(v->seen[i].name, name) == 0)
			return &v->seen[i];
	if (cfa_grow((void **)&v->seen, &v->capseen, v->nseen + 1, sizeof(*v->seen)) != 0 ||
	    !(v->seen[v->nseen].name = cfa_strdup(name))) {
		v->failed = true;
		return NULL;
	}
	v->seen[v->nseen].missing = v->seen[v->nseen].damaged = false;
	*fresh = true;
	return &v->seen[v->nseen++];
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* copies.json names entries relative to the view ("PART/rel"), as view.c wrote
 * them. */
static bool listed_copy(struct verifier *v, const char *part, const char *rel)
{
	char *key;
	bool listed;

	if (!v->ncopies || !(key = checked(v, cfa_aprintf("%s/%s", part, rel))))
		return false;
	listed = bsearch(&key, v->copy_list, v->ncopies, sizeof(*v->copy_list), by_text) != NULL;
	cfa_free(key);
	return listed;
}

/* A view entry at path that is not the store's file from: why not.  A
 * listed copy is judged by its contents, since it never was the store's
 * file; same < 0 means the identity could not be compared (the store's
 * file is gone), so the contents are all there is to go on. */
static void judge_view_entry(struct verifier *v, const struct cfapkg_lockfile_part *p, const char *rel,
                             const char *path, const char *hex, int same)
{
	if (!cfa_plat_is_file(path) && !cfa_plat_is_dir(path))
		view_problem(v, p, rel, "is missing");
	else if (listed_copy(v, p->name, rel)) {
		if (hex && !hashes_to(v, path, hex))
			view_problem(v, p, rel, "is a copy that no longer matches the store's file");
	} else if (same < 0) {
		if (hex && !hashes_to(v, path, hex)) /* the store's file is gone: contents only */
			view_problem(v, p, rel, "changed since it was installed");
	} else {
		view_problem(v, p, rel, "is not the store's file (replaced?)");
	}
}

/* One view entry (rel, under view/PART) against the store file it was
 * made from; hex is the manifest's digest (NULL for a link). */
static void check_view_entry(struct verifier *v, const struct cfapkg_lockfile_part *p, const char *rel,
                             const char *from, const char *hex)
{
	char *path = checked(v, cfa_aprintf("%s/view/%s/%s", v->gendir, p->name, rel));
	int same;

	v->files++;
	if (!path)
		return;
	same = cfa_plat_same_file(path, from);
	/* Fine: the same file; or a link to nothing, or to a folder. */
	if (same != 1 && (hex || cfa_plat_is_file(from)))
		judge_view_entry(v, p, rel, path, hex, same);
	cfa_free(path);
}

static bool layout_name(const struct cfapkg_lockfile_part *p, const char *rel)
{
	size_t i;

	for (i = 0; i < p->nlayout; i++)
		if (strcmp(p->layout[i].as, rel) == 0)
			return true;
	return false;
}

static const cJSON *manifest_entry(const cJSON *files, const char *rel)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, files)
	{
		const char *name = json_text(f, "path");
		if (name && strcmp(name, rel) == 0)
			return f;
	}
	return NULL;
}

/* Every entry of the part's view: the manifest's files (but the names a
 * layout rule took over) and the layout names. */
static void check_view(struct verifier *v, const struct cfapkg_lockfile_part *p, const cJSON *files,
                       const char *store)
{
	char *from;
	const cJSON *f;
	size_t i;

	cJSON_ArrayForEach(f, files)
	{
		const char *rel = json_text(f, "path");
		/* A name that a layout rule took over is checked below, against
		 * the file the rule links, not against the manifest's file of
		 * that name. */
		if (!rel || !cfa_safe_relative(rel) || layout_name(p, rel) ||
		    !(from = checked(v, cfa_aprintf("%s/%s", store, rel))))
			continue;
		/* A folder of the store has no view entry of its own to check;
		 * an entry without a digest (a link) is judged by identity
		 * alone. */
		if (is_file_entry(f) || !cfa_plat_is_dir(from))
			check_view_entry(v, p, rel, from, is_file_entry(f) ? json_text(f, "sha256") : NULL);
		cfa_free(from);
	}
	for (i = 0; i < p->nlayout; i++) {
		f = manifest_entry(files, p->layout[i].path);
		if (!(from = checked(v, cfa_aprintf("%s/%s", store, p->layout[i].path))))
			continue;
		if (cfa_plat_is_file(from))
			check_view_entry(v, p, p->layout[i].as, from,
			                 f && is_file_entry(f) ? json_text(f, "sha256") : NULL);
		cfa_free(from);
	}
}

static void check_store(struct verifier *v, const struct cfapkg_lockfile_part *p, const cJSON *files,
                        const char *store, struct store_seen *s)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, files)
	{
		const char *rel = json_text(f, "path");
		/* A manifest path that is not safely inside the package is
		 * never opened: nothing outside the store folder is hashed on
		 * its say-so. */
		if (rel && cfa_safe_relative(rel) && is_file_entry(f) &&
		    !store_file_ok(v, p, f, store))
			s->damaged = true;
	}
}

static struct cfapkg_damage *damage_add(struct verifier *v, const struct cfapkg_lockfile_part *p)
{
	struct cfapkg_damage *d;

	if (cfa_grow((void **)&v->damage, &v->capdamage, v->ndamage + 1, sizeof(*d)) != 0) {
		v->failed = true;
		return NULL;
	}
	d = &v->damage[v->ndamage++];
	memset(d, 0, sizeof(*d));
	d->part = p->name;         /* borrowed from the lock until packed */
	d->version = p->version;
	d->store = p->store;
	return d;
}

static void verify_package(struct verifier *v, const struct cfapkg_lockfile_part *p,
                           struct cfapkg_damage *d)
{
	char *store = NULL, *path = NULL;
	cJSON *doc = NULL, *files;
	struct store_seen *s;
	bool fresh;

	/* These fail only for want of memory (the root is set by now). */
	if (cfa_store_dir(v->ctx, p, &store) ||
	    cfa_path(v->ctx, &path, "%s/.cfapkg/manifest.json", store) ||
	    !(s = seen_store(v, p->store, &fresh))) {
		v->failed = true;
		goto out;
	}
	/* A store folder already found missing for an earlier part is not read
	 * again. */
	if (!s->missing &&
	    cfa_json_read_file(v->ctx, path, CFAPKG_E_INTEGRITY, &doc) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(v->ctx);
		s->missing = true;
	}
	if (s->missing) {
		/* Told once per store folder, however many parts use it. */
		if (fresh)
			problem(v, "%s %s: store/%s is missing or has no manifest", p->name, p->version,
			        p->store);
		d->store_missing = d->view_damaged = true;
		goto out;
	}
	files = cJSON_GetObjectItemCaseSensitive(doc, "files");
	/* Hashed for the first part that uses the folder only; later parts take
	 * its verdict. */
	if (fresh)
		check_store(v, p, files, store, s);
	/* The view is checked for every part, even when its store folder was
	 * judged for an earlier one: each part has its own entries in the
	 * view. */
	v->view_bad = 0;
	check_view(v, p, files, store);
	if (v->view_bad > VIEW_PROBLEMS_SHOWN)
		say(v, false, "view/%s: %lu more entries are not the store's files (was store/%s "
		        "unpacked again?)", p->name, (unsigned long)(v->view_bad - VIEW_PROBLEMS_SHOWN),
		        p->store);
	d->store_damaged = s->damaged;
	d->view_damaged = v->view_bad > 0;
out:
	cJSON_Delete(doc);
	cfa_free(store);
	cfa_free(path);
}

/* A user part: each file the user added, by the fingerprint its recipe
 * names (the view's entry is a link to, or a copy of, the added file). */
static void verify_user_part(struct verifier *v, const struct cfapkg_lockfile_part *p,
                             struct cfapkg_damage *d)
{
	char *path, *added;
	size_t i;

	/* A user part has no store folder; "" keeps the strings that
	 * pack_damage copies non-NULL. */
	d->store = "";
	v->view_bad = 0;
	for (i = 0; i < p->nuser_files && !v->failed; i++) {
		const struct cfapkg_user_file *f = &p->user_files[i];
		added = checked(v, cfa_root_path(v->ctx, CFA_DOWNLOADS, f->sha256));
		path = checked(v, cfa_aprintf("%s/view/%s/%s", v->gendir, p->name, f->name));
		if (!added || !path) {
			cfa_free(added);
			cfa_free(path);
			break;
		}
		v->files++;
		if (!cfa_plat_is_file(added)) {
			problem(v, "%s %s: downloads/%s (%s, added with 'cfapkg add-file') is missing",
			        p->name, p->version, f->sha256, f->name);
			d->store_missing = true;
		}
		/* A user file's entry is judged by contents: it may be a link
		 * to the added file or a copy of it, and either way its
		 * fingerprint is what the recipe names. */
		if (!cfa_plat_is_file(path))
			view_problem(v, p, f->name, "is missing");
		else if (!hashes_to(v, path, f->sha256))
			view_problem(v, p, f->name, "is not the file its recipe names (replaced?)");
		cfa_free(added);
		cfa_free(path);
	}
	d->view_damaged = v->view_bad > 0;
}

/* The generation's copies.json as a sorted list (a view made without
 * hard links has every entry in it). */
static void read_copies(struct verifier *v)
{
	char *path = checked(v, cfa_aprintf("%s/" CFA_VIEW_COPIES, v->gendir));
	const cJSON *c;

	v->copies = NULL;
	v->ncopies = 0;
	/* An unreadable copies.json does not stop the check: without it every
	 * copy is reported as replaced, which is said once here so that the
	 * reports make sense. */
	if (path && cfa_plat_is_file(path) &&
	    cfa_json_read_file(v->ctx, path, CFAPKG_E_LOCKFILE, &v->copies) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(v->ctx);
		problem(v, "%s cannot be read; entries that are not the store's files are "
		        "reported as replaced", path);
	}
	cfa_free(path);
	if (!v->copies)
		return;
	/* The paths are borrowed from v->copies, which lives as long as the
	 * list; the extra byte keeps an empty list from being a zero-byte
	 * request. */
	v->copy_list = cfa_malloc((size_t)cJSON_GetArraySize(v->copies) * sizeof(*v->copy_list) + 1);
	if (!v->copy_list) {
		v->failed = true;
		return;
	}
	cJSON_ArrayForEach(c, v->copies)
	{
		if (cJSON_IsString(c))
			v->copy_list[v->ncopies++] = c->valuestring;
	}
	qsort(v->copy_list, v->ncopies, sizeof(*v->copy_list), by_text);
}

enum cfapkg_err cfa_gen_records_check(struct cfapkg_ctx *ctx, const char *gendir, char **why)
{
	char *path = NULL;
	cJSON *doc = NULL;
	enum cfapkg_err e;

	*why = NULL;
	if ((e = cfa_path(ctx, &path, "%s/runtime.json", gendir)))
		return e;
	e = cfa_json_read_file(ctx, path, CFAPKG_E_LOCKFILE, &doc);
	cJSON_Delete(doc);
	cfa_free(path);
	if (!e || e == CFAPKG_E_NOMEM)
		return e;
	/* What run and env show would stop on, in the file's own message
	 * (which names it). */
	*why = cfa_strdup(cfapkg_ctx_error(ctx));
	cfapkg_ctx_clear_error(ctx);
	return *why ? CFAPKG_E_OK : cfa_nomem(ctx);
}

/* The generation's own records: a runtime.json that does not read stops
 * every run of it, though each part's files are whole. */
static void check_records(struct verifier *v)
{
	char *why = NULL;

	if (cfa_gen_records_check(v->ctx, v->gendir, &why)) {
		v->failed = true;
		return;
	}
	if (why)
		problem(v, "%s ('cfapkg repair --env %s' writes it again)", why, v->env);
	cfa_free(why);
}

/* The current generation of env; with keep_damage the damaged parts are
 * left in v->damage, their strings borrowed from *lock (the caller frees
 * it). */
static enum cfapkg_err verify_env(struct verifier *v, const char *env, bool keep_damage,
                                  struct cfapkg_lockfile **lock)
{
	size_t i, before;
	enum cfapkg_err e;

	*lock = NULL;
	v->env = env;
	CFA_FREE(v->gendir);
	/* An environment with no current generation has nothing installed to
	 * check: that is no error. */
	if ((e = cfapkg_env_current(v->ctx, env, &v->gen)) || v->gen == 0 ||
	    (e = cfa_gen_dir(v->ctx, env, v->gen, &v->gendir)) ||
	    (e = cfapkg_env_lockfile(v->ctx, env, v->gen, lock)))
		return e;
	read_copies(v);
	check_records(v);
	for (i = 0; i < (*lock)->nparts && !v->failed; i++) {
		const struct cfapkg_lockfile_part *p = &(*lock)->parts[i];
		struct cfapkg_damage *d;
		/* A system part is the machine's: nothing of it was installed
		 * here. */
		if (p->kind != CFAPKG_KIND_PACKAGE && p->kind != CFAPKG_KIND_USER)
			continue;
		before = v->ndamage;
		if (!(d = damage_add(v, p)))
			break;
		if (p->kind == CFAPKG_KIND_PACKAGE)
			verify_package(v, p, d);
		else
			verify_user_part(v, p, d);
		/* The entry is taken back unless it is kept and shows damage,
		 * so v->damage ends as the damaged parts only. */
		if (!keep_damage || !(d->store_missing || d->store_damaged || d->view_damaged))
			v->ndamage = before;
	}
	cJSON_Delete(v->copies);
	cfa_free(v->copy_list);
	v->copies = NULL;
	v->copy_list = NULL;
	v->ncopies = 0;
	return v->failed ? cfa_nomem(v->ctx) : CFAPKG_E_OK;
}

static void verifier_fini(struct verifier *v)
{
	size_t i;

	for (i = 0; i < v->nseen; i++)
		cfa_free(v->seen[i].name);
	cfa_free(v->seen);
	cfa_free(v->damage);
	cfa_free(v->gendir);
}

enum cfapkg_err cfapkg_verify(struct cfapkg_ctx *ctx, const char *env,
                              void (*fn)(void *arg, const char *problem), void *arg,
                              size_t *files)
{
	struct verifier v = {.ctx = ctx, .fn = fn, .arg = arg};
	struct cfapkg_lockfile *lock = NULL;
	char **envs = NULL;
	size_t n = 0, i;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (env) {
		e = verify_env(&v, env, false, &lock);
		cfapkg_lockfile_free(lock);
	} else if (!(e = cfapkg_env_list(ctx, &envs, &n))) {
		for (i = 0; i < n && !e; i++) {
			e = verify_env(&v, envs[i], false, &lock);
			cfapkg_lockfile_free(lock);
		}
	}
	cfa_free(envs);
	verifier_fini(&v);
	if (files)
		*files = v.files;
	/* The way back: repair unpacks the damaged folders again and links
	 * the view afresh. */
	if (!e && v.problems && env)
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%lu installed file%s changed or went missing; "
		             "'cfapkg repair --env %s' puts them back as they were unpacked",
		             (unsigned long)v.problems, v.problems == 1 ? "" : "s", env);
	else if (!e && v.problems)
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%lu installed file%s changed or went missing; "
		             "'cfapkg repair --env ENV' for each environment named above puts them back "
		             "as they were unpacked", (unsigned long)v.problems,
		             v.problems == 1 ? "" : "s");
	return e;
}

/* The list and its strings in one allocation, for cfapkg_free. */
static struct cfapkg_damage *pack_damage(const struct verifier *v)
{
	size_t i, bytes = v->ndamage * sizeof(struct cfapkg_damage) + 1;
	struct cfapkg_damage *out;
	char *p;

	for (i = 0; i < v->ndamage; i++)
		bytes += strlen(v->damage[i].part) + strlen(v->damage[i].version) +
		         strlen(v->damage[i].store) + 3;
	if (!(out = cfa_malloc(bytes)))
		return NULL;
	p = (char *)(out + v->ndamage);
	for (i = 0; i < v->ndamage; i++) {
		const char *const src[3] = {v->damage[i].part, v->damage[i].version,
		                            v->damage[i].store};
		const char **dst[3] = {&out[i].part, &out[i].version, &out[i].store};
		size_t k;
		out[i] = v->damage[i];
		for (k = 0; k < 3; k++) {
			size_t len = strlen(src[k]) + 1;
			*dst[k] = memcpy(p, src[k], len);
			p += len;
		}
	}
	return out;
}

enum cfapkg_err cfapkg_env_damage(struct cfapkg_ctx *ctx, const char *env,
                                  void (*fn)(void *arg, const char *problem), void *arg,
                                  unsigned *gen, struct cfapkg_damage **out, size_t *n)
{
	struct verifier v = {.ctx = ctx, .fn = fn, .arg = arg};
	struct cfapkg_lockfile *lock = NULL;
	enum cfapkg_err e = verify_env(&v, env, true, &lock);

	*out = NULL;
	*n = 0;
	*gen = v.gen;
	if (!e && v.ndamage && !(*out = pack_damage(&v)))
		e = cfa_nomem(ctx);
	if (!e)
		*n = v.ndamage;
	cfapkg_lockfile_free(lock);
	verifier_fini(&v);
	return e;
}
