/*
 * caches.c - what cfapkg's download cache holds, and the caches the stack's
 * programs write outside ROOT: compiled kernels that a new driver or SDK
 * makes stale, which people otherwise find and delete by hand.
 *
 * Each cache is where its program puts it (checked against their sources):
 * - ZLUDA: Rust's dirs::cache_dir() + zluda/ComputeCache (zluda_cache);
 * - MIOpen: "~/.cache/miopen" (kernels) and "~/.config/miopen" (user
 *   database), with ~ the home folder; on Windows TheRock's build uses
 *   "$USERPROFILE\.miopen\cache" (and \db beside it);
 * - Triton: Path.home()/.triton/cache;
 * - TorchInductor: tempfile.gettempdir()/torchinductor_<getpass user>, the
 *   name's \/:*?"<>| made '_' as PyTorch does;
 * - comgr: LLVM's cache_directory() + comgr.
 * A variable that moves one (TRITON_CACHE_DIR...) is followed, as the
 * program follows it.  The base folders come from platform/.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* Deeper folders than this are not counted (no cache nests so deep). */
#define MAX_DEPTH 64

struct cache_def {
	const char *name, *what;
	const char *os;            /* "linux", "windows"; NULL: both */
	const char *var;           /* the variable that moves it, or NULL */
	enum cfa_user_dir base;
	const char *rel;           /* under base; "{user}" is the user's name */
};

static const struct cache_def defs[] = {
	{"zluda", "ZLUDA's compute cache", NULL, NULL, CFA_USER_CACHE, "zluda/ComputeCache"},
	{"miopen", "MIOpen's kernel cache", "linux", "MIOPEN_CUSTOM_CACHE_DIR", CFA_USER_HOME,
	 ".cache/miopen"},
	{"miopen", "MIOpen's kernel cache", "windows", "MIOPEN_CUSTOM_CACHE_DIR", CFA_USER_HOME,
	 ".miopen/cache"},
	{"miopen-db", "MIOpen's user database (tuning results)", "linux", "MIOPEN_USER_DB_PATH",
	 CFA_USER_HOME, ".config/miopen"},
	{"miopen-db", "MIOpen's user database (tuning results)", "windows", "MIOPEN_USER_DB_PATH",
	 CFA_USER_HOME, ".miopen/db"},
	{"triton", "Triton's kernel cache", NULL, "TRITON_CACHE_DIR", CFA_USER_HOME,
	 ".triton/cache"},
	{"inductor", "PyTorch TorchInductor's cache", NULL, "TORCHINDUCTOR_CACHE_DIR",
	 CFA_USER_TEMP, "torchinductor_{user}"},
	{"comgr", "ROCm comgr's code object cache", NULL, "AMD_COMGR_CACHE_DIR", CFA_USER_CACHE,
	 "comgr"},
};

/* The host's own separator: these paths are shown to people who go and look for
 * the folders, so they are written the way the host writes paths. */
static char sep(void)
{
	return strcmp(cfa_plat_os(), "windows") == 0 ? '\\' : '/';
}

/* The user's name as PyTorch puts it in a folder name. */
static char *folder_user(void)
{
	char *user = NULL, *out, *p;

	if (cfa_plat_user_name(&user) != 0)
		return cfa_strdup("unknown");
	out = cfa_strdup(user);
	free(user); /* the platform's text is malloc'd */
	for (p = out; p && *p; p++)
		if (strchr("\\/:*?\"<>|", *p))
			*p = '_';
	return out;
}

/* base + separator + rel with {user} filled in and '/' made the host's. */
static char *default_path(const struct cache_def *d, const char *base)
{
	const char *mark = strstr(d->rel, "{user}");
	char *user = mark ? folder_user() : NULL, *out = NULL, *p;

	if (!mark)
		out = cfa_aprintf("%s%c%s", base, sep(), d->rel);
	else if (user)
		out = cfa_aprintf("%s%c%.*s%s%s", base, sep(), (int)(mark - d->rel), d->rel, user,
		                  mark + strlen("{user}"));
	cfa_free(user);
	/* Only rel's part is rewritten: the base comes from the platform
	 * already in the host's form. */
	for (p = out ? out + strlen(base) : NULL; p && *p; p++)
		if (*p == '/')
			*p = sep();
	return out;
}

struct tally {
	const char *dir;
	unsigned depth;
	uint64_t files, bytes;
	bool failed;
	uint64_t folders;          /* the store's: folders counted at the top */
};

