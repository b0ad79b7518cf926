/*
 * gpu_lookup.c - GPUs by the names people use: a gfx target in any case,
 * a product name from gpus.json (case, spaces, punctuation and the words
 * AMD and Radeon do not matter; a part that fits one target is enough) or
 * a PCI id with an optional revision.  What fits nothing gets the nearest
 * known names, by edit distance.
 */
#include <string.h>

#include "core/gpus.h"
#include "core/registry.h"
#include "core/recipe.h"
#include "core/strbuf.h"

#define NORM_MAX 128 /* longer than any name: text longer fits no GPU */
#define NEAREST 5    /* suggestions for a name that fits nothing */

enum text_kind { TEXT_NAME, TEXT_TARGET, TEXT_PCI };

/* What the text says, once normalized. */
struct query {
	enum text_kind kind;
	char plain[NORM_MAX]; /* lower case, trimmed: targets and PCI ids */
	char norm[NORM_MAX];  /* a name's letters and digits (normalize) */
	unsigned vendor, device;
	int revision;         /* -1: not given */
	bool exact;           /* match whole names / this revision only */
};

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool word_is(const char *w, size_t n, const char *word)
{
	size_t i;

	if (strlen(word) != n)
		return false;
	for (i = 0; i < n; i++)
		if (lower(w[i]) != word[i])
			return false;
	return true;
}

/* The lower-case letters and digits of s without the words "amd" and
 * "radeon": "AMD Radeon RX 7900 XTX" and "rx 7900xtx" both give
 * "rx7900xtx".  False when it does not fit. */
static bool normalize(const char *s, char *out, size_t cap)
{
	size_t n = 0, len, i;
	const char *w;

	for (;;) {
		while (*s && !is_alnum(*s))
			s++;
		for (w = s; *s && is_alnum(*s); s++)
			;
		if ((len = (size_t)(s - w)) == 0)
			break;
		/* Whole words only, so that a product whose name merely
		 * contains the letters keeps them. */
		if (word_is(w, len, "amd") || word_is(w, len, "radeon"))
			continue;
		if (n + len >= cap)
			return false;
		for (i = 0; i < len; i++)
			out[n++] = lower(w[i]);
	}
	out[n] = '\0';
	return true;
}

/* VVVV:DDDD or VVVV:DDDD:RR in hex, any case. */
static bool parse_pci_text(const char *s, struct query *q)
{
	size_t n = strlen(s);
	uint64_t v, d, r;

	/* Exactly VVVV:DDDD or VVVV:DDDD:RR: anything else is a name, looked up
	 * as one. */
	if ((n != 9 && n != 12) || s[4] != ':' || (n == 12 && s[9] != ':') ||
	    !cfa_parse_hex(s, 4, 0xffff, &v) || !cfa_parse_hex(s + 5, 4, 0xffff, &d) ||
	    (n == 12 && !cfa_parse_hex(s + 10, 2, 0xff, &r)))
		return false;
	q->vendor = (unsigned)v;
	q->device = (unsigned)d;
	q->revision = n == 12 ? (int)r : -1;
	return true;
}

/* False when the text is too long to name any GPU.  A name that is
 * nothing but "AMD Radeon" leaves norm empty. */
static bool read_query(const char *text, struct query *q)
{
	size_t start = 0, end = strlen(text), i;

	memset(q, 0, sizeof(*q));
	while (start < end && (text[start] == ' ' || text[start] == '\t'))
		start++;
	while (end > start && (text[end - 1] == ' ' || text[end - 1] == '\t'))
		end--;
	if (end - start >= sizeof(q->plain))
		return false;
	for (i = start; i < end; i++)
		q->plain[i - start] = lower(text[i]);
	q->plain[end - start] = '\0';
	if (cfa_valid_gfx(q->plain))
		q->kind = TEXT_TARGET;
	else if (parse_pci_text(q->plain, q))
		q->kind = TEXT_PCI;
	else
		q->kind = TEXT_NAME;
	return normalize(q->plain, q->norm, sizeof(q->norm));
}

static void pci_string(const struct cfapkg_gpu_device *d, bool revision, char *buf, size_t len)
{
	bool ok = revision && d->revision >= 0
	                  ? cfa_snprintf(buf, len, "%04x:%04x:%02x", (unsigned)d->vendor,
	                                 (unsigned)d->device, (unsigned)d->revision)
	                  : cfa_snprintf(buf, len, "%04x:%04x", (unsigned)d->vendor,
	                                 (unsigned)d->device);
	if (!ok)
		buf[0] = '\0'; /* cannot happen with 16 bytes; an empty id matches nothing */
}

