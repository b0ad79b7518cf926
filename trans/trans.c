/*
 * trans.c - one change to an environment, start to end, in the library.
 *
 *   begin    take the root's writer lock (finishing what an interrupted
 *            writer left), read the environment's current set
 *   prepare  the new set: solved from the new requests (installed versions
 *            kept where they fit, the environment's pins honoured), read
 *            from a lockfile and re-checked, or the current set again
 *            (repair); then what changes
 *   commit   fetch and unpack what the store lacks, write the generation,
 *            check it, switch to it
 *   free     release the lock
 *
 * Nothing is changed before commit, and commit changes the environment
 * only by its last step (cfapkg_env_commit's switch): a failure anywhere
 * leaves the environment as it was.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "env/env.h"
#include "platform/platform.h"
#include "trans/trans.h"

static enum cfapkg_err take_lock(struct cfapkg_trans *t)
{
	/* A first try that does not wait, so that the caller can say it is
	 * waiting before it does, rather than seem to hang. */
	enum cfapkg_err e = cfapkg_writer_lock(t->ctx, 0, &t->lock);

	if (e != CFAPKG_E_BUSY || !t->o.lock_wait_ms)
		return e;
	cfapkg_ctx_clear_error(t->ctx);
	if (t->o.waiting)
		t->o.waiting(t->o.arg, cfapkg_ctx_root(t->ctx));
	return cfapkg_writer_lock(t->ctx, t->o.lock_wait_ms, &t->lock);
}

static enum cfapkg_err read_current(struct cfapkg_trans *t)
{
	enum cfapkg_err e = cfapkg_env_lockfile(t->ctx, t->env, 0, &t->old);

	/* Nothing installed yet is no set, not an error: an install starts from
	 * there; every other command needs something to work on. */
	if (e == CFAPKG_E_NOTFOUND) {
		cfapkg_ctx_clear_error(t->ctx);
		t->old = NULL;
		e = CFAPKG_E_OK;
	}
	if (!e && !t->old && t->o.kind != CFAPKG_TRANS_INSTALL)
		return cfa_fail(t->ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has nothing installed",
		                t->env);
	return e;
}

enum cfapkg_err cfapkg_trans_begin(struct cfapkg_ctx *ctx, const struct cfapkg_trans_opts *opts,
                                   struct cfapkg_trans **out)
{
	struct cfapkg_trans *t = cfa_calloc(1, sizeof(*t));
	enum cfapkg_err e;

	/* *out is set first, so that cfapkg_trans_free frees what was made
	 * however far begin got. */
	*out = t;
	if (!t)
		return cfa_nomem(ctx);
	t->ctx = ctx;
	t->o = *opts;
	t->env = opts->env ? opts->env : CFAPKG_DEFAULT_ENV;
	/* Before the lock: a misspelt environment fails at once, without
	 * waiting on another writer. */
	if (!cfapkg_env_exists(ctx, t->env))
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "no environment \"%s\"; create it with "
		                "'cfapkg env create %s'", t->env, t->env);
	if ((e = take_lock(t)))
		return e;
	return read_current(t);
}

/* The new set, by the solve `plan` makes too (envplan.c): an update
 * moves the names it was given (all, given none); every other command
 * keeps each installed version that still fits. */
static enum cfapkg_err solve(struct cfapkg_trans *t)
{
	struct cfapkg_plan_opts po = {.pins = t->o.pins, .npins = t->o.npins,
	                              .allow_experimental = t->o.allow_experimental,
	                              .full_pool = t->o.full_pool};
	bool update = t->o.kind == CFAPKG_TRANS_UPDATE;
	struct cfa_env_plan_req rq = {.env = t->env, .facts = t->o.facts, .opts = &po,
	                              .installed = t->old, .moving = update ? t->o.args : NULL,
	                              .nmoving = update ? t->o.nargs : 0,
	                              .move_all = update && t->o.nargs == 0};
	enum cfapkg_err e;

	e = cfa_env_plan(t->ctx, &rq, (const char *const *)t->requests, t->nrequests, &t->plan);
	if (e)
		return e;
	/* The plan stays with the transaction: the caller explains what does
	 * not fit from its problems (cfapkg_trans_plan). */
	if (!cfapkg_plan_solved(t->plan))
		return cfa_fail(t->ctx, CFAPKG_E_UNSOLVABLE, "no set of versions fits");
	return cfapkg_lockfile_from_plan(t->ctx, t->plan, (const char *const *)t->requests,
	                             t->nrequests, &t->new);
}

/* The set of a remove that took the last request: nothing, for the
 * machine the command describes (the old generation's when none). */
static enum cfapkg_err empty_set(struct cfapkg_trans *t)
{
	/* The current set is read for its facts and form; only its parts and
	 * requests are emptied. */
	enum cfapkg_err e = cfapkg_env_lockfile(t->ctx, t->env, 0, &t->new);

