/*
 * apply.c - putting a runtime into this process's environment (children
 * inherit it), and taking it out again: the first change to each
 * variable remembers its original value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"
#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* Every variable changed, with its original value: as many as the
 * environments set (process-wide, as the environment is). */
static struct saved {
	char *name;
	char *value; /* NULL: it was not set */
} *saved;
static size_t nsaved, saved_cap;

static struct saved *original(const char *name)
{
	size_t i;

	for (i = 0; i < nsaved; i++)
		if (strcmp(saved[i].name, name) == 0)
			return &saved[i];
	return NULL;
}

/* Remembers a variable's value before the first change only: a runtime applied
 * over another must still undo to what the process started with. */
static int remember(const char *name)
{
	char *raw = NULL;
	int rc;

	if (original(name))
		return 0;
	if (cfa_grow((void **)&saved, &saved_cap, nsaved + 1, sizeof(*saved)) != 0)
		return -1;
	if ((rc = cfa_plat_getenv_dup(name, &raw)) == ENOMEM)
		return -1;
	saved[nsaved].name = cfa_strdup(name);
	saved[nsaved].value = rc == 0 ? cfa_strdup(raw) : NULL;
	free(raw); /* the platform's allocation */
	if (!saved[nsaved].name || (rc == 0 && !saved[nsaved].value)) {
		cfa_free(saved[nsaved].name);
		cfa_free(saved[nsaved].value);
		return -1;
	}
	nsaved++;
	return 0;
}

/* Every variable a runtime changed goes back, so that the next runtime starts
 * from the process's own values, not from the last runtime's. */
static void undo(void)
{
	size_t i;

	for (i = 0; i < nsaved; i++)
		cfa_plat_setenv(saved[i].name, saved[i].value);
}

/* Compared whole, so that removing /opt/rocm does not drop /opt/rocm-6. */
static bool removed(const struct cfapkg_runtime *rt, const char *dir, size_t len)
{
	size_t i;

	for (i = 0; i < rt->npath_removed; i++)
		if (strlen(rt->path_removed[i]) == len && strncmp(rt->path_removed[i], dir, len) == 0)
			return true;
	return false;
}

/* rt's folders, then those of original (may be NULL) less rt's removed
 * ones: a new string (cfa_free), NULL when out of memory. */
static char *joined(const struct cfapkg_runtime *rt, const char *original)
{
	const char sep[] = {cfa_plat_path_list_sep(), '\0'};
	struct cfa_buf value;
	const char *at;
	size_t i, n = 0;

	cfa_buf_init(&value, SIZE_MAX);
	cfa_buf_add(&value, "", 0); /* "" when there is nothing to list */
	for (i = 0; i < rt->npath; i++)
		cfa_buf_printf(&value, "%s%s", n++ ? sep : "", rt->path[i]);
	/* Empty entries of the original are dropped: in a path list an empty
	 * entry means the current folder, which a runtime must never add. */
	for (at = original; at && *at; at += *at != '\0') {
		size_t len = strcspn(at, sep);
		if (len && !removed(rt, at, len)) {
			cfa_buf_adds(&value, n++ ? sep : "");
			cfa_buf_add(&value, at, len);
		}
		at += len;
	}
	if (value.failed) {
		cfa_buf_fini(&value);
		return NULL;
	}
	return value.data; /* the buffer's memory is the caller's now */
}

/* Folders in front of a path list variable's original value. */
static int prepend(const char *var, const struct cfapkg_runtime *rt)
{
	char *value;
	int rc;

	/* Built from the original value, never the current one, so that
	 * applying twice does not put the folders in front twice. */
	if (remember(var) || !(value = joined(rt, original(var)->value)))
		return -1;
	rc = cfa_plat_setenv(var, value);
	cfa_free(value);
	return rc;
}

enum cfapkg_err cfapkg_runtime_path_value(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                                          const char *var, char **out)
{
	char *current = NULL;
	int rc = cfa_plat_getenv_dup(var, &current);

	if (rc == ENOMEM)
		return cfa_nomem(ctx);
	*out = joined(rt, rc == 0 ? current : NULL);
	free(current); /* the platform's allocation */
	return *out ? CFAPKG_E_OK : cfa_nomem(ctx);
}

enum cfapkg_err cfapkg_runtime_apply(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt)
{
	size_t i;
	int bad = 0;

	undo();
	if (!rt)
		return CFAPKG_E_OK;
	bad |= prepend("PATH", rt) != 0;
	/* Windows finds DLLs through PATH; the other systems have a library
	 * path variable of their own. */
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

int cfapkg_setenv(const char *name, const char *value)
{
	return cfa_plat_setenv(name, value);
}
