/*
 * json.h - reading JSON documents with errors that name the file and the
 * JSON path ("recipes/zluda.json: versions[1].sources.windows-x86_64.sha256:
 * expected 64 hex digits").  Strings land in the context's arena.
 */
#ifndef CFA_JSON_H
#define CFA_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/ctx.h"

#define CFA_JSON_FILE_MAX (256u * 1024u * 1024u)

struct cfa_jr {
	struct cfapkg_ctx *ctx;
	struct cfa_arena *arena;
	const char *file;
	enum cfapkg_err code;   /* error code to report: RECIPE, FACTS... */
	char path[512];
	size_t pathlen;
};

/* Reads a whole file (at most CFA_JSON_FILE_MAX bytes) with one
 * allocation of its size plus a terminator; *out: cfa_free. */
enum cfapkg_err cfa_read_file(struct cfapkg_ctx *ctx, const char *file, char **out,
                              size_t *outlen);
/* Reads and parses a whole file; *out is freed with cJSON_Delete. */
enum cfapkg_err cfa_json_read_file(struct cfapkg_ctx *ctx, const char *file,
                                   enum cfapkg_err code, cJSON **out);

/* The whole number (at most max) of member key at the top of the object in
 * text, found without parsing the rest (json_peek.c); false when there is
 * none, or it is not a whole number in range. */
bool cfa_json_peek_uint(const char *text, size_t len, const char *key, uint64_t max,
                        uint64_t *out);

/* Refuses (code, naming label and the field's JSON path) a JSON text that
 * holds a NUL character, escaped or raw: cJSON's C strings would end
 * there, and the text read would be another (json_nul.c). */
enum cfapkg_err cfa_json_refuse_nul(struct cfapkg_ctx *ctx, const char *label, const char *text,
                                    size_t len, enum cfapkg_err code);

/* The strings of array a (other items skipped), NULL-terminated, in one
 * allocation (pointers, then the text) that one cfa_free releases; *n
 * their number.  NULL when out of memory. */
char **cfa_json_strings(const cJSON *a, size_t *n);

void cfa_jr_init(struct cfa_jr *jr, struct cfapkg_ctx *ctx, struct cfa_arena *arena,
                 const char *file, enum cfapkg_err code);
/* Path segments: push returns the length to pop back to. */
size_t cfa_jr_push_key(struct cfa_jr *jr, const char *key);
size_t cfa_jr_push_index(struct cfa_jr *jr, size_t i);
void cfa_jr_pop(struct cfa_jr *jr, size_t mark);
enum cfapkg_err cfa_jr_fail(struct cfa_jr *jr, const char *fmt, ...) CFA_PRINTF(2, 3);

/* Fails on any key of obj not in the NULL-terminated list. */
enum cfapkg_err cfa_jr_keys(struct cfa_jr *jr, const cJSON *obj, const char *const *allowed);
enum cfapkg_err cfa_jr_object(struct cfa_jr *jr, const cJSON *v);
/* Optional members leave *out untouched when absent (or null, for strings). */
enum cfapkg_err cfa_jr_string(struct cfa_jr *jr, const cJSON *obj, const char *key,
                              bool required, const char **out);
enum cfapkg_err cfa_jr_int(struct cfa_jr *jr, const cJSON *obj, const char *key,
                           int64_t min, int64_t max, bool required, int64_t *out);
enum cfapkg_err cfa_jr_bool(struct cfa_jr *jr, const cJSON *obj, const char *key, bool *out);
/* An array of strings into an arena array; absent gives n = 0. */
enum cfapkg_err cfa_jr_strings(struct cfa_jr *jr, const cJSON *obj, const char *key,
                               const char *const **out, size_t *n);

/* Parses obj[key], an array, into an arena array of elements of size elem:
 * fn fills each element (item i at path key[i]).  Absent gives n = 0;
 * nonempty refuses an empty array. */
typedef enum cfapkg_err (*cfa_jr_item_fn)(struct cfa_jr *jr, const cJSON *item, void *elem,
                                          void *arg);
enum cfapkg_err cfa_jr_array(struct cfa_jr *jr, const cJSON *obj, const char *key, size_t elem,
                             bool nonempty, cfa_jr_item_fn fn, void *arg, void **out,
                             size_t *n);
/* The same for obj[key], an object: fn gets each member (path key.name;
 * the member's name is item->string). */
enum cfapkg_err cfa_jr_members(struct cfa_jr *jr, const cJSON *obj, const char *key,
                               size_t elem, cfa_jr_item_fn fn, void *arg, void **out,
                               size_t *n);

#endif
