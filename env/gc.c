/*
 * gc.c - keeping a root tidy: recovery after an interrupted run, and
 * garbage collection of what no kept generation needs.
 *
 * What gc removes from ROOT/downloads:
 * - an archive no kept generation uses;
 * - an archive a kept generation uses once its store folder exists (the
 *   tree is what the views link; the archive would only be kept twice,
 *   LibTorch's 2.5 GiB beside its unpacked tree), unless
 *   CFAPKG_KEEP_ARCHIVES=1 asks to keep them (a mirror, offline
 *   reinstalls).  An archive whose store folder is missing stays: it is
 *   what unpacks it again without the network;
 * - a partial download (NAME.part and its NAME.part.meta) last written
 *   more than a day ago.  gc holds the root lock, which every download
 *   holds too, so no part is being written; a younger one is kept for the
 *   interrupted download to resume.
 * Files added with add-file stay: views link them from there.
 * From ROOT/cache/recipes it removes the caches of recipe folders this
 * command does not read (sweep_recipe_cache).
 *
 * Every removal goes through take(), which also lists it: a dry run makes
 * the same decisions and lists the same things, removing nothing.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cache/cache.h"
#include "core/channel.h"
#include "core/layout.h"
#include "core/gpus.h"
#include "core/recipe_cache.h"
#include "core/registry.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "env/env.h"
#include "platform/platform.h"

struct walk {
	struct cfapkg_ctx *ctx;
	const char *dir;
	const char *prefix;       /* entries to act on start with this ("" all) */
	const char *suffix;       /* ... or end with this (NULL: not used) */
	unsigned count;
	bool failed;              /* out of memory: recovery stopped short */
};

/* dir/name, or NULL with w->failed set; a listing callback has no other
 * way to say so. */
