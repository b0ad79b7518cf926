/*
 * test_recipes.c - the recipe parser refuses bad recipes with errors that
 * name the file, the JSON path and the problem; the real recipes and the
 * GPU table load; a recipe read from its image as a head and then
 * completed is the recipe read whole; docs/recipes.md documents every key
 * the parser knows.
 */
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"
#include "check.h"
#include "core/ctx.h"
#include "core/json.h"
#include "core/recipe.h"
#include "core/recipe_image.h"
#include "core/registry.h"
#include "platform/platform.h"

static void check_bad_recipes(const char *dir)
{
	char path[2304], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/expect.txt", dir);
	f = fopen(path, "r");
	CHECK(f != NULL, "open %s", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *nl = strchr(line, '\n');
		const struct cfapkg_recipe *r = NULL;
		struct cfapkg_ctx *ctx;
		enum cfapkg_err e;
		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		if (nl)
			*nl = '\0';
		ctx = cfapkg_ctx_new();
		snprintf(path, sizeof(path), "%s/%s", dir, line);
		e = cfapkg_recipe_parse_file(ctx, path, &r);
		CHECK(e == CFAPKG_E_RECIPE, "%s: expected a recipe error, got %d", line, e);
		CHECK(strstr(cfapkg_ctx_error(ctx), tab + 1) != NULL, "%s: error \"%s\" lacks \"%s\"",
		      line, cfapkg_ctx_error(ctx), tab + 1);
		CHECK(strstr(cfapkg_ctx_error(ctx), line) != NULL, "%s: error names the file", line);
		cfapkg_ctx_free(ctx);
	}
	fclose(f);
}

/* The project's rule: every pin a built-in recipe carries (a download's
 * SHA-256, a set's, an APT index's) says where it was seen. */
static void check_provenance(const struct cfapkg_ctx *ctx)
{
	size_t i, j, k, n, pins = 0;
	const struct cfapkg_recipe *const *all = cfapkg_recipes(ctx, &n);

	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *r = all[i];
		for (j = 0; j < r->nversions; j++)
			for (k = 0; k < r->versions[j].nsources; k++) {
				const struct cfapkg_source *s = &r->versions[j].sources[k];
				if (!s->sha256 && !s->nartifacts && !(s->apt && s->apt->index_sha256))
					continue;
				pins++;
				/* A set of pinned .debs says it in the APT source's "seen". */
				CHECK((s->provenance && *s->provenance) || (s->apt && s->apt->seen),
				      "%s %s %s: a pin says where it was seen (\"provenance\")", r->name,
				      r->versions[j].version, s->platform);
			}
	}
	CHECK(pins >= 12, "the built-in recipes carry their pins (%lu)", (unsigned long)pins);
}

static void check_real_recipes(void)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	const struct cfapkg_recipe *z;
	const struct cfapkg_gpu_device *d;
	enum cfapkg_err e = cfapkg_recipes_load(ctx);

	CHECK(e == CFAPKG_E_OK, "built-in recipes load: %s", cfapkg_ctx_error(ctx));
	z = cfapkg_recipe_find(ctx, "zluda");
	CHECK(z && z->nversions >= 3, "zluda has its versions");
	CHECK(z && strcmp(z->versions[0].version, "7-preview.11") == 0, "newest first");
	CHECK(z && strcmp(z->versions[z->nversions - 1].version, "6-preview.63") == 0,
	      "oldest last");
	check_provenance(ctx);
	CHECK(cfapkg_recipe_find(ctx, "pytorch-cuda-stack") != NULL, "the meta recipe exists");
	d = cfapkg_gpu_device_find(ctx, 0x1002, 0x7590, 0xc0);
	CHECK(d && strcmp(d->gfx, "gfx1200") == 0 && strstr(d->name, "RX 9060 XT"),
	      "1002:7590 rev c0 is an RX 9060 XT");
	d = cfapkg_gpu_device_find(ctx, 0x1002, 0x73ff, 0xdf);
	CHECK(d && strcmp(d->gfx, "gfx1031") == 0, "73FF rev DF is gfx1031, unlike its siblings");
	d = cfapkg_gpu_device_find(ctx, 0x1002, 0x7448, 0x00);
	CHECK(d && strcmp(d->gfx, "gfx1100") == 0, "an any-revision entry matches");
	CHECK(cfapkg_gpu_device_find(ctx, 0x1002, 0x0001, 0) == NULL, "unknown device");
	CHECK(cfapkg_gpu_target_find(ctx, "gfx1030") &&
	      cfapkg_gpu_target_find(ctx, "gfx1030")->status == CFAPKG_STATUS_EXPERIMENTAL,
	      "RDNA2 is experimental");
	cfapkg_ctx_free(ctx);
}

