/*
 * lockcheck.c - whether a lock may be installed here.  A lockfile comes
 * from anywhere and may have been edited, so nothing in it is trusted:
 * the set must be closed under its own parts' requirements (a part removed
 * by hand leaves a broken stack), every download must come over http(s)
 * (file:// would read this machine's files), and a part experimental on
 * the GPU needs the same consent a plan asks for.  Then the machine must
 * still fit what the lock was made for.
 */
#include <string.h>

#include "core/arena.h"
#include "core/dep.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "env/env.h"

/* The name messages give the lock. */
static const char *lock_name(const struct cfapkg_lockfile *lock)
{
	return lock->file ? lock->file : "the lock";
}

/* A version 1 lock records no requirements or statuses, so none of the checks
 * below could be made: it is refused rather than trusted. */
static enum cfapkg_err check_format(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock)
{
	if (lock->format >= CFAPKG_LOCK_FORMAT)
		return CFAPKG_E_OK;
	return cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s: lockfile version %u, written by an older "
	                "cfapkg, does not record what each part requires, provides and how well "
	                "it is tested, so it cannot be checked; re-create it with 'cfapkg lock' "
	                "from the environment it came from", lock_name(lock), lock->format);
}

/* URL schemes are case-insensitive (RFC 3986): "HTTPS://" is https too. */
static bool starts_nocase(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++) {
		char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
		if (c != *prefix)
			return false;
	}
	return true;
}

/* https:// or http:// and a host: file:// and plain paths would read this
 * machine's own files (only a mirror rule of this machine may name them). */
static bool fetchable(const char *url)
{
	size_t n = starts_nocase(url, "https://") ? 8 : starts_nocase(url, "http://") ? 7 : 0;

	/* A scheme with no host ("https:///etc") names no server: refused like
	 * a file path. */
	return n && url[n] && url[n] != '/';
}

static enum cfapkg_err refuse_url(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                  size_t i, const char *field, const char *url)
{
	const struct cfapkg_lockfile_part *p = &lock->parts[i];

	return cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s: packages[%u] (%s %s): %s \"%s\" is not an "
	                "https:// or http:// URL, and only those are fetched; correct it, or "
	                "re-create the lockfile with 'cfapkg lock'", lock_name(lock), (unsigned)i,
	                p->name, p->version, field, url);
}

/* One download's URL and mirrors; where names the field ("" or
 * "artifacts[N]."). */
static enum cfapkg_err check_download(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                      size_t i, const char *where, const char *url,
                                      const char *const *mirrors, size_t nmirrors)
{
	/* The field is named in the message so that the user can find the bad
	 * URL in a lock they edited. */
	char field[64]; /* "artifacts[N].mirrors[N]": room for two numbers */
	size_t k;

	if (!url || !fetchable(url)) {
		if (!cfa_snprintf(field, sizeof(field), "%surl", where))
			return cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s: too many artifacts", lock_name(lock));
		return refuse_url(ctx, lock, i, field, url ? url : "");
	}
	for (k = 0; k < nmirrors; k++) {
		if (fetchable(mirrors[k]))
			continue;
		if (!cfa_snprintf(field, sizeof(field), "%smirrors[%lu]", where, (unsigned long)k))
			return cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s: too many mirrors", lock_name(lock));
		return refuse_url(ctx, lock, i, field, mirrors[k]);
	}
	return CFAPKG_E_OK;
}

/* Only package parts download anything; an artifact set is checked per
 * artifact, each with its own mirrors. */
static enum cfapkg_err check_urls(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	char where[40];
	size_t i, k;

	for (i = 0; i < lock->nparts && !e; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		if (p->kind != CFAPKG_KIND_PACKAGE)
			continue;
		if (!p->nartifacts)
			e = check_download(ctx, lock, i, "", p->url, p->mirrors, p->nmirrors);
		for (k = 0; k < p->nartifacts && !e; k++) {
			const struct cfapkg_artifact *a = &p->artifacts[k];
			if (!cfa_snprintf(where, sizeof(where), "artifacts[%lu].", (unsigned long)k))
				return cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s: too many artifacts",
				                lock_name(lock));
			e = check_download(ctx, lock, i, where, a->url, a->mirrors, a->nmirrors);
		}
	}
	return e;
}

/* Whether part q meets the requirement r: by its own name and version,
 * or by a provide (one without a version meets any constraint, as in the
 * solver). */