	if (e)
		return e;
	t->new->nparts = 0;
	t->new->nrequests = 0;
	t->new->file = NULL;
	t->new->format = CFAPKG_LOCK_FORMAT; /* no part lacks what version 2 records */
	if (t->o.facts && cfapkg_facts_copy(t->o.facts, &t->new->facts))
		return cfa_nomem(t->ctx);
	return CFAPKG_E_OK;
}

/* A lockfile's set, re-checked against this machine before it is trusted. */
static enum cfapkg_err from_lockfile(struct cfapkg_trans *t)
{
	struct cfapkg_lockfile_verify_opts vo = {0};
	enum cfapkg_err e = cfapkg_lockfile_read(t->ctx, t->o.locked, &t->new);

	if (e)
		return e;
	vo.allow_experimental = t->o.allow_experimental;
	e = cfapkg_lockfile_verify(t->ctx, t->new, t->o.facts, &vo);
	if (e == CFAPKG_E_LOCKFILE)
		return e; /* the file itself is wrong: its message says how */
	if (e) {
		char *why = cfa_strdup(cfapkg_ctx_error(t->ctx));
		if (!why)
			return cfa_nomem(t->ctx);
		cfapkg_ctx_clear_error(t->ctx);
		/* The message names the file already; the code says "no set fits". */
		e = cfa_fail(t->ctx, CFAPKG_E_UNSOLVABLE, "%s", why);
		cfa_free(why);
		return e;
	}
	return CFAPKG_E_OK;
}

static bool same_requests(const struct cfapkg_lockfile *a, const struct cfapkg_lockfile *b)
{
	size_t i;

	if (!a || a->nrequests != b->nrequests)
		return false;
	for (i = 0; i < a->nrequests; i++)
		if (strcmp(a->requests[i], b->requests[i]) != 0)
			return false;
	return true;
}

enum cfapkg_err cfapkg_trans_prepare(struct cfapkg_trans *t)
{
	enum cfapkg_err e;

	if (t->o.locked)
		e = from_lockfile(t);
	else if (t->o.kind == CFAPKG_TRANS_REPAIR)
		e = cfapkg_env_lockfile(t->ctx, t->env, 0, &t->new);
	else if (!(e = cfa_trans_requests(t)))
		e = t->nrequests ? solve(t) : empty_set(t);
	/* An APT source's .debs are known once its index is read: before the
	 * diff, whose comparison names sets by their digest. */
	if (!e)
		e = cfapkg_lockfile_resolve(t->ctx, t->new, &t->o.fetch);
	if (!e)
		e = cfa_trans_diff(t);
	if (!e && t->o.kind == CFAPKG_TRANS_REPAIR)
		e = cfa_trans_damage(t);
	if (e)
		return e;
	t->prepared = true;
	/* Nothing to do only when no part changes and the requests stay as they
	 * were: a request added for a part already there still writes a
	 * generation. */
	t->nothing = t->old && t->nchanges == 0 && same_requests(t->old, t->new);
	return CFAPKG_E_OK;
}

const struct cfapkg_plan *cfapkg_trans_plan(const struct cfapkg_trans *t)
{
	return t->plan;
}

const struct cfapkg_lockfile *cfapkg_trans_old(const struct cfapkg_trans *t)
{
	return t->old;
}

const struct cfapkg_lockfile *cfapkg_trans_new(const struct cfapkg_trans *t)
{
	return t->new;
}

const struct cfapkg_change *cfapkg_trans_changes(const struct cfapkg_trans *t, size_t *n)
{
	*n = t->nchanges;
	return t->changes;
}

bool cfapkg_trans_nothing_to_do(const struct cfapkg_trans *t)
{
	return t->nothing;
}

/* Whether commit unpacks this package: its folder is missing, or damaged
 * and set aside first. */
static bool to_unpack(const struct cfapkg_trans *t, const struct cfapkg_lockfile_part *p)
{
	size_t i;

	if (p->kind != CFAPKG_KIND_PACKAGE)
		return false;
	for (i = 0; i < t->ndamaged; i++)
		if (p->store && strcmp(t->damaged[i], p->store) == 0)
			return true;
	return !cfapkg_store_has(t->ctx, p);
}

uint64_t cfapkg_trans_download_bytes(const struct cfapkg_trans *t)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; t->new && i < t->new->nparts; i++) {
		const struct cfapkg_lockfile_part *p = &t->new->parts[i];
		if (to_unpack(t, p))
			total += cfa_bytes_to_fetch(t->ctx, p);
	}
	return total;
}

/* A refusal for the sizes that are known says what it could not count:
 * a download without a recorded size is bounded only by its cap, and
 * counting every cap would refuse a disk that has room. */
static enum cfapkg_err space_refused(struct cfapkg_trans *t, enum cfapkg_err e, size_t unknown)
{
	if (!unknown)
		return e;
	return cfa_fail_more(t->ctx, e, " (not counted: %lu download%s whose size no recipe records)",
	                     (unsigned long)unknown, unknown == 1 ? "" : "s");
}