#define IMAGE "test_recipes.img"
#define IMAGE_AGAIN "test_recipes-again.img"
static const char image_key[65] =
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/* The bytes of file (NULL when it cannot be read); *n its size. */
static char *slurp(const char *file, size_t *n)
{
	FILE *f = fopen(file, "rb");
	char *data = NULL;
	long size;

	*n = 0;
	if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (data = malloc((size_t)size + 1)) && fread(data, 1, (size_t)size, f) == (size_t)size)
		*n = (size_t)size;
	if (f)
		fclose(f);
	return data;
}

/* Whether the n recipes written as an image give the bytes of IMAGE:
 * the writer copies every field, so equal images hold equal recipes. */
static bool same_image(struct cfapkg_ctx *ctx, struct cfapkg_recipe **r, size_t n)
{
	size_t na = 0, nb = 0;
	char *a, *b;
	bool same;

	if (cfa_recipe_image_write(ctx, IMAGE_AGAIN, image_key, r, n) != CFAPKG_E_OK)
		return false;
	a = slurp(IMAGE, &na);
	b = slurp(IMAGE_AGAIN, &nb);
	same = a && b && na == nb && memcmp(a, b, na) == 0;
	free(a);
	free(b);
	cfa_plat_remove(IMAGE_AGAIN);
	return same;
}

/* Heads hold what a plan weighs and nothing of the details. */
static void check_heads(const struct cfapkg_recipe *r, const struct cfapkg_version ***all,
                        size_t *nall)
{
	size_t k, j;

	for (k = 0; k < r->nversions; k++) {
		const struct cfapkg_version *v = &r->versions[k];
		CHECK(v->pending && !v->layout && !v->nlayout && !v->npath && !v->nenv &&
		      !v->note && !v->nuser_files, "%s %s: a head without its details", r->name,
		      v->version);
		for (j = 0; j < v->nsources; j++)
			CHECK(v->sources[j].platform && !v->sources[j].nartifacts &&
			      !v->sources[j].artifacts && (!v->sources[j].apt || !v->sources[j].apt->pins),
			      "%s %s: a source's head without its lists", r->name, v->version);
		(*all)[(*nall)++] = v;
	}
}

/* Every recipe's head from IMAGE into r, and every version into all. */
static void read_heads(struct cfapkg_ctx *ctx, size_t n, struct cfapkg_recipe **r,
                       const struct cfapkg_version **all, size_t *nall)
{
	struct cfa_recipe_image *im = NULL;
	size_t i;

	*nall = 0;
	CHECK(cfa_recipe_image_open(ctx, IMAGE, image_key, n, &im) == 0 && im, "it opens");
	for (i = 0; im && i < n; i++) {
		CHECK(cfa_recipe_image_head(ctx, im, i, &r[i]) == 0 && r[i], "recipe %lu's head",
		      (unsigned long)i);
		if (r[i])
			check_heads(r[i], &all, nall);
	}
	cfa_recipe_image_close(im);
}

/* Heads completed from their image, or from their files when it is gone;
 * a file that no longer holds a version is said to have changed. */
