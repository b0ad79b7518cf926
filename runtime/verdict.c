/*
 * verdict.c - what doctor's live probes say of a generation, and the mark
 * that follows.  The rules are the library's, so that every front end
 * judges alike: a stack is usable for dense/GEMM work when the libraries
 * that carry it (the driver, cuBLAS, cuBLASLt) pass and nothing fails
 * hard anywhere; a library merely absent elsewhere (cuFFT, cuDNN) is
 * named but does not count against it.  Only this verdict proves a
 * generation: usable marks it known-good, not usable takes the mark back.
 */
#include <string.h>

#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"

/* Bounds on the texts: far above what a probe writes (its detail is a
 * few hundred bytes), so that a runaway one cannot grow without end. */
#define TEXT_MAX (64u * 1024u)
#define DETAIL_SHOWN 300

struct cfapkg_verdict {
	bool usable;
	unsigned hard;
	struct cfa_buf absent;  /* every library not OK, ", " between */
	struct cfa_buf failed;  /* what makes it unusable, "; " between */
};

/* The libraries dense/GEMM work goes through: a probe's own data, not its
 * place in cfapkg_probe_libraries(). */
bool cfapkg_probe_carries_gemm(const char *library)
{
	static const char *const gemm[] = {"cuda", "cublas", "cublaslt"};
	size_t i;

	for (i = 0; i < sizeof(gemm) / sizeof(gemm[0]); i++)
		if (strcmp(library, gemm[i]) == 0)
			return true;
	return false;
}

struct cfapkg_verdict *cfapkg_verdict_new(void)
{
	struct cfapkg_verdict *v = cfa_calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	/* Usable until a probe says otherwise: a verdict with no probes added
	 * has nothing against it, and the caller decides whether that is
	 * enough. */
	v->usable = true;
	cfa_buf_init(&v->absent, TEXT_MAX);
	cfa_buf_init(&v->failed, TEXT_MAX);
	return v;
}

void cfapkg_verdict_free(struct cfapkg_verdict *v)
{
	if (!v)
		return;
	cfa_buf_fini(&v->absent);
	cfa_buf_fini(&v->failed);
	cfa_free(v);
}

/* A failed append is not returned but left in the buffer's failed flag, which
 * grew() turns into the one out-of-memory answer. */
static bool append(struct cfa_buf *b, const char *sep, const char *text)
{
	return (!b->len || cfa_buf_adds(b, sep)) && cfa_buf_adds(b, text);
}

static enum cfapkg_err grew(struct cfapkg_ctx *ctx, const struct cfapkg_verdict *v)
{
	return v->absent.failed || v->failed.failed ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_verdict_add_probe(struct cfapkg_ctx *ctx, struct cfapkg_verdict *v,
                                         const struct cfapkg_probe_result *r)
{
	bool gemm = cfapkg_probe_carries_gemm(r->library);
	/* MISSING and SKIPPED say a file is not there; the others that a
	 * library that is there misbehaves, which no stack may hide. */
	bool hard = r->status != CFAPKG_PROBE_MISSING && r->status != CFAPKG_PROBE_SKIPPED;
	char *what;

	if (r->status == CFAPKG_PROBE_OK)
		return CFAPKG_E_OK;
	/* Every library that is not OK is named as absent, even one that also
	 * fails the verdict, so that the list shows all that is missing or
	 * wrong. */
	append(&v->absent, ", ", r->library);
	v->usable = v->usable && !gemm && !hard;
	v->hard += hard;
	if (!gemm && !hard)
		return grew(ctx, v);
	/* The detail is cut at DETAIL_SHOWN bytes: the reason is kept in
	 * marks.log and shown by history, and the start of a probe's detail
	 * is what says what failed. */
	what = cfa_aprintf("%s %s%s%.*s", r->library, cfapkg_probe_status_name(r->status),
	                   r->detail && r->detail[0] ? ": " : "", DETAIL_SHOWN,
	                   r->detail ? r->detail : "");
	if (!what)
		return cfa_nomem(ctx);
	append(&v->failed, "; ", what);
	cfa_free(what);
	return grew(ctx, v);
}

enum cfapkg_err cfapkg_verdict_add_failure(struct cfapkg_ctx *ctx, struct cfapkg_verdict *v,
                                           const char *what)
{
	v->usable = false;
	v->hard++;
	append(&v->failed, "; ", what);
	return grew(ctx, v);
}

bool cfapkg_verdict_usable(const struct cfapkg_verdict *v)
{
	return v->usable;
}

unsigned cfapkg_verdict_hard(const struct cfapkg_verdict *v)
{
	return v->hard;
}

const char *cfapkg_verdict_absent(const struct cfapkg_verdict *v)
{
	return cfa_buf_str(&v->absent);
}

const char *cfapkg_verdict_failed(const struct cfapkg_verdict *v)
{
	return cfa_buf_str(&v->failed);
}

enum cfapkg_err cfapkg_verdict_needs_mark(struct cfapkg_ctx *ctx, const struct cfapkg_verdict *v,
                                          const char *env, unsigned gen,
                                          enum cfapkg_gen_state *state, bool *needed)
{
	enum cfapkg_err e = cfapkg_env_gen_state(ctx, env, gen, state);

	/* A mark is needed only when the verdict would change the state: doctor
	 * run again on a generation it already judged adds nothing to its
	 * history. */
	*needed = !e && v->usable != (*state == CFAPKG_GEN_KNOWN_GOOD);
	return e;
}

/* "usable: driver, cuBLAS, cuBLASLt OK; absent: cufft; libraries looked
 * for first in D", or "doctor failed: ...": the mark's reason. */
static char *reason_text(const struct cfapkg_verdict *v, const char *const *dirs, size_t ndirs)
{
	struct cfa_buf b;
	char *out;
	size_t i;

	cfa_buf_init(&b, TEXT_MAX);
	if (!v->usable) {
		cfa_buf_printf(&b, "doctor failed: %s", cfa_buf_str(&v->failed));
	} else {
		cfa_buf_adds(&b, "usable: driver, cuBLAS, cuBLASLt OK");
		if (v->absent.len)
			cfa_buf_printf(&b, "; absent: %s", cfa_buf_str(&v->absent));
		for (i = 0; i < ndirs; i++)
			cfa_buf_printf(&b, "%s%s", i ? ", " : "; libraries looked for first in ",
			               dirs[i]);
	}
	out = b.failed ? NULL : cfa_strdup(cfa_buf_str(&b));
	cfa_buf_fini(&b);
	return out;
}

enum cfapkg_err cfapkg_verdict_mark(struct cfapkg_ctx *ctx, const struct cfapkg_verdict *v,
                                    const char *env, unsigned gen, const char *command,
                                    const char *const *dirs, size_t ndirs,
                                    enum cfapkg_gen_state *state)
{
	char *reason = reason_text(v, dirs, ndirs);
	enum cfapkg_err e;

	if (!reason)
		return cfa_nomem(ctx);
	e = cfapkg_env_mark(ctx, env, gen, v->usable ? CFAPKG_GEN_KNOWN_GOOD : CFAPKG_GEN_CHECKED,
	                    CFAPKG_MARK_DOCTOR, reason, command);
	cfa_free(reason);
	/* The state is read back after the mark rather than assumed, so that
	 * the caller shows what the generation's marks now say. */
	return e ? e : cfapkg_env_gen_state(ctx, env, gen, state);
}
