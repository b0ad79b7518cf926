/*
 * lazy_solv.c - libsolv's functions that cfapkg calls, bound on first use
 * (lazylib.h).  Commands that neither solve nor read a cache of the
 * recipes or the GPU table (keyed by libsolv's SHA-256) start without
 * mapping libsolv and relocating its few hundred symbols: rollback,
 * list, history, verify (about 0.35 ms and ten page faults of every
 * start on these machines).
 * Each function is defined with libsolv's own declaration, so a mismatch
 * with the headers fails the build; the header's inline functions and
 * macros (queue_push, FOR_PROVIDES, ...) read the structs directly and
 * call these.
 */
#include <solv/chksum.h>
#include <solv/evr.h>
#include <solv/pool.h>
#include <solv/poolid.h>
#include <solv/queue.h>
#include <solv/repo.h>
#include <solv/repo_solv.h>
#include <solv/repo_write.h>
#include <solv/solver.h>
#include <solv/transaction.h>
#include <solv/util.h>

#include "platform/lazylib.h"
#include "platform/platform.h"

/* X(return type, name, parameters, arguments); V the same for a void one */
#define SOLV_FUNCS(X, V)                                                                   \
	X(Pool *, pool_create, (void), ())                                                   \
	V(pool_free, (Pool *pool), (pool))                                                   \
	X(Id, pool_str2id, (Pool *pool, const char *s, int create), (pool, s, create))       \
	X(Id, pool_rel2id, (Pool *pool, Id name, Id evr, int flags, int create),             \
	  (pool, name, evr, flags, create))                                                  \
	X(const char *, pool_dep2str, (Pool *pool, Id id), (pool, id))                       \
	V(pool_createwhatprovides, (Pool *pool), (pool))                                     \
	X(Id, pool_addrelproviders, (Pool *pool, Id d), (pool, d))                           \
	X(Id, pool_queuetowhatprovides, (Pool *pool, Queue *q), (pool, q))                   \
	X(int, pool_setdisttype, (Pool *pool, int disttype), (pool, disttype))               \
	X(int, pool_evrcmp_str, (const Pool *pool, const char *evr1, const char *evr2,       \
	                         int mode), (pool, evr1, evr2, mode))                        \
	V(queue_init, (Queue *q), (q))                                                       \
	V(queue_free, (Queue *q), (q))                                                       \
	V(queue_alloc_one, (Queue *q), (q))                                                  \
	X(Repo *, repo_create, (Pool *pool, const char *name), (pool, name))                 \
	V(repo_free, (Repo *repo, int reuseids), (repo, reuseids))                           \
	X(Id, repo_add_solvable, (Repo *repo), (repo))                                       \
	X(Offset, repo_addid_dep, (Repo *repo, Offset olddeps, Id id, Id marker),            \
	  (repo, olddeps, id, marker))                                                       \
	V(repo_internalize, (Repo *repo), (repo))                                            \
	X(int, repo_add_solv, (Repo *repo, FILE *fp, int flags), (repo, fp, flags))          \
	X(int, repo_write, (Repo *repo, FILE *fp), (repo, fp))                               \
	X(char *, solv_bin2hex, (const unsigned char *buf, int l, char *str), (buf, l, str)) \
	X(void *, solv_calloc, (size_t n, size_t size), (n, size))                           \
	X(Chksum *, solv_chksum_create, (Id type), (type))                                   \
	V(solv_chksum_add, (Chksum *chk, const void *data, int len), (chk, data, len))       \
	X(const unsigned char *, solv_chksum_get, (Chksum *chk, int *lenp), (chk, lenp))     \
	X(void *, solv_chksum_free, (Chksum *chk, unsigned char *cp), (chk, cp))             \
	X(Solver *, solver_create, (Pool *pool), (pool))                                     \
	V(solver_free, (Solver *solv), (solv))                                               \
	X(int, solver_solve, (Solver *solv, Queue *job), (solv, job))                        \
	X(unsigned int, solver_problem_count, (Solver *solv), (solv))                        \
	V(solver_findallproblemrules, (Solver *solv, Id problem, Queue *rules),              \
	  (solv, problem, rules))                                                            \
	X(SolverRuleinfo, solver_ruleinfo, (Solver *solv, Id rid, Id *fromp, Id *top,        \
	                                    Id *depp), (solv, rid, fromp, top, depp))        \
	X(const char *, solver_problemruleinfo2str, (Solver *solv, SolverRuleinfo type,      \
	                                             Id source, Id target, Id dep),          \
	  (solv, type, source, target, dep))                                                 \
	X(int, solver_describe_decision, (Solver *solv, Id p, Id *infop), (solv, p, infop))  \
	X(Transaction *, solver_create_transaction, (Solver *solv), (solv))                  \
	V(transaction_free, (Transaction *trans), (trans))                                   \
	V(transaction_order, (Transaction *trans, int flags), (trans, flags))                \
	X(Id, transaction_type, (Transaction *trans, Id p, int mode), (trans, p, mode))

/* solv_version is data: its address is bound with the functions. */
enum { SOLV_FUNCS(CFA_LAZY_ID, CFA_LAZY_VID) F_solv_version, F_COUNT };
static const char *const names[] = {SOLV_FUNCS(CFA_LAZY_NAME, CFA_LAZY_VNAME) "solv_version", NULL};

#ifndef CFA_SONAME_SOLV
#define CFA_SONAME_SOLV "libsolv.so.1"
#endif
CFA_LAZYLIB(CFA_SONAME_SOLV, names, F_COUNT)

SOLV_FUNCS(CFA_LAZY_DEFINE, CFA_LAZY_VDEFINE)

const char *cfa_plat_solv_version(void)
{
	return (const char *)lazy_fn(F_solv_version);
}
