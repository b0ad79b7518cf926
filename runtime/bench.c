/*
 * bench.c - A/B runs of one program under two environments, alternating
 * (A B A B ...) so that drift in the machine hits both alike; each run's
 * wall time and, with a regex, the number its first group captures from
 * the program's output.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <math.h>
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

/* PCRE2_MULTILINE lets "^" and "$" match at each line of the output, as a user
 * writing a regex for one line expects. */
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
	if (m->md)
		return CFAPKG_E_OK;
	pcre2_code_free(m->re);
	m->re = NULL;
	return cfa_nomem(ctx);
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
			double v;
			memcpy(num, text + ov[2], ov[3] - ov[2]);
			num[ov[3] - ov[2]] = '\0';
			v = strtod(num, &end);
			/* "nan", "inf" and a group that holds no number are no
			 * reading: the last real one stands. */
			if (end != num && isfinite(v)) {
				*out = v;
				found = true;
			}
		}
		/* An empty match moves on by one byte, so the loop always
		 * ends. */
		start = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
	}
	return found;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Warm-ups, runs that failed, and (for the metric) runs that printed no number
 * are left out of every statistic. */
static bool counted(const struct cfapkg_bench_run *r, bool metric)
{
	return !r->warmup && r->status == 0 && (!metric || r->has_metric);
}

static double value_of(const struct cfapkg_bench_run *r, bool metric)
{
	return metric ? r->metric : r->wall_s;
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
		if (runs[i].env == env && counted(&runs[i], metric))
			v[k++] = value_of(&runs[i], metric);
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

/* The index of the next measured (not warm-up) run of env from i on, or n. */
static size_t next_measured(const struct cfapkg_bench_run *runs, size_t n, size_t i, unsigned env)
{
	while (i < n && (runs[i].env != env || runs[i].warmup))
		i++;
	return i;
}

void cfapkg_bench_ratio(const struct cfapkg_bench_run *runs, size_t n, bool metric,
                        struct cfapkg_bench_ratio *out)
{
	struct cfapkg_bench_stats a, b;
	size_t i = 0, j = 0;

	memset(out, 0, sizeof(*out));
	cfapkg_bench_stats(runs, n, 0, metric, &a);
	cfapkg_bench_stats(runs, n, 1, metric, &b);
	/* B / A: above 1 means B took longer, or printed a larger metric. */
	if (a.n && b.n && a.median != 0)
		out->of_medians = b.median / a.median;
	/* Runs alternate, so the k-th measured runs of A and B ran next to each
	 * other: their ratio shows the spread that drift in the machine leaves. */
	for (;; i++, j++) {
		double r;
		i = next_measured(runs, n, i, 0);
		j = next_measured(runs, n, j, 1);
		if (i == n || j == n)
			break;
		if (!counted(&runs[i], metric) || !counted(&runs[j], metric) ||
		    value_of(&runs[i], metric) == 0)
			continue;
		r = value_of(&runs[j], metric) / value_of(&runs[i], metric);
		out->min = out->rounds && out->min < r ? out->min : r;
		out->max = out->rounds && out->max > r ? out->max : r;
		out->rounds++;
	}
}

/* Where a regex's literal text stops: a capturing group ("(" not followed
 * by "?", or a named one).
 * "(?<name>", "(?'name'" and "(?P<name>" capture; "(?<=" and "(?<!" are
 * lookbehinds and do not. */
static bool capture_starts(const char *p)
{
	if (p[0] != '(')
		return false;
	if (p[1] != '?')
		return true;
	return (p[2] == '<' && p[3] != '=' && p[3] != '!') || p[2] == '\'' ||
	       (p[2] == 'P' && p[3] == '<');
}

/* Skips a [class] or {count} from its opening character; returns its last. */
static const char *skip_bracket(const char *p)
{
	char close = *p == '[' ? ']' : '}';

	p++;
	if (close == ']' && *p == '^')
		p++;
	if (close == ']' && *p == ']')
		p++;
	for (; *p && *p != close; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p : p - 1;
}

/* Skips a group that captures nothing, from its "(" to its ")". */
static const char *skip_group(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '[')
			p = skip_bracket(p);
		else if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p;
	}
	return p - 1;
}

/* The regex's literal text before its first capture, with every regex
 * construct turned into one space; at most len - 1 bytes.
 * The name of the metric is the text the regex looks for before the number:
 * "TFLOPS: ([0-9.]+)" is named "TFLOPS". */
