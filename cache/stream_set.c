/*
 * stream_set.c - the archives of a set unpacked while they download, into
 * one store folder.  Each archive is a stream (stream.c) that writes into
 * the set's staging folder (unpack_member.c); a few workers of the set run
 * them, the largest waiting first, so that the work spreads over the
 * processors and ends together.  Workers, not a thread per archive: a
 * decoder's window (8 MiB for xz) freed in one thread stays in that
 * thread's allocator arena, so a thread per archive would keep one window
 * per archive resident.  The set commits only when every archive was
 * verified and unpacked whole; anything less (an archive that could not
 * stream, a download that restarted or failed, a tree the set refuses)
 * gives the whole set up: its staging folder goes, and the caller unpacks
 * the verified files one after another as before.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "platform/platform.h"

/* Workers at most, whatever the processors: each holds a decoder. */
#define MAX_WORKERS 4u

enum member_state { IDLE, QUEUED, RUNNING, DONE };

struct member {
	struct cfa_stream *s;       /* until it is joined or dropped */
	enum member_state state;
	uint64_t size;
};

struct cfa_stream_set {
	struct cfapkg_ctx *ctx;     /* the set's own: a refusal here is not the caller's */
	struct unpacker *u;         /* the staging folder, the joined tree, the hasher */
	struct cfa_mutex *m;        /* guards what follows */
	struct cfa_cond *changed;   /* an archive queued or done, the set given up */
	struct member *members;
	size_t n;
	struct cfa_thread *workers[MAX_WORKERS];
	unsigned nworkers, max_workers;
	bool abandoned, closing;
};

static void set_free(struct cfa_stream_set *set)
{
	cfa_unpack_close(set->u);
	cfa_plat_cond_free(set->changed);
	cfa_plat_mutex_free(set->m);
	cfapkg_ctx_free(set->ctx);
	cfa_free(set->members);
	cfa_free(set);
}

enum cfapkg_err cfa_stream_set_open(struct cfapkg_ctx *ctx, const char *name, const char *label,
                                    uint64_t total, size_t n, struct cfa_stream_set **out)
{
	struct cfapkg_unpack_opts uo = {0, 0, 0, true, label, false};
	struct cfa_stream_set *set = cfa_calloc(1, sizeof(*set));
	unsigned cpus = cfa_plat_cpu_count();
	bool existed = false;

	*out = NULL;
	if (!set || !(set->ctx = cfapkg_ctx_new()) ||
	    cfapkg_ctx_set_root(set->ctx, cfapkg_ctx_root(ctx)) || !(set->m = cfa_plat_mutex_new()) ||
	    !(set->changed = cfa_plat_cond_new()) ||
	    !(set->members = cfa_calloc(n ? n : 1, sizeof(*set->members))) ||
	    cfa_unpack_open(set->ctx, name, label, total, &uo, &set->u, &existed) || existed) {
		if (set)
			set_free(set);
		/* A store folder already there: no set and no error, so that
		 * nothing streams and the caller finds the folder. */
		return existed ? CFAPKG_E_OK : CFAPKG_E_UNSUPPORTED;
	}
	set->n = n;
	/* One more than the processors: a worker whose archive waits for its
	 * download's bytes uses no processor meanwhile. */
	set->max_workers = cpus + 1 < MAX_WORKERS ? cpus + 1 : MAX_WORKERS;
	*out = set;
	return CFAPKG_E_OK;
}

/* The largest archive waiting, or n when none is (under the lock). */
static size_t next_member(const struct cfa_stream_set *set)
{
	size_t k, best = set->n;

	for (k = 0; k < set->n; k++)
		if (set->members[k].state == QUEUED &&
		    (best == set->n || set->members[k].size > set->members[best].size))
			best = k;
	return best;
}

static void worker_main(void *arg)
{
	struct cfa_stream_set *set = arg;
	size_t k;

	cfa_plat_mutex_lock(set->m);
	for (;;) {
		/* The lock is held but while an archive unpacks.  One taken
		 * after the set was given up is only marked done. */
		while ((k = next_member(set)) == set->n && !set->closing)
			cfa_plat_cond_wait(set->changed, set->m);
		if (k == set->n)
			break;
		set->members[k].state = RUNNING;
		if (!set->abandoned) {
			cfa_plat_mutex_unlock(set->m);
			cfa_stream_member_run(set->members[k].s);
			cfa_plat_mutex_lock(set->m);
		}
		set->members[k].state = DONE;
		cfa_plat_cond_broadcast(set->changed);
	}
	cfa_plat_mutex_unlock(set->m);
}

/* One more worker while there are fewer than allowed (under the lock);
 * false when there is none at all. */
static bool add_worker(struct cfa_stream_set *set)
{
	if (set->nworkers < set->max_workers &&
	    cfa_plat_thread_start(worker_main, set, &set->workers[set->nworkers]) == 0)
		set->nworkers++;
	return set->nworkers > 0;
}

