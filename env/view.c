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
	char made[CFA_PATH_MAX];  /* the last folder created, to skip mkdir calls */
};

enum cfapkg_err cfa_store_dir(struct cfapkg_ctx *ctx, const struct cfapkg_locked *p, char *buf,
                              size_t len)
{
	return cfa_root_path_buf(ctx, CFA_STORE, p->store, buf, len);
}

static enum cfapkg_err parent_dir(struct linker *k, const char *path)
{
	char dir[CFA_PATH_MAX];
	char *slash;
	int rc;

	cfa_snprintf(dir, sizeof(dir), "%s", path);
	if (!(slash = strrchr(dir, '/')))
		return CFAPKG_E_OK;
	*slash = '\0';
	if (strcmp(dir, k->made) == 0)
		return CFAPKG_E_OK;
	if ((rc = cfa_plat_mkdir_p(dir)) != 0)
		return cfa_fail(k->ctx, CFAPKG_E_IO, "%s: cannot create the folder: %s", dir,
		                cfa_plat_strerror(rc));
	memcpy(k->made, dir, sizeof(dir));
	return CFAPKG_E_OK;
}

static enum cfapkg_err note_copy(struct linker *k, const char *to)
{
	size_t n = strlen(k->view);
	cJSON *item;

	k->r->copies++;
	if (strncmp(to, k->view, n) != 0 || to[n] != '/')
		return CFAPKG_E_OK; /* not under the view: nothing verify looks at */
	if (!(item = cJSON_CreateString(to + n + 1)) || !cJSON_AddItemToArray(k->copies, item)) {
		cJSON_Delete(item);
		return cfa_nomem(k->ctx);
	}
	return CFAPKG_E_OK;
}

static enum cfapkg_err link_one(struct linker *k, const char *from, const char *to)
{
	enum cfapkg_err e = parent_dir(k, to);
	int rc;

	if (e)
		return e;
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

static enum cfapkg_err link_manifest(struct linker *k, const struct cfapkg_locked *p,
                                     const char *store, const char *view)
{
	char path[CFA_PATH_MAX], from[CFA_PATH_MAX], to[CFA_PATH_MAX];
	cJSON *doc = NULL, *files, *f;
	enum cfapkg_err e;

	cfa_snprintf(path, sizeof(path), "%s/.cfapkg/manifest.json", store);
	if (!cfa_plat_is_file(path))
		return cfa_fail(k->ctx, CFAPKG_E_INTEGRITY, "%s %s: %s is missing from the store; "
		                "run 'cfapkg install' again to unpack it", p->name, p->version, store);
	if ((e = cfa_json_read_file(k->ctx, path, CFAPKG_E_INTEGRITY, &doc)))
		return e;
	files = cJSON_GetObjectItemCaseSensitive(doc, "files");
	cJSON_ArrayForEach(f, files)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "path");
		if (!cJSON_IsString(name) || !cfa_safe_relative(name->valuestring)) {
			e = cfa_fail(k->ctx, CFAPKG_E_INTEGRITY, "%s: a file entry is not a path "
			             "inside the package", path);
			break;
		}
		cfa_snprintf(from, sizeof(from), "%s/%s", store, name->valuestring);
		cfa_snprintf(to, sizeof(to), "%s/%s", view, name->valuestring);
		if ((e = link_one(k, from, to)))
			break;
	}
	cJSON_Delete(doc);
	return e;
}

/* What the part promises: its layout names, launcher and PATH folders. */
static enum cfapkg_err check_part(struct cfapkg_ctx *ctx, const struct cfapkg_locked *p,
                                  const char *view, const char *os)
{
	char path[CFA_PATH_MAX];
	size_t i;

	for (i = 0; i < p->nlayout; i++) {
		cfa_snprintf(path, sizeof(path), "%s/%s", view, p->layout[i].as);
		if (!cfa_plat_is_file(path))
			return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s %s promises %s (from %s), which "
			                "is not in its archive", p->name, p->version, p->layout[i].as,
			                p->layout[i].path);
	}
	if (p->launcher && strcmp(os, "windows") == 0) {
		cfa_snprintf(path, sizeof(path), "%s/%s", view, p->launcher);
		if (!cfa_plat_is_file(path))
			return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s %s promises the launcher %s, "
			                "which is not in its archive", p->name, p->version, p->launcher);
	}
	for (i = 0; i < p->npath; i++) {
		cfa_snprintf(path, sizeof(path), "%s/%s", view, p->path[i]);
		if (!cfa_plat_is_dir(path))
			return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s %s promises the folder %s, which "
			                "is not in its archive", p->name, p->version, p->path[i]);
	}
	return CFAPKG_E_OK;
}

