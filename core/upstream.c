/*
 * upstream.c - where a recipe's new versions come from: the releases list
 * of its upstream (GitHub's API shape), each tag mapped to a version, and
 * the versions newer than the recipe's newest.  The list is fetched by the
 * caller through the fetch engine (a room above this one); this reads it.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "platform/platform.h"

#define GITHUB_API "https://api.github.com"
/* Longer asset names are not classified (see asset_platform): the lower-cased
 * copy lives on the stack. */
#define ASSET_NAME_MAX 255

/* Compiles upstream.tag; on failure why says what is wrong with the pattern,
 * in words a recipe author can act on. */
static pcre2_code *tag_compile(const char *pattern, char *why, size_t len)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off = 0;
	uint32_t groups = 0;
	int code = 0;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &code, &off,
	                               NULL);

	if (!re) {
		pcre2_get_error_message(code, msg, sizeof(msg));
		cfa_fit_text(why, len, "%s at offset %lu", (const char *)msg, (unsigned long)off);
		return NULL;
	}
	/* Exactly one capture group: it is the version, and with two there
	 * would be no telling which one. */
	pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &groups);
	if (groups != 1) {
		pcre2_code_free(re);
		cfa_fit_text(why, len, "needs exactly one group around the version, like "
		             "'^release-(.+)$'");
		return NULL;
	}
	return re;
}

bool cfa_tag_pattern_check(const char *pattern, char *why, size_t len)
{
	pcre2_code *re = tag_compile(pattern, why, len);

	/* pcre2_code_free accepts NULL, so a pattern that failed to compile
	 * needs no test here. */
	pcre2_code_free(re);
	return re != NULL;
}

/* "https://github.com/OWNER/REPO" (a trailing "/", ".git", "#..." or
 * "?..." allowed): the span of "OWNER/REPO" less ".git", else false. */
static bool github_repo(const char *home, const char **start, size_t *len)
{
	static const char *const prefixes[] = {"https://github.com/", "http://github.com/",
	                                       "https://www.github.com/"};
	const char *p = NULL, *s;
	size_t i, slashes = 0;

	for (i = 0; i < 3 && !p; i++)
		if (strncmp(home, prefixes[i], strlen(prefixes[i])) == 0)
			p = home + strlen(prefixes[i]);
	if (!p)
		return false;
	/* Stops at the slash after REPO, so "https://github.com/o/r/releases"
	 * still names o/r. */
	for (s = p; *s && *s != '#' && *s != '?' && !(*s == '/' && slashes == 1); s++) {
		if (*s == '/')
			slashes++;
		else if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
		                 *s))
			return false;
	}
	*len = (size_t)(s - p);
	if (*len > 4 && strncmp(s - 4, ".git", 4) == 0)
		*len -= 4;
	*start = p;
	return slashes == 1 && p[0] != '/' && p[*len - 1] != '/';
}

enum cfapkg_err cfapkg_recipe_releases_url(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                           char **out)
{
	const char *base = GITHUB_API, *repo;
	char *api = NULL;
	size_t baselen, repolen, glen = strlen(GITHUB_API);
	int rc = cfa_plat_getenv_dup("CFAPKG_GITHUB_API", &api);

	*out = NULL;
	/* The only other answer is ENOENT, unset, and then the real API is
	 * used. */
	if (rc == ENOMEM)
		return cfa_nomem(ctx);
	if (api && *api)
		base = api;
	baselen = strlen(base);
	while (baselen > 0 && base[baselen - 1] == '/')
		baselen--; /* "http://127.0.0.1:8080/" and ".../8080" alike */
	/* A recipe's explicit api.github.com URL is redirected too, so that
	 * CFAPKG_GITHUB_API points every query at a test server or mirror. */
	if (r->upstream_releases && strncmp(r->upstream_releases, GITHUB_API, glen) == 0 &&
	    (r->upstream_releases[glen] == '/' || r->upstream_releases[glen] == '\0'))
		*out = cfa_aprintf("%.*s%s", (int)baselen, base, r->upstream_releases + glen);
	else if (r->upstream_releases)
		*out = cfa_strdup(r->upstream_releases);
	/* per_page=100 is the API's largest page; only that first page is
	 * asked for. */
	else if (r->homepage && github_repo(r->homepage, &repo, &repolen))
		*out = cfa_aprintf("%.*s/repos/%.*s/releases?per_page=100", (int)baselen, base,
		                   (int)repolen, repo);
	else {
		free(api); /* the platform's allocation */
		/* No source of releases is not an error: *out stays NULL,
		 * the recipe names no upstream to ask. */
		return CFAPKG_E_OK;
	}
	free(api);
	return *out ? CFAPKG_E_OK : cfa_nomem(ctx);
}