static bool meets(struct cfa_arena *a, const struct cfapkg_lockfile_part *q, const struct cfa_range *r)
{
	struct cfa_ver v;
	struct cfa_range pr;
	const char *why;
	size_t i;

	if (strcmp(q->name, r->name) == 0 && cfa_ver_parse(q->version, strlen(q->version), &v, NULL))
		return cfa_range_match(r, &v);
	for (i = 0; i < q->nprovides; i++) {
		if (!cfa_range_parse(a, q->provides[i], &pr, &why) || strcmp(pr.name, r->name) != 0)
			continue;
		/* A provide holds at most one "= version" (read_deps refused
		 * more), so its first clause is its version. */
		if (pr.nclauses == 0 || cfa_range_match(r, &pr.clauses[0].ver))
			return true;
	}
	return false;
}

static enum cfapkg_err refuse_unmet(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                    size_t i, const char *req, const char *name)
{
	const struct cfapkg_lockfile_part *p = &lock->parts[i], *q = cfapkg_lockfile_find(lock, name);

	/* One message in one piece: a reason formatted apart would need a
	 * buffer of its own, and could be cut. */
	return cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s: packages[%u] (%s %s) requires \"%s\", but "
	                "%s%s%s%s%s: the set would not work; re-create the lockfile with 'cfapkg "
	                "lock' instead of editing it", lock_name(lock), (unsigned)i, p->name,
	                p->version, req, q ? "the set has " : "no part of the set is or provides ",
	                q ? q->name : name, q ? " " : "", q ? q->version : "",
	                q ? ", which does not satisfy it" : "");
}

/* Requirement req of part i is met inside the set. */
static enum cfapkg_err check_requirement(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                         struct cfa_arena *a, size_t i, const char *req)
{
	const struct cfapkg_lockfile_part *p = &lock->parts[i];
	const char *why = NULL;
	struct cfa_range r;
	size_t k;

	if (!cfa_range_parse(a, req, &r, &why))
		return !why ? cfa_nomem(ctx)
		            : cfa_fail(ctx, CFAPKG_E_LOCKFILE, "%s: packages[%u] (%s %s): requirement "
		                       "\"%s\": %s; re-create the lockfile with 'cfapkg lock'",
		                       lock_name(lock), (unsigned)i, p->name, p->version, req, why);
	for (k = 0; k < lock->nparts; k++)
		if (meets(a, &lock->parts[k], &r))
			return CFAPKG_E_OK;
	return refuse_unmet(ctx, lock, i, req, r.name);
}

/* Every requirement of every part is met inside the set.
 * A hand-edited lock that drops a part another one needs would install a stack
 * that fails at run time: refused here instead.  The arena holds the parsed
 * ranges until the check ends. */
static enum cfapkg_err check_closed(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock)
{
	struct cfa_arena a;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i, j;

	cfa_arena_init(&a);
	for (i = 0; i < lock->nparts && !e; i++)
		for (j = 0; j < lock->parts[i].nrequires && !e; j++)
			e = check_requirement(ctx, lock, &a, i, lock->parts[i].requires[j]);
	cfa_arena_fini(&a);
	return e;
}

static bool has_sdk(const struct cfapkg_facts *f, const char *version)
{
	size_t i;

	for (i = 0; i < f->nhip_sdks; i++)
		if (cfapkg_version_compare(f->hip_sdks[i], version, NULL) == 0)
			return true;
	return false;
}

/* A part that lists no GPU targets runs on any. */
static bool supports(const struct cfapkg_lockfile_part *p, const char *gfx)
{
	size_t i;

	for (i = 0; i < p->ngfx; i++)
		if (strcmp(p->gfx[i], gfx) == 0)
			return true;
	return p->ngfx == 0;
}

/* Same OS and architecture, a GPU every part supports, the HIP SDKs it
 * uses, a driver no older.  Each message names the fact that differs. */
static enum cfapkg_err check_machine(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                     const struct cfapkg_facts *f)
{
	const struct cfapkg_facts *was = &lock->facts;
	const char *file = lock_name(lock);
	size_t i;

