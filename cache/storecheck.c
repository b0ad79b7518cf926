/*
 * storecheck.c - a quick look at a store folder before install decides
 * there is nothing to do, as pacman -Qk looks: every file the folder lists
 * must be there as a regular file of the recorded size and permission
 * bits.  Contents are not hashed: that is verify's and repair's work, and
 * hashing a 2.5 GiB LibTorch tree on every install would make a no-op
 * install take seconds.  A deleted, truncated, grown or re-permissioned
 * file is what a slip, a full disk or a virus scanner's quarantine leaves,
 * and these are what this catches.
 *
 * The list comes from .cfapkg/sizes ("SIZE MODE PATH" lines, written with
 * the manifest), else from the manifest itself (folders unpacked before
 * the index existed).  The files are looked at from several threads: on a
 * tree of 8,000 headers the look was most of a no-op install's time, and
 * a folder whose seal still holds (storeseal.c) is not looked at again.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/json.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define CHUNK 512 /* files per thread's turn */

struct listed {
	const char *path;   /* relative to the store folder */
	uint64_t size;
	int mode;           /* -1: not recorded */
};

struct look {
	const char *path;   /* the store folder */
	struct cfa_dir *dir;
	const struct listed *files;
	size_t n;
	bool ok;
};

static bool file_as_listed(struct cfa_dir *dir, const struct listed *f)
{
	long long size;
	int mode;

	/* Only the permission bits are compared, and only where both sides have
	 * them: a list may record none, and Windows keeps none. */
	return cfa_plat_regular_file_at(dir, f->path, &size, &mode) && (uint64_t)size == f->size &&
	       (f->mode < 0 || mode < 0 || (mode & 0777) == (f->mode & 0777));
}

/* Files come folder by folder (archive order): each folder is opened
 * once and its files looked up by their last name only, which spares the
 * kernel walking a LibTorch header's dozen path components each time. */
static void look_at(void *item)
{
	struct look *l = item;
	struct cfa_dir *sub = NULL;
	const char *folder = NULL; /* sub's path: a prefix of some entry's */
	size_t folder_len = 0, i;

	for (i = 0; i < l->n && l->ok; i++) {
		const struct listed *f = &l->files[i];
		const char *slash = strrchr(f->path, '/');
		size_t len = slash ? (size_t)(slash - f->path) : 0;
		struct listed base = *f;
		if (!slash) {
			l->ok = file_as_listed(l->dir, f);
			continue;
		}
		if (!folder || len != folder_len || memcmp(folder, f->path, len) != 0) {
			char *path = cfa_aprintf("%s/%.*s", l->path, (int)len, f->path);
			cfa_plat_dir_close(sub);
			sub = path ? cfa_plat_dir_open(path) : NULL;
			cfa_free(path);
			/* Points into the entry itself: its first folder_len
			 * bytes name the folder open as sub. */
			folder = f->path;
			folder_len = len;
		}
		base.path = slash + 1;
		l->ok = sub && file_as_listed(sub, &base);
	}
	cfa_plat_dir_close(sub);
}

static bool all_as_listed(const char *path, const struct listed *files, size_t n)
{
	size_t nlooks = (n + CHUNK - 1) / CHUNK, i;
	struct look *looks = cfa_calloc(nlooks ? nlooks : 1, sizeof(*looks));
	struct cfa_dir *dir = cfa_plat_dir_open(path);
	bool ok = looks && dir;

	for (i = 0; ok && i < nlooks; i++) {
		looks[i].path = path;
		looks[i].dir = dir;
		looks[i].files = files + i * CHUNK;
		looks[i].n = n - i * CHUNK < CHUNK ? n - i * CHUNK : CHUNK;
		looks[i].ok = true;
	}
	/* Every chunk runs to its own end or first mismatch; their answers are
	 * read only after all of them have run. */
	if (ok)
		cfa_plat_parallel(look_at, looks, sizeof(*looks), nlooks);
	for (i = 0; ok && i < nlooks; i++)
		ok = looks[i].ok;
	cfa_plat_dir_close(dir);
	cfa_free(looks);
	return ok;
}

/* "0755" -> 0755; -1 when absent or not octal. */
static int octal_mode(const char *s, size_t n)
{
	int v = 0;
	size_t i;

	if (!s || n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '7' || v > 07777)
			return -1;
		v = v * 8 + (s[i] - '0');
	}
	return v;
}

