/*
 * lockset.c - packages made of several archives, in a lock.  Such a part
 * lists its archives ("artifacts": each with its URL, SHA-256, size,
 * format and strip); its "sha256" names the set (cfapkg_artifact_set_digest)
 * and, with its name and version, its store folder.  Both are derived
 * again when a lockfile is read, never trusted.
 */
#include <string.h>

#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "env/env.h"

/* The set's sha256 and store folder are derived here from the archives, never
 * taken from the caller, so that what is written reads back: the reader derives
 * them again and refuses a lockfile where they differ. */
enum cfapkg_err cfa_lock_set_artifacts(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *l,
                                       struct cfapkg_lockfile_part *p,
                                       const struct cfapkg_artifact *arts, size_t n)
{
	/* At least one element, so that NULL always means out of memory. */
	struct cfapkg_artifact *copy = cfa_arena_alloc(l->arena, (n ? n : 1) * sizeof(*copy));
	char hex[65], *sha, *store;
	size_t i;

	if (!copy)
		return cfa_nomem(ctx);
	memcpy(copy, arts, n * sizeof(*copy));
	cfapkg_artifact_set_digest(copy, n, hex);
	/* An empty digest means the digest failed; that is reported as out of
	 * memory below, through the store name left NULL. */
	sha = hex[0] ? cfa_arena_strdup(l->arena, hex) : NULL;
	store = sha ? cfa_store_name(p->name, p->version, sha) : NULL;
	p->store = store ? cfa_arena_strdup(l->arena, store) : NULL;
	cfa_free(store);
	if (!p->store)
		return cfa_nomem(ctx);
	p->artifacts = copy;
	p->nartifacts = n;
	p->sha256 = sha;
	/* A set has no single source: its URLs are per archive, and url, size
	 * and format must not keep a single package's values from before. */
	p->url = NULL;
	p->size = 0;
	for (i = 0; i < n; i++)
		p->size += arts[i].size;
	p->format = n ? arts[0].format : "deb";
	p->strip = 0;
	return CFAPKG_E_OK;
}

/* The part's own sha256 and store are written by the caller; this writes only
 * what they are derived from.  Mirrors are left out when there are none, as a
 * single package's are. */
void cfa_lock_artifacts_json(struct cfa_json_build *jb, cJSON *o, const struct cfapkg_lockfile_part *p)
{
	cJSON *a = cfa_json_add_array(jb, o, "artifacts");
	size_t i, k;

	for (i = 0; i < p->nartifacts; i++) {
		const struct cfapkg_artifact *x = &p->artifacts[i];
		cJSON *r = cfa_json_new_object(jb), *m;
		cfa_json_add_string(jb, r, "url", x->url);
		if (x->nmirrors) {
			m = cfa_json_add_array(jb, r, "mirrors");
			for (k = 0; k < x->nmirrors; k++)
				cfa_json_append_string(jb, m, x->mirrors[k]);
		}
		cfa_json_add_string(jb, r, "sha256", x->sha256);
		cfa_json_add_number(jb, r, "size", (double)x->size);
		cfa_json_add_string(jb, r, "format", x->format);
		cfa_json_add_number(jb, r, "strip", x->strip);
		cfa_json_append(jb, a, r);
	}
}

/* A lockfile's set names are checked, not trusted: a hand-edited or damaged
 * "sha256" or "store" that no longer matches the archives would otherwise send
 * the set into, or take it from, another set's store folder. */
enum cfapkg_err cfa_lock_read_artifacts(struct cfa_jr *jr, const cJSON *o,
                                        struct cfapkg_lockfile_part *p)
{
	struct cfapkg_artifact *arts = NULL;
	const char *sha = NULL, *store = NULL;
	char hex[65], *expect;
	enum cfapkg_err e;
	size_t n = 0;

	if ((e = cfa_jr_array(jr, o, "artifacts", sizeof(*arts), true, cfa_parse_artifact, NULL,
	                      (void **)&arts, &n)) ||
	    (e = cfa_jr_string(jr, o, "sha256", true, &sha)) ||
	    (e = cfa_jr_string(jr, o, "store", true, &store)))
		return e;
	cfapkg_artifact_set_digest(arts, n, hex);
	if (!hex[0])
		return cfa_nomem(jr->ctx);
	if (strcmp(hex, sha) != 0)
		return cfa_jr_fail(jr, "sha256 must be \"%s\", the digest of the artifacts listed",
		                   hex);
	if (!(expect = cfa_store_name(p->name, p->version, hex)))
		return cfa_nomem(jr->ctx);
	e = strcmp(expect, store) != 0 ? cfa_jr_fail(jr, "store must be \"%s\"", expect)
	                               : CFAPKG_E_OK;
	cfa_free(expect);
	if (e)
		return e;
	p->artifacts = arts;
	p->nartifacts = n;
	p->sha256 = sha;
	p->store = store;
	p->url = NULL;
	/* The array was read as required and non-empty, so there is a first
	 * archive. */
	p->format = arts[0].format;
	p->size = 0;
	for (size_t i = 0; i < n; i++)
		p->size += arts[i].size;
	return CFAPKG_E_OK;
}