/* A device the query names.  Names match whole (exact) or in part. */
static bool device_fits(const struct query *q, const struct cfapkg_gpu_device *d)
{
	char norm[NORM_MAX];

	if (q->kind == TEXT_PCI) {
		if (d->vendor != q->vendor || d->device != q->device)
			return false;
		if (q->revision < 0)
			return true;
		/* A revision asked for fits that revision's entry; when no
		 * entry has it, the entry for every revision of the id. */
		return q->exact ? d->revision == q->revision : d->revision < 0;
	}
	if (!normalize(d->name, norm, sizeof(norm)))
		return false;
	return q->exact ? strcmp(norm, q->norm) == 0 : strstr(norm, q->norm) != NULL;
}

static bool any_fits(const struct cfa_gpus *g, const struct query *q)
{
	size_t i;

	for (i = 0; i < g->ndevices; i++)
		if (device_fits(q, &g->devices[i]))
			return true;
	return false;
}

static void add_pick(const struct cfapkg_ctx *ctx, struct cfapkg_gpu_lookup *out,
                     const struct cfapkg_gpu_device *d)
{
	unsigned i;

	for (i = 0; i < out->npicks; i++)
		if (strcmp(out->picks[i].device->name, d->name) == 0 &&
		    strcmp(out->picks[i].device->gfx, d->gfx) == 0)
			return; /* the same product on another revision */
	if (out->npicks == CFAPKG_GPU_PICKS) {
		out->more++;
		return;
	}
	out->picks[out->npicks].device = d;
	out->picks[out->npicks++].target = cfa_gpus_target(ctx, d->gfx);
}

/* The devices the query names: one target, several, or none. */
static void collect(const struct cfapkg_ctx *ctx, struct query *q, struct cfapkg_gpu_lookup *out)
{
	const struct cfa_gpus *g = ctx->gpus;
	const char *gfx = NULL;
	bool several = false;
	size_t i;

	/* A whole name (an exact revision) wins over names it is part of. */
	q->exact = true;
	if (q->kind == TEXT_PCI ? q->revision >= 0 && !any_fits(g, q) : !any_fits(g, q))
		q->exact = false;
	for (i = 0; i < g->ndevices; i++) {
		const struct cfapkg_gpu_device *d = &g->devices[i];
		if (!device_fits(q, d))
			continue;
		/* Names that fit one target are one answer however many
		 * products they are; a second target makes the text
		 * ambiguous. */
		if (gfx && strcmp(gfx, d->gfx) != 0)
			several = true;
		if (!gfx)
			gfx = d->gfx;
		add_pick(ctx, out, d);
	}
	if (!gfx)
		out->match = CFAPKG_GPU_UNKNOWN;
	else if (several)
		out->match = CFAPKG_GPU_AMBIGUOUS;
	else if (cfa_snprintf(out->gfx, sizeof(out->gfx), "%s", gfx))
		out->match = CFAPKG_GPU_FOUND;
}

static unsigned common_prefix(const char *a, const char *b)
{
	unsigned n = 0;

	while (a[n] && a[n] == b[n])
		n++;
	return n;
}

/* Lower is nearer: the edit distance to the closest part of key (names
 * only), then to the whole of it, then a longer common prefix. */
static unsigned long score(const char *mine, const char *key, bool name)
{
	unsigned long part = cfa_edit_distance_part(mine, key, name);
	unsigned long whole = name ? cfa_edit_distance_part(mine, key, false) : 0;
	unsigned long prefix = common_prefix(mine, key);

	/* Weighted so that each measure only breaks the ties of the one before
	 * it: names are far shorter than a thousand characters. */
	return part * 1000000ul + whole * 1000ul + 999ul - (prefix > 999 ? 999 : prefix);
}

/* Keeps picks sorted by score, the NEAREST best. */
static void rank(struct cfapkg_gpu_lookup *out, unsigned long *scores,
                 const struct cfapkg_gpu_pick *p, unsigned long s)
{
	/* picks[0..npicks) stay sorted by score: a new one moves the worse ones
	 * down, and past NEAREST the worst falls off. */
	unsigned i = out->npicks;

	if (i == NEAREST && s >= scores[NEAREST - 1])
		return;
	if (i == NEAREST)
		i--;
	else
		out->npicks++;
	for (; i > 0 && scores[i - 1] > s; i--) {
		out->picks[i] = out->picks[i - 1];
		scores[i] = scores[i - 1];
	}
	out->picks[i] = *p;
	scores[i] = s;
}

