/*
 * aptstate.c - what cfapkg accepted last from an APT repository followed
 * by its key, per repository and suite, in ROOT/apt/releases/ID/ (ID: the
 * first 16 hex digits of the SHA-256 of "REPOSITORY\nSUITE"):
 *
 *   InRelease    the file accepted last, as it came (read again offline)
 *   state.json   {"format": 1, "repository", "suite", "date", "valid_until",
 *                 "signed_by", "inrelease_sha256", "accepted"}
 *
 * Each is replaced atomically, the InRelease first: a crash between the
 * two leaves the older Date in state.json, which the newer file passes.
 * The Date recorded is what a later InRelease must not be older than.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "cache/cache.h"
#include "core/channel.h"
#include "core/json.h"
#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "trans/apttrust.h"

/* The repository's URL without a trailing '/', so both spellings share
 * one record. */
static size_t repo_len(const struct cfapkg_apt_source *a)
{
	size_t n = strlen(a->repository);

	return n && a->repository[n - 1] == '/' ? n - 1 : n;
}

/* ROOT/apt/releases/ID[/file]. */
static enum cfapkg_err release_path(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                    const char *file, char **out)
{
	/* A hash names the folder: a URL and a suite make a file name too long
	 * and full of characters some systems refuse. */
	char *key = cfa_aprintf("%.*s\n%s", (int)repo_len(a), a->repository, a->suite);
	char hex[65], name[48];
	bool ok = key && cfa_sha256_buf(key, strlen(key), hex) &&
	          cfa_snprintf(name, sizeof(name), "releases/%.16s%s%s", hex, file ? "/" : "",
	                       file ? file : "");

	cfa_free(key);
	if (!ok)
		return cfa_nomem(ctx);
	*out = cfa_root_path(ctx, CFA_APT, name);
	return *out ? CFAPKG_E_OK : ctx->err_code;
}

static const char *string_of(const cJSON *doc, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A record that cannot be read, or that is another repository's, is not
 * passed over silently: that would let an older file in. */
static enum cfapkg_err broken(struct cfapkg_ctx *ctx, const char *path)
{
	cfapkg_ctx_clear_error(ctx);
	return cfa_fail(ctx, CFAPKG_E_IO, "%s: the record of the APT InRelease accepted last "
	                "cannot be read; remove it to accept the repository afresh (the next "
	                "InRelease is then taken whatever its Date)", path);
}

enum cfapkg_err cfa_apt_state_date(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                   int64_t *date)
{
	char *path = NULL;
	cJSON *doc = NULL;
	const char *repo, *suite, *when;
	enum cfapkg_err e;

	*date = 0;
	if ((e = release_path(ctx, a, "state.json", &path)))
		return e;
	if (cfa_plat_is_file(path)) {
		if ((e = cfa_json_read_file(ctx, path, CFAPKG_E_IO, &doc)))
			e = broken(ctx, path);
		repo = string_of(doc, "repository"), suite = string_of(doc, "suite");
		when = string_of(doc, "date");
		/* The record must be this repository's and suite's: two whose
		 * IDs met would otherwise share one Date floor. */
		if (!e && (!repo || strlen(repo) != repo_len(a) ||
		           strncmp(repo, a->repository, repo_len(a)) != 0 || !suite ||
		           strcmp(suite, a->suite) != 0 || !when || !cfa_utc_parse(when, date)))
			e = broken(ctx, path);
	}
	cJSON_Delete(doc);
	cfa_free(path);
	return e;
}

enum cfapkg_err cfa_apt_state_inrelease(struct cfapkg_ctx *ctx,
                                        const struct cfapkg_apt_source *a, char **path)
{
	enum cfapkg_err e = release_path(ctx, a, "InRelease", path);

	/* NULL without an error when none is kept: --offline then has nothing
	 * to read, which its caller says. */
	if (!e && !cfa_plat_is_file(*path))
		CFA_FREE(*path);
	return e;
}

static cJSON *state_doc(const struct cfapkg_apt_source *a, const struct cfa_apt_release *r)
{
	struct cfa_json_build jb = {false};
	cJSON *doc = cfa_json_new_object(&jb);
	char date[32], until[32] = "", now[32];
	char *repo = cfa_strndup(a->repository, repo_len(a));

	/* The Date is what the next InRelease is compared against; the rest is
	 * kept for people, to see what was accepted and when. */
	cfa_utc_format(r->rel.date, date);
	if (r->rel.valid_until)
		cfa_utc_format(r->rel.valid_until, until);
	cfa_utc_now(now);
	if (!repo)
		jb.failed = true;
	cfa_json_add_number(&jb, doc, "format", 1);
	cfa_json_add_string(&jb, doc, "repository", repo);
	cfa_json_add_string(&jb, doc, "suite", a->suite);
	cfa_json_add_string(&jb, doc, "date", date);
	cfa_json_add_string(&jb, doc, "valid_until", until[0] ? until : NULL);
	cfa_json_add_string(&jb, doc, "signed_by", r->signer);
	cfa_json_add_string(&jb, doc, "inrelease_sha256", r->sha256);
	cfa_json_add_string(&jb, doc, "accepted", now);
	cfa_free(repo);
	return cfa_json_finish(&jb, doc);
}

enum cfapkg_err cfa_apt_release_accept(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                       const struct cfa_apt_release *r)
{
	char *dir = NULL, *file = NULL, *state = NULL;
	enum cfapkg_err e;
	int rc;

	if (!(e = release_path(ctx, a, NULL, &dir)) && !cfa_plat_is_dir(dir) &&
	    (rc = cfa_plat_mkdir_p(dir)) != 0)
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create it: %s", dir, cfa_plat_strerror(rc));
	/* The InRelease first, then its record: a crash between the two leaves
	 * the older Date, which the newer file passes again. */
	if (!e && !(e = release_path(ctx, a, "InRelease", &file)) &&
	    !(e = release_path(ctx, a, "state.json", &state)) &&
	    !(e = cfa_write_atomic(ctx, file, r->file, r->file_len)))
		e = cfa_write_json(ctx, state, state_doc(a, r));
	cfa_free(dir);
	cfa_free(file);
	cfa_free(state);
	return e;
}
