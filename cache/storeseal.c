/*
 * storeseal.c - what spares a no-op install the look at every file of a
 * store folder (storecheck.c).  Once a look has found a folder whole, the
 * stamp (size, modification time, inode) of each of its folders is kept
 * in .cfapkg/seal.  A file deleted, added, renamed or replaced anywhere
 * changes its folder's stamp, so while every stamp still matches, the
 * files are as the look found them, and a few dozen stats stand in for
 * thousands.  What a seal cannot see is a read-only file written in place
 * (made writable first): 'cfapkg verify' hashes every file and names it,
 * 'cfapkg repair' puts it back.
 *
 * A folder changed within the last two seconds is not sealed: file
 * systems stamp with a coarse clock, and a change in the same tick as the
 * look would leave the stamp as it was.
 */
#include <string.h>
#include <time.h>

#include "cache/cache.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "platform/platform.h"

#define RACY_SECONDS 2

/* Whether the folder part (len bytes of a path) is already listed. */
static bool listed(char **dirs, size_t n, const char *path, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(dirs[i]) == len && memcmp(dirs[i], path, len) == 0)
			return true;
	return false;
}

/* Every folder that holds a listed file, and the folders above them, once
 * each ("" is the store folder itself). */
static char **folders_of(const char *const *paths, size_t npaths, size_t *n)
{
	char **dirs = NULL;
	size_t cap = 0, i;

	*n = 0;
	if (cfa_grow((void **)&dirs, &cap, 1, sizeof(*dirs)) != 0 || !(dirs[0] = cfa_strdup("")))
		goto fail;
	*n = 1;
	for (i = 0; i < npaths; i++) {
		const char *p = paths[i], *slash;
		for (slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/')) {
			size_t len = (size_t)(slash - p);
			if (listed(dirs, *n, p, len))
				continue;
			if (cfa_grow((void **)&dirs, &cap, *n + 1, sizeof(*dirs)) != 0 ||
			    !(dirs[*n] = cfa_strndup(p, len)))
				goto fail;
			(*n)++;
		}
	}
	return dirs;
fail:
	cfa_strv_free(dirs, *n);
	*n = 0;
	return NULL;
}

/* The stamp of DIR/rel ("" is DIR itself), and its modification time when
 * mtime is not NULL; the path is made in path after the keep bytes of DIR.
 * A seal names a hundred folders or more, and formatting each path anew
 * was most of the check's own instructions. */
static bool stamp_under(struct cfa_buf *path, size_t keep, const char *rel, char out[64],
                        long long *mtime)
{
	cfa_buf_cut(path, keep);
	if (*rel && !(cfa_buf_adds(path, "/") && cfa_buf_adds(path, rel)))
		return false;
	if (!cfa_plat_file_stamp(path->data, out))
		return false;
	if (mtime)
		*mtime = cfa_plat_file_mtime(path->data);
	return true;
}

void cfa_store_seal(const char *dir, const char *const *paths, size_t npaths)
{
	size_t n = 0, i, keep = strlen(dir);
	char **dirs = folders_of(paths, npaths, &n);
	char *file = cfa_aprintf("%s/.cfapkg/seal", dir), *tmp = cfa_aprintf("%s/.cfapkg/seal.new", dir);
	long long now = (long long)time(NULL), mtime = 0;
	struct cfa_buf b, path;
	char stamp[64];
	FILE *f;
	bool ok;

	cfa_buf_init(&b, (size_t)64 << 20);
	cfa_buf_init(&path, (size_t)64 << 10);
	ok = dirs && file && tmp && cfa_buf_adds(&path, dir);
	for (i = 0; ok && i < n; i++) {
		ok = stamp_under(&path, keep, dirs[i], stamp, &mtime) &&
		     now - mtime >= RACY_SECONDS;
		cfa_buf_printf(&b, "%s %s\n", stamp, dirs[i]);
	}
	/* Best effort: without a seal the next install looks at every file. */
	if (ok && !b.failed && (f = cfa_plat_fopen(tmp, "wb"))) {
		ok = fwrite(b.data, 1, b.len, f) == b.len;
		ok = fclose(f) == 0 && ok;
		if (!ok || cfa_plat_rename(tmp, file) != 0)
			cfa_plat_remove(tmp);
	}
	cfa_buf_fini(&b);
	cfa_buf_fini(&path);
	cfa_strv_free(dirs, n);
	cfa_free(file);
	cfa_free(tmp);
}

bool cfa_store_seal_holds(struct cfapkg_ctx *ctx, const char *dir)
{
	char *file = cfa_aprintf("%s/.cfapkg/seal", dir), *text = NULL, *line, *nl;
	struct cfa_dir *d = NULL;
	char stamp[64];
	size_t len;
	bool ok;

	/* The folders are stamped through the store folder, opened once, so
	 * that each lookup starts there rather than at the root. */
	ok = file && cfa_plat_is_file(file) && cfa_read_file(ctx, file, &text, &len) == 0 &&
	     strlen(text) == len && len > 0 && (d = cfa_plat_dir_open(dir)) != NULL;
	for (line = text; ok && *line; line = nl + 1) {
		char *sp = strchr(line, ' ');
		if (!(nl = strchr(line, '\n')) || !sp || sp > nl) {
			ok = false;
			break;
		}
		*sp = *nl = '\0';
		ok = cfa_plat_file_stamp_at(d, sp + 1, stamp) && strcmp(stamp, line) == 0;
	}
	cfapkg_ctx_clear_error(ctx);
	if (d)
		cfa_plat_dir_close(d);
	cfa_free(text);
	cfa_free(file);
	return ok;
}