/* Tags to versions: upstream.tag's group, else the tag less a leading v. */
struct tagmap {
	pcre2_code *re;
	pcre2_match_data *md;
};

static enum cfapkg_err tagmap_init(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                   struct tagmap *m)
{
	char why[256];

	memset(m, 0, sizeof(*m));
	if (!r->upstream_tag)
		return CFAPKG_E_OK;
	if (!(m->re = tag_compile(r->upstream_tag, why, sizeof(why))))
		return cfa_fail(ctx, CFAPKG_E_RECIPE, "%s: upstream.tag \"%s\": %s", r->file,
		                r->upstream_tag, why);
	/* One match block sized for the pattern, reused for every tag. */
	m->md = pcre2_match_data_create_from_pattern(m->re, NULL);
	return m->md ? CFAPKG_E_OK : cfa_nomem(ctx);
}

static void tagmap_fini(struct tagmap *m)
{
	pcre2_match_data_free(m->md);
	pcre2_code_free(m->re);
}

/* The version a tag names as a span of it; false when it names none. */
static bool tag_version(const struct tagmap *m, const char *tag, const char **v, size_t *n)
{
	struct cfa_ver parsed;
	PCRE2_SIZE *ov;

	*v = tag;
	*n = strlen(tag);
	if (m->re) {
		/* pcre2_match returns one more than the highest group set;
		 * below 2 the tag did not match or the group took no part in
		 * the match. */
		if (pcre2_match(m->re, (PCRE2_SPTR)tag, *n, 0, 0, m->md, NULL) < 2)
			return false;
		ov = pcre2_get_ovector_pointer(m->md);
		/* ov[2] and ov[3] bound group 1; an empty version is no
		 * version. */
		if (ov[2] == PCRE2_UNSET || ov[3] <= ov[2])
			return false;
		*v = tag + ov[2];
		*n = ov[3] - ov[2];
	/* Only a v before a digit is dropped: "v1.2" is 1.2, while
	 * "vulkan-1.2" stays as it is and fails to parse. */
	} else if ((tag[0] == 'v' || tag[0] == 'V') && tag[1] >= '0' && tag[1] <= '9') {
		(*v)++;
		(*n)--;
	}
	/* A tag whose text does not parse as a cfapkg version ("nightly")
	 * names no version and is listed as skipped. */
	return cfa_ver_parse(*v, *n, &parsed, NULL);
}

/* Whether a lower-case name holds word as a token of its own ("win" in
 * "tool-win-x64.zip", not in "darwin"). */
static bool has_token(const char *s, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = strstr(s, word); p; p = strstr(p + 1, word)) {
		bool before = p == s || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9'));
		char c = p[n];
		if (before && !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return true;
	}
	return false;
}

/* The OS-ARCH an asset's name speaks of, or NULL: an OS must be named; an
 * architecture that is not is taken as x86_64, what most releases ship. */
static const char *asset_platform(const char *name)
{
	static const char *const names[2][3] = {
		{"windows-x86_64", "windows-aarch64", "windows-x86"},
		{"linux-x86_64", "linux-aarch64", "linux-x86"}};
	char low[ASSET_NAME_MAX + 1];
	size_t i, n = strlen(name);
	int os = -1, arch = 0;

	if (n > ASSET_NAME_MAX)
		return NULL;
	for (i = 0; i <= n; i++)
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	/* "win" alone only as a token of its own, since it is inside
	 * "darwin". */
	if (strstr(low, "windows") || strstr(low, "win64") || strstr(low, "win32") ||
	    has_token(low, "win"))
		os = 0;
	else if (strstr(low, "linux"))
		os = 1;
	if (os < 0)
		return NULL;
	if (strstr(low, "aarch64") || strstr(low, "arm64"))
		arch = 1;
	/* 32-bit only when the name says so and says nothing 64-bit: "x86" is
	 * also a substring of "x86_64". */
	else if (!strstr(low, "x86_64") && !strstr(low, "x86-64") && !strstr(low, "amd64") &&
	         !strstr(low, "x64") && !strstr(low, "win64") &&
	         (strstr(low, "i686") || strstr(low, "i386") || strstr(low, "win32") ||
	          has_token(low, "x86")))
		arch = 2;
	return names[os][arch];
}

