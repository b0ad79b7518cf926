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

#include "cfapkg_frontend.h"
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

void cfapkg_ctx_set_recipe_index(struct cfapkg_ctx *ctx, bool on)
{
	ctx->no_index = !on;
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

unsigned cfapkg_terminal_columns(FILE *f)
{
	char buf[16];
	const char *v = cfa_plat_getenv("COLUMNS", buf, sizeof(buf));
	uint64_t n = 0;
	unsigned cols = cfa_plat_term_columns(f);

	/* A terminal that does not say (a serial line): COLUMNS, else 80. */
	if (!cols && v && cfa_parse_u64(v, strlen(v), 10000, &n) && n >= 10)
		cols = (unsigned)n;
	return cols ? cols : 80;
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
	cfa_free(ctx->recipe_cache);
	cfa_free(ctx->err_long);
	cfa_arena_fini(&ctx->arena);
	cfa_free(ctx);
}

const char *cfapkg_ctx_error(const struct cfapkg_ctx *ctx)
{
	return ctx->err_long ? ctx->err_long : ctx->err;
}

void cfapkg_ctx_clear_error(struct cfapkg_ctx *ctx)
{
	ctx->err[0] = '\0';
	CFA_FREE(ctx->err_long);
	ctx->err_code = CFAPKG_E_OK;
}

/* One line: a newline from a foreign message would break renderers. */
static void one_line(char *s)
{
	char *nl;

	while ((nl = strchr(s, '\n')) != NULL)
		*nl = ' ';
}

enum cfapkg_err cfa_fail(struct cfapkg_ctx *ctx, enum cfapkg_err err, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* The first failure's message is kept: it names the cause, and what
	 * callers say on their way out would only bury it. */
	if (ctx->err[0] != '\0')
		return err;
	va_start(ap, fmt);
	n = vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	/* A detail naming a long path would lose its end, where the reason and
	 * the advice are: it gets an allocation of its own.  Without memory
	 * for it, the cut is marked rather than silent. */
	if (n > 0 && (size_t)n >= sizeof(ctx->err)) {
		if ((ctx->err_long = cfa_malloc((size_t)n + 1)) != NULL) {
			va_start(ap, fmt);
			/* Sized by the first pass; a mismatch leaves the short text. */
			if (vsnprintf(ctx->err_long, (size_t)n + 1, fmt, ap) != n)
				ctx->err_long[0] = '\0';
			va_end(ap);
			one_line(ctx->err_long);
		} else {
			memcpy(ctx->err + sizeof(ctx->err) - 4, "...", 4);
		}
	}
	one_line(ctx->err);
	ctx->err_code = err;
	return err;
}

enum cfapkg_err cfa_fail_more(struct cfapkg_ctx *ctx, enum cfapkg_err err, const char *fmt, ...)
{
	char *was = cfa_strdup(cfapkg_ctx_error(ctx)), *more;
	va_list ap;

	va_start(ap, fmt);
	more = cfa_vaprintf(fmt, ap);
	va_end(ap);
	if (was && more) {
		cfapkg_ctx_clear_error(ctx);
		cfa_fail(ctx, err, "%s%s", was, more);
	}
	cfa_free(was);
	cfa_free(more);
	return was && more ? err : cfa_nomem(ctx);
}

enum cfapkg_err cfa_nomem(struct cfapkg_ctx *ctx)
{
	return cfa_fail(ctx, CFAPKG_E_NOMEM, "out of memory");
}

/* The default root: CFAPKG_ROOT, else the user data folder.  Owned. */
static enum cfapkg_err default_root(struct cfapkg_ctx *ctx, char **out)
{
	const char *env = getenv("CFAPKG_ROOT");
	char *dir = NULL;
	int rc;

	if (env && *env)
		return (*out = cfa_strdup(env)) ? CFAPKG_E_OK : cfa_nomem(ctx);
	if ((rc = cfa_plat_data_dir(&dir)) == ENOMEM)
		return cfa_nomem(ctx);
	if (rc)
		return cfa_fail(ctx, CFAPKG_E_IO, "cannot find a user data folder: set CFAPKG_ROOT "
		                "or pass --root DIR");
	/* The platform allocates with the C library; the root is ours. */
	*out = cfa_strdup(dir);
	free(dir);
	return *out ? CFAPKG_E_OK : cfa_nomem(ctx);
}

enum cfapkg_err cfapkg_ctx_set_root(struct cfapkg_ctx *ctx, const char *dir)
{
	char *copy = NULL;
	enum cfapkg_err e;

	if (!dir || !*dir)
		e = default_root(ctx, &copy);
	else
		e = (copy = cfa_strdup(dir)) ? CFAPKG_E_OK : cfa_nomem(ctx);
	if (e)
		return e;
	/* The old root is let go only once the new one is had, so that a
	 * failure leaves the context as it was. */
	cfa_free(ctx->root);
	ctx->root = copy;
	CFA_FREE(ctx->recipe_cache); /* the old root's */
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

/* recipes/ or ../share/cfapkg/recipes beside the program, with its
 * gpus.json; NULL when neither is there, or when out of memory (*nomem). */
static char *beside_program(bool *nomem)
{
	static const char *const rel[] = {"recipes", "../share/cfapkg/recipes"};
	char *exedir = NULL, *found = NULL;
	size_t i;
	int rc = cfa_plat_exe_dir(&exedir);

	*nomem = rc == ENOMEM;
	for (i = 0; rc == 0 && !found && !*nomem && i < sizeof(rel) / sizeof(rel[0]); i++) {
		char *gpus = cfa_aprintf("%s/%s/gpus.json", exedir, rel[i]);
		if (!gpus)
			*nomem = true;
		else if (cfa_plat_is_file(gpus) && !(found = cfa_aprintf("%s/%s", exedir, rel[i])))
			*nomem = true;
		cfa_free(gpus);
	}
	free(exedir); /* the platform's allocation */
	return found;
}

/* Worked out once per process and kept to its end (the public call
 * promises static storage); an attempt that ran out of memory is tried
 * again next time. */
static const char *builtin_dir(bool *nomem)
{
	static char *found;
	static bool looked; /* and found none: a build tree asks once, too */

	*nomem = false;
	if (!found && !looked && !(found = beside_program(nomem)) && *nomem)
		return NULL;
	looked = true;
	/* A build tree: the recipes of the source checkout it was built from. */
	return found ? found : CFAPKG_SOURCE_RECIPES;
}

enum cfapkg_err cfa_builtin_recipe_dir(struct cfapkg_ctx *ctx, const char **out)
{
	bool nomem;

	*out = builtin_dir(&nomem);
	return nomem ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

const char *cfapkg_builtin_recipe_dir(void)
{
	bool nomem;

	return builtin_dir(&nomem);
}

void cfa_crash_point(void)
{
	static atomic_long left = -1; /* download threads pass here too */
	long n = atomic_load(&left);

	if (n == -1) {
		const char *s = getenv("CFAPKG_CRASH_AFTER");
		uint64_t parsed = 0;
		/* Tests only: a count of crash points; anything else turns it off. */
		if (!s || !cfa_parse_u64(s, strlen(s), 1000000000, &parsed))
			parsed = 0;
		/* Only the first thread here sets the count (-2: off); a thread
		 * that lost the race reads what the winner set. */
		atomic_compare_exchange_strong(&left, &n, parsed > 0 ? (long)parsed : -2);
		n = atomic_load(&left);
	}
	/* The point that takes the count from 1 to 0 kills; one already past it
	 * never does. */
	if (n > 0 && atomic_fetch_sub(&left, 1) == 1)
		cfa_plat_kill_self();
}

/* Here, not in gpus.c: the context owns the table it frees, and gpus.c
 * only fills it. */
void cfa_gpus_free(struct cfa_gpus *g)
{
	if (!g)
		return;
	cfa_arena_fini(&g->arena);
	cfa_free(g);
}

/* The loaded set is kept sorted by name (registry.c sorts it once it is
 * whole), so a lookup is a binary search. */
const struct cfapkg_recipe *cfapkg_recipe_find(const struct cfapkg_ctx *ctx, const char *name)
{
	size_t lo = 0, hi = ctx->nrecipes;

	while (lo < hi) {
		/* In this form, not (lo + hi) / 2, so that the sum cannot
		 * wrap. */
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(ctx->recipes[mid]->name, name);
		if (c == 0)
			return ctx->recipes[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
