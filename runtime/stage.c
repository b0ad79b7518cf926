/*
 * stage.c - placing an environment's DLLs beside a program (Windows loads
 * a program's own folder first) and undoing it exactly.  DIR/.cfapkg-
 * staged.json lists each file placed, its SHA-256 and the name a user's
 * own file of that name was saved under; it is written before each file
 * is touched, so an interrupted staging can still be undone.
 */
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

#define RECORD ".cfapkg-staged.json"
#define SAVED ".cfapkg-saved"

static cJSON *read_record(struct cfapkg_ctx *ctx, const char *dir)
{
	char path[CFA_PATH_MAX];
	cJSON *doc = NULL;

	cfa_snprintf(path, sizeof(path), "%s/%s", dir, RECORD);
	if (!cfa_plat_is_file(path))
		return NULL;
	if (cfa_json_read_file(ctx, path, CFAPKG_E_IO, &doc) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(ctx);
		return NULL;
	}
	return doc;
}

static enum cfapkg_err write_record(struct cfapkg_ctx *ctx, const char *dir, const cJSON *doc)
{
	char path[CFA_PATH_MAX];

	cfa_snprintf(path, sizeof(path), "%s/%s", dir, RECORD);
	return cfa_write_json(ctx, path, cJSON_Duplicate(doc, 1));
}

static cJSON *entry_named(cJSON *files, const char *name)
{
	cJSON *f;

	cJSON_ArrayForEach(f, files)
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(f, "name");
		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return f;
	}
	return NULL;
}

static bool same_hash(struct cfapkg_ctx *ctx, const char *path, const char *hex)
{
	char got[65];

	if (!hex || cfapkg_sha256_file(ctx, path, got, NULL) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(ctx);
		return false;
	}
	return strcmp(got, hex) == 0;
}

static const char *entry_str(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* One file: record it, keep a user's file aside, copy ours in. */
static enum cfapkg_err stage_one(struct cfapkg_ctx *ctx, const char *dir, cJSON *doc,
                                 const struct cfapkg_stage_file *s)
{
	cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "files"), *e;
	char dst[CFA_PATH_MAX], save[CFA_PATH_MAX], hex[65];
	bool ours = false;
	enum cfapkg_err err;

	if ((err = cfapkg_sha256_file(ctx, s->from, hex, NULL)))
		return err;
	cfa_snprintf(dst, sizeof(dst), "%s/%s", dir, s->as);
	cfa_snprintf(save, sizeof(save), "%s/%s%s", dir, s->as, SAVED);
	if ((e = entry_named(files, s->as)))
		ours = same_hash(ctx, dst, entry_str(e, "sha256")) || !cfa_plat_is_file(dst);
	if (!e) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", s->as);
		cJSON_AddItemToArray(files, e);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(e, "sha256");
	cJSON_AddStringToObject(e, "sha256", hex);
	if (!ours && cfa_plat_is_file(dst)) {
		if (cfa_plat_is_file(save))
			return cfa_fail(ctx, CFAPKG_E_IO, "%s: a saved copy of it is already there "
			                "(%s); run 'cfapkg unstage %s' first", dst, save, dir);
		cJSON_DeleteItemFromObjectCaseSensitive(e, "saved");
		cJSON_AddStringToObject(e, "saved", s->as);
	}
	if ((err = write_record(ctx, dir, doc)))
		return err;
	cfa_crash_point();
	if (!ours && cfa_plat_is_file(dst) && cfa_plat_rename(dst, save) != 0)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot set it aside (is the program "
		                "running?)", dst);
	cfa_plat_remove(dst);
	if (cfa_plat_copy_file(s->from, dst) != 0)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot copy it to %s", s->from, dst);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_stage(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                             const char *dir, size_t *count)
{
	cJSON *doc = read_record(ctx, dir);
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	*count = 0;
	if (!cfa_plat_is_dir(dir))
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s: no such folder", dir);
	if (!doc) {
		doc = cJSON_CreateObject();
		cJSON_AddNumberToObject(doc, "format", 1);
		cJSON_AddItemToObject(doc, "files", cJSON_CreateArray());
	}
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "env");
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "generation");
	cJSON_AddStringToObject(doc, "env", rt->env_name);
	cJSON_AddNumberToObject(doc, "generation", rt->generation);
	for (i = 0; i < rt->nstage && !e; i++)
		if (!(e = stage_one(ctx, dir, doc, &rt->stage[i])))
			(*count)++;
	cJSON_Delete(doc);
	return e;
}

/* One recorded file: ours goes, a saved one comes back. */
static void unstage_one(struct cfapkg_ctx *ctx, const char *dir, const cJSON *e,
                        void (*fn)(void *, const char *), void *arg, size_t *count)
{
	const char *name = entry_str(e, "name"), *saved = entry_str(e, "saved");
	char dst[CFA_PATH_MAX], save[CFA_PATH_MAX], note[2 * CFA_PATH_MAX + 128];

	if (!name || strpbrk(name, "/\\:"))
		return;
	cfa_snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	cfa_snprintf(save, sizeof(save), "%s/%s%s", dir, name, SAVED);
	if (cfa_plat_is_file(dst) && !same_hash(ctx, dst, entry_str(e, "sha256"))) {
		cfa_snprintf(note, sizeof(note), "%s changed since it was staged: left as it is%s%s",
		             dst, saved && cfa_plat_is_file(save) ? "; your original is " : "",
		             saved && cfa_plat_is_file(save) ? save : "");
		if (fn)
			fn(arg, note);
		return;
	}
	cfa_plat_remove(dst);
	if (saved && cfa_plat_is_file(save) && cfa_plat_rename(save, dst) != 0 && fn) {
		cfa_snprintf(note, sizeof(note), "%s: cannot put it back as %s", save, dst);
		fn(arg, note);
	}
	(*count)++;
}

enum cfapkg_err cfapkg_unstage(struct cfapkg_ctx *ctx, const char *dir,
                               void (*fn)(void *arg, const char *note), void *arg,
                               size_t *count)
{
	cJSON *doc = read_record(ctx, dir);
	const cJSON *e;
	char path[CFA_PATH_MAX];

	*count = 0;
	if (!doc)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s: cfapkg staged nothing here (no %s)", dir,
		                RECORD);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "files"))
		unstage_one(ctx, dir, e, fn, arg, count);
	cJSON_Delete(doc);
	cfa_snprintf(path, sizeof(path), "%s/%s", dir, RECORD);
	cfa_plat_remove(path);
	return CFAPKG_E_OK;
}