/* A pick naming the same product (a name) or the same PCI id (an id). */
static bool seen_key(const struct cfapkg_gpu_lookup *out, const struct query *q,
                     const struct cfapkg_gpu_device *d)
{
	char a[32], b[32];
	unsigned i;

	for (i = 0; i < out->npicks; i++) {
		const struct cfapkg_gpu_device *o = out->picks[i].device;
		if (q->kind == TEXT_NAME && strcmp(o->name, d->name) == 0)
			return true;
		if (q->kind == TEXT_NAME)
			continue;
		pci_string(o, q->revision >= 0, a, sizeof(a));
		pci_string(d, q->revision >= 0, b, sizeof(b));
		if (strcmp(a, b) == 0)
			return true;
	}
	return false;
}

/* The devices nearest the query: names for a name, PCI ids for an id;
 * only those near enough to be a slip of the keyboard. */
static void nearest_devices(const struct cfapkg_ctx *ctx, const struct query *q,
                            struct cfapkg_gpu_lookup *out)
{
	const struct cfa_gpus *g = ctx->gpus;
	bool name = q->kind == TEXT_NAME;
	const char *mine = name ? q->norm : q->plain;
	unsigned long scores[NEAREST], slips = strlen(mine) / 2;
	char key[NORM_MAX];
	size_t i;

	for (i = 0; i < g->ndevices; i++) {
		const struct cfapkg_gpu_device *d = &g->devices[i];
		struct cfapkg_gpu_pick p = {cfa_gpus_target(ctx, d->gfx), d};
		unsigned long s;
		if (!name)
			pci_string(d, q->revision >= 0, key, sizeof(key));
		else if (!normalize(d->name, key, sizeof(key)))
			continue;
		s = score(mine, key, name);
		/* At most half the text may differ: anything further is another
		 * GPU, not a slip of the keyboard.  A product already suggested
		 * is not named twice. */
		if (s / 1000000ul <= (slips ? slips : 1) && !seen_key(out, q, d))
			rank(out, scores, &p, s);
	}
}

/* The known targets nearest a target gpus.json lacks: all are candidates. */
static void nearest_targets(const struct cfapkg_ctx *ctx, const struct query *q,
                            struct cfapkg_gpu_lookup *out)
{
	const struct cfa_gpus *g = ctx->gpus;
	unsigned long scores[NEAREST];
	size_t i;

	for (i = 0; i < g->ntargets; i++) {
		struct cfapkg_gpu_pick p = {&g->targets[i], NULL};
		rank(out, scores, &p, score(q->plain, g->targets[i].gfx, false));
	}
}