/* text is modified in place: each line's path is cut out of it. */
static bool parse_sizes(char *text, struct listed **out, size_t *n)
{
	size_t cap = 0;
	char *line = text, *nl;

	*out = NULL;
	*n = 0;
	for (; *line; line = nl + 1) {
		char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		uint64_t size;
		if (!(nl = strchr(line, '\n')) || !sp2 || sp2 > nl ||
		    !cfa_parse_u64(line, (size_t)(sp1 - line), UINT64_MAX, &size) ||
		    cfa_grow((void **)out, &cap, *n + 1, sizeof(**out)) != 0)
			return false;
		*nl = '\0';
		(*out)[*n].path = sp2 + 1;
		(*out)[*n].size = size;
		(*out)[(*n)++].mode = octal_mode(sp1 + 1, (size_t)(sp2 - sp1 - 1));
		/* A listed path must stay inside the folder: a tampered list
		 * could otherwise have the look probe any file. */
		if (!cfa_safe_relative(sp2 + 1))
			return false;
	}
	return true;
}

static const char *field(const cJSON *o, const char *key)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* The files of a manifest (links and folders are verify's to judge). */
static bool manifest_files(const cJSON *doc, struct listed **out, size_t *n)
{
	const cJSON *f, *size;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "files"))
	{
		const char *rel = field(f, "path"), *type = field(f, "type"), *mode = field(f, "mode");
		if (!type || strcmp(type, "file") != 0)
			continue;
		size = cJSON_GetObjectItemCaseSensitive(f, "size");
		if (!rel || !cfa_safe_relative(rel) || !cJSON_IsNumber(size) || size->valuedouble < 0 ||
		    cfa_grow((void **)out, &cap, *n + 1, sizeof(**out)) != 0)
			return false;
		(*out)[*n].path = rel;
		(*out)[*n].size = (uint64_t)size->valuedouble;
		(*out)[(*n)++].mode = octal_mode(mode, mode ? strlen(mode) : 0);
	}
	return true;
}

static bool check_by_manifest(struct cfapkg_ctx *ctx, const char *dir)
{
	char *path = cfa_aprintf("%s/.cfapkg/manifest.json", dir);
	struct listed *files = NULL;
	cJSON *doc = NULL;
	size_t n;
	bool ok = path && cfa_json_read_file(ctx, path, CFAPKG_E_INTEGRITY, &doc) == 0 &&
	          manifest_files(doc, &files, &n) && all_as_listed(dir, files, n);

	cfa_free(files);
	cJSON_Delete(doc);
	cfa_free(path);
	return ok;
}

/* After a look found the folder whole: its seal, for the next look. */
static void seal(const char *dir, const struct listed *files, size_t n)
{
	const char **paths = cfa_calloc(n + 1, sizeof(*paths));
	size_t i;

	for (i = 0; paths && i < n; i++)
		paths[i] = files[i].path;
	/* Out of memory there is no seal: the next look only looks again. */
	if (paths)
		cfa_store_seal(dir, paths, n);
	cfa_free(paths);
}

bool cfa_store_intact(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *part)
{
	char *dir = part->store ? cfa_root_path(ctx, CFA_STORE, part->store) : NULL;
	char *sizes = dir ? cfa_aprintf("%s/.cfapkg/sizes", dir) : NULL, *text = NULL;
	struct listed *files = NULL;
	size_t len, n;
	bool ok = false;

	/* Nothing listed changed since the last full look (storeseal.c). */
	if (dir && cfa_store_seal_holds(ctx, dir)) {
		ok = true;
	} else if (sizes && cfa_plat_is_file(sizes)) {
		ok = cfa_read_file(ctx, sizes, &text, &len) == 0 &&
		     strlen(text) == len && parse_sizes(text, &files, &n) &&
		     all_as_listed(dir, files, n);
		if (ok)
			seal(dir, files, n);
	} else if (dir) {
		ok = check_by_manifest(ctx, dir);
	}
	/* A folder that cannot be judged is taken as damaged: unpacking it
	 * again costs time, trusting it could cost the environment. */
	cfapkg_ctx_clear_error(ctx);
	cfa_free(files);
	cfa_free(text);
	cfa_free(sizes);
	cfa_free(dir);
	return ok;
}
