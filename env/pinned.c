/*
 * pinned.c - what gc asks of the loaded recipes and of ROOT/apt/lookups:
 * whether a download is a user file some recipe expects, whether an APT
 * index is one a recipe pins, and whether a lookup file is one this
 * cfapkg reads (its name and first line, as trans/aptlookup.c writes
 * them).
 */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "core/layout.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* Any recipe's user file stays, not only those of kept generations: the file
 * added with add-file is the user's own copy and cannot be downloaded again. */
bool cfa_user_file_pinned(struct cfapkg_ctx *ctx, const char *hex)
{
	size_t i, j, k, n;
	const struct cfapkg_recipe *const *all = cfapkg_recipes(ctx, &n);

	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *rc = all[i];
		for (j = 0; j < rc->nversions; j++)
			for (k = 0; k < rc->versions[j].nuser_files; k++)
				if (strcmp(rc->versions[j].user_files[k].sha256, hex) == 0)
					return true;
	}
	return false;
}

bool cfa_apt_index_pinned(struct cfapkg_ctx *ctx, const char *hex)
{
	size_t i, j, k, n;
	const struct cfapkg_recipe *const *all = cfapkg_recipes(ctx, &n);

	for (i = 0; i < n; i++)
		for (j = 0; j < all[i]->nversions; j++) {
			const struct cfapkg_version *v = &all[i]->versions[j];
			for (k = 0; k < v->nsources; k++)
				if (v->sources[k].apt && v->sources[k].apt->index_sha256 &&
				    strcmp(v->sources[k].apt->index_sha256, hex) == 0)
					return true;
		}
	return false;
}

bool cfa_apt_lookup_name(const char *name, char sha[65])
{
	/* SHA-HASH: 64 hex digits of the index, a dash, 16 of the key. */
	if (strlen(name) != 64 + 1 + 16 || name[64] != '-' || !cfa_lower_hex(name, 64) ||
	    !cfa_lower_hex(name + 65, 16))
		return false;
	memcpy(sha, name, 64);
	sha[64] = '\0';
	return true;
}

bool cfa_apt_lookup_current(const char *path, const char *sha)
{
	char line[160], want[160];
	FILE *f = cfa_plat_fopen(path, "rb");
	bool same = false;

	/* The key line begins with the magic, the version that wrote it and
	 * the index: another version's lookup is never read again. */
	if (f && cfa_snprintf(want, sizeof(want), "%s %s %s ", CFA_APT_LOOKUP_MAGIC, CFAPKG_VERSION,
	                      sha) &&
	    fgets(line, sizeof(line), f))
		same = strncmp(line, want, strlen(want)) == 0;
	if (f)
		fclose(f);
	return same;
}
