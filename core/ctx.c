/*
 * ctx.c - context lifetime, the error model and the data root.
 */
#include "core/ctx.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpus.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

const char *cfapkg_strerror(enum cfapkg_err err)
{
	switch (err) {
#define CFAPKG_ERR_CASE(name, num, text) \
	case CFAPKG_E_##name:           \
		return text;
		CFAPKG_ERRORS(CFAPKG_ERR_CASE)
#undef CFAPKG_ERR_CASE
	}
	return "unknown error";
}

const char *cfapkg_version_string(void)
{
	return CFAPKG_VERSION;
}

void cfapkg_utf8_args(int *argc, char ***argv)
{
	cfa_plat_utf8_args(argc, argv);
}

bool cfapkg_is_terminal(FILE *f)
{
	return cfa_plat_isatty(f);
}

double cfapkg_monotonic_seconds(void)
{
	return cfa_plat_now();
}

struct cfapkg_ctx *cfapkg_ctx_new(void)
{
	struct cfapkg_ctx *ctx = cfa_calloc(1, sizeof(*ctx));

	if (!ctx)
		return NULL;
	cfa_arena_init(&ctx->arena);
	return ctx;
}

void cfapkg_ctx_free(struct cfapkg_ctx *ctx)
{
	size_t i;

	if (!ctx)
		return;
	for (i = 0; i < ctx->nrecipe_dirs; i++)
		cfa_free(ctx->recipe_dirs[i]);
	cfa_free(ctx->recipe_dirs);
	cfa_free(ctx->recipes);
	cfa_gpus_free(ctx->gpus);
	cfa_free(ctx->root);
	cfa_arena_fini(&ctx->arena);
	cfa_free(ctx);
}

const char *cfapkg_ctx_error(const struct cfapkg_ctx *ctx)
{
	return ctx->err;
}

void cfapkg_ctx_clear_error(struct cfapkg_ctx *ctx)
{
	ctx->err[0] = '\0';
	ctx->err_code = CFAPKG_E_OK;
}

enum cfapkg_err cfa_fail(struct cfapkg_ctx *ctx, enum cfapkg_err err, const char *fmt, ...)
{
	va_list ap;
	char *nl;

	if (ctx->err[0] != '\0')
		return err;
	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	/* One line: a newline from a foreign message would break renderers. */
	while ((nl = strchr(ctx->err, '\n')) != NULL)
		*nl = ' ';
	ctx->err_code = err;
	return err;
}

enum cfapkg_err cfa_nomem(struct cfapkg_ctx *ctx)
{
	return cfa_fail(ctx, CFAPKG_E_NOMEM, "out of memory");
}

enum cfapkg_err cfapkg_ctx_set_root(struct cfapkg_ctx *ctx, const char *dir)
{
	char buf[4096];
	char *copy;

	if (!dir || !*dir) {
		const char *env = getenv("CFAPKG_ROOT");
		if (env && *env) {
			dir = env;
		} else {
			if (cfa_plat_data_dir(buf, sizeof(buf)) != 0)
				return cfa_fail(ctx, CFAPKG_E_IO,
				                "cannot find a user data folder: set CFAPKG_ROOT "
				                "or pass --root DIR");
			dir = buf;
		}
	}
	copy = cfa_strdup(dir);
	if (!copy)
		return cfa_nomem(ctx);
	cfa_free(ctx->root);
	ctx->root = copy;
	return CFAPKG_E_OK;
}

const char *cfapkg_ctx_root(const struct cfapkg_ctx *ctx)
{
	return ctx->root;
}

enum cfapkg_err cfapkg_ctx_add_recipe_dir(struct cfapkg_ctx *ctx, const char *dir)
{
	char *copy;

	if (!dir || !*dir)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "empty recipe folder name");
	if (cfa_grow((void **)&ctx->recipe_dirs, &ctx->recipe_dirs_cap, ctx->nrecipe_dirs + 1,
	             sizeof(char *)) != 0)
		return cfa_nomem(ctx);
	copy = cfa_strdup(dir);
	if (!copy)
		return cfa_nomem(ctx);
	ctx->recipe_dirs[ctx->nrecipe_dirs++] = copy;
	return CFAPKG_E_OK;
}

const char *cfapkg_builtin_recipe_dir(void)
{
	static char found[4096];
	static const char *const rel[] = {"recipes", "../share/cfapkg/recipes"};
	char exedir[4096];
	size_t i;

	if (found[0])
		return found;
	if (cfa_plat_exe_dir(exedir, sizeof(exedir)) == 0) {
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			char probe[4096 + 64];
			if (cfa_snprintf(probe, sizeof(probe), "%s/%s/gpus.json", exedir, rel[i]) &&
			    cfa_plat_is_file(probe) &&
			    cfa_snprintf(found, sizeof(found), "%s/%s", exedir, rel[i]))
				return found;
		}
	}
	/* A build tree: the recipes of the source checkout it was built from. */
	return cfa_snprintf(found, sizeof(found), "%s", CFAPKG_SOURCE_RECIPES) ? found : NULL;
}

void cfa_crash_point(void)
{
	static atomic_long left = -1; /* download threads pass here too */
	long n = atomic_load(&left), parsed = 0;

	if (n == -1) {
		const char *s = getenv("CFAPKG_CRASH_AFTER");
		for (; s && *s >= '0' && *s <= '9' && parsed < 1000000; s++)
			parsed = parsed * 10 + (*s - '0');
		atomic_compare_exchange_strong(&left, &n, parsed > 0 ? parsed : -2);
		n = atomic_load(&left);
	}
	if (n > 0 && atomic_fetch_sub(&left, 1) == 1)
		cfa_plat_kill_self();
}
