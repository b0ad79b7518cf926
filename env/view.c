/*
 * view.c - a generation's view: view/PART/ mirrors each package's store
 * folder with hard links (one copy of LibTorch on disk however many
 * environments use it), plus the names its layout rules promise.  Where a
 * hard link cannot be made (another file system) a symbolic link stands
 * in, and a copy as the last resort.  The copies are listed in the
 * generation's copies.json (paths under view/): a hard link or a symbolic
 * link is the store's own file, which verify can tell by its identity; a
 * copy is a file of its own, which verify must hash instead.
 */
#include <errno.h>
#include <string.h>

#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

struct linker {
	struct cfapkg_ctx *ctx;
	struct cfapkg_commit_result *r;
	const char *os;           /* the OS the generation is made for */
	const char *view;         /* GEN/view, which copies.json paths are under */
	cJSON *copies;            /* the view entries that had to be copies */
	struct cfa_json_build jb; /* copies' build */
	char *made;               /* the last folder created, to skip mkdir calls */
};

enum cfapkg_err cfa_store_dir(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p, char **out)
{
	*out = cfa_root_path(ctx, CFA_STORE, p->store);
	return *out ? CFAPKG_E_OK : ctx->err_code;
}

/* Creates the folder that is to hold path.  The manifest lists files folder by
 * folder, so the last folder made is remembered and a run of files in one
 * folder costs one mkdir, not one each. */
static enum cfapkg_err parent_dir(struct linker *k, const char *path)
{
	const char *slash = strrchr(path, '/');
	enum cfapkg_err e;
	char *dir;

	if (!slash)
		return CFAPKG_E_OK;
	if (!(dir = cfa_strndup(path, (size_t)(slash - path))))
		return cfa_nomem(k->ctx);
	if (k->made && strcmp(dir, k->made) == 0) {
		cfa_free(dir);
		return CFAPKG_E_OK;
	}
	if ((e = cfa_make_dir(k->ctx, dir))) {
		cfa_free(dir);
		return e;
	}
	cfa_free(k->made);
	k->made = dir;
	return CFAPKG_E_OK;
}

/* A copy is the only entry verify cannot tell by identity, so each one is
 * listed (relative to the view) for verify to hash. */
static enum cfapkg_err note_copy(struct linker *k, const char *to)
{
	size_t n = strlen(k->view);

	k->r->copies++;
	if (strncmp(to, k->view, n) != 0 || to[n] != '/')
		return CFAPKG_E_OK; /* not under the view: nothing verify looks at */
	cfa_json_append_string(&k->jb, k->copies, to + n + 1);
	return k->jb.failed ? cfa_nomem(k->ctx) : CFAPKG_E_OK;
}

/* One file into the view, the cheapest way that works: a hard link shares the
 * store's file, a symbolic link still is the store's file, and a copy, the last
 * resort, costs the space and a hash at each verify. */
static enum cfapkg_err link_one(struct linker *k, const char *from, const char *to)
{
	enum cfapkg_err e = parent_dir(k, to);
	int rc;

	if (e)
		return e;
	/* A crash test may stop the commit here, between two files of the view:
	 * the generation is still under its hidden .new-N name, which recovery
	 * removes. */
	cfa_crash_point();
	rc = cfa_plat_hardlink(from, to);
	if (rc == EEXIST) { /* a layout name may replace a file of the package */
		cfa_plat_remove(to);
		rc = cfa_plat_hardlink(from, to);
	}
	if (rc == 0)
		k->r->hardlinks++;
	else if (cfa_plat_symlink(from, to) == 0)
		k->r->symlinks++;
	else if ((rc = cfa_plat_copy_file(from, to)) == 0)
		return note_copy(k, to);
	else
		return cfa_fail(k->ctx, CFAPKG_E_IO, "%s: cannot link or copy it to %s: %s", from, to,
		                cfa_plat_strerror(rc));
	return CFAPKG_E_OK;
}

/* from_dir/from_rel linked as to_dir/to_rel (only when from is a file, with
 * if_file). */
