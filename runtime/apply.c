/*
 * apply.c - putting a runtime into this process's environment (children
 * inherit it), and taking it out again: the first change to each
 * variable remembers its original value.
 */
#include <string.h>

#include "cfapkg.h"
#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define MAX_SAVED 64

static struct saved {
	char *name;
	char *value; /* NULL: it was not set */
} saved[MAX_SAVED];
static size_t nsaved;

static struct saved *original(const char *name)
{
	size_t i;

	for (i = 0; i < nsaved; i++)
		if (strcmp(saved[i].name, name) == 0)
			return &saved[i];
	return NULL;
}

/* Remembers a variable's value before the first change. */
static int remember(const char *name)
{
	static char buf[1 << 16];
	const char *v;

	if (original(name))
		return 0;
	if (nsaved == MAX_SAVED)
		return -1;
	v = cfa_plat_getenv(name, buf, sizeof(buf));
	saved[nsaved].name = cfa_strdup(name);
	saved[nsaved].value = v ? cfa_strdup(v) : NULL;
	if (!saved[nsaved].name || (v && !saved[nsaved].value))
		return -1;
	nsaved++;
	return 0;
}

static void undo(void)
{
	size_t i;

	for (i = 0; i < nsaved; i++)
		cfa_plat_setenv(saved[i].name, saved[i].value);
}

/* Folders in front of a path list variable's original value. */
static int prepend(const char *var, const struct cfapkg_runtime *rt)
{
	static char value[1 << 16];
	const struct saved *o;
	size_t i, n = 0;
	char sep = cfa_plat_path_list_sep();

	if (remember(var))
		return -1;
	o = original(var);
	value[0] = '\0';
	for (i = 0; i < rt->npath; i++) {
		cfa_snprintf(value + n, sizeof(value) - n, "%s%c", rt->path[i], sep);
		n = strlen(value);
	}
	if (o->value && *o->value)
		cfa_snprintf(value + n, sizeof(value) - n, "%s", o->value);
	else if (n)
		value[n - 1] = '\0';
	return cfa_plat_setenv(var, value);
}

enum cfapkg_err cfapkg_runtime_apply(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt)
{
	size_t i;
	int bad = 0;

	undo();
	if (!rt)
		return CFAPKG_E_OK;
	bad |= prepend("PATH", rt) != 0;
	if (strcmp(cfa_plat_os(), "windows") != 0)
		bad |= prepend("LD_LIBRARY_PATH", rt) != 0;
	for (i = 0; i < rt->nenv && !bad; i++)
		bad |= remember(rt->env[i].name) != 0 ||
		       cfa_plat_setenv(rt->env[i].name, rt->env[i].value) != 0;
	if (bad)
		return cfa_fail(ctx, CFAPKG_E_IO, "cannot set the environment for generation %u of "
		                "\"%s\"", rt->generation, rt->env_name);
	return CFAPKG_E_OK;
}