enum cfapkg_err cfapkg_gpu_lookup(struct cfapkg_ctx *ctx, const char *text,
                                  struct cfapkg_gpu_lookup *out)
{
	struct query q;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	out->match = CFAPKG_GPU_UNKNOWN;
	if ((e = cfa_gpus_ensure(ctx)))
		return e; /* detail set by the loader */
	/* Text that names nothing ("AMD Radeon", or longer than any name) is
	 * simply unknown, with nothing near it to suggest. */
	if (!read_query(text, &q) || !q.norm[0])
		return CFAPKG_E_OK;
	if (q.kind == TEXT_TARGET) {
		/* Without a table there is nothing to check a target against. */
		if (!ctx->gpus || cfa_gpus_target(ctx, q.plain)) {
			out->match = cfa_snprintf(out->gfx, sizeof(out->gfx), "%s", q.plain)
			                     ? CFAPKG_GPU_FOUND
			                     : CFAPKG_GPU_UNKNOWN;
			return CFAPKG_E_OK;
		}
		out->match = CFAPKG_GPU_UNKNOWN_TARGET;
		nearest_targets(ctx, &q, out);
		return CFAPKG_E_OK;
	}
	if (!ctx->gpus)
		return CFAPKG_E_OK;
	collect(ctx, &q, out);
	if (out->match == CFAPKG_GPU_UNKNOWN)
		nearest_devices(ctx, &q, out);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_gpu_devices(struct cfapkg_ctx *ctx, const struct cfapkg_gpu_device **out,
                                   size_t *n)
{
	enum cfapkg_err e;

	*out = NULL;
	*n = 0;
	if ((e = cfa_gpus_ensure(ctx)))
		return e; /* detail set by the loader */
	if (ctx->gpus) {
		*out = ctx->gpus->devices;
		*n = ctx->gpus->ndevices;
	}
	return CFAPKG_E_OK;
}

bool cfapkg_gpu_device_matches(const struct cfapkg_gpu_device *d, const char *pattern)
{
	char key[NORM_MAX];
	struct query q;

	if (!read_query(pattern, &q))
		return false;
	if (strncmp(q.plain, "gfx", 3) == 0)
		return strncmp(d->gfx, q.plain, strlen(q.plain)) == 0;
	if (strchr(q.plain, ':')) {
		pci_string(d, true, key, sizeof(key));
		return strstr(key, q.plain) != NULL;
	}
	return normalize(d->name, key, sizeof(key)) && strstr(key, q.norm);
}

/* The picks as "name (gfx, pci)" or "gfx", comma-separated, into b. */
static void picks_text(const struct cfapkg_gpu_lookup *l, struct cfa_buf *b)
{
	char pci[16];
	unsigned i;

	for (i = 0; i < l->npicks; i++) {
		const struct cfapkg_gpu_pick *p = &l->picks[i];
		if (i)
			cfa_buf_adds(b, ", ");
		if (!p->device) {
			cfa_buf_adds(b, p->target->gfx);
			continue;
		}
		pci_string(p->device, true, pci, sizeof(pci));
		cfa_buf_printf(b, "%s (%s, %s)", p->device->name, p->device->gfx, pci);
	}
	if (l->more)
		cfa_buf_printf(b, " and %u more", l->more);
}

enum cfapkg_err cfa_gpu_lookup_fail(struct cfapkg_ctx *ctx, const char *text,
                                    const struct cfapkg_gpu_lookup *l)
{
	const char *how = "'cfapkg gpus' lists the names, PCI ids and targets --gpu takes";
	struct cfa_buf b;
	enum cfapkg_err e;

	cfa_buf_init(&b, 16384);
	picks_text(l, &b);
	if (b.failed) /* no memory, or names past all reason: the advice without them */
		e = cfa_fail(ctx, CFAPKG_E_FACTS, "GPU \"%s\" names no one known GPU; %s", text,
		             how);
	else if (l->match == CFAPKG_GPU_UNKNOWN_TARGET)
		e = cfa_fail(ctx, CFAPKG_E_FACTS,
		             "unknown GPU target %s: gpus.json does not list it; the nearest "
		             "known: %s; %s", text, cfa_buf_str(&b), how);
	else if (l->match == CFAPKG_GPU_AMBIGUOUS)
		e = cfa_fail(ctx, CFAPKG_E_FACTS,
		             "GPU \"%s\" fits more than one target: %s; give the whole name, the "
		             "PCI id with its revision, or the target", text, cfa_buf_str(&b));
	else if (!ctx->gpus)
		e = cfa_fail(ctx, CFAPKG_E_FACTS,
		             "unknown GPU \"%s\": no GPU table (gpus.json) is loaded, so only a "
		             "target such as gfx1200 names a GPU", text);
	else
		e = cfa_fail(ctx, CFAPKG_E_FACTS, "unknown GPU \"%s\"%s%s; %s", text,
		             l->npicks ? "; the nearest known: " : "", cfa_buf_str(&b), how);
	cfa_buf_fini(&b);
	return e;
}

const struct cfapkg_gpu_target *cfapkg_gpu_target_find(struct cfapkg_ctx *ctx, const char *gfx)
{
	if (cfa_gpus_ensure(ctx) != CFAPKG_E_OK)
		return NULL;
	return cfa_gpus_target(ctx, gfx);
}

const struct cfapkg_gpu_device *cfapkg_gpu_device_find(struct cfapkg_ctx *ctx, uint16_t vendor,
                                                       uint16_t device, int revision)
{
	const struct cfapkg_gpu_device *any = NULL;
	size_t i;

	if (cfa_gpus_ensure(ctx) != CFAPKG_E_OK)
		return NULL;
	if (!ctx->gpus)
		return NULL;
	for (i = 0; i < ctx->gpus->ndevices; i++) {
		const struct cfapkg_gpu_device *d = &ctx->gpus->devices[i];
		if (d->vendor != vendor || d->device != device)
			continue;
		/* An entry for this very revision wins over one for every
		 * revision of the id, wherever it stands in the table. */
		if (d->revision == revision)
			return d;
		if (d->revision < 0 && !any)
			any = d;
	}
	return any;
}