static enum cfapkg_err link_rel(struct linker *k, const char *from_dir, const char *from_rel,
                                const char *to_dir, const char *to_rel, bool if_file)
{
	char *from = cfa_aprintf("%s/%s", from_dir, from_rel);
	char *to = cfa_aprintf("%s/%s", to_dir, to_rel);
	enum cfapkg_err e = CFAPKG_E_OK;

	if (!from || !to)
		e = cfa_nomem(k->ctx);
	else if (!if_file || cfa_plat_is_file(from))
		e = link_one(k, from, to);
	cfa_free(from);
	cfa_free(to);
	return e;
}

/* Every file of the manifest: the many at once (viewlink.c), then what
 * that left, one by one with the fallbacks. */
static enum cfapkg_err link_files(struct linker *k, const char *store, const char *view,
                                  const cJSON *files, const char *manifest)
{
	size_t n = (size_t)cJSON_GetArraySize(files), i = 0;
	const char **paths = cfa_calloc(n ? n : 1, sizeof(*paths));
	bool *done = cfa_calloc(n ? n : 1, sizeof(*done));
	enum cfapkg_err e = paths && done ? CFAPKG_E_OK : cfa_nomem(k->ctx);
	const cJSON *f;

	cJSON_ArrayForEach(f, files)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "path");
		if (e)
			break;
		if (!cJSON_IsString(name) || !cfa_safe_relative(name->valuestring))
			e = cfa_fail(k->ctx, CFAPKG_E_INTEGRITY, "%s: a file entry is not a path "
			             "inside the package", manifest);
		else
			paths[i++] = name->valuestring;
	}
	if (!e)
		k->r->hardlinks += cfa_view_link_many(store, view, paths, i, done);
	/* Every path was checked before any was linked, so a manifest naming a
	 * path outside the package fails before a single file is linked. */
	for (n = i, i = 0; i < n && !e; i++)
		if (!done[i])
			e = link_rel(k, store, paths[i], view, paths[i], false);
	cfa_free(paths);
	cfa_free(done);
	return e;
}

/* The manifest is the list of a package's files, and it is written last when
 * the package is unpacked: a store folder without one was never completed and
 * must not be linked from. */
static enum cfapkg_err link_manifest(struct linker *k, const struct cfapkg_lockfile_part *p,
                                     const char *store, const char *view)
{
	char *path;
	cJSON *doc = NULL;
	enum cfapkg_err e;

	if (cfa_path(k->ctx, &path, "%s/.cfapkg/manifest.json", store))
		return k->ctx->err_code;
	if (!cfa_plat_is_file(path))
		e = cfa_fail(k->ctx, CFAPKG_E_INTEGRITY, "%s %s: %s is missing from the store; "
		             "run 'cfapkg install' again to unpack it", p->name, p->version, store);
	else
		e = cfa_json_read_file(k->ctx, path, CFAPKG_E_INTEGRITY, &doc);
	if (!e)
		e = link_files(k, store, view, cJSON_GetObjectItemCaseSensitive(doc, "files"), path);
	cJSON_Delete(doc);
	cfa_free(path);
	return e;
}

/* Whether dir/rel is a file (want_dir: a folder); false when out of
 * memory, with the reason in ctx. */
static bool exists_in(struct cfapkg_ctx *ctx, const char *dir, const char *rel, bool want_dir,
                      enum cfapkg_err *e)
{
	char *path = cfa_aprintf("%s/%s", dir, rel);
	bool there = path && (want_dir ? cfa_plat_is_dir(path) : cfa_plat_is_file(path));

	if (!path)
		*e = cfa_nomem(ctx);
	cfa_free(path);
	return there;
}

/* What the part promises: its layout names, launcher and PATH folders. */
static enum cfapkg_err check_part(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p,
                                  const char *view, const char *os)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < p->nlayout; i++)
		if (!exists_in(ctx, view, p->layout[i].as, false, &e))
			return e ? e : cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s %s promises %s (from %s), "
			                        "which is not in its archive", p->name, p->version,
			                        p->layout[i].as, p->layout[i].path);
	/* A launcher is used only on Windows, so only there is a missing one an
	 * error. */
	if (p->launcher && strcmp(os, "windows") == 0 && !exists_in(ctx, view, p->launcher, false, &e))
		return e ? e : cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s %s promises the launcher %s, "
		                        "which is not in its archive", p->name, p->version, p->launcher);
	for (i = 0; i < p->npath; i++)
		if (!exists_in(ctx, view, p->path[i], true, &e))
			return e ? e : cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s %s promises the folder %s, "
			                        "which is not in its archive", p->name, p->version,
			                        p->path[i]);
	return CFAPKG_E_OK;
}

