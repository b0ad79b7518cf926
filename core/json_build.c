/*
 * json_build.c - checked JSON building steps with a sticky failure flag.
 */
#include "core/json_build.h"

/* Marks the build failed when p is NULL; passes p through. */
static cJSON *check(struct cfa_json_build *jb, cJSON *p)
{
	if (!p)
		jb->failed = true;
	return p;
}

/* Once a step has failed every later one does nothing, so a document is built
 * with no checks between steps and judged once, by cfa_json_finish. */
cJSON *cfa_json_new_object(struct cfa_json_build *jb)
{
	return jb->failed ? NULL : check(jb, cJSON_CreateObject());
}

cJSON *cfa_json_new_array(struct cfa_json_build *jb)
{
	return jb->failed ? NULL : check(jb, cJSON_CreateArray());
}

void cfa_json_add_item(struct cfa_json_build *jb, cJSON *obj, const char *key, cJSON *item)
{
	/* cJSON leaves an item it could not attach with the caller. */
	if (jb->failed || !obj || !item || !cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		jb->failed = true;
	}
}

void cfa_json_append(struct cfa_json_build *jb, cJSON *arr, cJSON *item)
{
	/* As above: an item not attached would leak, so it is deleted
	 * here. */
	if (jb->failed || !arr || !item || !cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		jb->failed = true;
	}
}

cJSON *cfa_json_add_object(struct cfa_json_build *jb, cJSON *obj, const char *key)
{
	cJSON *o = cfa_json_new_object(jb);

	cfa_json_add_item(jb, obj, key, o);
	/* Not o after a failure: it may have been deleted by
	 * cfa_json_add_item. */
	return jb->failed ? NULL : o;
}

cJSON *cfa_json_add_array(struct cfa_json_build *jb, cJSON *obj, const char *key)
{
	cJSON *a = cfa_json_new_array(jb);

	cfa_json_add_item(jb, obj, key, a);
	return jb->failed ? NULL : a;
}

void cfa_json_add_string(struct cfa_json_build *jb, cJSON *obj, const char *key,
                         const char *value)
{
	/* A NULL value adds nothing: callers pass NULL for a member the
	 * document should not have. */
	if (value && !jb->failed)
		cfa_json_add_item(jb, obj, key, check(jb, cJSON_CreateString(value)));
}

void cfa_json_add_number(struct cfa_json_build *jb, cJSON *obj, const char *key, double value)
{
	if (!jb->failed)
		cfa_json_add_item(jb, obj, key, check(jb, cJSON_CreateNumber(value)));
}

void cfa_json_add_bool(struct cfa_json_build *jb, cJSON *obj, const char *key, bool value)
{
	if (!jb->failed)
		cfa_json_add_item(jb, obj, key, check(jb, cJSON_CreateBool(value)));
}

void cfa_json_set_item(struct cfa_json_build *jb, cJSON *obj, const char *key, cJSON *item)
{
	/* cJSON would add a second member of the same name: set replaces it
	 * instead. */
	if (!jb->failed && obj)
		cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cfa_json_add_item(jb, obj, key, item);
}

void cfa_json_set_string(struct cfa_json_build *jb, cJSON *obj, const char *key,
                         const char *value)
{
	if (jb->failed)
		return;
	if (value)
		cfa_json_set_item(jb, obj, key, check(jb, cJSON_CreateString(value)));
	/* Setting NULL removes the member, matching add_string's NULL, which
	 * adds none. */
	else if (obj)
		cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
}

void cfa_json_set_number(struct cfa_json_build *jb, cJSON *obj, const char *key, double value)
{
	if (!jb->failed)
		cfa_json_set_item(jb, obj, key, check(jb, cJSON_CreateNumber(value)));
}

void cfa_json_append_string(struct cfa_json_build *jb, cJSON *arr, const char *value)
{
	if (!jb->failed)
		cfa_json_append(jb, arr, check(jb, cJSON_CreateString(value)));
}

void cfa_json_append_number(struct cfa_json_build *jb, cJSON *arr, double value)
{
	if (!jb->failed)
		cfa_json_append(jb, arr, check(jb, cJSON_CreateNumber(value)));
}

/* The document, or NULL with it deleted when any step failed; either way the
 * caller owns what is returned. */
cJSON *cfa_json_finish(struct cfa_json_build *jb, cJSON *doc)
{
	if (!jb->failed)
		return doc;
	cJSON_Delete(doc);
	return NULL;
}
