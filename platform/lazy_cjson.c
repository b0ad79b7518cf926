/*
 * lazy_cjson.c - cJSON's functions that cfapkg calls, bound on first use
 * (lazylib.h): a warm plan, rollback or list reads its recipes and GPU
 * table from their images, so it starts without mapping the library.
 * Each is defined with cJSON's own declaration, so a mismatch with the
 * header fails the build.  Three are special: the allocation hooks set
 * before the load are kept and handed on once it is in, and freeing
 * nothing loads nothing.
 */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "platform/lazylib.h"

#define J cJSON
#define CJ const cJSON
#define CS const char *const
#define B cJSON_bool
/* X(return type, name, parameters, arguments) */
#define CJSON_FUNCS(X)                                                                   \
	X(J *, cJSON_AddArrayToObject, (J *const o, CS n), (o, n))                       \
	X(J *, cJSON_AddBoolToObject, (J *const o, CS n, const B b), (o, n, b))          \
	X(B, cJSON_AddItemToArray, (J *a, J *i), (a, i))                                 \
	X(B, cJSON_AddItemToObject, (J *o, const char *s, J *i), (o, s, i))              \
	X(J *, cJSON_AddNullToObject, (J *const o, CS n), (o, n))                        \
	X(J *, cJSON_AddNumberToObject, (J *const o, CS n, const double d), (o, n, d))   \
	X(J *, cJSON_AddObjectToObject, (J *const o, CS n), (o, n))                      \
	X(J *, cJSON_AddStringToObject, (J *const o, CS n, CS s), (o, n, s))             \
	X(B, cJSON_Compare, (CJ *const a, CJ *const b, const B cs), (a, b, cs))          \
	X(J *, cJSON_CreateArray, (void), ())                                            \
	X(J *, cJSON_CreateBool, (B b), (b))                                             \
	X(J *, cJSON_CreateNull, (void), ())                                             \
	X(J *, cJSON_CreateNumber, (double d), (d))                                      \
	X(J *, cJSON_CreateObject, (void), ())                                           \
	X(J *, cJSON_CreateString, (const char *s), (s))                                 \
	X(J *, cJSON_CreateStringArray, (const char *const *s, int n), (s, n))           \
	X(void, cJSON_DeleteItemFromObjectCaseSensitive, (J *o, const char *s), (o, s))  \
	X(J *, cJSON_DetachItemViaPointer, (J *p, J *const i), (p, i))                   \
	X(J *, cJSON_Duplicate, (CJ *i, B r), (i, r))                                    \
	X(J *, cJSON_GetArrayItem, (CJ *a, int i), (a, i))                               \
	X(int, cJSON_GetArraySize, (CJ *a), (a))                                         \
	X(J *, cJSON_GetObjectItem, (CJ *const o, CS s), (o, s))                         \
	X(J *, cJSON_GetObjectItemCaseSensitive, (CJ *const o, CS s), (o, s))            \
	X(B, cJSON_HasObjectItem, (CJ *o, const char *s), (o, s))                        \
	X(B, cJSON_InsertItemInArray, (J *a, int w, J *i), (a, w, i))                    \
	X(B, cJSON_IsArray, (CJ *const i), (i))                                          \
	X(B, cJSON_IsBool, (CJ *const i), (i))                                           \
	X(B, cJSON_IsNull, (CJ *const i), (i))                                           \
	X(B, cJSON_IsNumber, (CJ *const i), (i))                                         \
	X(B, cJSON_IsObject, (CJ *const i), (i))                                         \
	X(B, cJSON_IsString, (CJ *const i), (i))                                         \
	X(B, cJSON_IsTrue, (CJ *const i), (i))                                           \
	X(J *, cJSON_Parse, (const char *v), (v))                                        \
	X(J *, cJSON_ParseWithLength, (const char *v, size_t n), (v, n))                 \
	X(J *, cJSON_ParseWithLengthOpts, (const char *v, size_t n, const char **end,    \
	                                   B nul), (v, n, end, nul))                     \
	X(char *, cJSON_Print, (CJ *i), (i))                                             \
	X(char *, cJSON_PrintUnformatted, (CJ *i), (i))                                  \
	X(char *, cJSON_SetValuestring, (J *o, const char *v), (o, v))                   \
	X(const char *, cJSON_Version, (void), ())
/* Defined by hand below, bound with the rest. */
#define CJSON_OWN(X)                                                                     \
	X(void, cJSON_Delete, (J *i), (i))                                               \
	X(void, cJSON_free, (void *p), (p))                                              \
	X(void, cJSON_InitHooks, (cJSON_Hooks *h), (h))

enum { CJSON_FUNCS(CFA_LAZY_ID) CJSON_OWN(CFA_LAZY_ID) F_COUNT };
static const char *const names[] = {CJSON_FUNCS(CFA_LAZY_NAME) CJSON_OWN(CFA_LAZY_NAME) NULL};

/* The hooks asked for so far (none: cJSON's own malloc and free). */
static cJSON_Hooks hooks_wanted;
static bool hooks_set;
static atomic_bool loaded;

static void hand_hooks(void);

#ifndef CFA_SONAME_CJSON
#define CFA_SONAME_CJSON "libcjson.so.1"
#endif
CFA_LAZYLIB_THEN(CFA_SONAME_CJSON, names, F_COUNT, hand_hooks)

CJSON_FUNCS(CFA_LAZY_DEFINE)

/* Run once the library is bound, before any of its other functions. */
static void hand_hooks(void)
{
	((void (*)(cJSON_Hooks *))lazy_fns[F_cJSON_InitHooks])(hooks_set ? &hooks_wanted : NULL);
	atomic_store(&loaded, true);
}

void cJSON_InitHooks(cJSON_Hooks *h)
{
	/* Called at start, before any thread: the hooks are kept for the
	 * load, or handed on at once when the library is in already. */
	hooks_set = h != NULL;
	if (h)
		hooks_wanted = *h;
	if (atomic_load(&loaded))
		((void (*)(cJSON_Hooks *))lazy_fn(F_cJSON_InitHooks))(h);
}

void cJSON_Delete(cJSON *item)
{
	if (item)
		((void (*)(cJSON *))lazy_fn(F_cJSON_Delete))(item);
}

void cJSON_free(void *p)
{
	if (p)
		((void (*)(void *))lazy_fn(F_cJSON_free))(p);
}