struct reader {
	struct cfapkg_ctx *ctx;
	struct cfa_arena *a;
	const struct cfapkg_recipe *r;
	const char *url;
	struct tagmap map;
	struct cfapkg_releases *out;
	struct cfapkg_release *newer;   /* room for every release */
	/* Tags that named no version, as many as releases at most. */
	const char **skipped;
};

static const char *json_text(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool json_true(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* Whether the recipe's newest version has a source for platform (any
 * platform, when it has none). */
static bool newest_has(const struct cfapkg_recipe *r, const char *platform)
{
	const struct cfapkg_version *v = &r->versions[0];
	size_t i;

	for (i = 0; i < v->nsources; i++)
		if (strcmp(v->sources[i].platform, platform) == 0)
			return true;
	return v->nsources == 0;
}

/* Whether an earlier asset of the same release was already picked for
 * platform: the first one listed wins. */
static bool picked(const struct cfapkg_release_asset *as, size_t n, const char *platform)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (as[i].pick && strcmp(as[i].platform, platform) == 0)
			return true;
	return false;
}

static enum cfapkg_err read_assets(struct reader *rd, const cJSON *rel, struct cfapkg_release *out)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(rel, "assets"), *it;
	struct cfapkg_release_asset *as;
	size_t n = 0;

	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
		return CFAPKG_E_OK;
	if (!(as = cfa_arena_alloc(rd->a, (size_t)cJSON_GetArraySize(list) * sizeof(*as))))
		return cfa_nomem(rd->ctx);
	cJSON_ArrayForEach(it, list) {
		const char *name = json_text(it, "name"), *url = json_text(it, "browser_download_url");
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(it, "size");
		struct cfapkg_release_asset *a = &as[n];
		/* An asset without a name or a URL cannot be named or
		 * fetched; it is left out and its slot reused. */
		if (!name || !url)
			continue;
		a->name = cfa_arena_strdup(rd->a, name);
		a->url = cfa_arena_strdup(rd->a, url);
		if (!a->name || !a->url)
			return cfa_nomem(rd->ctx);
		/* -1 says the size is unknown; the bound keeps the cast to
		 * int64_t defined. */
		a->size = cJSON_IsNumber(size) && size->valuedouble >= 0 && size->valuedouble < 9e18
		                  ? (int64_t)size->valuedouble : -1;
		a->platform = asset_platform(name);
		a->format = cfapkg_format_from_url(name);
		a->pick = a->platform && a->format && newest_has(rd->r, a->platform) &&
		          !picked(as, n, a->platform);
		n++;
	}
	out->assets = as;
	out->nassets = n;
	return CFAPKG_E_OK;
}

static bool seen_version(const struct reader *rd, const char *v)
{
	size_t i;

	for (i = 0; i < rd->out->nnewer; i++)
		if (cfapkg_version_compare(rd->newer[i].version, v, NULL) == 0)
			return true;
	return false;
}

static enum cfapkg_err read_release(struct reader *rd, const cJSON *rel)
{
	const char *tag = json_text(rel, "tag_name"), *v, *at = json_text(rel, "published_at");
	struct cfapkg_release *out;
	char *version;
	size_t n;

	/* Drafts are not published and their tags may not exist yet; they do
	 * not count as read. */
	if (!tag || json_true(rel, "draft"))
		return CFAPKG_E_OK;
	rd->out->nread++;
	if (!tag_version(&rd->map, tag, &v, &n)) {
		rd->skipped[rd->out->nskipped] = cfa_arena_strdup(rd->a, tag);
		return rd->skipped[rd->out->nskipped++] ? CFAPKG_E_OK : cfa_nomem(rd->ctx);
	}
	if (!(version = cfa_arena_strndup(rd->a, v, n)))
		return cfa_nomem(rd->ctx);
	/* Two tags can spell one version ("v1.2" and "1.2"): the first one
	 * listed is kept. */
	if (cfapkg_version_compare(version, rd->out->newest, NULL) <= 0 ||
	    seen_version(rd, version))
		return CFAPKG_E_OK;
	/* newer has room for every release in the list, so it cannot
	 * overflow. */
	out = &rd->newer[rd->out->nnewer];
	out->version = version;
	out->tag = cfa_arena_strdup(rd->a, tag);
	out->published_at = at ? cfa_arena_strdup(rd->a, at) : NULL;
	out->prerelease = json_true(rel, "prerelease");
	if (!out->tag || (at && !out->published_at))
		return cfa_nomem(rd->ctx);
	/* Counted before the assets are read: on an error the arena is
	 * dropped whole, so a half-read release is never seen. */
	rd->out->nnewer++;
	return read_assets(rd, rel, out);
}