static enum cfapkg_err build_part(struct linker *k, const struct cfapkg_locked *p,
                                  const char *gendir)
{
	char store[CFA_PATH_MAX], view[CFA_PATH_MAX], from[CFA_PATH_MAX], to[CFA_PATH_MAX];
	enum cfapkg_err e;
	size_t i;

	if ((e = cfa_store_dir(k->ctx, p, store, sizeof(store))))
		return e;
	cfa_snprintf(view, sizeof(view), "%s/view/%s", gendir, p->name);
	if (cfa_plat_mkdir_p(view) != 0)
		return cfa_fail(k->ctx, CFAPKG_E_IO, "%s: cannot create the folder", view);
	if ((e = link_manifest(k, p, store, view)))
		return e;
	for (i = 0; i < p->nlayout; i++) {
		cfa_snprintf(from, sizeof(from), "%s/%s", store, p->layout[i].path);
		cfa_snprintf(to, sizeof(to), "%s/%s", view, p->layout[i].as);
		if (cfa_plat_is_file(from) && (e = link_one(k, from, to)))
			return e;
	}
	return check_part(k->ctx, p, view, k->os);
}

/* A user part: the files the user added (cfapkg add-file), by hash. */
static enum cfapkg_err build_user_part(struct linker *k, const struct cfapkg_locked *p,
                                       const char *gendir)
{
	char from[CFA_PATH_MAX], to[CFA_PATH_MAX];
	enum cfapkg_err e;
	size_t i;

	for (i = 0; i < p->nuser_files; i++) {
		const struct cfapkg_user_file *f = &p->user_files[i];
		if ((e = cfa_root_path_buf(k->ctx, CFA_DOWNLOADS, f->sha256, from, sizeof(from))))
			return e;
		cfa_snprintf(to, sizeof(to), "%s/view/%s/%s", gendir, p->name, f->name);
		if (!cfa_plat_is_file(from))
			return cfa_fail(k->ctx, CFAPKG_E_INTEGRITY, "%s of %s %s is not in the cache: "
			                "add your copy with 'cfapkg add-file %s'", f->name, p->name,
			                p->version, f->name);
		if ((e = link_one(k, from, to)))
			return e;
	}
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_view_build(struct cfapkg_ctx *ctx, const struct cfapkg_lock *lock,
                               const char *gendir, struct cfapkg_commit_result *r)
{
	char view[CFA_PATH_MAX], path[CFA_PATH_MAX];
	struct linker k = {ctx, r, lock->facts.os, view, cJSON_CreateArray(), ""};
	enum cfapkg_err e = k.copies ? CFAPKG_E_OK : cfa_nomem(ctx);
	size_t i;

	cfa_snprintf(view, sizeof(view), "%s/view", gendir);
	if (!e && cfa_plat_mkdir_p(view) != 0)
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create the folder", view);
	for (i = 0; i < lock->nparts && !e; i++) {
		const struct cfapkg_locked *p = &lock->parts[i];
		if (p->kind == CFAPKG_KIND_PACKAGE)
			e = build_part(&k, p, gendir);
		else if (p->kind == CFAPKG_KIND_USER)
			e = build_user_part(&k, p, gendir);
	}
	if (e || cJSON_GetArraySize(k.copies) == 0) {
		cJSON_Delete(k.copies);
		return e;
	}
	cfa_snprintf(path, sizeof(path), "%s/" CFA_VIEW_COPIES, gendir);
	return cfa_write_json(ctx, path, k.copies);
}
