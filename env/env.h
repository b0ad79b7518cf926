/*
 * env.h - the environment room's internal interface: where environments
 * and generations live, how files are replaced safely, and the pieces a
 * generation is built from (lock, view, runtime config).
 */
#ifndef CFA_ENV_H
#define CFA_ENV_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/ctx.h"
#include "core/json.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/utc.h"
#include "core/atomic_file.h"

/* ROOT/envs/ENV (the name is checked first). */
enum cfapkg_err cfa_env_dir(struct cfapkg_ctx *ctx, const char *env, char **out);
/* ROOT/envs/ENV/N. */
enum cfapkg_err cfa_gen_dir(struct cfapkg_ctx *ctx, const char *env, unsigned gen, char **out);
/* verify.c: why the generation at gendir cannot be run as written (its
 * runtime.json does not read), in *why (cfa_free); NULL when it can.  Only
 * a want of memory fails. */
enum cfapkg_err cfa_gen_records_check(struct cfapkg_ctx *ctx, const char *gendir, char **why);
/* ROOT/envs/ENV/N/what (gen 0: the current one, an error when there is
 * none). */
enum cfapkg_err cfa_gen_file(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                             const char *what, char **out);
/* generation.c: the generation folders of envdir, by number, in *list
 * (cfa_free; NULL and 0 when there are none). */
enum cfapkg_err cfa_env_generations(struct cfapkg_ctx *ctx, const char *envdir, unsigned **list,
                                    size_t *n);
/* generation.c: cfapkg_env_switch from prev, the generation the caller
 * read as current under the writer lock; newest: the newest generation
 * folder where the caller has listed them (0: listed here). */
enum cfapkg_err cfa_env_switch_from(struct cfapkg_ctx *ctx, const char *env, unsigned prev,
                                    unsigned newest, unsigned gen, const char *command);
/* ROOT/trash: what is being removed goes here first, in one rename, so a
 * removal that is cut short never leaves a half-removed thing in place. */
enum cfapkg_err cfa_trash(struct cfapkg_ctx *ctx, const char *path);
/* Creates a folder and its parents; the error names it and why. */
enum cfapkg_err cfa_make_dir(struct cfapkg_ctx *ctx, const char *path);
/* path opened for reading into *f; *f NULL when there is no such file
 * (another failure, such as a path too long for the system, is an error
 * naming it: never read as "not there"). */
enum cfapkg_err cfa_open_if_there(struct cfapkg_ctx *ctx, const char *path, FILE **f);
/* The number envdir/current holds in *gen: 0 with *torn false when there
 * is no such file (nothing installed), 0 with *torn true when it holds no
 * generation number (damage, or a power cut after an unflushed switch:
 * cfa_env_make_current). */
enum cfapkg_err cfa_env_read_current(struct cfapkg_ctx *ctx, const char *envdir, unsigned *gen,
                                     bool *torn);
/* One line of f into line, without its end; false at the end of the file.
 * *whole: the line ended with a newline (a kill mid-write leaves a last
 * line without one).  line->failed: out of memory. */
bool cfa_read_line(FILE *f, struct cfa_buf *line, bool *whole);



/* lockfile.c: NULL when out of memory. */
cJSON *cfa_lock_json(const struct cfapkg_lockfile *lock);
/* An empty lock with its arena; NULL when out of memory. */
struct cfapkg_lockfile *cfa_lock_new(void);

/* lockimage.c: a generation's lock.json kept beside it as lock.img, so
 * that reading the set parses no JSON.  Write: the image of the JSON at
 * path as it reads back (only a want of memory fails; else there is just
 * no image).  Read: the lock from the image when it was made for the JSON
 * as it is now; *out NULL otherwise (the caller reads the JSON). */
enum cfapkg_err cfa_lock_image_save(struct cfapkg_ctx *ctx, const char *path, const char *image);
enum cfapkg_err cfa_lock_image_load(struct cfapkg_ctx *ctx, const char *path, const char *image,
                                    struct cfapkg_lockfile **out);
/* The recipe version a part came from, if the recipes still have it with the
 * same kind; NULL otherwise. */
const struct cfapkg_version *cfa_part_recipe_version(const struct cfapkg_ctx *ctx,
                                                    const struct cfapkg_lockfile_part *p);

/* marks.c: appends line (text, one line) or o (consumed, as JSON) to
 * path, flushed to the disk when flush; what names the record in an error
 * ("the switch"). */
enum cfapkg_err cfa_append_text(struct cfapkg_ctx *ctx, const char *path, const char *line,
                                const char *what, bool flush);
enum cfapkg_err cfa_append_line(struct cfapkg_ctx *ctx, const char *path, cJSON *o,
                                const char *what, bool flush);
/* Records in a generation's folder that its static checks passed. */
enum cfapkg_err cfa_write_checked(struct cfapkg_ctx *ctx, const char *gendir);
/* A generation's marks, oldest first (none when it has no marks.log),
 * packed with their text (cfa_marks_pack).  The caller frees *out with
 * cfa_free. */
