/*
 * recipe_edit.c - adding a version to a recipe file ('cfapkg recipe
 * add-version'): which file, what is refused before any download, and the
 * write itself (recipe_text.c builds the text), which is atomic and undone
 * when the file no longer loads.
 */
#include <errno.h>
#include <string.h>

#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "platform/platform.h"

#define STRIP_MAX 16

/* file is dir's own child. */
static bool in_dir(const char *file, const char *dir)
{
	size_t n = strlen(dir), sep;

	while (n > 1 && (dir[n - 1] == '/' || dir[n - 1] == '\\'))
		n--;
	if (strncmp(file, dir, n) != 0)
		return false;
	sep = strspn(file + n, "/\\"); /* "dir/" given: the file is "dir//name.json" */
	/* Only a direct child counts: recipes are read from a folder's own
	 * *.json files, never from below it. */
	return sep > 0 && file[n + sep] && !strpbrk(file + n + sep, "/\\");
}

enum cfapkg_err cfapkg_recipe_edit_file(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                        const char **file)
{
	const char *builtin = NULL;
	enum cfapkg_err e;
	size_t i;

	for (i = 0; i < ctx->nrecipe_dirs; i++)
		if (in_dir(r->file, ctx->recipe_dirs[i])) {
			*file = r->file;
			return CFAPKG_E_OK;
		}
	if (ctx->nrecipe_dirs)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "no %s.json in the folder given with --recipes "
		                "(%s); cfapkg reads %s from %s", r->name, ctx->recipe_dirs[0], r->name,
		                r->file);
	if (!cfa_plat_is_file(r->file))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s was not read from a recipe file (%s): name "
		                "the folder that holds %s.json with --recipes DIR", r->name, r->file,
		                r->name);
	if ((e = cfa_builtin_recipe_dir(ctx, &builtin)))
		return e;
	/* An installed cfapkg's own recipes are replaced by the next install;
	 * a build tree reads its source checkout's, which are there to edit. */
	if (in_dir(r->file, builtin) && strcmp(builtin, CFAPKG_SOURCE_RECIPES) != 0)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s is a built-in recipe of this cfapkg "
		                "installation, which the next install replaces: copy it into a folder "
		                "of your own and name that folder with --recipes DIR (or "
		                "CFAPKG_RECIPES)", r->file);
	*file = r->file;
	return CFAPKG_E_OK;
}

static bool known_format(const char *f)
{
	static const char *const formats[] = {"zip", "7z", "tar.gz", "tar.xz", "tar.zst",
	                                      "tar.bz2", "tar", "deb"};
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(f, formats[i]) == 0)
			return true;
	return false;
}

static bool valid_platform(const char *p)
{
	const char *dash = strchr(p, '-');
	char os[16];

	if (!dash || (size_t)(dash - p) >= sizeof(os))
		return false;
	memcpy(os, p, (size_t)(dash - p));
	os[dash - p] = '\0';
	return cfa_valid_os(os) && cfa_valid_arch(dash + 1);
}

/* The strip of the newest version's one-archive source for the platform,
 * else of its first one; -1 when it has none. */
static int newest_strip(const struct cfapkg_version *v, const char *platform)
{
	const struct cfapkg_source *first = NULL;
	size_t i;

	for (i = 0; i < v->nsources; i++) {
		const struct cfapkg_source *s = &v->sources[i];
		/* A set's or an APT source's archives are unpacked by rules of
		 * their own; only a plain archive's strip carries over to a new
		 * version. */
		if (s->nartifacts || s->apt)
			continue;
		if (strcmp(s->platform, platform) == 0)
			return s->strip ? (int)s->strip : -1;
		if (!first)
			first = s;
	}
	return first && first->strip ? (int)first->strip : -1;
}

static enum cfapkg_err check_source(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                    const struct cfapkg_new_version *nv, size_t k)
{
	struct cfapkg_new_source *s = &nv->sources[k];
	size_t i;

