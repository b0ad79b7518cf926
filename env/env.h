/*
 * env.h - the environment room's internal interface: where environments
 * and generations live, how files are replaced safely, and the pieces a
 * generation is built from (lock, view, runtime config).
 */
#ifndef CFA_ENV_H
#define CFA_ENV_H

#include <cjson/cJSON.h>

#include "core/ctx.h"
#include "core/json.h"
#include "core/recipe.h"

#define CFA_PATH_MAX 4096

/* ROOT/envs/ENV (the name is checked first). */
enum cfapkg_err cfa_env_dir(struct cfapkg_ctx *ctx, const char *env, char *buf, size_t len);
/* ROOT/envs/ENV/N. */
enum cfapkg_err cfa_gen_dir(struct cfapkg_ctx *ctx, const char *env, unsigned gen, char *buf,
                            size_t len);
/* ROOT/trash: what is being removed goes here first, in one rename, so a
 * removal that is cut short never leaves a half-removed thing in place. */
enum cfapkg_err cfa_trash(struct cfapkg_ctx *ctx, const char *path);

/* Writes path.tmp, flushes it to the disk and renames it over path. */
enum cfapkg_err cfa_write_atomic(struct cfapkg_ctx *ctx, const char *path, const char *data,
                                 size_t len);
/* The same for a JSON document (consumed). */
enum cfapkg_err cfa_write_json(struct cfapkg_ctx *ctx, const char *path, cJSON *doc);

/* The time now, UTC, ISO 8601. */
void cfa_utc_now(char buf[32]);

/* lockfile.c */
cJSON *cfa_lock_json(const struct cfapkg_lock *lock);

/* marks.c: appends o (consumed) as one line to path, flushed to the disk;
 * what names the record in an error ("the switch"). */
enum cfapkg_err cfa_append_line(struct cfapkg_ctx *ctx, const char *path, cJSON *o,
                                const char *what);
/* Records in a generation's folder that its static checks passed. */
enum cfapkg_err cfa_write_checked(struct cfapkg_ctx *ctx, const char *gendir);
/* A generation's marks, oldest first (none when it has no marks.log).
 * The caller frees *out with cfa_free. */
enum cfapkg_err cfa_marks_read(struct cfapkg_ctx *ctx, const char *gendir, unsigned gen,
                               struct cfapkg_gen_mark **out, size_t *n);
enum cfapkg_gen_state cfa_gen_state_of(const char *gendir, const struct cfapkg_gen_mark *marks,
                                       size_t n);

/* view.c: links every file of the lock's packages (and their layout
 * names) under dir/view/PART, then checks what the parts promise.  The
 * entries that had to be copies are listed in dir/copies.json. */
#define CFA_VIEW_COPIES "copies.json"
enum cfapkg_err cfa_view_build(struct cfapkg_ctx *ctx, const struct cfapkg_lock *lock,
                               const char *gendir, struct cfapkg_commit_result *r);
/* The store folder of a part (ROOT/store/NAME). */
enum cfapkg_err cfa_store_dir(struct cfapkg_ctx *ctx, const struct cfapkg_locked *p, char *buf,
                              size_t len);

/* runtime.json of a generation being written in gendir.  Package paths
 * are relative to the generation ("view/zluda/..."); a system part's
 * values keep "{prefix}", which is where that part is found on the
 * machine when a program starts.  NULL when out of memory. */
cJSON *cfa_runtime_json(struct cfapkg_ctx *ctx, const struct cfapkg_lock *lock,
                        const char *gendir);

#endif