static char *walk_path(struct walk *w, const char *dir, const char *name)
{
	char *path = w->failed ? NULL : cfa_aprintf("%s/%s", dir, name);

	if (!path)
		w->failed = true;
	return path;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int remove_matching(const char *name, void *arg)
{
	struct walk *w = arg;
	char *path;

	if (strncmp(name, w->prefix, strlen(w->prefix)) != 0 &&
	    !(w->suffix && ends_with(name, w->suffix)))
		return 0;
	if (!(path = walk_path(w, w->dir, name)))
		return 0;
	/* What cannot be removed now (a file held open) stays for the next
	 * recovery, uncounted: recovery never fails on what it could not
	 * tidy. */
	if (cfa_plat_is_dir(path) ? cfa_plat_remove_tree(path) == 0 : cfa_plat_remove(path) == 0)
		w->count++;
	cfa_free(path);
	return 0;
}

/* A store folder set aside while its replacement took its name
 * (unpack.c): back in its place when the kill came before the new one
 * made it, else no longer needed. */
static int recover_old(const char *name, void *arg)
{
	struct walk *w = arg;
	char *old, *final;

	if (strncmp(name, CFA_STORE_OLD, strlen(CFA_STORE_OLD)) != 0 ||
	    !(old = walk_path(w, w->dir, name)))
		return 0;
	if ((final = walk_path(w, w->dir, name + strlen(CFA_STORE_OLD)))) {
		if (cfa_plat_is_dir(final) ? cfa_plat_remove_tree(old) == 0
		                           : cfa_plat_rename(old, final) == 0)
			w->count++;
		/* Flushed at once: the name put back must survive a power cut
		 * before the next writer runs. */
		cfa_plat_sync_dir(w->dir);
	}
	cfa_free(final);
	cfa_free(old);
	return 0;
}

/* A partial download's .meta whose .part is gone: a kill came between
 * the unpack that took the .part (an archive not kept) and the removal of
 * its .meta, which no resume can use now. */
static int recover_meta(const char *name, void *arg)
{
	struct walk *w = arg;
	char *meta, *part;

	if (!ends_with(name, ".part.meta") || !(meta = walk_path(w, w->dir, name)))
		return 0;
	if ((part = cfa_strndup(meta, strlen(meta) - strlen(".meta")))) {
		if (cfa_plat_file_size(part) < 0 && cfa_plat_remove(meta) == 0)
			w->count++;
	} else {
		w->failed = true;
	}
	cfa_free(part);
	cfa_free(meta);
	return 0;
}

static int recover_env(const char *name, void *arg)
{
	struct walk *w = arg, inner = {w->ctx, NULL, ".new-", ".tmp", 0, false};
	char *dir = walk_path(w, w->dir, name);

	if (!dir)
		return 0;
	inner.dir = dir;
	/* The half-made generations (.new-N) and unrenamed files.  Nothing
	 * inside a finished generation is ever replaced (write_gen writes it
	 * whole under .new-N), so its folders need no listing: a writer's
	 * start costs the same with three generations or three hundred. */
	cfa_plat_list_dir(dir, remove_matching, &inner);
	/* A kill between switching 'current' and the link leaves the link
	 * behind: it follows 'current' again.  A hidden entry of envs/ is not
	 * an environment, so it has no link to put right. */
	if (name[0] != '.')
		cfa_env_relink(w->ctx, dir);
	w->count += inner.count;
	w->failed |= inner.failed;
	cfa_free(dir);
	return 0;
}

/* dir's entries starting with prefix, or ending with ".tmp" (a file
 * cfa_write_atomic had not renamed yet); the listing's result (ENOENT:
 * no such folder). */
static int remove_in(struct walk *w, const char *dir, const char *prefix)
{
	struct walk inner = {w->ctx, dir, prefix, ".tmp", 0, false};
	int rc = cfa_plat_list_dir(dir, remove_matching, &inner);

	w->count += inner.count;
	w->failed |= inner.failed;
	return rc;
}

/* One repository's record in ROOT/apt/releases. */
static int recover_release(const char *name, void *arg)
{
	struct walk *w = arg;
	char *dir = walk_path(w, w->dir, name);

	if (dir && cfa_plat_is_dir(dir))
		remove_in(w, dir, "\x01");
	cfa_free(dir);
	return 0;
}

/* ROOT/apt: the scratch files of an InRelease check (check-*, gpgv's
 * input and output) and the files being replaced in keys/ and in each
 * record of releases/.  The records themselves stay: an older one is
 * what refuses a replayed InRelease. */
static enum cfapkg_err recover_apt(struct walk *w)
{
	char *apt = cfa_root_path(w->ctx, CFA_APT, NULL), *keys = NULL, *releases = NULL;

	if (apt && (keys = cfa_root_path(w->ctx, CFA_APT, "keys")) != NULL &&
	    (releases = cfa_root_path(w->ctx, CFA_APT, "releases")) != NULL &&
	    /* A root that never used an APT source has no folder to look in. */
	    remove_in(w, apt, "check-") != ENOENT) {
		remove_in(w, keys, "\x01");
		w->dir = releases;
		cfa_plat_list_dir(releases, recover_release, w);
		w->dir = NULL;
	}
	cfa_free(apt);
	cfa_free(keys);
	cfa_free(releases);
	if (!releases)
		return w->ctx->err_code;
	return w->failed ? cfa_nomem(w->ctx) : CFAPKG_E_OK;
}

/* The store's hidden entries: the folders being written (.staging-NAME)
 * and those set aside (.old-NAME).  Kept as a list so that the store,
 * often the root's largest folder, is read once. */
struct hidden {
	char **v;
	size_t n, cap;
	bool failed;
};

static int collect_hidden(const char *name, void *arg)
{
	struct hidden *h = arg;

	if (name[0] == '.' && !cfa_strv_push(&h->v, &h->n, &h->cap, name))
		h->failed = true;
	return 0;
}

/* Set-aside store folders are put back before the staging folders go:
 * when a kill came between the two renames of a repair, .old-NAME is the
 * only whole copy of NAME. */
static enum cfapkg_err recover_store(struct walk *w)
{
	char *store = cfa_root_path(w->ctx, CFA_STORE, NULL);
	struct hidden h = {NULL, 0, 0, false};
	size_t i;

	if (!store)
		return w->ctx->err_code;
	cfa_plat_list_dir(store, collect_hidden, &h);
	w->dir = store;
	w->failed |= h.failed;
	for (i = 0; i < h.n; i++)
		recover_old(h.v[i], w);
	w->prefix = ".staging-";
	for (i = 0; i < h.n; i++)
		remove_matching(h.v[i], w);
	w->prefix = "";
	w->dir = NULL;
	cfa_strv_free(h.v, h.n);
	cfa_free(store);
	return w->failed ? cfa_nomem(w->ctx) : CFAPKG_E_OK;
}

/* Lists one of the root's folders with fn. */
static enum cfapkg_err walk_place(struct walk *w, enum cfa_place place,
                                  int (*fn)(const char *name, void *arg))
{
	char *dir = cfa_root_path(w->ctx, place, NULL);

	if (!dir)
		return w->ctx->err_code;
	w->dir = dir;
	cfa_plat_list_dir(dir, fn, w);
	w->dir = NULL;
	cfa_free(dir);
	return w->failed ? cfa_nomem(w->ctx) : CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_recover(struct cfapkg_ctx *ctx, unsigned *cleaned)
{
	struct walk w = {ctx, NULL, "", NULL, 0, false};
	enum cfapkg_err e;

	*cleaned = 0;
	/* The trash holds only what was already on its way out, so all of it
	 * goes. */
	if ((e = walk_place(&w, CFA_TRASH, remove_matching)))
		return e;
	if ((e = recover_store(&w)) ||
	    (e = walk_place(&w, CFA_DOWNLOADS, recover_meta)) ||
	    (e = walk_place(&w, CFA_ENVS, recover_env)) ||
	    (e = recover_apt(&w)))
		return e;
	*cleaned = w.count;
	return CFAPKG_E_OK;
}

/* A partial download last written longer ago than this is given up. */
#define PART_MAX_AGE_SECONDS (24 * 60 * 60)

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

struct gc_state {
	struct cfapkg_ctx *ctx;
	struct keep_set keep;      /* store folders and archives to keep */
	struct keep_set unpacked;  /* archives kept generations use, already unpacked */
	bool keep_archives;        /* CFAPKG_KEEP_ARCHIVES=1 */
	bool dry_run;
	size_t items_cap;
	struct cfapkg_gc_result *r;
};

const char *cfapkg_gc_kind_name(enum cfapkg_gc_kind kind)
{
	static const char *const names[] = {[CFAPKG_GC_GENERATION] = "generation",
	                                    [CFAPKG_GC_STORE] = "store",
	                                    [CFAPKG_GC_DOWNLOAD] = "download",
	                                    [CFAPKG_GC_PART] = "partial",
	                                    [CFAPKG_GC_LOOKUP] = "lookup",
	                                    [CFAPKG_GC_RECIPE_CACHE] = "recipe-cache"};

	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

/* Every removal passes here: a dry run records what a real run records,
 * from the same decisions, and stops short of the removal itself.  path
 * goes to the trash (a folder) or is deleted (a file, with other, the
 * part's .meta, when given); a file that cannot be (held open) is left
 * for the next gc, unlisted. */
static void take(struct gc_state *g, struct cfapkg_gc_item it, const char *path,
                 const char *other, enum cfapkg_err *err)
{
	struct cfapkg_gc_result *r = g->r;
	const char *env = it.env, *name = it.name;
	bool folder = it.kind == CFAPKG_GC_GENERATION || it.kind == CFAPKG_GC_STORE;

	/* A folder goes by one rename into the trash, so a kill part way never
	 * leaves half a generation or store folder under its real name; a file
	 * is removed in one step already. */
	if (!g->dry_run && folder && (*err = cfa_trash(g->ctx, path)) != CFAPKG_E_OK)
		return;
	if (!g->dry_run && !folder && cfa_plat_remove(path) != 0)
		return;
	if (!g->dry_run && other)
		cfa_plat_remove(other);
	/* The item's strings are the caller's; copies are made only once the
	 * removal happened, so a removal that failed leaves nothing listed. */
	it.env = env ? cfa_strdup(env) : NULL;
	it.name = name ? cfa_strdup(name) : NULL;
	if ((env && !it.env) || (name && !it.name) ||
	    cfa_grow((void **)&r->items, &g->items_cap, r->nitems + 1, sizeof(*r->items)) != 0) {
		cfa_free((void *)it.env);
		cfa_free((void *)it.name);
		*err = cfa_nomem(g->ctx);
		return;
	}
	r->items[r->nitems++] = it;
	r->bytes += it.bytes;
	r->generations += it.kind == CFAPKG_GC_GENERATION;
	r->prefixes += it.kind == CFAPKG_GC_STORE;
	r->downloads += it.kind == CFAPKG_GC_DOWNLOAD;
	r->unpacked += it.kind == CFAPKG_GC_DOWNLOAD && it.unpacked;
	r->parts += it.kind == CFAPKG_GC_PART;
	r->lookups += it.kind == CFAPKG_GC_LOOKUP;
	r->recipe_caches += it.kind == CFAPKG_GC_RECIPE_CACHE;
}

/* A kept package's archive stays only while its store folder is missing
 * (or when archives are kept): see the top of this file. */
static enum cfapkg_err keep_part(struct gc_state *g, const struct cfapkg_lockfile_part *p)
{
	char *store;
	enum cfapkg_err e = cfa_store_dir(g->ctx, p, &store);

	if (e)
		return e;
	bool unpacked = !g->keep_archives && cfa_plat_is_dir(store);
	size_t i;

	keep_add(&g->keep, p->store);
	/* A set's archives are each a download of their own. */
	for (i = 0; i < p->nartifacts; i++)
		keep_add(unpacked ? &g->unpacked : &g->keep, p->artifacts[i].sha256);
	if (!p->nartifacts)
		keep_add(unpacked ? &g->unpacked : &g->keep, p->sha256);
	cfa_free(store);
	return CFAPKG_E_OK;
}

/* Only packages have store folders and archives.  A user part's files are kept
 * by cfa_user_file_pinned whatever the generations say, and a system part is the
 * machine's. */
static enum cfapkg_err keep_lock(struct gc_state *g, const char *env, unsigned gen)
{
	struct cfapkg_lockfile *lock = NULL;
	enum cfapkg_err e = cfapkg_env_lockfile(g->ctx, env, gen, &lock);
	size_t i;

	if (e)
		return e;
	for (i = 0; i < lock->nparts && !e; i++)
		if (lock->parts[i].kind == CFAPKG_KIND_PACKAGE)
			e = keep_part(g, &lock->parts[i]);
	cfapkg_lockfile_free(lock);
	if (!e && (g->keep.failed || g->unpacked.failed))
		e = cfa_nomem(g->ctx);
	return e;
}

/* Drops old generations of one environment and notes what the rest use. */
static enum cfapkg_err gc_env(struct gc_state *g, const char *env, unsigned keep)
{
	struct cfapkg_history_entry *h = NULL;
	struct cfapkg_gc_item it = {CFAPKG_GC_GENERATION, NULL, 0, NULL, 0, false};
	char *dir;
	size_t n, i, newer = 0;
	unsigned cur, linked = 0;
	enum cfapkg_err e;

	if ((e = cfapkg_env_current(g->ctx, env, &cur)) ||
	    (e = cfapkg_env_history(g->ctx, env, &h, &n)))
		return e;
	/* The generation the stable path names stays too, should it lag
	 * behind 'current' (a kill between the two switches). */
	if (!(e = cfa_env_dir(g->ctx, env, &dir))) {
		linked = cfa_env_linked(dir);
		cfa_free(dir);
	}
	/* History is oldest first, so it is walked from the end and newer
	 * counts the created generations seen so far: the newest keep of them
	 * stay.  Switches do not count, since they made no generation. */
	for (i = n; i-- > 0 && !e;) {
		if (h[i].is_switch)
			continue;
		newer++;
		if (h[i].generation == cur || h[i].generation == linked || keep == 0 ||
		    newer <= keep) {
			e = keep_lock(g, env, h[i].generation);
			continue;
		}
		it.env = env;
		it.generation = h[i].generation;
		if (!(e = cfa_gen_dir(g->ctx, env, h[i].generation, &dir)))
			take(g, it, dir, NULL, &e);
		cfa_free(dir);
	}
	cfapkg_history_free(h, n);
	return e;
}

static uint64_t manifest_bytes(struct cfapkg_ctx *ctx, const char *store)
{
	char *path = cfa_aprintf("%s/.cfapkg/manifest.json", store);
	cJSON *doc = NULL, *f, *size;
	uint64_t total = 0;

	/* Only a count for the report: an unread manifest counts nothing. */
	if (!path || cfa_json_read_file(ctx, path, CFAPKG_E_IO, &doc) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(ctx);
		cfa_free(path);
		return 0;
	}
	cfa_free(path);
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "files"))
	{
		size = cJSON_GetObjectItemCaseSensitive(f, "size");
		/* A manifest is cfapkg's own, but a cast out of range is undefined. */
		if (cJSON_IsNumber(size) && size->valuedouble >= 0 && size->valuedouble < 1.8e19)
			total += (uint64_t)size->valuedouble;
	}
	cJSON_Delete(doc);
	return total;
}

struct sweep {
	struct gc_state *g;
	const char *dir;
	time_t now;
	enum cfapkg_err err;
};

static bool ends_in(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

static uint64_t size_of(const char *path)
{
	long long size = cfa_plat_file_size(path);
	return size > 0 ? (uint64_t)size : 0;
}

static bool stale(const struct sweep *s, const char *path)
{
	long long written = cfa_plat_file_mtime(path);
	/* A part whose time cannot be read is never stale: it is kept rather
	 * than guessed at. */
	return written >= 0 && (long long)s->now - written > PART_MAX_AGE_SECONDS;
}

/* NAME.part with its NAME.part.meta, or a .meta whose part is gone. */
static void sweep_part(struct sweep *s, const char *name, const char *path)
{
	struct cfapkg_gc_item it = {CFAPKG_GC_PART, NULL, 0, name, 0, false};
	bool part = ends_in(name, ".part");
	char *other;

	if (part && !stale(s, path))
		return;
	other = part ? cfa_aprintf("%s.meta", path)
	             : cfa_strndup(path, strlen(path) - strlen(".meta"));
	if (!other) {
		s->err = cfa_nomem(s->g->ctx);
		return;
	}
	it.bytes = size_of(path) + (part ? size_of(other) : 0);
	/* A part goes with its .meta once it is old; a lone .meta, which no
	 * resume can use, goes only once it is old too. */
	if (part)
		take(s->g, it, path, other, &s->err);
	else if (!cfa_plat_is_file(other) && stale(s, path))
		take(s->g, it, path, NULL, &s->err);
	cfa_free(other);
}

/* s->dir/name, or NULL with s->err set. */
static char *sweep_path(struct sweep *s, const char *name)
{
	char *path = cfa_aprintf("%s/%s", s->dir, name);

	if (!path)
		s->err = cfa_nomem(s->g->ctx);
	return path;
}

static int sweep_download(const char *name, void *arg)
{
	struct sweep *s = arg;
	struct cfapkg_gc_item it = {CFAPKG_GC_DOWNLOAD, NULL, 0, name, 0, false};
	char sha[65] = "", *path;
	bool archive = cfa_cache_name_sha(name, sha); /* SHA, or SHA~BOOT (cachefile.c) */

	if (name[0] == '.' || kept(&s->g->keep, archive ? sha : name) || s->err ||
	    !(path = sweep_path(s, name)))
		return 0;
	/* Parts go by age, archives unless kept or added by the user; any
	 * other name is not cfapkg's to remove, and stays. */
	if (ends_in(name, ".part") || ends_in(name, ".part.meta")) {
		sweep_part(s, name, path);
	} else if (archive && !cfa_user_file_pinned(s->g->ctx, sha) &&
	           cfa_plat_file_size(path) >= 0) { /* an archive; user files stay */
		it.bytes = size_of(path);
		it.unpacked = kept(&s->g->unpacked, sha);
		take(s->g, it, path, NULL, &s->err);
	}
	cfa_free(path);
	return 0;
}

static int sweep_store(const char *name, void *arg)
{
	struct sweep *s = arg;
	struct cfapkg_gc_item it = {CFAPKG_GC_STORE, NULL, 0, name, 0, false};
	char *path;

	/* Hidden names are staging and set-aside folders: recovery's to
	 * finish, never gc's to take. */
	if (name[0] == '.' || kept(&s->g->keep, name) || s->err || !(path = sweep_path(s, name)))
		return 0;
	if (cfa_plat_is_dir(path)) {
		it.bytes = manifest_bytes(s->g->ctx, path);
		take(s->g, it, path, NULL, &s->err);
	}
	cfa_free(path);
	return 0;
}

/* ROOT/apt/lookups: a lookup stays while its index is pinned by a recipe
 * or stays in the download cache after this gc (either may serve the
 * next install), and only in the form this cfapkg reads; anything else
 * there is no lookup of use. */
static int sweep_lookup(const char *name, void *arg)
{
	struct sweep *s = arg;
	struct cfapkg_gc_item it = {CFAPKG_GC_LOOKUP, NULL, 0, name, 0, false};
	char sha[65] = "", *path, *index;
	bool named = cfa_apt_lookup_name(name, sha), keep;

	if (name[0] == '.' || s->err || !(path = sweep_path(s, name)))
		return 0;
	index = named ? cfa_root_path(s->g->ctx, CFA_DOWNLOADS, sha) : NULL;
	keep = named && cfa_apt_lookup_current(path, sha) &&
	       (cfa_apt_index_pinned(s->g->ctx, sha) ||
	        (index && cfa_plat_is_file(index) &&
	         (kept(&s->g->keep, sha) || cfa_user_file_pinned(s->g->ctx, sha))));
	if (!keep && cfa_plat_is_file(path)) {
		it.bytes = size_of(path);
		take(s->g, it, path, NULL, &s->err);
	}
	cfa_free(index);
	cfa_free(path);
	return 0;
}

struct in_use {
	const char *hex;            /* the name's hash part */
	bool used;
};

static bool hash_of(const char *source, const char *hex)
{
	char got[65];

	cfa_recipe_cache_hash(&source, 1, got);
	return strcmp(got, hex) == 0;
}

/* Whether the folder, or its GPU table, is what the name's hash stands for. */
static enum cfapkg_err folder_in_use(struct cfapkg_ctx *ctx, const char *dir, const char *origin,
                                     void *arg)
{
	struct in_use *u = arg;
	char *gpus;

	(void)origin;
	if (!dir || u->used)
		return CFAPKG_E_OK;
	if (!(gpus = cfa_aprintf("%s/%s", dir, CFA_GPUS_FILE)))
		return cfa_nomem(ctx);
	u->used = hash_of(dir, u->hex) || hash_of(gpus, u->hex);
	cfa_free(gpus);
	return CFAPKG_E_OK;
}

/* Whether the hash is that of an accepted channel index of the root (its
 * recipes' and GPU table's images). */
static enum cfapkg_err channel_in_use(struct cfapkg_ctx *ctx, const char *hex, bool *used)
{
	char **names = NULL, *label;
	size_t n = 0, i;
	enum cfapkg_err e = cfa_channel_names(ctx, &names, &n);

	for (i = 0; i < n && !e && !*used; i++) {
		if ((label = cfa_channel_file(ctx, names[i], "index.signed")))
			*used = hash_of(label, hex);
		else
			e = ctx->err_code;
		cfa_free(label);
	}
	cfa_strv_free(names, n);
	return e;
}

/* Whether the cache file name (in ROOT/cache/recipes) belongs to a folder,
 * GPU table or channel this command reads, or is the record of requests
 * reached or of plans solved. */
static enum cfapkg_err cache_in_use(struct cfapkg_ctx *ctx, const char *name, bool *used)
{
	char hex[65];
	struct in_use u = {hex, false};
	const char *dot = strchr(name, '.');
	enum cfapkg_err e = CFAPKG_E_OK;

	*used = strcmp(name, "reached") == 0 || strcmp(name, "planned") == 0;
	/* "KEY.solv", "KEY.img", "KEY.gpus"; a ".tmp" or ".part" after is a
	 * write in progress or cut short: gc goes by its age. */
	if (*used || !dot || dot == name || dot - name > 64 || strchr(dot + 1, '.'))
		return CFAPKG_E_OK;
	memcpy(hex, name, (size_t)(dot - name));
	hex[dot - name] = '\0';
	e = cfa_recipe_folders(ctx, folder_in_use, &u);
	*used = u.used;
	if (!e && !*used)
		e = channel_in_use(ctx, hex, used);
	return e;
}

/* ROOT/cache/recipes: the caches of the folders and GPU tables this
 * command reads stay (another --recipes folder's cache is only made again
 * when next used); a half-written one goes once a day old, as a part. */
static int sweep_recipe_cache(const char *name, void *arg)
{
	struct sweep *s = arg;
	struct cfapkg_gc_item it = {CFAPKG_GC_RECIPE_CACHE, NULL, 0, name, 0, false};
	bool used = true, partial = ends_in(name, ".tmp") || ends_in(name, ".part");
	char *path;

	if (name[0] == '.' || s->err || !(path = sweep_path(s, name)))
		return 0;
	if (!partial)
		s->err = cache_in_use(s->g->ctx, name, &used);
	if (!s->err && cfa_plat_is_file(path) && (partial ? stale(s, path) : !used)) {
		it.bytes = size_of(path);
		take(s->g, it, path, NULL, &s->err);
	}
	cfa_free(path);
	return 0;
}

static bool keep_archives_set(void)
{
	char buf[8];
	const char *v = cfa_plat_getenv("CFAPKG_KEEP_ARCHIVES", buf, sizeof(buf));

	/* Any value but empty or "0" asks for the archives to be kept. */
	return v && *v && strcmp(v, "0") != 0;
}

/* Sweeps one of the root's folders (or the folder sub in it) with fn. */
static enum cfapkg_err sweep_place(struct sweep *s, enum cfa_place place, const char *sub,
                                   int (*fn)(const char *name, void *arg))
{
	char *dir = cfa_root_path(s->g->ctx, place, sub);

	if (!dir)
		return s->g->ctx->err_code;
	s->dir = dir;
	cfa_plat_list_dir(dir, fn, s);
	s->dir = NULL;
	cfa_free(dir);
	return s->err;
}

void cfapkg_gc_result_free(struct cfapkg_gc_result *r)
{
	size_t i;

	for (i = 0; r && i < r->nitems; i++) {
		cfa_free((void *)r->items[i].env);
		cfa_free((void *)r->items[i].name);
	}
	if (r) {
		cfa_free(r->items);
		r->items = NULL;
		r->nitems = 0;
	}
}

enum cfapkg_err cfapkg_gc_run(struct cfapkg_ctx *ctx, const struct cfapkg_gc_opts *o,
                              struct cfapkg_gc_result *out)
{
	struct gc_state g = {ctx, {0}, {0}, keep_archives_set(), o->dry_run, 0, out};
	struct sweep s = {&g, NULL, time(NULL), CFAPKG_E_OK};
	unsigned keep = o->downloads_only ? 0 : o->keep; /* 0 keeps every generation */
	char **envs = NULL;
	size_t n, i;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if ((e = cfapkg_recipes_load(ctx)) || (e = cfapkg_env_list(ctx, &envs, &n)))
		return e;
	/* Every environment is read before anything is swept: what is kept is
	 * only known once all the kept generations have been read. */
	for (i = 0; i < n && !e; i++)
		e = gc_env(&g, envs[i], keep);
	cfa_free(envs);
	if (!e && !o->downloads_only)
		e = sweep_place(&s, CFA_STORE, NULL, sweep_store);
	if (!e)
		e = sweep_place(&s, CFA_DOWNLOADS, NULL, sweep_download);
	if (!e)
		e = sweep_place(&s, CFA_APT, "lookups", sweep_lookup);
	if (!e && !o->downloads_only)
		e = sweep_place(&s, CFA_CACHE, "recipes", sweep_recipe_cache);
	keep_fini(&g.keep);
	keep_fini(&g.unpacked);
	return e;
}

/* The older entry point reports totals only: the list of items is freed and out
 * keeps its counts. */
enum cfapkg_err cfapkg_gc(struct cfapkg_ctx *ctx, unsigned keep, struct cfapkg_gc_result *out)
{
	struct cfapkg_gc_opts o = {keep, false, false};
	enum cfapkg_err e = cfapkg_gc_run(ctx, &o, out);

	cfapkg_gc_result_free(out);
	return e;
}