static int newest_first(const void *a, const void *b)
{
	const struct cfapkg_release *x = a, *y = b;
	return cfapkg_version_compare(y->version, x->version, NULL);
}

static enum cfapkg_err read_list(struct reader *rd, const cJSON *root)
{
	size_t n = (size_t)cJSON_GetArraySize(root);
	const cJSON *it;
	enum cfapkg_err e = CFAPKG_E_OK;

	rd->newer = cfa_arena_alloc(rd->a, (n ? n : 1) * sizeof(*rd->newer));
	rd->skipped = cfa_arena_alloc(rd->a, (n ? n : 1) * sizeof(*rd->skipped));
	if (!rd->newer || !rd->skipped)
		return cfa_nomem(rd->ctx);
	cJSON_ArrayForEach(it, root) {
		if (cJSON_IsObject(it) && (e = read_release(rd, it)))
			return e;
	}
	/* The API lists releases by date, not by version: a fix release of an
	 * old branch can come after a newer version. */
	qsort(rd->newer, rd->out->nnewer, sizeof(*rd->newer), newest_first);
	rd->out->newer = rd->newer;
	rd->out->skipped = rd->skipped;
	return CFAPKG_E_OK;
}

static enum cfapkg_err parse_reply(struct reader *rd, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	cJSON *root;
	enum cfapkg_err e = cfa_read_file(rd->ctx, path, &text, &len);

	if (e)
		return e;
	/* Text that is not JSON leaves root NULL and is reported below as not
	 * a list of releases. */
	root = cJSON_ParseWithLength(text, len);
	/* The reply is checked for NUL like a local file: a tag or URL cut at
	 * one would be another tag or URL. */
	if (root && (e = cfa_json_refuse_nul(rd->ctx, rd->url, text, len, CFAPKG_E_IO))) {
		cJSON_Delete(root);
		cfa_free(text);
		return e;
	}
	cfa_free(text);
	if (!cJSON_IsArray(root))
		e = cfa_fail(rd->ctx, CFAPKG_E_IO, "%s: not a list of releases (GitHub's shape: "
		             "[{\"tag_name\", \"assets\": [...]}, ...]); check the URL (--releases-url, "
		             "upstream.releases, CFAPKG_GITHUB_API)", rd->url);
	else
		e = read_list(rd, root);
	cJSON_Delete(root);
	return e;
}

enum cfapkg_err cfapkg_releases_read(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r,
                                     const char *path, const char *url,
                                     struct cfapkg_releases **out)
{
	struct cfa_arena *a = cfa_malloc(sizeof(*a));
	struct reader rd;
	enum cfapkg_err e;

	if (!a)
		return cfa_nomem(ctx);
	cfa_arena_init(a);
	memset(&rd, 0, sizeof(rd));
	rd.ctx = ctx;
	rd.a = a;
	rd.r = r;
	rd.url = url;
	if (!(rd.out = cfa_arena_alloc(a, sizeof(*rd.out))))
		e = cfa_nomem(ctx);
	else if (!(e = tagmap_init(ctx, r, &rd.map))) {
		rd.out->arena = a;
		/* A recipe's versions are kept newest first, so versions[0]
		 * is the one to beat. */
		rd.out->newest = r->versions[0].version;
		e = parse_reply(&rd, path);
	}
	tagmap_fini(&rd.map);
	/* Nothing is handed out on failure: the arena holds everything read
	 * so far and goes with it. */
	if (e) {
		cfa_arena_fini(a);
		cfa_free(a);
		return e;
	}
	*out = rd.out;
	return CFAPKG_E_OK;
}

void cfapkg_releases_free(struct cfapkg_releases *rel)
{
	struct cfa_arena *a = rel ? rel->arena : NULL;

	if (!a)
		return;
	/* The result lives in its own arena, itself allocated, so freeing the
	 * arena frees the result struct too. */
	cfa_arena_fini(a);
	cfa_free(a);
}