	if (!valid_platform(s->platform))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "--source %s=...: \"%s\" is not OS-ARCH as a recipe "
		                "spells it (OS windows or linux, ARCH x86_64, aarch64 or x86: "
		                "windows-x86_64)", s->platform, s->platform);
	for (i = 0; i < k; i++)
		if (strcmp(nv->sources[i].platform, s->platform) == 0)
			return cfa_fail(ctx, CFAPKG_E_USAGE, "--source %s is given twice: a version has "
			                "one download per platform", s->platform);
	if (strncmp(s->url, "https://", 8) != 0 && strncmp(s->url, "http://", 7) != 0)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "--source %s=%s: the URL must start with https:// "
		                "or http://", s->platform, s->url);
	if (!s->format && !(s->format = cfapkg_format_from_url(s->url)))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s: the archive format cannot be told from the "
		                "URL; give it with --format (zip, 7z, tar.gz, tar.xz, tar.zst, tar.bz2, "
		                "tar, deb)", s->url);
	if (!known_format(s->format))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "--format %s: not one of zip, 7z, tar.gz, tar.xz, "
		                "tar.zst, tar.bz2, tar, deb", s->format);
	if (s->strip > STRIP_MAX)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "--strip %d: at most %d leading folders",
		                s->strip, STRIP_MAX);
	/* A strip not given is the newest version's: a project's archives
	 * usually keep one layout from release to release. */
	if (s->strip < 0)
		s->strip = newest_strip(&r->versions[0], s->platform);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_recipe_check_version(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                            struct cfapkg_new_version *nv)
{
	struct cfa_ver v;
	const char *why = NULL;
	enum cfapkg_err e;
	size_t i;

	if (r->kind != CFAPKG_KIND_PACKAGE)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s is a %s recipe: only a package recipe has "
		                "downloads to add", r->name, cfapkg_kind_name(r->kind));
	if (!cfa_ver_parse(nv->version, strlen(nv->version), &v, &why))
		return cfa_fail(ctx, CFAPKG_E_VERSION, "version \"%s\": %s", nv->version, why);
	for (i = 0; i < r->nversions; i++) {
		const char *had = r->versions[i].version;
		/* Compared as versions, not as text: two spellings of one
		 * version would otherwise be the same version twice. */
		if (cfa_ver_cmp(&v, r->versions[i].parsed) != 0)
			continue;
		if (strcmp(had, nv->version) == 0)
			return cfa_fail(ctx, CFAPKG_E_USAGE, "%s already has version %s (%s); nothing "
			                "was changed", r->name, had, r->file);
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s already has version %s, which is the same "
		                "version as %s (%s); nothing was changed", r->name, had, nv->version,
		                r->file);
	}
	if (nv->nsources == 0)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s %s: give its downloads with --source "
		                "OS-ARCH=URL (repeatable)", r->name, nv->version);
	for (i = 0; i < nv->nsources; i++)
		if ((e = check_source(ctx, r, nv, i)))
			return e;
	return CFAPKG_E_OK;
}

/* path.cfapkg-new, flushed, with path's permission bits (which cfa_write_atomic
 * would not keep: a recipe is the user's own file, in a folder of the user's),
 * renamed over path: a reader sees the old file or the new one, never a part.
 * 0 or errno-style. */
static int write_atomic(const char *path, const char *text, size_t len)
{
	char *tmp = cfa_aprintf("%s.cfapkg-new", path);
	int rc = 0, mode = cfa_plat_file_mode(path);
	FILE *f;

	if (!tmp)
		return ENOMEM;
	if (!(f = cfa_plat_fopen(tmp, "wb"))) {
		rc = cfa_plat_write_errno();
	} else {
		if (fwrite(text, 1, len, f) != len)
			rc = cfa_plat_write_errno();
		if (!rc)
			rc = cfa_plat_fsync(f);
		if (fclose(f) != 0 && !rc)
			rc = cfa_plat_write_errno();
	}
	if (!rc && mode >= 0)
		cfa_plat_set_mode(tmp, (unsigned)mode);
	if (!rc)
		rc = cfa_plat_rename(tmp, path);
	if (rc)
		cfa_plat_remove(tmp);
	cfa_free(tmp);
	return rc;
}

/* Whether the file as written loads and holds the new version; why not in
 * *why (cfa_free). */
static enum cfapkg_err reload(const char *file, const char *version, char **why)
{
	/* A context of its own, so that the file is read as a new run would
	 * read it, untouched by what this one has loaded. */
	struct cfapkg_ctx *check = cfapkg_ctx_new();
	struct cfapkg_recipe *r = NULL;
	enum cfapkg_err e;
	size_t i;

	*why = NULL;
	if (!check)
		return CFAPKG_E_NOMEM;
	e = cfa_recipe_parse(check, file, &r);
	for (i = 0; !e && i < r->nversions && strcmp(r->versions[i].version, version) != 0; i++)
		;
	if (!e && i == r->nversions)
		e = cfa_fail(check, CFAPKG_E_RECIPE, "%s: version %s is not in the file as written",
		             file, version);
	if (e)
		*why = cfa_strdup(cfapkg_ctx_error(check));
	cfapkg_ctx_free(check);
	return e;
}

enum cfapkg_err cfapkg_recipe_add_version(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                          const struct cfapkg_new_version *nv)
{
	char *old = NULL, *text = NULL, *why = NULL;
	size_t oldlen = 0, len = 0;
	enum cfapkg_err e;
	int rc;

	if ((e = cfa_read_file(ctx, r->file, &old, &oldlen)) ||
	    (e = cfa_recipe_text_insert(ctx, r->file, old, oldlen, r->versions[0].version, nv, &text,
	                                &len)))
		goto out;
	if ((rc = write_atomic(r->file, text, len)) == ENOMEM) {
		e = cfa_nomem(ctx);
		goto out;
	}
	if (rc != 0) {
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot write: %s; it was not changed", r->file,
		             cfa_plat_strerror(rc));
		goto out;
	}
	/* The old text was kept for this: a version that leaves the recipe
	 * unable to load is taken out again, so the file never stays broken. */
	if ((e = reload(r->file, nv->version, &why)) != CFAPKG_E_OK) {
		rc = write_atomic(r->file, old, oldlen);
		e = cfa_fail(ctx, e == CFAPKG_E_NOMEM ? e : CFAPKG_E_RECIPE, "%s; %s%s",
		             why ? why : "out of memory while loading the file again",
		             rc ? "and putting the old text back failed: " : "the old text was put back",
		             rc ? cfa_plat_strerror(rc) : "");
	}
out:
	cfa_free(why);
	cfa_free(old);
	cfa_free(text);
	return e;
}