/* Adds one entry of t->dir to the count.  Only real folders are entered, never
 * a link to one: what a link points at is not the cache's own, and a loop of
 * links would never end.  It always answers 0, so one entry that cannot be read
 * does not end the walk; only running out of memory is kept, in failed. */
static int tally_entry(const char *name, void *arg)
{
	struct tally *t = arg, inner;
	char *path = cfa_aprintf("%s%c%s", t->dir, sep(), name);
	long long size;
	int mode;

	if (!path) {
		t->failed = true;
		return 0;
	}
	if (cfa_plat_regular_file(path, &size, &mode)) {
		t->files++;
		t->bytes += size > 0 ? (uint64_t)size : 0;
	} else if (t->depth < MAX_DEPTH && cfa_plat_is_real_dir(path)) {
		inner = (struct tally){path, t->depth + 1, 0, 0, false, 0};
		cfa_plat_list_dir(path, tally_entry, &inner);
		t->files += inner.files;
		t->bytes += inner.bytes;
		t->failed |= inner.failed;
	}
	cfa_free(path);
	return 0;
}

/* Where one cache is here: the variable that moves it, else the default
 * (NULL when its base folder is unknown). */
static enum cfapkg_err locate(struct cfapkg_ctx *ctx, const struct cache_def *d,
                              struct cfapkg_stack_cache *c)
{
	char *moved = NULL, *base = NULL;
	bool nomem;
	int rc;

	/* A variable set but empty names no folder, so the default stands. */
	if (d->var && cfa_plat_getenv_dup(d->var, &moved) == 0 && *moved) {
		c->set_by = d->var;
		c->path = cfa_strdup(moved);
		nomem = !c->path;
	} else if ((rc = cfa_plat_user_dir(d->base, &base)) == 0) {
		c->path = default_path(d, base);
		nomem = !c->path;
	} else {
		/* A base folder that is not known here leaves c->path NULL: the
		 * cache is then shown as not found, which is not an error. */
		nomem = rc == ENOMEM;
	}
	free(moved); /* the platform's text is malloc'd */
	free(base);
	return nomem ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

/* One cache: where it is here, and what it holds. */
static enum cfapkg_err look(struct cfapkg_ctx *ctx, const struct cache_def *d,
                            struct cfapkg_stack_cache *c)
{
	struct tally t = {NULL, 0, 0, 0, false, 0};
	enum cfapkg_err e;

