/*
 * storecheck.c - a quick look at a store folder before install decides
 * there is nothing to do.  Every file its manifest lists must be there as
 * a regular file of the recorded size and permission bits.  Contents are
 * not hashed: that is verify's and repair's work, and hashing a 2.5 GiB
 * LibTorch tree on every install would make a no-op install take seconds.
 * A deleted, truncated, grown or re-permissioned file is what a user's
 * slip or a full disk leaves, and these are what this catches.
 */
#include <string.h>

#include "core/json.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "platform/platform.h"
#include "trans/trans.h"

static const char *field(const cJSON *o, const char *key)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* "0755" -> 0755; -1 when absent or not octal (older manifests). */
static int octal_mode(const char *s)
{
	int v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '7' || v > 07777)
			return -1;
		v = v * 8 + (*s - '0');
	}
	return v;
}

static bool file_as_recorded(const char *dir, const cJSON *f)
{
	const char *rel = field(f, "path"), *type = field(f, "type");
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(f, "size");
	int want = octal_mode(field(f, "mode")), now;
	char *path;
	bool ok;

	if (!rel || !type || strcmp(type, "file") != 0 || !cfa_safe_relative(rel))
		return true; /* links and folders: verify judges them */
	if (!(path = cfa_aprintf("%s/%s", dir, rel)))
		return false;
	ok = cfa_plat_is_file(path) && cJSON_IsNumber(size) &&
	     (double)cfa_plat_file_size(path) == size->valuedouble;
	if (ok && want >= 0 && (now = cfa_plat_file_mode(path)) >= 0)
		ok = (now & 0777) == (want & 0777);
	cfa_free(path);
	return ok;
}

bool cfa_store_intact(struct cfapkg_ctx *ctx, const struct cfapkg_locked *part)
{
	char *dir = part->store ? cfa_root_path(ctx, CFA_STORE, part->store) : NULL;
	char *manifest = dir ? cfa_aprintf("%s/.cfapkg/manifest.json", dir) : NULL;
	const cJSON *f;
	cJSON *doc = NULL;
	bool ok = false;

	if (manifest && cfa_json_read_file(ctx, manifest, CFAPKG_E_INTEGRITY, &doc) == 0) {
		ok = true;
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "files"))
			if (!(ok = file_as_recorded(dir, f)))
				break;
	}
	/* A folder that cannot be judged is taken as damaged: unpacking it
	 * again costs time, trusting it could cost the environment. */
	cfapkg_ctx_clear_error(ctx);
	cJSON_Delete(doc);
	cfa_free(manifest);
	cfa_free(dir);
	return ok;
}
