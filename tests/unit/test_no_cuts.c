/*
 * test_no_cuts.c - text is never cut silently: an error detail longer than
 * the context's buffer is kept whole, display text too long for a fixed
 * field shows its cut, and a JSON document whose build failed is no
 * document at all (rather than one missing members).  The sanitizer build
 * checks that nothing handed to a failed build leaks.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/ctx.h"
#include "core/json.h"
#include "core/json_build.h"
#include "core/mem.h"
#include "core/strbuf.h"

static void long_error_detail(void)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	char *path = cfa_malloc(5001);
	const char *said;

	CHECK(ctx && path, "out of memory");
	if (!ctx || !path)
		return;
	memset(path, 'd', 5000);
	path[0] = '/';
	path[5000] = '\0';
	cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot write: %s", path, "File name too long");
	said = cfapkg_ctx_error(ctx);
	CHECK(strncmp(said, path, 5000) == 0 && strcmp(said + 5000, ": cannot write: File name "
	      "too long") == 0, "the detail lost its end: ...%s", said + strlen(said) - 40);
	cfapkg_ctx_clear_error(ctx);
	CHECK(cfapkg_ctx_error(ctx)[0] == '\0', "a cleared error is empty");
	cfa_fail(ctx, CFAPKG_E_IO, "short");
	CHECK(strcmp(cfapkg_ctx_error(ctx), "short") == 0, "%s", cfapkg_ctx_error(ctx));
	cfa_free(path);
	cfapkg_ctx_free(ctx);
}

/* A JSON path too deep for the reader's buffer shows its cut ("...")
 * rather than naming another place, however deep it goes. */
static void deep_json_path(void)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfa_jr jr;
	char key[200];
	size_t i;

	CHECK(ctx != NULL, "out of memory");
	if (!ctx)
		return;
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	cfa_jr_init(&jr, ctx, &ctx->arena, "deep.json", CFAPKG_E_RECIPE);
	for (i = 0; i < 10; i++) {
		if (i)
			cfa_jr_push_index(&jr, i);
		cfa_jr_push_key(&jr, key);
	}
	cfa_jr_fail(&jr, "bad value");
	CHECK(strstr(cfapkg_ctx_error(ctx), "deep.json: kkk") &&
	      strstr(cfapkg_ctx_error(ctx), "...: bad value"), "%s", cfapkg_ctx_error(ctx));
	cfa_jr_pop(&jr, 0);
	CHECK(jr.pathlen == 0 && jr.path[0] == '\0', "popped back to the top: %s", jr.path);
	cfapkg_ctx_free(ctx);
}

static void fitted_text(void)
{
	char field[8];

	CHECK(cfa_fit_text(field, sizeof(field), "%s", "abc") && strcmp(field, "abc") == 0,
	      "%s", field);
	CHECK(!cfa_fit_text(field, sizeof(field), "%s", "abcdefghij") &&
	      strcmp(field, "abcd...") == 0, "%s", field);
	/* "aéééx": a cut after 4 bytes would split the second "é". */
	CHECK(!cfa_fit_text(field, sizeof(field), "%s", "a\xc3\xa9\xc3\xa9\xc3\xa9x") &&
	      strcmp(field, "a\xc3\xa9...") == 0, "%s", field);
	CHECK(!cfa_snprintf(field, sizeof(field), "%s", "abcdefghij"), "a cut is reported");
}

static void built_document(void)
{
	struct cfa_json_build jb = {false};
	cJSON *o = cfa_json_new_object(&jb), *a;
	char *text;

	cfa_json_add_string(&jb, o, "name", "x");
	cfa_json_add_string(&jb, o, "optional", NULL);
	a = cfa_json_add_array(&jb, o, "list");
	cfa_json_append_number(&jb, a, 1);
	cfa_json_append_string(&jb, a, "two");
	cfa_json_set_string(&jb, o, "name", "y");
	cfa_json_add_bool(&jb, o, "ok", true);
	o = cfa_json_finish(&jb, o);
	text = o ? cJSON_PrintUnformatted(o) : NULL;
	CHECK(text && strcmp(text, "{\"list\":[1,\"two\"],\"name\":\"y\",\"ok\":true}") == 0,
	      "%s", text ? text : "(no document)");
	cJSON_free(text);
	cJSON_Delete(o);
}

/* A step that failed (cJSON_Create* gives NULL when out of memory): the
 * rest of the build does nothing and the document is dropped. */
static void failed_document(void)
{
	struct cfa_json_build jb = {false};
	cJSON *o = cfa_json_new_object(&jb), *a;

	cfa_json_add_item(&jb, o, "lost", NULL);
	CHECK(jb.failed, "a NULL item fails the build");
	a = cfa_json_add_array(&jb, o, "list");
	CHECK(a == NULL, "no step after a failure");
	cfa_json_append(&jb, a, cJSON_CreateString("handed over, so freed"));
	cfa_json_add_item(&jb, o, "item", cJSON_CreateObject());
	CHECK(cfa_json_finish(&jb, o) == NULL, "a failed build is no document");
	/* A NULL parent (a failed step's) fails a fresh build too. */
	jb.failed = false;
	cfa_json_append_string(&jb, NULL, "orphan");
	CHECK(jb.failed && cfa_json_finish(&jb, NULL) == NULL, "a NULL parent is a failure");
}

int main(void)
{
	long_error_detail();
	deep_json_path();
	fitted_text();
	built_document();
	failed_document();
	return check_report();
}