enum cfapkg_err cfa_marks_read(struct cfapkg_ctx *ctx, const char *gendir, unsigned gen,
                               struct cfapkg_gen_mark **out, size_t *n);
/* n marks copied into one allocation that holds their text too, so that
 * a list of them is freed as one; NULL when out of memory. */
struct cfapkg_gen_mark *cfa_marks_pack(const struct cfapkg_gen_mark *m, size_t n);
enum cfapkg_err cfa_gen_state_of(struct cfapkg_ctx *ctx, const char *gendir,
                                 const struct cfapkg_gen_mark *marks, size_t n,
                                 enum cfapkg_gen_state *out);

/* view.c: links every file of the lock's packages (and their layout
 * names) under dir/view/PART, then checks what the parts promise.  The
 * entries that had to be copies are listed in dir/copies.json. */
#define CFA_VIEW_COPIES "copies.json"
/* loadcheck.c: the load check of a generation at gendir, its view built
 * (cfapkg_load_check's, on the lock's runtime folders). */
enum cfapkg_err cfa_load_check_gen(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                   const char *gendir, cfapkg_load_issue_fn fn, void *arg,
                                   size_t *missing, size_t *host);
enum cfapkg_err cfa_view_build(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                               const char *gendir, struct cfapkg_commit_result *r);
/* The store folder of a part (ROOT/store/NAME). */
enum cfapkg_err cfa_store_dir(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p, char **out);
/* viewlink.c: hard-links store/PATH as view/PATH for each of n paths
 * (as the manifest lists them, folder by folder) from a few threads;
 * done[i] says which were linked, the rest are the caller's to link one by
 * one.  Returns how many were linked. */
size_t cfa_view_link_many(const char *store, const char *view, const char *const *paths,
                          size_t n, bool *done);

/* active.c and envs.c: ROOT/envs/ENV/current and ROOT/envs/ENV/active,
 * the stable path to the current generation.  make_current (active.c)
 * points both at generation gen, made durable by one flush of envdir (a
 * file system without folder links leaves no link: not an error); relink
 * makes the two records agree again (recovery).  envs.c reads the link:
 * its path (cfa_free; NULL when out of memory), linked the generation it
 * names (0: none), linked_whole the same when that generation's lock.json
 * is there.  program_dir is the folder programs are given for generation
 * gen: the stable path when it names gen and gen is current, else
 * ROOT/envs/ENV/N (*stable says which). */
#define CFA_ENV_ACTIVE "active"
enum cfapkg_err cfa_env_make_current(struct cfapkg_ctx *ctx, const char *envdir, unsigned gen);
/* gendir/number, "N\n": what make_current links as 'current' (written
 * into the generation before its flush). */
#define CFA_GEN_NUMBER "number"
enum cfapkg_err cfa_env_write_number(struct cfapkg_ctx *ctx, const char *gendir, unsigned gen);
void cfa_env_relink(struct cfapkg_ctx *ctx, const char *envdir);
char *cfa_env_link_path(const char *envdir);
unsigned cfa_env_linked(const char *envdir);
unsigned cfa_env_linked_whole(const char *envdir);
enum cfapkg_err cfa_env_program_dir(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                    char **out, bool *stable);

/* runtime.json of a generation being written in gendir.  Package paths
 * are relative to the generation ("view/zluda/..."); a system part's
 * values keep "{prefix}", which is where that part is found on the
 * machine when a program starts.  NULL when out of memory (then nothing
 * may be written). */
cJSON *cfa_runtime_json(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                        const char *gendir);

/* lockset.c: packages of several archives.  set_artifacts copies arts
 * into the lock and derives the part's sha256 (the set's digest), size
 * and store folder; the others write and read a part's "artifacts". */
struct cfa_json_build;
enum cfapkg_err cfa_lock_set_artifacts(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *l,
                                       struct cfapkg_lockfile_part *p,
                                       const struct cfapkg_artifact *arts, size_t n);
void cfa_lock_artifacts_json(struct cfa_json_build *jb, cJSON *o, const struct cfapkg_lockfile_part *p);
enum cfapkg_err cfa_lock_read_artifacts(struct cfa_jr *jr, const cJSON *o,
                                        struct cfapkg_lockfile_part *p);

/* pinned.c: gc's questions.  Whether a loaded recipe expects hex as a
 * user file, or pins it as an APT source's index; whether name is an APT
 * lookup's (SHA-HASH, its index's SHA-256 in sha), and whether the file at
 * path is one this cfapkg wrote for that index. */
bool cfa_user_file_pinned(struct cfapkg_ctx *ctx, const char *hex);
bool cfa_apt_index_pinned(struct cfapkg_ctx *ctx, const char *hex);
bool cfa_apt_lookup_name(const char *name, char sha[65]);
bool cfa_apt_lookup_current(const char *path, const char *sha);

#endif
