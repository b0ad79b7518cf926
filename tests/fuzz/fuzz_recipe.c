/*
 * fuzz_recipe.c - one recipe file (core/recipe.c, core/recipe_fields.c).
 * The input is written to NAME.json, NAME taken from its "name" when that
 * is a valid recipe name, so that mutated recipes get past the check that
 * a recipe lives in a file of its own name.  Properties: a refusal names
 * the file; an accepted recipe has its versions strictly newest first,
 * every dependency parsed under a valid name, and only paths that stay
 * inside the package (what the lockfile reader demands of the same
 * fields, so that a lock made from the recipe can be read back).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dep.h"
#include "core/recipe.h"
#include "core/version.h"
#include "tests/fuzz/fuzz.h"

/* The recipe's own name when it can be a file name, else "fuzz". */
static void file_for(const uint8_t *data, size_t size, char *out, size_t len)
{
	cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(doc, "name");
	const char *base = "fuzz";
	char file[CFA_NAME_MAX + 8];

	if (cJSON_IsString(name) && cfa_name_valid(name->valuestring, strlen(name->valuestring)))
		base = name->valuestring;
	snprintf(file, sizeof(file), "%s.json", base);
	fuzz_path(out, len, file);
	cJSON_Delete(doc);
}

static void check_deps(const struct cfapkg_dep *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		FUZZ_CHECK(d[i].name && cfa_name_valid(d[i].name, strlen(d[i].name)),
		           "dependency name \"%s\"", d[i].name ? d[i].name : "(null)");
		FUZZ_CHECK(d[i].range && strcmp(d[i].range->name, d[i].name) == 0,
		           "dependency %s parsed as another name", d[i].name);
	}
}

static void check_version(const struct cfapkg_version *v)
{
	size_t i;

	FUZZ_CHECK(v->parsed != NULL, "version %s not parsed", v->version);
	check_deps(v->requires, v->nrequires);
	check_deps(v->conflicts, v->nconflicts);
	check_deps(v->provides, v->nprovides);
	for (i = 0; i < v->nlayout; i++)
		FUZZ_CHECK(cfa_safe_relative(v->layout[i].path) && cfa_safe_relative(v->layout[i].as),
		           "layout %s -> %s leaves the package", v->layout[i].path, v->layout[i].as);
	FUZZ_CHECK(!v->launcher || cfa_safe_relative(v->launcher),
	           "launcher \"%s\" leaves the package, and a lockfile with it is refused",
	           v->launcher);
	for (i = 0; i < v->nsources; i++) {
		const struct cfapkg_source *s = &v->sources[i];
		FUZZ_CHECK(!s->sha256 || cfa_valid_sha256(s->sha256), "sha256 %s", s->sha256);
		FUZZ_CHECK(s->strip <= 16 && s->format, "strip %u", s->strip);
	}
}

static void check_recipe(const struct cfapkg_recipe *r)
{
	size_t i;

	FUZZ_CHECK(r->nversions > 0, "no versions");
	for (i = 0; i < r->nversions; i++) {
		check_version(&r->versions[i]);
		FUZZ_CHECK(i == 0 || cfa_ver_cmp(r->versions[i - 1].parsed, r->versions[i].parsed) > 0,
		           "versions %s, %s not strictly newest first", r->versions[i - 1].version,
		           r->versions[i].version);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_scratch();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_recipe *r = NULL;
	char file[1024];
	enum cfapkg_err e;

	file_for(data, size, file, sizeof(file));
	fuzz_write(file, data, size);
	e = cfa_recipe_parse(ctx, file, &r);
	if (e)
		FUZZ_CHECK(strstr(cfapkg_ctx_error(ctx), file), "a refusal names the file: %s",
		           cfapkg_ctx_error(ctx));
	else
		check_recipe(r);
	remove(file);
	cfapkg_ctx_free(ctx);
	return 0;
}