static void literal_prefix(const char *p, char *out, size_t len)
{
	bool gap = false;
	size_t k = 0;

	for (; *p && !capture_starts(p) && k + 2 < len; p++) {
		char c = *p;
		if (c == '\\' && p[1]) {
			c = *++p;
			if (isalnum((unsigned char)c))  /* \d, \s, \b: a class, not text */
				c = 0;
		} else if (c == '[' || c == '{') {
			p = skip_bracket(p);
			c = 0;
		} else if (c == '(') {
			p = skip_group(p); /* (?:a|b), (?i): not the name's text */
			c = 0;
		} else if (strchr("^$.*+?|()", c)) {
			c = 0;
		}
		if (!c) {
			gap = true;
			continue;
		}
		if ((gap || isspace((unsigned char)c)) && k && out[k - 1] != ' ')
			out[k++] = ' ';
		gap = false;
		if (!isspace((unsigned char)c))
			out[k++] = c;
	}
	out[k] = '\0';
}

/* A regex with no text before its first group may name the group:
 * "(?<tflops>[0-9.]+) TFLOPS" gives "tflops". */
static void group_name(const char *p, char *out, size_t len)
{
	size_t k = 0;

	while (*p && !capture_starts(p))
		p += *p == '\\' && p[1] ? 2 : 1;
	if (*p != '(' || p[1] != '?')
		return;
	p += p[2] == 'P' ? 4 : 3;
	while (k + 1 < len && *p && *p != '>' && *p != '\'')
		out[k++] = *p++;
	out[k] = '\0';
}

/* Punctuation around a name goes ("TFLOPS:" -> "TFLOPS"); brackets that
 * belong to it and a per cent sign stay. */
static bool trims(char c, bool at_end)
{
	return isspace((unsigned char)c) ||
	       (ispunct((unsigned char)c) && !strchr(at_end ? ")]%" : "([", c));
}

/* A regex with neither text nor a group name gives "metric": the table and the
 * figure always have something to call the number. */
const char *cfapkg_bench_metric_name(const char *regex, char *buf, size_t len)
{
	char text[256];
	const char *s = text, *e;
	size_t k;

	if (!len)
		return buf;
	literal_prefix(regex ? regex : "", text, sizeof(text));
	if (!text[0] && regex)
		group_name(regex, text, sizeof(text));
	e = s + strlen(s);
	while (*s && trims(*s, false))
		s++;
	while (e > s && trims(e[-1], true))
		e--;
	if (e == s) {
		s = "metric";
		e = s + 6;
	}
	k = (size_t)(e - s) < len - 1 ? (size_t)(e - s) : len - 1;
	while (k && k < (size_t)(e - s) && ((unsigned char)s[k] & 0xC0) == 0x80)
		k--;  /* a cut name ends on a whole UTF-8 character */
	memcpy(buf, s, k);
	buf[k] = '\0';
	return buf;
}

/* A run's output is kept up to a MiB, on the heap (too much for a stack,
 * and no command but bench should carry it in its image). */
#define RUN_OUTPUT_MAX (1u << 20)

static enum cfapkg_err capture_run(struct cfapkg_ctx *ctx, const struct cfapkg_bench_opts *o,
                                   const struct metric *m, struct cfapkg_bench_run *r, char *out)
{
	bool timed_out = false;
	double t0;
	enum cfapkg_err e;

	if ((e = cfapkg_runtime_apply(ctx, o->runtimes[r->env])))
		return e;
	t0 = cfa_plat_now();
	e = cfapkg_run_capture(ctx, o->argv, o->timeout_ms, out, RUN_OUTPUT_MAX, &r->status,
	                       &timed_out);
	r->wall_s = cfa_plat_now() - t0;
	if (e)
		return e;
	/* A run stopped at the timeout counts as failed (-1), not as a
	 * time. */
	if (timed_out)
		r->status = -1;
	/* The capture keeps the first RUN_OUTPUT_MAX - 1 bytes: a full buffer
	 * may have lost the end, where the last match would be. */
	if (m->re && strlen(out) == RUN_OUTPUT_MAX - 1)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s printed more than %lu bytes: --metric reads no "
		                "further, and the number could be past that", o->argv[0],
		                (unsigned long)RUN_OUTPUT_MAX - 1);
	r->has_metric = m->re && metric_find(m, out, &r->metric);
	return CFAPKG_E_OK;
}

static enum cfapkg_err one_run(struct cfapkg_ctx *ctx, const struct cfapkg_bench_opts *o,
                               const struct metric *m, struct cfapkg_bench_run *r)
{
	char *out = cfa_malloc(RUN_OUTPUT_MAX);
	enum cfapkg_err e = out ? capture_run(ctx, o, m, r, out) : cfa_nomem(ctx);

	cfa_free(out);
	return e;
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
		/* Even runs are A, odd ones B, warm-ups first: A B A B, so
		 * drift in the machine over the bench hits both alike. */
		r[i].env = (unsigned)(i % 2);
		r[i].warmup = i / 2 < o->warmup;
		e = one_run(ctx, o, &m, &r[i]);
		if (!e && o->on_run)
			o->on_run(o->arg, &r[i]);
	}
	/* This process's environment is put back as it was before the first
	 * run. */
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