	c->name = d->name;
	c->what = d->what;
	/* A cache that is not there is shown as absent with nothing counted. */
	if ((e = locate(ctx, d, c)) || !c->path || !(c->present = cfa_plat_is_dir(c->path)))
		return e;
	t.dir = c->path;
	cfa_plat_list_dir(c->path, tally_entry, &t);
	c->files = t.files;
	c->bytes = t.bytes;
	return t.failed ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

void cfapkg_stack_caches_free(struct cfapkg_stack_cache *c, size_t n)
{
	size_t i;

	for (i = 0; c && i < n; i++)
		cfa_free((void *)c[i].path);
	cfa_free(c);
}

/* Only the definitions for this system are looked at, so *n counts the entries
 * filled in, which is also what a failure part way frees. */
enum cfapkg_err cfapkg_stack_caches(struct cfapkg_ctx *ctx, struct cfapkg_stack_cache **out,
                                    size_t *n)
{
	size_t i, count = sizeof(defs) / sizeof(defs[0]);
	struct cfapkg_stack_cache *c = cfa_calloc(count, sizeof(*c));
	enum cfapkg_err e = c ? CFAPKG_E_OK : cfa_nomem(ctx);

	*out = NULL;
	*n = 0;
	for (i = 0; i < count && !e; i++)
		if (!defs[i].os || strcmp(defs[i].os, cfa_plat_os()) == 0)
			e = look(ctx, &defs[i], &c[(*n)++]);
	if (e) {
		cfapkg_stack_caches_free(c, *n);
		*n = 0;
		return e;
	}
	*out = c;
	return CFAPKG_E_OK;
}

/* path (its trailing separators dropped) is one of the user's base
 * folders or a folder above one, a drive or the root: a variable set to
 * such a folder must not have it emptied. */
static bool too_broad(const char *path)
{
	static const enum cfa_user_dir bases[] = {CFA_USER_HOME, CFA_USER_CACHE, CFA_USER_TEMP};
	size_t n = strlen(path), i;
	/* Three characters or fewer is a root or a drive ("/", "C:", "C:\"). */
	bool broad = n <= 3;

	while (n > 1 && (path[n - 1] == '/' || path[n - 1] == '\\'))
		n--;
	for (i = 0; i < sizeof(bases) / sizeof(bases[0]) && !broad; i++) {
		char *base = NULL;
		/* path is the base folder or one above it when the base starts
		 * with it and goes on, if at all, with a separator (so
		 * "/home/al" is not above "/home/alice"). */
		if (cfa_plat_user_dir(bases[i], &base) == 0)
			broad = strncmp(base, path, n) == 0 &&
			        (base[n] == '\0' || base[n] == '/' || base[n] == '\\');
		free(base);
	}
	return broad;
}

enum cfapkg_err cfapkg_stack_cache_remove(struct cfapkg_ctx *ctx,
                                          const struct cfapkg_stack_cache *c)
{
	int rc;

	if (!c->path || !cfa_plat_is_dir(c->path))
		return CFAPKG_E_OK;
	/* The check is made on the very path that would be removed: a variable
	 * pointed at the home folder by mistake would otherwise have it
	 * emptied. */
	if (too_broad(c->path))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s: not removed as %s: it is a home, cache or "
		                "temporary folder itself (%s names it); point %s at the cache's own "
		                "folder", c->path, c->what, c->set_by ? c->set_by : "the default",
		                c->set_by ? c->set_by : "the variable");
	rc = cfa_plat_remove_tree(c->path);
	return rc ? cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot remove %s: %s (is a program using "
	                     "it? close it and run the command again)", c->path, c->what,
	                     cfa_plat_strerror(rc))
	          : CFAPKG_E_OK;
}

struct dl_count {
	const char *dir;
	struct cfapkg_downloads_info *info;
	bool failed;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

static int count_download(const char *name, void *arg)
{
	struct dl_count *d = arg;
	char *path;
	long long size;
	int mode;

	if (name[0] == '.')
		return 0;
	if (!(path = cfa_aprintf("%s/%s", d->dir, name))) {
		d->failed = true;
		return 0;
	}
	/* A NAME.part and its NAME.part.meta are one interrupted download: both
	 * are counted in part_bytes, and only the .part as a part; every other
	 * file is a finished artifact. */
	if (cfa_plat_regular_file(path, &size, &mode)) {
		bool part = ends_with(name, ".part"), meta = ends_with(name, ".part.meta");
		uint64_t bytes = size > 0 ? (uint64_t)size : 0;
		d->info->parts += part;
		d->info->part_bytes += part || meta ? bytes : 0;
		d->info->files += !part && !meta;
		d->info->bytes += !part && !meta ? bytes : 0;
	}
	cfa_free(path);
	return 0;
}

enum cfapkg_err cfapkg_downloads_info(struct cfapkg_ctx *ctx, struct cfapkg_downloads_info *out)
{
	char *dir = cfa_root_path(ctx, CFA_DOWNLOADS, NULL);
	struct dl_count d = {dir, out, false};

	memset(out, 0, sizeof(*out));
	if (!dir)
		return ctx->err_code;
	cfa_plat_list_dir(dir, count_download, &d);
	cfa_free(dir);
	return d.failed ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

/* A store folder: one more, and its files ("." names are staging). */
static int count_store_folder(const char *name, void *arg)
{
	struct tally *t = arg;
	char *path;

	if (name[0] == '.')
		return 0;
	if (!(path = cfa_aprintf("%s%c%s", t->dir, sep(), name))) {
		t->failed = true;
		return 0;
	}
	t->folders += cfa_plat_is_real_dir(path);
	cfa_free(path);
	return tally_entry(name, t);
}

/* A store that is not there yet counts as empty: the listing then calls no one
 * and every total stays 0. */
enum cfapkg_err cfapkg_store_info(struct cfapkg_ctx *ctx, struct cfapkg_store_info *out)
{
	char *dir = cfa_root_path(ctx, CFA_STORE, NULL);
	struct tally t = {dir, 0, 0, 0, false, 0};

	memset(out, 0, sizeof(*out));
	if (!dir)
		return ctx->err_code;
	cfa_plat_list_dir(dir, count_store_folder, &t);
	cfa_free(dir);
	out->folders = t.folders;
	out->files = t.files;
	out->bytes = t.bytes;
	return t.failed ? cfa_nomem(ctx) : CFAPKG_E_OK;
}
