/*
 * stage.c - placing an environment's DLLs beside a program (Windows loads
 * a program's own folder first) and undoing it exactly.  DIR/.cfapkg-
 * staged.json lists each file placed, its SHA-256 and the name a user's
 * own file of that name was saved under; it is written before each file
 * is touched, so an interrupted staging can still be undone.  A Python
 * environment's record (venv_stage.c) sits in the venv's folder and names
 * files below it ("lib/python3.12/site-packages/torch/lib/..."); any
 * other record names files of its own folder only.
 */
#include <string.h>

#include "core/json_build.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "core/recipe.h"
#include "platform/platform.h"
#include "runtime/stage.h"

#define RECORD CFA_STAGE_RECORD
#define SAVED CFA_STAGE_SAVED

enum cfapkg_err cfa_stage_record_read(struct cfapkg_ctx *ctx, const char *dir, cJSON **doc)
{
	char *path = NULL;
	enum cfapkg_err e = cfa_path(ctx, &path, "%s/%s", dir, RECORD);

	*doc = NULL;
	if (!e && cfa_plat_is_file(path) &&
	    cfa_json_read_file(ctx, path, CFAPKG_E_IO, doc) != CFAPKG_E_OK) {
		*doc = NULL;
		cfapkg_ctx_clear_error(ctx); /* an unreadable record is no record */
	}
	if (*doc && !cJSON_IsObject(*doc)) {
		cJSON_Delete(*doc); /* nor is one of another shape */
		*doc = NULL;
	}
	cfa_free(path);
	return e;
}

/* A record whose build failed is never written. */
enum cfapkg_err cfa_stage_record_write(struct cfapkg_ctx *ctx, const char *dir,
                                       struct cfa_json_build *jb, const cJSON *doc)
{
	char *path = NULL;
	enum cfapkg_err e;

	if (jb->failed)
		return cfa_nomem(ctx);
	/* A copy is written because cfa_write_json consumes what it is given,
	 * and the caller goes on adding to doc. */
	if (!(e = cfa_path(ctx, &path, "%s/%s", dir, RECORD)))
		e = cfa_write_json(ctx, path, cJSON_Duplicate(doc, 1)); /* NULL: out of memory */
	cfa_free(path);
	return e;
}

static cJSON *entry_named(const cJSON *files, const char *name)
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

cJSON *cfa_stage_entry(const cJSON *doc, const char *name)
{
	return entry_named(cJSON_GetObjectItemCaseSensitive(doc, "files"), name);
}

/* A venv's record has a "venv" member: its names are paths below the venv, and
 * only the venv's own rules may undo it. */
bool cfa_stage_nested(const cJSON *doc)
{
	return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "venv"));
}

/* A file that cannot be read is never taken for the one staged, so it is never
 * removed or written over as if it were ours. */
bool cfa_stage_same_hash(struct cfapkg_ctx *ctx, const char *path, const char *hex)
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

/* A file placed in dir and the name a user's own file of that name is
 * kept under: dir/NAME and dir/NAME.cfapkg-saved (cfa_free both). */
static enum cfapkg_err placed_paths(struct cfapkg_ctx *ctx, const char *dir, const char *name,
                                    char **dst, char **save)
{
	enum cfapkg_err e;

	*save = NULL;
	if ((e = cfa_path(ctx, dst, "%s/%s", dir, name)) ||
	    (e = cfa_path(ctx, save, "%s/%s%s", dir, name, SAVED)))
		CFA_FREE(*dst);
	return e;
}

/* Records one file in doc: its hash, and the saved name when a user's
 * file is there to keep aside.  *ours: the file there is the one staged,
 * or one to be written over (changed: what to do with a staged file that
 * changed since while a saved copy is there). */
static enum cfapkg_err record_one(struct cfapkg_ctx *ctx, struct cfa_json_build *jb, cJSON *doc,
                                  const char *dir, const struct cfapkg_stage_file *s,
                                  const char *dst, const char *save, const char *hex,
                                  enum cfa_stage_changed changed, bool *ours, cJSON **entry)
{
	cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "files"), *e;

	*ours = false;
	/* A name the record already lists is ours while it still holds what was
	 * staged, or is gone; anything else there now is a user's. */
	if ((e = entry_named(files, s->as)))
		*ours = cfa_stage_same_hash(ctx, dst, entry_str(e, "sha256")) || !cfa_plat_is_file(dst);
	if (!e) {
		e = cfa_json_new_object(jb);
		cfa_json_add_string(jb, e, "name", s->as);
		cfa_json_append(jb, files, e);
	}
	cfa_json_set_string(jb, e, "sha256", hex);
	/* Through the environment's stable path when it has one. */
	cfa_json_set_string(jb, e, "from", s->from);
	/* A user's file is there and a saved original too: setting this one
	 * aside would write over the original, so the caller's rule decides. */
	if (!*ours && cfa_plat_is_file(dst) && cfa_plat_is_file(save)) {
		if (changed == CFA_CHANGED_REFUSE)
			return cfa_fail(ctx, CFAPKG_E_IO, "%s: a saved copy of it is already there "
			                "(%s); run 'cfapkg unstage %s' first", dst, save, dir);
		*ours = changed == CFA_CHANGED_REPLACE;
	}
	if (!*ours && cfa_plat_is_file(dst))
		cfa_json_set_string(jb, e, "saved", s->as);
	*entry = e;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_stage_file(struct cfapkg_ctx *ctx, const char *dir, struct cfa_json_build *jb,
                               cJSON *doc, const struct cfapkg_stage_file *s,
                               enum cfa_stage_changed changed, cJSON **entry)
{
	char *dst = NULL, *save = NULL, hex[65];
	bool ours = false;
	enum cfapkg_err err;