	if (was->os[0] && strcmp(was->os, f->os) != 0)
		return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: os: the lock was made for %s, this machine "
		                "is %s", file, was->os, f->os);
	if (was->arch && (!f->arch || strcmp(was->arch, f->arch) != 0))
		return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: arch: the lock was made for %s, this "
		                "machine is %s", file, was->arch, f->arch ? f->arch : "not known");
	for (i = 0; i < lock->nparts; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		if (f->gfx[0] && !supports(p, f->gfx))
			return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: gpu: the lock was made for %s; this "
			                "machine has %s, which %s %s does not support", file,
			                was->gfx[0] ? was->gfx : "another GPU", f->gfx, p->name,
			                p->version);
		/* A system part that was a HIP SDK on the lock's machine must
		 * be one here too; when either machine's SDKs are not known,
		 * nothing is said. */
		if (p->kind == CFAPKG_KIND_SYSTEM && was->hip_sdks_known && has_sdk(was, p->version) &&
		    f->hip_sdks_known && !has_sdk(f, p->version))
			return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: hip_sdk: the lock uses %s %s, which is "
			                "not installed on this machine", file, p->name, p->version);
	}
	/* A newer driver is accepted: drivers keep running what older ones
	 * ran. */
	if (was->driver && f->driver &&
	    cfapkg_version_compare(f->driver, was->driver, NULL) < 0)
		return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: driver: the lock was made with driver %s; "
		                "this machine has the older %s", file, was->driver, f->driver);
	return CFAPKG_E_OK;
}

#define ALLOW_HINT "pass --allow-experimental to install it anyway"

/* The GPU the parts' recorded statuses must speak for.
 * The statuses in the lock are for the lock's GPU; on another GPU they say
 * nothing, so consent is asked instead. */
static enum cfapkg_err check_gpu_status(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                        const char *gpu)
{
	const struct cfapkg_gpu_target *t;
	enum cfapkg_err e;

	if (!gpu[0])
		return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: neither the lock nor this machine names a "
		                "GPU, so no part's status on it is known; name it with --gpu, or "
		                ALLOW_HINT, lock_name(lock));
	if ((e = cfapkg_recipes_load(ctx)))
		return e;
	t = cfapkg_gpu_target_find(ctx, gpu);
	if (t && t->status == CFAPKG_STATUS_EXPERIMENTAL)
		return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: %s is an experimental GPU target, which "
		                "makes every part experimental on it; " ALLOW_HINT, lock_name(lock),
		                gpu);
	if (lock->facts.gfx[0] && strcmp(lock->facts.gfx, gpu) != 0)
		return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: the lock records each part's status on %s, "
		                "so its status on this machine's %s is not known; make the lockfile on "
		                "a machine with %s, or " ALLOW_HINT, lock_name(lock),
		                lock->facts.gfx, gpu, gpu);
	return CFAPKG_E_OK;
}

/* Nothing experimental, or of unknown status, without consent. */
static enum cfapkg_err check_status(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                    const struct cfapkg_facts *f)
{
	const char *gpu = f->gfx[0] ? f->gfx : lock->facts.gfx;
	enum cfapkg_err e;
	size_t i;

	if ((e = check_gpu_status(ctx, lock, gpu)))
		return e;
	for (i = 0; i < lock->nparts; i++) {
		const struct cfapkg_lockfile_part *p = &lock->parts[i];
		if (p->status >= 0 && p->status != CFAPKG_STATUS_EXPERIMENTAL)
			continue;
		return cfa_fail(ctx, CFAPKG_E_FACTS, "%s: packages[%u] (%s %s) %s on %s; " ALLOW_HINT,
		                lock_name(lock), (unsigned)i, p->name, p->version,
		                p->status < 0 ? "has no known status" : "is experimental", gpu);
	}
	return CFAPKG_E_OK;
}

/* The status check comes last: it is the only one --allow-experimental
 * lifts. */
enum cfapkg_err cfapkg_lockfile_verify(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                   const struct cfapkg_facts *facts,
                                   const struct cfapkg_lockfile_verify_opts *opts)
{
	static const struct cfapkg_lockfile_verify_opts defaults = {false};
	enum cfapkg_err e;

	if (!opts)
		opts = &defaults;
	if ((e = check_format(ctx, lock)) || (e = check_urls(ctx, lock)) ||
	    (e = check_closed(ctx, lock)) || (e = check_machine(ctx, lock, facts)))
		return e;
	return opts->allow_experimental ? CFAPKG_E_OK : check_status(ctx, lock, facts);
}

enum cfapkg_err cfapkg_lockfile_check(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                  const struct cfapkg_facts *facts)
{
	return cfapkg_lockfile_verify(ctx, lock, facts, NULL);
}
