/*
 * bench.c - A/B runs of one program under two environments, alternating
 * (A B A B ...) so that drift in the machine hits both alike; each run's
 * wall time and, with a regex, the number its first group captures from
 * the program's output.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

struct metric {
	pcre2_code *re;
	pcre2_match_data *md;
};

static enum cfapkg_err metric_compile(struct cfapkg_ctx *ctx, const char *regex, struct metric *m)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off;
	uint32_t groups = 0;
	int code;

	memset(m, 0, sizeof(*m));
	if (!regex)
		return CFAPKG_E_OK;
	m->re = pcre2_compile((PCRE2_SPTR)regex, PCRE2_ZERO_TERMINATED, PCRE2_MULTILINE, &code, &off,
	                      NULL);
	if (!m->re) {
		pcre2_get_error_message(code, msg, sizeof(msg));
		return cfa_fail(ctx, CFAPKG_E_USAGE, "--metric \"%s\": %s at offset %lu", regex,
		                (const char *)msg, (unsigned long)off);
	}
	pcre2_pattern_info(m->re, PCRE2_INFO_CAPTURECOUNT, &groups);
	if (groups < 1) {
		pcre2_code_free(m->re);
		return cfa_fail(ctx, CFAPKG_E_USAGE, "--metric \"%s\": needs a group around the "
		                "number, like 'TFLOPS: ([0-9.]+)'", regex);
	}
	m->md = pcre2_match_data_create_from_pattern(m->re, NULL);
	return m->md ? CFAPKG_E_OK : cfa_nomem(ctx);
}

static void metric_free(struct metric *m)
{
	pcre2_match_data_free(m->md);
	pcre2_code_free(m->re);
}

/* The last match's first group, as a number. */
static bool metric_find(const struct metric *m, const char *text, double *out)
{
	PCRE2_SIZE start = 0, len = strlen(text), *ov;
	bool found = false;

	while (start <= len && pcre2_match(m->re, (PCRE2_SPTR)text, len, start, 0, m->md, NULL) > 1) {
		char num[64], *end;
		ov = pcre2_get_ovector_pointer(m->md);
		if (ov[3] > ov[2] && ov[3] - ov[2] < sizeof(num)) {
			memcpy(num, text + ov[2], ov[3] - ov[2]);
			num[ov[3] - ov[2]] = '\0';
			*out = strtod(num, &end);
			found = end != num;
		}
		start = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
	}
	return found;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void cfapkg_bench_stats(const struct cfapkg_bench_run *runs, size_t n, unsigned env, bool metric,
                        struct cfapkg_bench_stats *out)
{
	double *v = cfa_calloc(n ? n : 1, sizeof(*v));
	size_t i, k = 0;

	/* Every run counts; without memory for the copy there are no stats
	 * (n 0) rather than stats of some of the runs. */
	memset(out, 0, sizeof(*out));
	for (i = 0; v && i < n; i++)
		if (runs[i].env == env && !runs[i].warmup && runs[i].status == 0 &&
		    (!metric || runs[i].has_metric))
			v[k++] = metric ? runs[i].metric : runs[i].wall_s;
	if (!k) {
		cfa_free(v);
		return;
	}
	qsort(v, k, sizeof(*v), by_value);
	out->n = k;
	out->min = v[0];
	out->max = v[k - 1];
	out->median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	for (i = 0; i < k; i++)
		out->mean += v[i] / (double)k;
	cfa_free(v);
}

static enum cfapkg_err one_run(struct cfapkg_ctx *ctx, const struct cfapkg_bench_opts *o,
                               const struct metric *m, struct cfapkg_bench_run *r)
{
	static char out[1 << 20];
	bool timed_out = false;
	double t0;
	enum cfapkg_err e;

	if ((e = cfapkg_runtime_apply(ctx, o->runtimes[r->env])))
		return e;
	t0 = cfa_plat_now();
	e = cfapkg_run_capture(ctx, o->argv, o->timeout_ms, out, sizeof(out), &r->status, &timed_out);
	r->wall_s = cfa_plat_now() - t0;
	if (e)
		return e;
	if (timed_out)
		r->status = -1;
	/* The capture keeps the first sizeof(out) - 1 bytes: a full buffer may
	 * have lost the end, where the last match would be. */
	if (m->re && strlen(out) == sizeof(out) - 1)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s printed more than %lu bytes: --metric reads no "
		                "further, and the number could be past that", o->argv[0],
		                (unsigned long)sizeof(out) - 1);
	r->has_metric = m->re && metric_find(m, out, &r->metric);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_bench(struct cfapkg_ctx *ctx, const struct cfapkg_bench_opts *o,
                             struct cfapkg_bench_run **runs, size_t *n)
{
	size_t total = (size_t)(o->runs + o->warmup) * 2, i;
	struct cfapkg_bench_run *r;
	struct metric m;
	enum cfapkg_err e;

	if ((e = metric_compile(ctx, o->metric, &m)))
		return e;
	if (!(r = cfa_calloc(total ? total : 1, sizeof(*r)))) {
		metric_free(&m);
		return cfa_nomem(ctx);
	}
	for (i = 0; i < total && !e; i++) {
		r[i].index = (unsigned)i;
		r[i].env = (unsigned)(i % 2);
		r[i].warmup = i / 2 < o->warmup;
		e = one_run(ctx, o, &m, &r[i]);
		if (!e && o->on_run)
			o->on_run(o->arg, &r[i]);
	}
	cfapkg_runtime_apply(ctx, NULL);
	metric_free(&m);
	if (e) {
		cfa_free(r);
		return e;
	}
	*runs = r;
	*n = total;
	return CFAPKG_E_OK;
}