	*entry = NULL;
	if ((err = cfapkg_sha256_file(ctx, s->from, hex, NULL)) ||
	    (err = placed_paths(ctx, dir, s->as, &dst, &save)) ||
	    (err = record_one(ctx, jb, doc, dir, s, dst, save, hex, changed, &ours, entry)) ||
	    (err = cfa_stage_record_write(ctx, dir, jb, doc)))
		goto out;
	/* The record naming this file is on disk already: a kill from here on
	 * leaves something unstage can undo. */
	cfa_crash_point();
	if (!ours && cfa_plat_is_file(dst) && cfa_plat_rename(dst, save) != 0) {
		err = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot set it aside (is the program running?)",
		               dst);
		goto out;
	}
	cfa_plat_remove(dst);
	if (cfa_plat_copy_file(s->from, dst) != 0)
		err = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot copy it to %s", s->from, dst);
	else /* the store's file is read-only; this copy is the folder's: pip or an
	        uninstaller must be able to replace it (Windows refuses a read-only one) */
		cfa_plat_set_mode(dst, 0755);
out:
	cfa_free(dst);
	cfa_free(save);
	return err;
}

cJSON *cfa_stage_record_start(struct cfa_json_build *jb, cJSON *doc,
                              const struct cfapkg_runtime *rt)
{
	if (!doc) {
		doc = cfa_json_new_object(jb);
		cfa_json_add_number(jb, doc, "format", 1);
	}
	/* An existing record is added to, not replaced: staging again must
	 * still remember the user's files that the first staging set aside. */
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "files")))
		cfa_json_set_item(jb, doc, "files", cfa_json_new_array(jb));
	cfa_json_set_string(jb, doc, "env", rt->env_name);
	cfa_json_set_number(jb, doc, "generation", rt->generation);
	return doc;
}

enum cfapkg_err cfapkg_stage(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                             const char *dir, size_t *count)
{
	struct cfa_json_build jb = {false};
	cJSON *doc = NULL, *entry;
	enum cfapkg_err e;
	size_t i;

	*count = 0;
	if (!cfa_plat_is_dir(dir))
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s: no such folder", dir);
	if ((e = cfa_stage_record_read(ctx, dir, &doc)))
		return e;
	if (cfa_stage_nested(doc)) {
		cJSON_Delete(doc);
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s is a Python environment cfapkg staged into: "
		                "use 'cfapkg stage --venv %s'", dir, dir);
	}
	doc = cfa_stage_record_start(&jb, doc, rt);
	for (i = 0; i < rt->nstage && !e; i++)
		if (!(e = cfa_stage_file(ctx, dir, &jb, doc, &rt->stage[i], CFA_CHANGED_REFUSE, &entry)))
			(*count)++;
	if (!e && jb.failed)
		e = cfa_nomem(ctx); /* nothing to stage, and the record could not be built */
	cJSON_Delete(doc);
	return e;
}

/* One recorded file: ours goes, a saved one comes back.  A name that could
 * leave dir (a record edited by hand) is passed over. */
enum cfapkg_err cfa_unstage_entry(struct cfapkg_ctx *ctx, const char *dir, const cJSON *e,
                                  bool nested, void (*fn)(void *, const char *), void *arg,
                                  size_t *count)
{
	const char *name = entry_str(e, "name"), *saved = entry_str(e, "saved");
	char *dst = NULL, *save = NULL, *note = NULL;
	bool kept;
	enum cfapkg_err err;

	/* A plain record names files of dir itself, so any separator or drive
	 * colon is refused; a venv's names may go down into the venv, never out
	 * of it. */
	if (!name || !name[0] || (nested ? !cfa_safe_relative(name) : strpbrk(name, "/\\:") != NULL))
		return CFAPKG_E_OK;
	if ((err = placed_paths(ctx, dir, name, &dst, &save)))
		return err;
	kept = saved && cfa_plat_is_file(save);
	/* A file changed since it was staged is someone's work (an upgrade, a
	 * fix by hand): it is left and the user told, never deleted. */
	if (cfa_plat_is_file(dst) && !cfa_stage_same_hash(ctx, dst, entry_str(e, "sha256"))) {
		err = cfa_path(ctx, &note, "%s changed since it was staged: left as it is%s%s", dst,
		               kept ? "; your original is " : "", kept ? save : "");
	} else {
		cfa_plat_remove(dst);
		if (kept && cfa_plat_rename(save, dst) != 0)
			err = cfa_path(ctx, &note, "%s: cannot put it back as %s", save, dst);
		(*count)++;
	}
	if (note && fn)
		fn(arg, note);
	cfa_free(note);
	cfa_free(dst);
	cfa_free(save);
	return err;
}

enum cfapkg_err cfapkg_unstage(struct cfapkg_ctx *ctx, const char *dir,
                               void (*fn)(void *arg, const char *note), void *arg,
                               size_t *count)
{
	cJSON *doc = NULL;
	const cJSON *e;
	char *path = NULL;
	bool nested;
	enum cfapkg_err err;

	*count = 0;
	if ((err = cfa_stage_record_read(ctx, dir, &doc)))
		return err;
	if (!doc)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s: cfapkg staged nothing here (no %s)", dir,
		                RECORD);
	nested = cfa_stage_nested(doc);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "files"))
		if ((err = cfa_unstage_entry(ctx, dir, e, nested, fn, arg, count)))
			break;
	cJSON_Delete(doc);
	/* The record goes only once every file it lists was dealt with. */
	if (!err && !(err = cfa_path(ctx, &path, "%s/%s", dir, RECORD)))
		cfa_plat_remove(path);
	if (!err && nested)
		cfa_venv_forget(ctx, dir);
	cfa_free(path);
	return err;
}
