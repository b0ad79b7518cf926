/*
 * launch.c - how a program is started in an environment ('cfapkg run'):
 * found as a shell would, given the runtime's DLLs beside it on Windows,
 * and wrapped in the environment's launcher there.  The rules are the
 * library's so that every front end starts programs alike.
 */
#include <string.h>

#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"

struct cfapkg_launch {
	char *program;
	char *dir;              /* the program's folder */
	size_t staged;          /* files placed there */
	const char **argv;      /* NULL-ended; strings borrowed from the caller and rt */
};

static bool on_windows(void)
{
	return strcmp(cfapkg_host_os(), "windows") == 0;
}

/* The folder of a program's path: Windows takes either slash, and the
 * last of either ends the folder.  "." when the path has none. */
static char *folder_of(const char *program)
{
	const char *slash = strrchr(program, '/'), *back = strrchr(program, '\\');

	if (back && (!slash || back > slash))
		slash = back;
	return slash ? cfa_strndup(program, (size_t)(slash - program)) : cfa_strdup(".");
}

void cfapkg_launch_free(struct cfapkg_launch *l)
{
	if (!l)
		return;
	cfa_free(l->program);
	cfa_free(l->dir);
	cfa_free(l->argv);
	cfa_free(l);
}

/* Windows' loader looks beside a program before PATH, so the runtime's
 * DLLs are staged there; elsewhere the library path set by apply is
 * enough, and nothing is placed. */
static enum cfapkg_err stage(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                             struct cfapkg_launch *l)
{
	if (!(l->dir = folder_of(l->program)))
		return cfa_nomem(ctx);
	return cfapkg_stage(ctx, rt, l->dir, &l->staged);
}

/* The program is found before anything is staged, so that a name that is not
 * found places no files anywhere. */
static enum cfapkg_err find(struct cfapkg_ctx *ctx, const char *name, struct cfapkg_launch *l)
{
	char buf[4096];
	enum cfapkg_err e = cfapkg_find_program(ctx, name, buf, sizeof(buf));

	if (!e && !(l->program = cfa_strdup(buf)))
		e = cfa_nomem(ctx);
	return e;
}

enum cfapkg_err cfapkg_launch_prepare(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                                      const char *const *args, size_t nargs, bool may_stage,
                                      struct cfapkg_launch **out)
{
	struct cfapkg_launch *l = cfa_calloc(1, sizeof(*l));
	bool launcher = rt->launcher && on_windows();
	enum cfapkg_err e;
	size_t i, n = 0;

	/* *out is set before any failure, so that the caller frees whatever was
	 * made with cfapkg_launch_free, however far it got. */
	*out = l;
	if (!l)
		return cfa_nomem(ctx);
	if (nargs == 0)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "no program to run");
	if ((e = find(ctx, args[0], l)) || (may_stage && on_windows() && (e = stage(ctx, rt, l))))
		return e;
	/* Room for the launcher and its "--", the arguments, and the NULL
	 * end. */
	if (!(l->argv = cfa_calloc(nargs + 3, sizeof(*l->argv))))
		return cfa_nomem(ctx);
	/* The launcher starts the program under the part that needs it
	 * (ZLUDA's injector on Windows); "--" ends the launcher's options. */
	if (launcher) {
		l->argv[n++] = rt->launcher;
		l->argv[n++] = "--";
	}
	l->argv[n++] = l->program;
	for (i = 1; i < nargs; i++)
		l->argv[n++] = args[i];
	return CFAPKG_E_OK;
}

const char *const *cfapkg_launch_argv(const struct cfapkg_launch *l)
{
	return l->argv;
}

const char *cfapkg_launch_program(const struct cfapkg_launch *l)
{
	return l->program;
}

size_t cfapkg_launch_staged(const struct cfapkg_launch *l, const char **dir)
{
	*dir = l->dir;
	return l->staged;
}