/* Before any byte is fetched: room for the archives the cache lacks and
 * for what they unpack to (a damaged folder's copy is built beside it, so
 * it counts in full). */
static enum cfapkg_err check_space(struct cfapkg_trans *t)
{
	uint64_t download = 0, unpack = 0;
	size_t i, unknown = 0;
	enum cfapkg_err e;

	for (i = 0; i < t->new->nparts; i++) {
		const struct cfapkg_lockfile_part *p = &t->new->parts[i];
		if (p->size == 0 || !to_unpack(t, p))
			continue;
		if (p->size < 0) {
			unknown += !cfa_in_cache(t->ctx, p->sha256);
			continue;
		}
		download += cfa_bytes_to_fetch(t->ctx, p);
		unpack += cfapkg_unpacked_estimate(p->format, p->size,
		                                   p->unpacked_size ? (int64_t)p->unpacked_size : -1);
	}
	/* Nothing whose size is known is to be fetched: the space check is left
	 * to the download's own cap rather than refused on a guess. */
	if (!download && !unpack)
		return CFAPKG_E_OK;
	e = cfapkg_check_space(t->ctx, download, unpack);
	return e ? space_refused(t, e, unknown) : CFAPKG_E_OK;
}

/* The first damaged folder a failed fetch did not replace (a user deciding
 * what to do next must know nothing was lost). */
static const char *kept_damaged(const struct cfapkg_trans *t)
{
	size_t i, k;

	for (i = 0; i < t->ndamaged; i++) {
		for (k = 0; k < t->nitems; k++)
			if (t->items[k].unpacked && t->items[k].unpack_name &&
			    strcmp(t->items[k].unpack_name, t->damaged[i]) == 0)
				break;
		if (k == t->nitems)
			return t->damaged[i];
	}
	return NULL;
}

/* A fetch that fails before a damaged folder was replaced says that the
 * folder is left as it was, in the first failed download's message (what
 * the front end shows) and in the error. */
static enum cfapkg_err fetch(struct cfapkg_trans *t)
{
	enum cfapkg_err e = cfa_lock_fetch_replacing(t->ctx, t->new, &t->o.fetch,
	                                             (const char *const *)t->damaged, t->ndamaged,
	                                             &t->items, &t->nitems);
	const char *kept = e ? kept_damaged(t) : NULL;
	char *why, *said;
	size_t i;

	if (!kept)
		return e;
	if (!(why = cfa_aprintf("store/%s is left as it was (a damaged folder is replaced only "
	                        "by a whole new copy)", kept)) ||
	    !(said = cfa_strdup(cfapkg_ctx_error(t->ctx)))) {
		cfa_free(why);
		return cfa_nomem(t->ctx);
	}
	for (i = 0; i < t->nitems && !t->items[i].err; i++)
		;
	if (i < t->nitems)
		cfa_item_error(&t->items[i], "%s; %s", t->items[i].error ? t->items[i].error : "",
		               why);
	cfapkg_ctx_clear_error(t->ctx);
	e = cfa_fail(t->ctx, e, "%s; %s", said, why);
	cfa_free(said);
	cfa_free(why);
	return e;
}

enum cfapkg_err cfapkg_trans_commit(struct cfapkg_trans *t, struct cfapkg_trans_result *out)
{
	const char **texts;
	enum cfapkg_err e;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!t->prepared || t->nothing)
		return cfa_fail(t->ctx, CFAPKG_E_USAGE, "a transaction is committed once, after it "
		                "was prepared and has something to do");
	if ((e = check_space(t)))
		return e;
	e = fetch(t);
	out->items = t->items;
	out->nitems = t->nitems;
	if (e)
		return e;
	cfa_lock_learn_sizes(t->ctx, t->new, t->old, t->items, t->nitems);
	if (!(texts = cfa_calloc(t->nchanges + 1, sizeof(*texts))))
		return cfa_nomem(t->ctx);
	for (i = 0; i < t->nchanges; i++)
		texts[i] = t->changes[i].text;
	e = cfapkg_env_commit(t->ctx, t->env, t->new, t->o.command ? t->o.command : "",
	                      texts, t->nchanges, &out->commit);
	/* The transaction keeps the note, as it keeps the items the result
	 * lends. */
	t->load_note = out->commit.load_note;
	cfa_free(texts);
	t->prepared = false; /* once */
	return e;
}

void cfapkg_trans_free(struct cfapkg_trans *t)
{
	if (!t)
		return;
	cfapkg_lockfile_fetch_free(t->items, t->nitems);
	cfa_free(t->load_note);
	cfa_trans_changes_free(t);
	cfa_strv_free(t->damaged, t->ndamaged);
	cfa_strv_free(t->requests, t->nrequests);
	cfapkg_plan_free(t->plan);
	cfapkg_lockfile_free(t->old);
	cfapkg_lockfile_free(t->new);
	cfapkg_writer_unlock(t->lock);
	cfa_free(t);
}
