/*
 * publish_set.c - a signed channel of exactly the recipes a locked set
 * uses, for a mirror: each recipe as its source gave it (a file's bytes,
 * or the object in the channel index it came from), the built-in GPU
 * table, then 'channel build' over that folder.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "core/gpus.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* How a recipe read from a channel's index names its file (see from_index):
 * no real path holds this text. */
#define FROM_INDEX " recipes/"

/* The recipe's JSON from the accepted index it came from: its file is
 * "ROOT/channels/NAME/index.signed recipes/RECIPE.json". */
static enum cfapkg_err from_index(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                  char **text)
{
	const char *cut = strstr(r->file, FROM_INDEX), *slash = NULL, *p;
	struct cfa_channel_state st;
	const char *payload = NULL;
	char *name, *signed_text = NULL;
	struct cfa_index ix;
	size_t len = 0;
	enum cfapkg_err e;

	/* The last separator before "/index.signed" starts the channel's
	 * folder name; '\\' too, for Windows roots. */
	for (p = r->file; cut && p < cut - strlen("/index.signed"); p++)
		if (*p == '/' || *p == '\\')
			slash = p;
	if (!cut || !slash)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot tell where it came from", r->name);
	if (!(name = cfa_strndup(slash + 1, (size_t)(cut - strlen("/index.signed") - slash - 1))))
		return cfa_nomem(ctx);
	/* The index is opened again, and its signature checked again against
	 * the channel's keys, rather than trusting what was read at load. */
	if (!(e = cfa_channel_state_read(ctx, name, &st))) {
		if (!(e = cfa_channel_signed_read(ctx, name, &signed_text, &payload, &len)) &&
		    !(e = cfa_index_open(ctx, r->file, payload, len, signed_text, &st.keys, &ix))) {
			const cJSON *all = cJSON_GetObjectItemCaseSensitive(ix.doc, "recipes");
			const cJSON *own = cJSON_GetObjectItemCaseSensitive(all, r->name);
			/* The recipe's own object from the signed index,
			 * printed again: the whole index is not what a
			 * mirror's folder holds. */
			char *printed = own ? cJSON_Print(own) : NULL;
			/* Copied because cJSON's allocator need not be
			 * cfa_malloc, and the caller frees with cfa_free. */
			*text = printed ? cfa_strdup(printed) : NULL;
			/* An index that no longer holds the recipe was changed
			 * since the load: not a lack of memory. */
			if (!own)
				e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: channel %s's index no longer "
				             "holds it; run 'cfapkg channel update %s' and try again",
				             r->name, name, name);
			else
				e = *text ? CFAPKG_E_OK : cfa_nomem(ctx);
			cJSON_free(printed);
			cfa_index_close(&ix);
		}
		cfa_channel_state_free(&st);
	}
	cfa_free(signed_text);
	cfa_free(name);
	return e;
}

static enum cfapkg_err write_recipe(struct cfapkg_ctx *ctx, const char *dir,
                                   const struct cfapkg_recipe *r)
{
	char *text = NULL, *path = cfa_aprintf("%s/%s.json", dir, r->name);
	size_t len = 0;
	enum cfapkg_err e;

	if (!path)
		return cfa_nomem(ctx);
	/* A recipe from a folder is copied byte for byte, its layout and key
	 * order kept. */
	e = strstr(r->file, FROM_INDEX) ? from_index(ctx, r, &text)
	                                : cfa_read_file(ctx, r->file, &text, &len);
	if (!e)
		/* The file is named after the recipe, which the parser
		 * requires of a recipe file. */
		e = cfa_write_atomic(ctx, path, text, strlen(text));
	cfa_free(text);
	cfa_free(path);
	return e;
}

/* The GPU table the built-in recipes carry, when they carry one. */
static enum cfapkg_err write_gpus(struct cfapkg_ctx *ctx, const char *dir)
{
	const char *builtin = NULL;
	char *from = NULL, *to = NULL, *text = NULL;
	size_t len = 0;
	enum cfapkg_err e = cfa_builtin_recipe_dir(ctx, &builtin);

	if (!e && (!(from = cfa_aprintf("%s/%s", builtin, CFA_GPUS_FILE)) ||
	           !(to = cfa_aprintf("%s/%s", dir, CFA_GPUS_FILE))))
		e = cfa_nomem(ctx);
	/* No built-in GPU table is not an error: the channel then carries
	 * none. */
	if (!e && cfa_plat_is_file(from) && !(e = cfa_read_file(ctx, from, &text, &len)))
		e = cfa_write_atomic(ctx, to, text, len);
	cfa_free(text);
	cfa_free(from);
	cfa_free(to);
	return e;
}

enum cfapkg_err cfapkg_channel_publish_set(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                           const char *dir, const char *key_file,
                                           const struct cfapkg_channel_build_opts *o,
                                           uint64_t *version)
{
	enum cfapkg_err e = cfa_make_dir(ctx, dir);
	size_t i;

	for (i = 0; i < lock->nparts && !e; i++) {
		/* The recipe loaded now under that name: if the sources
		 * changed since the set was locked, it may be a newer one. */
		const struct cfapkg_recipe *r = cfapkg_recipe_find(ctx, lock->parts[i].name);
		if (!r)
			e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "no recipe describes %s, which the set "
			             "holds", lock->parts[i].name);
		else
			e = write_recipe(ctx, dir, r);
	}
	if (!e)
		e = write_gpus(ctx, dir);
	return e ? e : cfapkg_channel_build(ctx, dir, key_file, o, version);
}
