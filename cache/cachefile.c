/*
 * cachefile.c - which file of the download cache holds an artifact, and
 * whether its bytes can be trusted without hashing them again.
 *
 * A verified download is named by its SHA-256.  Where the system names its
 * boots (Linux), a download is not flushed to the disk when it arrives (a
 * wait `curl` does not make): it is named SHA~BOOT, BOOT this boot's id.
 * Within the same boot the page cache holds exactly the bytes that were
 * verified, whatever has reached the disk.  After a restart, which may
 * have been a crash that tore the file, it is hashed again before any use,
 * then flushed and renamed SHA, or deleted.  Where there is no boot id
 * (Windows) a download is flushed before it takes its name.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define SHA_LEN 64

bool cfa_lower_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool cfa_cache_name_sha(const char *name, char sha[SHA_LEN + 1])
{
	size_t n = strlen(name);

	/* SHA (64 digits) or SHA~BOOT (64, '~', 8), lower-case hex as the cache
	 * writes them. */
	if ((n != SHA_LEN && !(n == SHA_LEN + 9 && name[SHA_LEN] == '~' &&
	                       cfa_lower_hex(name + SHA_LEN + 1, 8))) ||
	    !cfa_lower_hex(name, SHA_LEN))
		return false;
	memcpy(sha, name, SHA_LEN);
	sha[SHA_LEN] = '\0';
	return true;
}

/* A regular file of the expected size (any, for size < 0). */
static bool fits(const char *path, int64_t size)
{
	long long have = 0;
	int mode = 0;

	/* Regular, not following a link: a folder or a link by that name is not
	 * the artifact. */
	return cfa_plat_regular_file(path, &have, &mode) && (size < 0 || have == size);
}

struct other_boot {
	const char *sha;
	char *name;  /* the first SHA~BOOT of another boot, cfa_free */
};

static int find_other(const char *name, void *arg)
{
	struct other_boot *o = arg;

	if (strncmp(name, o->sha, SHA_LEN) != 0 || name[SHA_LEN] != '~' || o->name)
		return 0;
	/* A non-zero return stops the listing: the first match is the one
	 * tried.  Out of memory it stops too, with no name. */
	o->name = cfa_strdup(name);
	return 1;
}

/* From a past boot: hashed again; flushed and named SHA when whole. */
static char *promote(struct cfapkg_ctx *ctx, const char *dir, const char *sha, int64_t size,
                     const char *name)
{
	char *from = cfa_aprintf("%s/%s", dir, name), *to = cfa_aprintf("%s/%s", dir, sha);
	char hex[65];
	uint64_t have = 0;
	FILE *f;
	bool whole = from && to && fits(from, size) &&
	             cfapkg_sha256_file(ctx, from, hex, &have) == CFAPKG_E_OK &&
	             strcmp(hex, sha) == 0;

	/* A file that cannot be hashed is only deleted: the artifact is then
	 * downloaded again, with no error. */
	cfapkg_ctx_clear_error(ctx);
	/* A file that cannot be opened to flush is not known to be on the
	 * disk: it is not promoted. */
	if (whole && (f = cfa_plat_fopen(from, "rb+")) != NULL) {
		whole = cfa_plat_fsync(f) == 0;
		fclose(f);
	} else {
		whole = false;
	}
	/* Flushed before it takes the SHA name, which promises bytes on the
	 * disk; the folder after, so that the name lasts. */
	if (whole && cfa_plat_rename(from, to) == 0) {
		cfa_plat_sync_dir(dir);
		cfa_free(from);
		return to;
	}
	/* Torn or other bytes: removed, so that no later lookup hashes it
	 * again. */
	if (from)
		cfa_plat_remove(from);
	cfa_free(from);
	cfa_free(to);
	return NULL;
}

enum cfapkg_err cfa_cache_find(struct cfapkg_ctx *ctx, const char *sha, int64_t size, char **out)
{
	char *dir = cfa_root_path(ctx, CFA_DOWNLOADS, NULL), *path = NULL, boot[9];
	struct other_boot o = {sha, NULL};

	*out = NULL;
	if (!dir)
		return ctx->err_code;
	if (!sha || strlen(sha) != SHA_LEN) {
		cfa_free(dir);
		return CFAPKG_E_OK;
	}
	/* SHA first, then this boot's SHA~BOOT: neither costs a hash.  A past
	 * boot's name is looked for only when both are absent. */
	if ((path = cfa_aprintf("%s/%s", dir, sha)) && !fits(path, size))
		CFA_FREE(path);
	if (!path && cfa_plat_boot_id(boot) && (path = cfa_aprintf("%s/%s~%s", dir, sha, boot)) &&
	    !fits(path, size))
		CFA_FREE(path);
	/* No downloads folder yet: nothing to list. */
	if (!path && cfa_plat_is_dir(dir)) {
		cfa_plat_list_dir(dir, find_other, &o);
		path = o.name ? promote(ctx, dir, sha, size, o.name) : NULL;
	}
	cfa_free(o.name);
	cfa_free(dir);
	/* A cache that cannot be looked in answers absent: only a root that
	 * cannot be named is an error. */
	*out = path;
	return CFAPKG_E_OK;
}

char *cfa_cache_unsynced_name(const char *dir, const char *sha)
{
	char boot[9];

	/* The caller frees the name. */
	return cfa_plat_boot_id(boot) ? cfa_aprintf("%s/%s~%s", dir, sha, boot) : NULL;
}

char *cfa_cache_path(struct cfapkg_ctx *ctx, const char *sha)
{
	char *found = NULL;

	if (cfa_cache_find(ctx, sha, -1, &found))
		return NULL;
	return found ? found : cfa_root_path(ctx, CFA_DOWNLOADS, sha);
}
