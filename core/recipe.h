/*
 * recipe.h - the recipe parser's internal interface.  docs/recipes.md is
 * the format's reference; tests/unit/test_docs checks the two agree on keys.
 */
#ifndef CFA_RECIPE_H
#define CFA_RECIPE_H

#include "core/json.h"

#define CFA_RECIPE_FORMAT 1

/* Key lists, shared with the docs check. */
extern const char *const cfa_recipe_keys[];
extern const char *const cfa_version_keys[];
extern const char *const cfa_source_keys[];
extern const char *const cfa_artifact_keys[];
extern const char *const cfa_apt_keys[];
extern const char *const cfa_apt_signed_by_keys[];
extern const char *const cfa_deb_pin_keys[];
extern const char *const cfa_upstream_keys[];

enum cfapkg_err cfa_recipe_parse(struct cfapkg_ctx *ctx, const char *file,
                                 struct cfapkg_recipe **out);
/* The same for a recipe already parsed as JSON (a channel index holds
 * them); file names it in errors and must end in NAME.json. */
enum cfapkg_err cfa_recipe_parse_json(struct cfapkg_ctx *ctx, const char *file,
                                      const cJSON *root, struct cfapkg_recipe **out);

/* Field parsers (recipe_fields.c); each reads key of the version object. */
enum cfapkg_err cfa_parse_deps(struct cfa_jr *jr, const cJSON *ver, const char *key,
                               bool provides, const struct cfapkg_dep **out, size_t *n);
enum cfapkg_err cfa_parse_sources(struct cfa_jr *jr, const cJSON *ver,
                                  struct cfapkg_version *v);
/* One platform's source (recipe_source.c); s->platform is set. */
enum cfapkg_err cfa_parse_source(struct cfa_jr *jr, const cJSON *o, struct cfapkg_source *s);
/* One archive of a set into elem (a struct cfapkg_artifact): a cfa_jr_array
 * item reader, shared with the lockfile's "artifacts". */
enum cfapkg_err cfa_parse_artifact(struct cfa_jr *jr, const cJSON *o, void *elem, void *arg);
enum cfapkg_err cfa_parse_status(struct cfa_jr *jr, const cJSON *ver, struct cfapkg_version *v);
enum cfapkg_err cfa_parse_layout(struct cfa_jr *jr, const cJSON *ver, struct cfapkg_version *v);
enum cfapkg_err cfa_parse_runtime(struct cfa_jr *jr, const cJSON *ver, struct cfapkg_version *v);
enum cfapkg_err cfa_parse_user_files(struct cfa_jr *jr, const cJSON *ver,
                                     struct cfapkg_version *v);
enum cfapkg_err cfa_parse_machine_lists(struct cfa_jr *jr, const cJSON *obj,
                                        const char *const **os, size_t *nos,
                                        const char *const **gfx, size_t *ngfx);

/* Facts as an object ({"os", "arch", "gpu", "driver", "hip_runtimes",
 * "hip_sdks"}) read over f, and written back (facts.c).  The parse takes
 * gpu as a target as written (a lockfile's), not looked up. */
enum cfapkg_err cfa_facts_parse(struct cfa_jr *jr, const cJSON *obj, struct cfapkg_facts *f);
/* NULL when out of memory: never a part of the facts. */
cJSON *cfa_facts_json(const struct cfapkg_facts *f);
/* Makes one fact not known again, freeing what it held: key is "driver",
 * "hip-runtime" or "hip-sdk" (cfapkg_facts_set's names). */
void cfa_facts_forget(struct cfapkg_facts *f, const char *key);
/* A relative path that stays inside its folder: no absolute paths, drive
 * letters or "..". */
bool cfa_safe_relative(const char *p);

/* upstream.c: whether a tag pattern (PCRE2) compiles with exactly one
 * group; why not in why. */
bool cfa_tag_pattern_check(const char *pattern, char *why, size_t len);

/* recipe_text.c: the text of a recipe file (file names it in errors)
 * with nv inserted as its first version, formatted like the version whose
 * "version" is newest, whose shape members it copies.  *out: cfa_free. */
enum cfapkg_err cfa_recipe_text_insert(struct cfapkg_ctx *ctx, const char *file, const char *text,
                                       size_t len, const char *newest,
                                       const struct cfapkg_new_version *nv, char **out,
                                       size_t *outlen);

bool cfa_valid_os(const char *s);
bool cfa_valid_arch(const char *s);
bool cfa_valid_gfx(const char *s);
bool cfa_valid_sha256(const char *s);
bool cfa_status_parse(const char *s, enum cfapkg_status *out);
/* A version's own status on gfx (registry.c): what its recipe says,
 * before an experimental GPU target makes every part experimental. */
enum cfapkg_status cfa_version_own_status(const struct cfapkg_version *v, const char *gfx);

#endif