static void check_completed(struct cfapkg_ctx *ctx, size_t n, size_t versions,
                            struct cfapkg_recipe **r, const struct cfapkg_version **all)
{
	size_t nall = 0;

	read_heads(ctx, n, r, all, &nall);
	CHECK(nall == versions && cfa_versions_complete(ctx, all, nall) == 0,
	      "the details are read: %s", cfapkg_ctx_error(ctx));
	CHECK(same_image(ctx, r, n), "a head completed is the recipe parsed");
	read_heads(ctx, n, r, all, &nall);
	CHECK(rename(IMAGE, IMAGE ".gone") == 0, "the image moved away");
	CHECK(nall == versions && cfa_versions_complete(ctx, all, nall) == 0,
	      "without its image, the details come from the files: %s", cfapkg_ctx_error(ctx));
	CHECK(rename(IMAGE ".gone", IMAGE) == 0 && same_image(ctx, r, n),
	      "... and are the same");
	read_heads(ctx, n, r, all, &nall);
	/* The first recipe's file now holds the last one's versions. */
	r[0]->file = r[n - 1]->file;
	CHECK(rename(IMAGE, IMAGE ".gone") == 0 &&
	      cfa_versions_complete(ctx, all, 1) == CFAPKG_E_RECIPE &&
	      strstr(cfapkg_ctx_error(ctx), "changed while cfapkg read it") &&
	      strstr(cfapkg_ctx_error(ctx), r[n - 1]->file),
	      "a file changed since its image was read is named: %s", cfapkg_ctx_error(ctx));
	cfapkg_ctx_clear_error(ctx);
	rename(IMAGE ".gone", IMAGE);
}

/* The built-in recipes through their image: whole, and as heads completed. */
static void check_image_round_trip(void)
{
	struct cfapkg_ctx *whole = cfapkg_ctx_new(), *ctx = cfapkg_ctx_new();
	struct cfa_recipe_image *im = NULL;
	struct cfapkg_recipe **r = NULL;
	const struct cfapkg_version **all = NULL;
	size_t i, n = 0, versions = 0;

	cfapkg_ctx_set_recipe_index(whole, false);
	CHECK(cfapkg_recipes_load(whole) == CFAPKG_E_OK, "load: %s", cfapkg_ctx_error(whole));
	n = whole->nrecipes;
	for (i = 0; i < n; i++)
		versions += whole->recipes[i]->nversions;
	r = calloc(n + 1, sizeof(*r));
	all = calloc(versions + 1, sizeof(*all));
	CHECK(n > 1 && r && all &&
	      cfa_recipe_image_write(whole, IMAGE, image_key, whole->recipes, n) == 0,
	      "the image is written");
	CHECK(cfa_recipe_image_open(ctx, IMAGE, image_key, n, &im) == 0 && im, "it opens");
	for (i = 0; im && r && i < n; i++)
		CHECK(cfa_recipe_image_get(ctx, im, i, &r[i]) == 0 && r[i], "recipe %lu whole",
		      (unsigned long)i);
	cfa_recipe_image_close(im);
	CHECK(im && r && same_image(ctx, r, n), "a recipe read whole is the recipe parsed");
	if (n > 1 && r && all)
		check_completed(ctx, n, versions, r, all);
	cfa_plat_remove(IMAGE);
	free(r);
	free(all);
	cfapkg_ctx_free(ctx);
	cfapkg_ctx_free(whole);
}

/* A NUL in any JSON string is refused at its field's path; text that only
 * looks like one (an escaped backslash before "u0000") is not. */
