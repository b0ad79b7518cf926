/*
 * venv_list.c - the list of venvs an environment was staged into: one
 * small file per venv, ROOT/venvs/ID.json, ID a hash of the venv's
 * absolute folder, so that staging, unstaging and following them never
 * write the same file.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"
#include "runtime/stage.h"
#include "runtime/venv.h"

enum cfapkg_err cfa_venv_list_entry(struct cfapkg_ctx *ctx, const char *root, char **out)
{
	/* A hash, not the path, names the file: a path may be longer than a
	 * file name can be and hold characters one cannot.  FNV-1a gives the
	 * same name on every run and build, which is all the name needs. */
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	char name[32];
	const unsigned char *p;

	for (p = (const unsigned char *)root; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	*out = NULL;
	if (!cfa_snprintf(name, sizeof(name), "%016llx.json", (unsigned long long)h))
		return cfa_nomem(ctx);
	*out = cfa_root_path(ctx, CFA_VENVS, name);
	return *out ? CFAPKG_E_OK : ctx->err_code;
}

void cfa_venv_forget(struct cfapkg_ctx *ctx, const char *dir)
{
	char *abs = NULL, *path = NULL;

	/* The entry is named by the absolute folder, as staging named it, so a
	 * venv given by a relative path is forgotten all the same. */
	if (cfa_venv_abs(dir, &abs) != 0)
		return;
	if (cfa_venv_list_entry(ctx, abs, &path) == CFAPKG_E_OK)
		cfa_plat_remove(path);
	else
		cfapkg_ctx_clear_error(ctx); /* the list then names a venv that unstage emptied */
	cfa_free(path);
	free(abs);
}
