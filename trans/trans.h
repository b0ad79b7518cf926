/*
 * trans.h - the transaction room's internal state, shared by its files:
 * trans.c (begin, prepare, commit), changes.c (the new requests and what
 * changes) and fetchlock.c (a lock's packages into the store).
 */
#ifndef CFA_TRANS_H
#define CFA_TRANS_H

#include "cfapkg.h"
#include "core/ctx.h"
#include "core/strbuf.h"

struct cfapkg_trans {
	struct cfapkg_ctx *ctx;
	struct cfapkg_trans_opts o;
	const char *env;
	struct cfapkg_writer_lock *lock;
	char *load_note;               /* the commit's, lent to its result */
	struct cfapkg_lockfile *old, *new;
	struct cfapkg_plan *plan;
	/* the request set of the new generation (strings owned here) */
	char **requests;
	size_t nrequests, requests_cap;
	struct cfapkg_change *changes;
	size_t nchanges, changes_cap;
	struct cfapkg_fetch_item *items;
	size_t nitems;
	char **damaged;            /* store folders to unpack again (repair) */
	size_t ndamaged, damaged_cap;
	bool prepared, nothing;
};

/* envplan.c: what a solve for an environment is given.  installed: the
 * set whose versions are kept where they fit (NULL: none); moving: names
 * whose installed version is not kept (an update's), move_all: none is. */
struct cfa_env_plan_req {
	const char *env;
	const struct cfapkg_facts *facts;
	const struct cfapkg_plan_opts *opts; /* the command's pins; prefer unused */
	const struct cfapkg_lockfile *installed;
	const char *const *moving;
	size_t nmoving;
	bool move_all;
};
enum cfapkg_err cfa_env_plan(struct cfapkg_ctx *ctx, const struct cfa_env_plan_req *rq,
                             const char *const *specs, size_t nspecs, struct cfapkg_plan **out);

/* changes.c */
enum cfapkg_err cfa_trans_requests(struct cfapkg_trans *t);
enum cfapkg_err cfa_trans_diff(struct cfapkg_trans *t);
/* repair: what cfapkg_env_damage finds, as changes and folders to redo. */
enum cfapkg_err cfa_trans_damage(struct cfapkg_trans *t);
void cfa_trans_changes_free(struct cfapkg_trans *t);

/* aptsource.c: the URL of an APT source's index (cfa_free), NULL when out
 * of memory. */
char *cfa_apt_index_url(const struct cfapkg_apt_source *a);

/* aptlookup.c: what the index of that SHA-256 and size gave for want[0..n) on
 * arch, when a lookup kept before says so (found filled, strings in
 * arena); false when there is none or it does not check out. */
struct cfa_deb_want;
struct cfa_deb_found;
struct cfa_arena;
bool cfa_apt_lookup_load(struct cfapkg_ctx *ctx, const char *index_sha256, int64_t index_size,
                         const char *arch, const struct cfa_deb_want *want, size_t n,
                         struct cfa_arena *arena, struct cfa_deb_found *found);
/* Keeps what the index gave for the next time; a failure to write it is
 * no error (the index is read again then). */
void cfa_apt_lookup_store(struct cfapkg_ctx *ctx, const char *index_sha256, int64_t index_size,
                          const char *arch, const struct cfa_deb_want *want,
                          const struct cfa_deb_found *found, size_t n);

/* fetchlock.c */
/* Whether the verified artifact of that SHA-256 is in ROOT/downloads. */
bool cfa_in_cache(struct cfapkg_ctx *ctx, const char *sha256);
/* The bytes of p's archives that the cache lacks. */
uint64_t cfa_bytes_to_fetch(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *p);
/* cfapkg_lockfile_fetch, also unpacking again the store folders named in
 * replace (damaged ones), each swapped in only once its new copy is whole. */
enum cfapkg_err cfa_lock_fetch_replacing(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                         const struct cfapkg_fetch_opts *opts,
                                         const char *const *replace, size_t nreplace,
                                         struct cfapkg_fetch_item **items, size_t *n);
/* Records in lock the size of each download its recipe gave none for, as
 * learnt by the fetch (items), from the set before, or from the cache, so
 * that the generation's lock holds it. */
void cfa_lock_learn_sizes(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                          const struct cfapkg_lockfile *before, const struct cfapkg_fetch_item *items,
                          size_t n);

#endif
