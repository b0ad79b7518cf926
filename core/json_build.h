/*
 * json_build.h - building JSON documents with checked steps.  Every
 * cJSON_Create and cJSON_Add can fail for want of memory; checking each one
 * by hand buries the document's shape, so the steps here share one sticky
 * flag (like struct cfa_buf's failed) that the builder looks at once, at the
 * end:
 *
 *     struct cfa_json_build jb = {false};
 *     cJSON *o = cfa_json_new_object(&jb);
 *     cfa_json_add_string(&jb, o, "name", name);
 *     o = cfa_json_finish(&jb, o);      NULL: nothing may be written
 *
 * After a failure every later step does nothing, and a NULL parent (from a
 * failed step) is harmless.  Items handed over are owned by the document,
 * or deleted when they cannot be added, so nothing leaks either way.
 */
#ifndef CFA_JSON_BUILD_H
#define CFA_JSON_BUILD_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "core/compat.h"

struct cfa_json_build {
	bool failed;  /* sticky: some step ran out of memory */
};

cJSON *cfa_json_new_object(struct cfa_json_build *jb);
cJSON *cfa_json_new_array(struct cfa_json_build *jb);
/* A new empty object or array as obj[key]; NULL after a failure. */
cJSON *cfa_json_add_object(struct cfa_json_build *jb, cJSON *obj, const char *key);
cJSON *cfa_json_add_array(struct cfa_json_build *jb, cJSON *obj, const char *key);
/* A NULL value leaves the key out, as an optional member. */
void cfa_json_add_string(struct cfa_json_build *jb, cJSON *obj, const char *key,
                         const char *value);
void cfa_json_add_number(struct cfa_json_build *jb, cJSON *obj, const char *key, double value);
void cfa_json_add_bool(struct cfa_json_build *jb, cJSON *obj, const char *key, bool value);
/* Takes item (NULL marks a failure: the builder that made it failed). */
void cfa_json_add_item(struct cfa_json_build *jb, cJSON *obj, const char *key, cJSON *item);
/* The same, replacing any member named key (set_string with a NULL value
 * only removes it). */
void cfa_json_set_item(struct cfa_json_build *jb, cJSON *obj, const char *key, cJSON *item);
void cfa_json_set_string(struct cfa_json_build *jb, cJSON *obj, const char *key,
                         const char *value);
void cfa_json_set_number(struct cfa_json_build *jb, cJSON *obj, const char *key, double value);
/* Array elements; append takes item like add_item. */
void cfa_json_append(struct cfa_json_build *jb, cJSON *arr, cJSON *item);
void cfa_json_append_string(struct cfa_json_build *jb, cJSON *arr, const char *value);
void cfa_json_append_number(struct cfa_json_build *jb, cJSON *arr, double value);

/* doc when every step worked; otherwise deletes doc and returns NULL, so a
 * half-built document is never written or printed as if complete.  The
 * caller reports NULL as CFAPKG_E_NOMEM (cfa_nomem). */
cJSON *cfa_json_finish(struct cfa_json_build *jb, cJSON *doc) CFA_MUST_USE;

#endif
