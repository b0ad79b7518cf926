/*
 * fuzz_json.c - the JSON reader (core/json.c) on arbitrary bytes: the file
 * is read and parsed, then every member is read back through each typed
 * helper (string, int, bool, string array, nested arrays and objects).
 * Properties: a refusal names the file (and line:column for bad JSON);
 * the error path stays terminated, within its buffer, and returns to
 * where it was after each helper; an accepted integer is within bounds.
 */
#include <string.h>

#include "core/json.h"
#include "tests/fuzz/fuzz.h"

static char input[1024];

static void check_path(const struct cfa_jr *jr, size_t before)
{
	FUZZ_CHECK(jr->pathlen < sizeof(jr->path) && strlen(jr->path) == jr->pathlen,
	           "path length %zu", jr->pathlen);
	FUZZ_CHECK(jr->pathlen == before, "path left at %zu, was %zu", jr->pathlen, before);
}

/* A helper's refusal is expected here (members of every type are asked
 * for every type): only its message is checked, then forgotten. */
static void forget(struct cfa_jr *jr, enum cfapkg_err e)
{
	if (!e)
		return;
	FUZZ_CHECK(cfapkg_ctx_error(jr->ctx)[0] && strstr(cfapkg_ctx_error(jr->ctx), input),
	           "error without the file: %s", cfapkg_ctx_error(jr->ctx));
	cfapkg_ctx_clear_error(jr->ctx);
}

static void walk(struct cfa_jr *jr, const cJSON *v);

static enum cfapkg_err walk_child(struct cfa_jr *jr, const cJSON *item, void *elem, void *arg)
{
	(void)elem;
	(void)arg;
	walk(jr, item);
	return CFAPKG_E_OK;
}

static void read_member(struct cfa_jr *jr, const cJSON *obj, const char *key)
{
	size_t before = jr->pathlen, n = 0;
	const char *const *strings = NULL;
	const char *s = NULL;
	int64_t i = 0;
	bool b = false;
	void *arr = NULL;

	forget(jr, cfa_jr_string(jr, obj, key, false, &s));
	check_path(jr, before);
	forget(jr, cfa_jr_string(jr, obj, key, true, &s));
	check_path(jr, before);
	if (!cfa_jr_int(jr, obj, key, -1000, 1000, false, &i))
		FUZZ_CHECK(i >= -1000 && i <= 1000, "int %lld out of bounds", (long long)i);
	cfapkg_ctx_clear_error(jr->ctx);
	check_path(jr, before);
	forget(jr, cfa_jr_bool(jr, obj, key, &b));
	forget(jr, cfa_jr_strings(jr, obj, key, &strings, &n));
	check_path(jr, before);
	forget(jr, cfa_jr_array(jr, obj, key, 1, true, walk_child, NULL, &arr, &n));
	check_path(jr, before);
	forget(jr, cfa_jr_members(jr, obj, key, 1, walk_child, NULL, &arr, &n));
	check_path(jr, before);
}

static void walk(struct cfa_jr *jr, const cJSON *v)
{
	static const char *const none[] = {NULL};
	const cJSON *m;

	if (!cJSON_IsObject(v))
		return;
	forget(jr, cfa_jr_keys(jr, v, none));
	cJSON_ArrayForEach(m, v)
		read_member(jr, v, m->string);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_path(input, sizeof(input), "input.json");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfa_arena arena;
	struct cfa_jr jr;
	cJSON *root = NULL;
	enum cfapkg_err e;

	fuzz_write(input, data, size);
	e = cfa_json_read_file(ctx, input, CFAPKG_E_RECIPE, &root);
	if (e) {
		FUZZ_CHECK(e == CFAPKG_E_RECIPE && strstr(cfapkg_ctx_error(ctx), input) &&
		               strstr(cfapkg_ctx_error(ctx), "not valid JSON"),
		           "a parse error names the file and place: %s", cfapkg_ctx_error(ctx));
	} else {
		cfa_arena_init(&arena);
		cfa_jr_init(&jr, ctx, &arena, input, CFAPKG_E_RECIPE);
		walk(&jr, root);
		cJSON_Delete(root);
		cfa_arena_fini(&arena);
	}
	cfapkg_ctx_free(ctx);
	return 0;
}
