/*
 * test_doc_alloc.c - a document whose build runs out of memory is no
 * document: the lockfile text and a generation's runtime.json come out
 * whole or not at all (CFAPKG_E_NOMEM, NULL), never with members missing,
 * whichever allocation fails.  cJSON allocates through the library's
 * allocator here, so that every step of a build can be made to fail; the
 * sanitizer build checks that a failed build leaks nothing.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "cfapkg.h"
#include "check.h"
#include "core/mem.h"
#include "env/env.h"

#define MAX_RUNS 5000
#define LOCK_FILE "doc_alloc.lock"

/* A set with what each part of the lockfile format can hold: mirrors,
 * layout names, runtime settings, requires and provides. */
static const char lock_text[] =
	"{\"format\": \"cfapkg-lock\", \"version\": 2,"
	" \"facts\": {\"os\": \"windows\", \"arch\": \"x86_64\", \"gpu\": \"gfx1200\"},"
	" \"requests\": [\"stack\"], \"packages\": ["
	" {\"name\": \"zluda\", \"version\": \"7-preview.10\", \"kind\": \"package\","
	"  \"requested\": false, \"url\": \"https://example.org/zluda.zip\","
	"  \"mirrors\": [\"https://mirror.example.org/zluda.zip\"],"
	"  \"sha256\": \"abababababababababababababababababababababababababababababababab\","
	"  \"size\": 10, \"format\": \"zip\", \"strip\": 0, \"store\": \"zluda-7-preview.10-abababab\","
	"  \"requires\": [], \"provides\": [\"cuda-driver-api\", \"cublas=12\"],"
	"  \"status\": \"candidate\", \"layout\": [{\"path\": \"cublas.dll\", \"as\": \"cublas64_12.dll\"}],"
	"  \"runtime\": {\"path\": [\"bin\"], \"env\": {\"ZLUDA_GFX\": \"{gfx}\"}, \"stage\": [\"*.dll\"]}},"
	" {\"name\": \"stack\", \"version\": \"1\", \"kind\": \"meta\", \"requested\": true,"
	"  \"requires\": [\"zluda>=7-preview.1\"], \"provides\": [], \"status\": \"validated\"}]}";

static void *hook_malloc(size_t n)
{
	return cfa_malloc(n);
}

static void hook_free(void *p)
{
	cfa_free(p);
}

/* The runtime.json text, or NULL when its build failed. */
static char *runtime_text(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock)
{
	cJSON *doc = cfa_runtime_json(ctx, lock, "no-such-generation");
	char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;

	cJSON_Delete(doc);
	return text;
}

/* With the nth allocation failing: the whole text, or none. */
static int lock_once(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock, const char *whole,
                     unsigned long n)
{
	char *text = NULL;
	enum cfapkg_err e;

	cfapkg_debug_fail_alloc(n);
	e = cfapkg_lockfile_text(ctx, lock, &text);
	cfapkg_debug_fail_alloc(0);
	CHECK(e == CFAPKG_E_OK || e == CFAPKG_E_NOMEM, "allocation %lu: error %d", n, e);
	CHECK(e || strcmp(text, whole) == 0, "allocation %lu failed, yet a lockfile came out:\n%s",
	      n, text);
	cfapkg_free(text);
	cfapkg_ctx_clear_error(ctx);
	return e == CFAPKG_E_OK;
}

static int runtime_once(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                        const char *whole, unsigned long n)
{
	char *text;

	cfapkg_debug_fail_alloc(n);
	text = runtime_text(ctx, lock);
	cfapkg_debug_fail_alloc(0);
	CHECK(!text || strcmp(text, whole) == 0, "allocation %lu failed, yet a runtime.json came "
	      "out:\n%s", n, text);
	cJSON_free(text);
	return text != NULL;
}

int main(void)
{
	cJSON_Hooks hooks = {hook_malloc, hook_free};
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_lockfile *lock = NULL;
	char *lock_whole = NULL, *runtime_whole = NULL;
	unsigned long n;
	FILE *f = fopen(LOCK_FILE, "wb");

	CHECK(ctx && f && fputs(lock_text, f) >= 0 && fclose(f) == 0, "cannot write " LOCK_FILE);
	cJSON_InitHooks(&hooks);
	CHECK(cfapkg_lockfile_read(ctx, LOCK_FILE, &lock) == CFAPKG_E_OK, "%s", cfapkg_ctx_error(ctx));
	if (!lock)
		return check_report();
	CHECK(cfapkg_lockfile_text(ctx, lock, &lock_whole) == CFAPKG_E_OK, "no lockfile text");
	CHECK((runtime_whole = runtime_text(ctx, lock)) != NULL, "no runtime.json");
	for (n = 1; n <= MAX_RUNS && lock_whole && !lock_once(ctx, lock, lock_whole, n); n++)
		;
	CHECK(n > 20 && n <= MAX_RUNS, "the lockfile was built again whole (%lu runs)", n);
	for (n = 1; n <= MAX_RUNS && runtime_whole && !runtime_once(ctx, lock, runtime_whole, n); n++)
		;
	CHECK(n > 20 && n <= MAX_RUNS, "runtime.json was built again whole (%lu runs)", n);
	cfapkg_free(lock_whole);
	cJSON_free(runtime_whole);
	cfapkg_lockfile_free(lock);
	cfapkg_ctx_free(ctx);
	remove(LOCK_FILE);
	return check_report();
}
