/*
 * fuzz_lockfile.c - reading a lockfile (env/lockfile.c).  Properties: a
 * refusal names the file; an accepted lockfile names store folders that
 * are one plain component under ROOT/store, and it survives a round trip:
 * written back out and read again it gives the same text.  The check
 * against this machine's facts runs too (for crashes only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"
#include "core/ctx.h"
#include "tests/fuzz/fuzz.h"

static char input[1024], again[1024];

static void check_parts(const struct cfapkg_lockfile *l)
{
	size_t i;

	for (i = 0; i < l->nparts; i++) {
		const char *s = l->parts[i].store;
		if (l->parts[i].kind != CFAPKG_KIND_PACKAGE)
			continue;
		FUZZ_CHECK(s && *s && !strpbrk(s, "/\\") && strcmp(s, ".") != 0 &&
		               strcmp(s, "..") != 0,
		           "store folder \"%s\" is not one component", s ? s : "(null)");
	}
}

/* Written out and read back, the lock must say the same. */
static void check_round_trip(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *l)
{
	struct cfapkg_lockfile *l2 = NULL;
	char *text = NULL, *text2 = NULL;

	FUZZ_CHECK(cfapkg_lockfile_text(ctx, l, &text) == CFAPKG_E_OK, "lock_text: %s", cfapkg_ctx_error(ctx));
	fuzz_write(again, text, strlen(text));
	FUZZ_CHECK(cfapkg_lockfile_read(ctx, again, &l2) == CFAPKG_E_OK,
	           "a lock written by cfapkg is refused: %s\n%s", cfapkg_ctx_error(ctx), text);
	FUZZ_CHECK(cfapkg_lockfile_text(ctx, l2, &text2) == CFAPKG_E_OK, "lock_text: %s",
	           cfapkg_ctx_error(ctx));
	FUZZ_CHECK(strcmp(text, text2) == 0, "round trip changed the lock:\n%s\n---\n%s", text,
	           text2);
	cfapkg_free(text);
	cfapkg_free(text2);
	cfapkg_lockfile_free(l2);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_path(input, sizeof(input), "input.lock");
	fuzz_path(again, sizeof(again), "again.lock");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_lockfile *l = NULL;
	struct cfapkg_facts here = {0};

	fuzz_write(input, data, size);
	if (cfapkg_lockfile_read(ctx, input, &l)) {
		FUZZ_CHECK(strstr(cfapkg_ctx_error(ctx), input), "a refusal names the file: %s",
		           cfapkg_ctx_error(ctx));
	} else {
		check_parts(l);
		check_round_trip(ctx, l);
		if (cfapkg_facts_init_host(&here) == CFAPKG_E_OK)
			cfapkg_lockfile_check(ctx, l, &here);
		cfapkg_facts_clear(&here);
		cfapkg_lockfile_free(l);
	}
	cfapkg_ctx_free(ctx);
	return 0;
}