/* Archive k no longer runs (under the lock): a waiting one is passed
 * over, a running one stopped at its next read. */
static void stop_member(struct cfa_stream_set *set, size_t k)
{
	if (set->members[k].state == QUEUED)
		set->members[k].state = DONE;
	else if (set->members[k].state == RUNNING)
		cfa_stream_cancel(set->members[k].s);
}

/* Given up (under the lock): nothing of it runs on, none waits. */
static void abandon(struct cfa_stream_set *set)
{
	size_t k;

	set->abandoned = true;
	for (k = 0; k < set->n; k++)
		stop_member(set, k);
	cfa_plat_cond_broadcast(set->changed);
}

struct cfa_stream *cfa_stream_set_start(struct cfa_stream_set *set, size_t k, const char *format,
                                        unsigned strip, const char *label, uint64_t size,
                                        const char *part)
{
	struct cfapkg_unpack_opts uo = {strip, 0, 0, true, label, false};
	struct cfa_stream *s = NULL;
	bool ok;

	/* Only the tar family and .debs: a zip is settled against its own
	 * central directory, which a set does not do. */
	if (k < set->n && strcmp(format, "zip") != 0)
		s = cfa_stream_member_new(set->ctx, set->u, format, &uo, size, part);
	cfa_plat_mutex_lock(set->m);
	/* An archive is queued once only; whatever keeps one from streaming
	 * gives the whole set up, since a set commits all or nothing. */
	ok = s && set->members[k].state == IDLE && !set->abandoned && add_worker(set);
	if (ok) {
		set->members[k].s = s;
		set->members[k].size = size;
		set->members[k].state = QUEUED;
	} else {
		abandon(set);
	}
	cfa_plat_cond_broadcast(set->changed);
	cfa_plat_mutex_unlock(set->m);
	/* Ended outside the lock: its unpacker is freed, and the set's lock
	 * guards only the set's state. */
	if (!ok && s)
		cfa_stream_member_end(s, false);
	return ok ? s : NULL;
}

void cfa_stream_set_drop(struct cfa_stream_set *set, size_t k)
{
	struct cfa_stream *s = NULL;

	cfa_plat_mutex_lock(set->m);
	abandon(set);
	if (k < set->n && set->members[k].s) {
		/* Its stream is not freed while a worker runs it: abandon
		 * cancelled it, and it stops at its next read. */
		while (set->members[k].state == RUNNING)
			cfa_plat_cond_wait(set->changed, set->m);
		s = set->members[k].s;
		set->members[k].s = NULL;
	}
	cfa_plat_mutex_unlock(set->m);
	if (s)
		cfa_stream_member_end(s, false);
}

/* Every archive done, or why not (under the lock). */
static enum cfapkg_err wait_all(struct cfa_stream_set *set)
{
	size_t k;

	for (k = 0; k < set->n && !set->abandoned; k++) {
		if (set->members[k].state == IDLE)
			return CFAPKG_E_UNSUPPORTED; /* it never streamed */
		while (set->members[k].state != DONE && !set->abandoned)
			cfa_plat_cond_wait(set->changed, set->m);
	}
	return set->abandoned ? CFAPKG_E_UNSUPPORTED : CFAPKG_E_OK;
}

enum cfapkg_err cfa_stream_set_seal(struct cfa_stream_set *set)
{
	enum cfapkg_err e;
	size_t k;

	cfa_plat_mutex_lock(set->m);
	e = wait_all(set);
	cfa_plat_mutex_unlock(set->m);
	/* In the set's order: the tree is the one unpacking them in turn gives. */
	for (k = 0; k < set->n && !e; k++) {
		e = cfa_stream_member_end(set->members[k].s, true);
		set->members[k].s = NULL;
	}
	/* No file: the seal reads an archive again only for a zip, and a set
	 * holds none. */
	return e ? e : cfa_unpack_seal(set->u, NULL);
}

enum cfapkg_err cfa_stream_set_move(struct cfa_stream_set *set, struct cfapkg_unpack_result *out)
{
	memset(out, 0, sizeof(*out));
	return cfa_unpack_move(set->u, out);
}

const char *cfa_stream_set_error(struct cfa_stream_set *set)
{
	return cfapkg_ctx_error(set->ctx);
}

void cfa_stream_set_close(struct cfa_stream_set *set)
{
	unsigned w;
	size_t k;

	if (!set)
		return;
	cfa_plat_mutex_lock(set->m);
	/* closing lets idle workers leave their wait; abandon stops the one
	 * running. */
	set->closing = true;
	abandon(set);
	cfa_plat_mutex_unlock(set->m);
	/* Joined without the lock: a worker takes it to end. */
	for (w = 0; w < set->nworkers; w++)
		cfa_plat_thread_join(set->workers[w]);
	for (k = 0; k < set->n; k++)
		if (set->members[k].s)
			cfa_stream_member_end(set->members[k].s, false);
	set_free(set);
}