static void check_nul_scan(void)
{
	static const struct {
		const char *text;
		size_t len;
		const char *where; /* NULL: accepted */
	} cases[] = {
		{"{\"a\": \"x\\\\u0000\"}", 0, NULL},
		{"{\"a\": [1, {\"b\": \"x\\u0000y\"}]}", 0, ": a[1].b: holds a NUL"},
		{"{\"a\": 1, \"k\\u0000\": 2}", 0, ": k\\u0000: holds a NUL"},
		{"[\"ok\", \"x\\u0000\"]", 0, ": [1]: holds a NUL"},
		{"{\"a\": \"x\0y\"}", 12, ": a: holds a NUL"},
		{"{\"a\": 1}\0junk", 13, ": the document: holds a NUL"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfapkg_ctx *ctx = cfapkg_ctx_new();
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		enum cfapkg_err e = cfa_json_refuse_nul(ctx, "t.json", cases[i].text, len,
		                                        CFAPKG_E_RECIPE);
		if (!cases[i].where)
			CHECK(e == CFAPKG_E_OK, "case %lu accepted: %s", (unsigned long)i,
			      cfapkg_ctx_error(ctx));
		else
			CHECK(e == CFAPKG_E_RECIPE && strstr(cfapkg_ctx_error(ctx), cases[i].where),
			      "case %lu refused at \"%s\": %s", (unsigned long)i, cases[i].where,
			      cfapkg_ctx_error(ctx));
		cfapkg_ctx_free(ctx);
	}
}

/* A member's number found by stepping over the text is the one cJSON
 * finds: never a name inside a string or a nested object. */
static void check_json_peek(void)
{
	static const struct {
		const char *text;
		long long want; /* -1: none */
	} cases[] = {
		{"{\n\t\"generation\":\t3,\n\t\"previous\":\t2,\n\t\"seq\":\t7\n}", 7},
		{"{\"a\":{\"seq\":1},\"seq\":2}", 2},
		{"{\"command\":\"\\\"seq\\\":5\",\"seq\":6}", 6},
		{"{\"x\":\"seq\",\"seq\":3}", 3},
		{"{\"changes\":[\"seq\",{\"seq\":9}],\"seq\":4}", 4},
		{"{\"c\":\"a\\\\\",\"seq\":8}", 8},
		{"{\"seq\" : 11 }", 11},
		{"{\"a\":1}", -1},
		{"{\"seq\":1.5}", -1},
		{"{\"seq\":-1}", -1},
		{"{\"seq\":\"3\"}", -1},
		{"{\"seq\":4000000000}", -1},
		{"[{\"seq\":1}]", -1},
		{"{\"seqs\":1,\"se\":2}", -1},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		bool found = cfa_json_peek_uint(cases[i].text, strlen(cases[i].text), "seq",
		                                3999999999u, &v);
		CHECK(cases[i].want < 0 ? !found : found && v == (uint64_t)cases[i].want,
		      "peek case %lu: %s gives %s%llu", (unsigned long)i, cases[i].text,
		      found ? "" : "nothing, ", (unsigned long long)v);
	}
}

/* Every key the parser accepts appears as `key` in docs/recipes.md. */
static void check_docs(const char *docs)
{
	const char *const *lists[] = {cfa_recipe_keys, cfa_version_keys, cfa_source_keys,
	                              cfa_artifact_keys, cfa_apt_keys, cfa_deb_pin_keys,
	                              cfa_upstream_keys, cfa_apt_signed_by_keys};
	char *text;
	long n;
	size_t i;
	FILE *f = fopen(docs, "rb");

	CHECK(f != NULL, "open %s", docs);
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = calloc(1, (size_t)n + 1);
	if (text && fread(text, 1, (size_t)n, f) == (size_t)n) {
		for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
			const char *const *k;
			for (k = lists[i]; *k; k++) {
				char quoted[64];
				snprintf(quoted, sizeof(quoted), "`%s`", *k);
				CHECK(strstr(text, quoted) != NULL, "docs/recipes.md documents %s", quoted);
			}
		}
	}
	free(text);
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_recipes BAD_DIR DOCS_RECIPES_MD\n");
		return 2;
	}
	check_bad_recipes(argv[1]);
	check_real_recipes();
	check_image_round_trip();
	check_nul_scan();
	check_json_peek();
	check_docs(argv[2]);
	return check_report();
}