static enum cfapkg_err build_part(struct linker *k, const struct cfapkg_lockfile_part *p,
                                  const char *gendir)
{
	char *store = NULL, *view = NULL;
	enum cfapkg_err e;
	size_t i;

	if ((e = cfa_store_dir(k->ctx, p, &store)) ||
	    (e = cfa_path(k->ctx, &view, "%s/view/%s", gendir, p->name)))
		goto out;
	if ((e = cfa_make_dir(k->ctx, view)) || (e = link_manifest(k, p, store, view)))
		goto out;
	/* Layout names are linked after the package's own files, so that a name
	 * that takes the place of one of them replaces it, not the other way
	 * round. */
	for (i = 0; i < p->nlayout && !e; i++)
		e = link_rel(k, store, p->layout[i].path, view, p->layout[i].as, true);
	/* The promises are checked in the finished view: a recipe whose names
	 * point at nothing fails the commit here, rather than the program that
	 * needs them later. */
	if (!e)
		e = check_part(k->ctx, p, view, k->os);
out:
	cfa_free(store);
	cfa_free(view);
	return e;
}

/* A user part: the files the user added (cfapkg add-file), by hash.  Such files
 * are never unpacked into the store: they are linked straight from the
 * downloads cache, where add-file put them under their hash. */
static enum cfapkg_err build_user_file(struct linker *k, const struct cfapkg_lockfile_part *p,
                                       const struct cfapkg_user_file *f, const char *gendir)
{
	char *from = cfa_root_path(k->ctx, CFA_DOWNLOADS, f->sha256), *to = NULL;
	enum cfapkg_err e;

	if (!from)
		return k->ctx->err_code;
	e = cfa_path(k->ctx, &to, "%s/view/%s/%s", gendir, p->name, f->name);
	if (!e && !cfa_plat_is_file(from))
		e = cfa_fail(k->ctx, CFAPKG_E_INTEGRITY, "%s of %s %s is not in the cache: add your "
		             "copy with 'cfapkg add-file %s'", f->name, p->name, p->version, f->name);
	if (!e)
		e = link_one(k, from, to);
	cfa_free(from);
	cfa_free(to);
	return e;
}

/* The view's copies.json (none when every entry is a link); NULL copies: the
 * list could not be built for want of memory.  A NULL list goes on to
 * cfa_write_json, which reports it as out of memory: copies.json must never be
 * left out when a copy was made, or verify would take the copy for a link and
 * never hash it. */
static enum cfapkg_err write_copies(struct cfapkg_ctx *ctx, const char *gendir, cJSON *copies)
{
	char *path;
	enum cfapkg_err e;

	if (copies && cJSON_GetArraySize(copies) == 0) {
		cJSON_Delete(copies);
		return CFAPKG_E_OK;
	}
	if ((e = cfa_path(ctx, &path, "%s/" CFA_VIEW_COPIES, gendir))) {
		cJSON_Delete(copies);
		return e;
	}
	e = cfa_write_json(ctx, path, copies);
	cfa_free(path);
	return e;
}

enum cfapkg_err cfa_view_build(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                               const char *gendir, struct cfapkg_commit_result *r)
{
	char *view = NULL;
	struct linker k = {ctx, r, lock->facts.os, NULL, NULL, {false}, NULL};
	enum cfapkg_err e = cfa_path(ctx, &view, "%s/view", gendir);
	size_t i, j;

	k.view = view;
	k.copies = cfa_json_new_array(&k.jb);
	if (!e)
		e = cfa_make_dir(ctx, view);
	for (i = 0; i < lock->nparts && !e; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		if (p->kind == CFAPKG_KIND_PACKAGE)
			e = build_part(&k, p, gendir);
		for (j = 0; p->kind == CFAPKG_KIND_USER && j < p->nuser_files && !e; j++)
			e = build_user_file(&k, p, &p->user_files[j], gendir);
	}
	cfa_free(view);
	cfa_free(k.made);
	k.copies = cfa_json_finish(&k.jb, k.copies);
	if (e) {
		cJSON_Delete(k.copies);
		return e;
	}
	return write_copies(ctx, gendir, k.copies);
}
