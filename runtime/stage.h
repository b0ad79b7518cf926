/*
 * stage.h - the runtime room's staging records, shared by staging beside
 * a program (stage.c) and into a Python environment (venv_stage.c).
 */
#ifndef CFA_STAGE_H
#define CFA_STAGE_H

#include <cjson/cJSON.h>

#include "core/ctx.h"
#include "core/json_build.h"

#define CFA_STAGE_RECORD ".cfapkg-staged.json"
#define CFA_STAGE_SAVED ".cfapkg-saved"

/* The record in dir, or *doc NULL when there is none that reads. */
enum cfapkg_err cfa_stage_record_read(struct cfapkg_ctx *ctx, const char *dir, cJSON **doc);
/* doc (a new one when NULL) with its "files" list and rt's environment
 * and generation; a failed step marks jb. */
cJSON *cfa_stage_record_start(struct cfa_json_build *jb, cJSON *doc,
                              const struct cfapkg_runtime *rt);
/* Writes a copy of doc as dir's record (doc stays the caller's). */
enum cfapkg_err cfa_stage_record_write(struct cfapkg_ctx *ctx, const char *dir,
                                       struct cfa_json_build *jb, const cJSON *doc);
/* The record's entry for name, or NULL. */
cJSON *cfa_stage_entry(const cJSON *doc, const char *name);
/* Whether the file at path hashes to hex (false when it cannot be read). */
bool cfa_stage_same_hash(struct cfapkg_ctx *ctx, const char *path, const char *hex);
/* A venv's record: its names may hold folders. */
bool cfa_stage_nested(const cJSON *doc);
/* What becomes of a staged file that changed since it was staged, when a
 * saved copy of what was there before is kept too: refused (beside a
 * program both may be the user's), written over (a venv whose torch is
 * the one staged into: the saved copy is its wheel's file), or kept in
 * the saved copy's place (another torch was installed since: the changed
 * file is the new wheel's). */
enum cfa_stage_changed { CFA_CHANGED_REFUSE, CFA_CHANGED_REPLACE, CFA_CHANGED_KEEP };
/* Places one file as dir/s->as: recorded first (its hash, and the name
 * a file already there that cfapkg did not place is kept under), then
 * that file set aside, then the copy.  *entry: its record entry. */
enum cfapkg_err cfa_stage_file(struct cfapkg_ctx *ctx, const char *dir, struct cfa_json_build *jb,
                               cJSON *doc, const struct cfapkg_stage_file *s,
                               enum cfa_stage_changed changed, cJSON **entry);
/* Undoes one entry: the placed file goes (unless changed since: fn hears
 * of it), a saved one comes back.  *count grows by the files removed. */
enum cfapkg_err cfa_unstage_entry(struct cfapkg_ctx *ctx, const char *dir, const cJSON *e,
                                  bool nested, void (*fn)(void *, const char *), void *arg,
                                  size_t *count);
/* venv_stage.c: drops dir from the root's list of staged venvs; the
 * list's file for a venv folder (absolute, no trailing separator):
 * ROOT/venvs/ID.json, ID a hash of the path. */
void cfa_venv_forget(struct cfapkg_ctx *ctx, const char *dir);
enum cfapkg_err cfa_venv_list_entry(struct cfapkg_ctx *ctx, const char *root, char **out);

#endif
