/*
 * fuzz_facts.c - a facts file (core/facts.c, cfapkg_facts_load).
 * Properties: a refusal names the file; accepted facts hold only values
 * the solver can trust (a known OS and architecture, a valid GPU target,
 * versions that parse, lists that hold what they count), and written out
 * as JSON and loaded again they come back the same; all of it is freed.
 */
#include <string.h>

#include "core/recipe.h"
#include "core/version.h"
#include "tests/fuzz/fuzz.h"

static char input[1024], again[1024];

static bool parses(const char *s)
{
	struct cfa_ver v;
	return cfa_ver_parse(s, strlen(s), &v, NULL);
}

static void check_values(const struct cfapkg_facts *f)
{
	size_t i;

	FUZZ_CHECK(cfa_valid_os(f->os) && f->arch && cfa_valid_arch(f->arch), "os %s arch %s",
	           f->os, f->arch ? f->arch : "(not known)");
	FUZZ_CHECK(!f->gfx[0] || cfa_valid_gfx(f->gfx), "gpu %s", f->gfx);
	FUZZ_CHECK(!f->driver || parses(f->driver), "driver %s", f->driver);
	FUZZ_CHECK(!f->glibc || parses(f->glibc), "glibc %s", f->glibc);
	FUZZ_CHECK((!f->nhip_runtimes || f->hip_runtimes) && (!f->nhip_sdks || f->hip_sdks),
	           "%lu runtimes, %lu SDKs without their lists", (unsigned long)f->nhip_runtimes,
	           (unsigned long)f->nhip_sdks);
	for (i = 0; i < f->nhip_runtimes; i++)
		FUZZ_CHECK(f->hip_runtimes[i] > 0 && f->hip_runtimes[i] < 100, "runtime %u",
		           f->hip_runtimes[i]);
	for (i = 0; i < f->nhip_sdks; i++)
		FUZZ_CHECK(parses(f->hip_sdks[i]), "sdk %s", f->hip_sdks[i]);
}

/* Two texts that may be unknown (NULL): the same when both are. */
static bool same_text(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

static bool same(const struct cfapkg_facts *a, const struct cfapkg_facts *b)
{
	size_t i;

	if (strcmp(a->os, b->os) || !same_text(a->arch, b->arch) || strcmp(a->gfx, b->gfx) ||
	    !same_text(a->driver, b->driver) || !same_text(a->glibc, b->glibc) ||
	    a->hip_runtimes_known != b->hip_runtimes_known ||
	    a->hip_sdks_known != b->hip_sdks_known || a->nhip_runtimes != b->nhip_runtimes ||
	    a->nhip_sdks != b->nhip_sdks)
		return false;
	for (i = 0; i < a->nhip_runtimes; i++)
		if (a->hip_runtimes[i] != b->hip_runtimes[i])
			return false;
	for (i = 0; i < a->nhip_sdks; i++)
		if (strcmp(a->hip_sdks[i], b->hip_sdks[i]))
			return false;
	return true;
}

static void check_round_trip(struct cfapkg_ctx *ctx, const struct cfapkg_facts *f)
{
	cJSON *doc = cfa_facts_json(f);
	char *text = cJSON_PrintUnformatted(doc);
	struct cfapkg_facts f2 = {0}, f3 = {0};

	fuzz_write(again, text, strlen(text));
	FUZZ_CHECK(cfapkg_facts_load(ctx, &f2, again) == CFAPKG_E_OK,
	           "facts written by cfapkg are refused: %s\n%s", cfapkg_ctx_error(ctx), text);
	FUZZ_CHECK(same(f, &f2), "round trip changed the facts: %s", text);
	FUZZ_CHECK(cfapkg_facts_copy(&f2, &f3) == CFAPKG_E_OK && same(&f2, &f3),
	           "a copy is not the same facts: %s", text);
	cfapkg_facts_clear(&f2);
	cfapkg_facts_clear(&f3);
	cJSON_free(text);
	cJSON_Delete(doc);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_path(input, sizeof(input), "facts.json");
	fuzz_path(again, sizeof(again), "again.json");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_facts f = {0};

	FUZZ_CHECK(cfapkg_facts_init_host(&f) == CFAPKG_E_OK, "the host's facts");
	fuzz_write(input, data, size);
	if (cfapkg_facts_load(ctx, &f, input)) {
		FUZZ_CHECK(strstr(cfapkg_ctx_error(ctx), input), "a refusal names the file: %s",
		           cfapkg_ctx_error(ctx));
	} else {
		check_values(&f);
		check_round_trip(ctx, &f);
	}
	cfapkg_facts_clear(&f);
	cfapkg_ctx_free(ctx);
	return 0;
}
