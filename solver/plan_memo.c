/*
 * plan_memo.c - the answers of recent solved plans, so that the same
 * request asked again on the same recipes and facts is not solved again:
 * a no-op install or a repeated plan then never loads libsolv.
 *
 * The key covers everything a solve reads: the recipes the request
 * reached (the reach record's key: every folder's files, the platform;
 * for a whole load, every folder's key and each
 * accepted channel index as it was checked, in load order), the pins
 * trusted on first use laid over them (their file's stamp), every fact,
 * the request, the pins, what is installed and the experimental rule.  A
 * load with a source of no key (--no-index-cache, a folder just written, a
 * channel index checked again) gives no plan a key, and only a solved plan
 * is kept: an unsolved one is explained, which needs the pool.  The
 * versions of cfapkg and libsolv are checked once, by the file's first
 * line, rather than in every key.
 *
 * ROOT/cache/recipes/planned opens with a line naming its format, the
 * cfapkg that wrote it and the libsolv that solved its plans: a file of
 * another version of either is not read, so an upgrade of either solves
 * again.  Then one entry per plan, newest first: "KEY LENGTH SUM\n" and
 * then LENGTH bytes of body, whose FNV-1a is SUM.
 * The body is words split by single spaces: numbers, and strings as "-"
 * (none) or "LEN:BYTES".  A damaged or short entry is only not found.
 */
#include <stddef.h>
#include <string.h>

#include <solv/solvversion.h>

#include "core/atomic_file.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/recipe_cache.h"
#include "core/strbuf.h"
#include "platform/platform.h"
#include "solver/solver.h"

#define MEMO_FILE "planned"
#define MEMO_MAGIC "cfapkg-planned 2"
/* The requests a user makes in turn; the file is read by every plan. */
#define MEMO_ENTRIES 16
#define MEMO_MAX_ITEMS 100000u

static void key_str(struct cfa_key *k, const char *s)
{
	cfa_key_add(k, s ? s : "", strlen(s ? s : "") + 1);
}

static void key_u64(struct cfa_key *k, uint64_t n)
{
	char t[24];

	key_str(k, cfa_snprintf(t, sizeof(t), "%llu", (unsigned long long)n) ? t : "");
}

static void key_ranges(struct cfa_key *k, const struct cfa_range *r, size_t n)
{
	size_t i;

	key_u64(k, n);
	for (i = 0; i < n; i++)
		key_str(k, r[i].text);
}

/* Every field of the facts: a fact left out here would let a plan made
 * for one machine answer for another. */
static void key_facts(struct cfa_key *k, const struct cfapkg_facts *f)
{
	size_t i;

	key_str(k, f->os);
	key_str(k, f->arch);
	key_str(k, f->gfx);
	key_str(k, f->driver);
	key_str(k, f->glibc);
	key_u64(k, f->hip_runtimes_known);
	key_u64(k, f->nhip_runtimes);
	for (i = 0; i < f->nhip_runtimes; i++)
		key_u64(k, f->hip_runtimes[i]);
	key_u64(k, f->hip_sdks_known);
	key_u64(k, f->nhip_sdks);
	for (i = 0; i < f->nhip_sdks; i++)
		key_str(k, f->hip_sdks[i]);
}

bool cfa_plan_memo_key(const struct cfapkg_plan *plan, char key[65])
{
	const struct cfapkg_ctx *ctx = plan->ctx;
	struct cfa_key k;

	if (plan->full_pool || !ctx->reach_key[0])
		return false;
	cfa_key_start(&k);
	key_str(&k, MEMO_MAGIC);
	key_str(&k, ctx->reach_key);
	key_str(&k, ctx->first_use_stamp);
	key_facts(&k, &plan->facts);
	key_u64(&k, plan->allow_experimental);
	key_ranges(&k, plan->specs, plan->nspecs);
	key_ranges(&k, plan->pins, plan->npins);
	key_ranges(&k, plan->prefer, plan->nprefer);
	cfa_key_hex(&k, key);
	return key[0] != '\0';
}

/* ---- writing ---- */

static void put_str(struct cfa_buf *b, const char *s)
{
	if (!s)
		cfa_buf_adds(b, " -");
	else
		cfa_buf_printf(b, " %lu:%s", (unsigned long)strlen(s), s);
}

/* The recipe's place in the loaded set, or false when it is not there. */
static bool place_of(const struct cfapkg_ctx *ctx, const struct cfapkg_version *v, size_t *ri,
                     size_t *vi)
{
	for (*ri = 0; *ri < ctx->nrecipes; (*ri)++)
		if (ctx->recipes[*ri] == v->recipe) {
			*vi = (size_t)(v - v->recipe->versions);
			return true;
		}
	return false;
}

static bool put_items(struct cfa_buf *b, const struct cfapkg_plan *plan)
{
	size_t i, ri, vi;

	cfa_buf_printf(b, "%lu", (unsigned long)plan->nitems);
	for (i = 0; i < plan->nitems; i++) {
		const struct cfapkg_version *v = plan->items[i].version;
		if (!place_of(plan->ctx, v, &ri, &vi))
			return false;
		cfa_buf_printf(b, " %lu %lu %d", (unsigned long)ri, (unsigned long)vi,
		               (int)plan->items[i].status);
		/* The names too, so that an entry is checked against the
		 * recipes it is read with. */
		put_str(b, v->recipe->name);
		put_str(b, v->version);
	}
	return true;
}

/* A passed-over record's texts, in the order an entry holds them. */
static const size_t problem_texts[] = {
	offsetof(struct cfapkg_problem, package), offsetof(struct cfapkg_problem, versions),
	offsetof(struct cfapkg_problem, dep),     offsetof(struct cfapkg_problem, other),
	offsetof(struct cfapkg_problem, fact),    offsetof(struct cfapkg_problem, have),
	offsetof(struct cfapkg_problem, alternatives), offsetof(struct cfapkg_problem, hint),
	offsetof(struct cfapkg_problem, raw)};
#define NPROBLEM_TEXTS (sizeof(problem_texts) / sizeof(problem_texts[0]))

static const char *text_at(const struct cfapkg_problem *p, size_t k)
{
	const char *s;

	memcpy(&s, (const char *)p + problem_texts[k], sizeof(s));
	return s;
}

static void set_text(struct cfapkg_problem *p, size_t k, const char *s)
{
	memcpy((char *)p + problem_texts[k], &s, sizeof(s));
}

static void put_passed(struct cfa_buf *b, const struct cfapkg_plan *plan)
{
	size_t i, k;

	cfa_buf_printf(b, " %lu", (unsigned long)plan->npassed);
	for (i = 0; i < plan->npassed; i++) {
		const struct cfapkg_problem *p = &plan->passed[i];
		cfa_buf_printf(b, " %d %u %d", (int)p->kind, p->group, p->beyond_experimental ? 1 : 0);
		for (k = 0; k < NPROBLEM_TEXTS; k++)
			put_str(b, text_at(p, k));
	}
}

/* ---- reading ---- */

struct cursor {
	const char *p, *end;
	bool ok;
};

/* The next word as [start, len); the cursor goes bad at the end. */
static const char *next_word(struct cursor *c, size_t *len)
{
	const char *s;

	if (c->p < c->end && *c->p == ' ')
		c->p++;
	s = c->p;
	while (c->p < c->end && *c->p != ' ')
		c->p++;
	*len = (size_t)(c->p - s);
	c->ok = c->ok && *len > 0;
	return s;
}

static uint64_t get_u64(struct cursor *c, uint64_t max)
{
	size_t len;
	const char *s = next_word(c, &len);
	uint64_t n = 0;

	c->ok = c->ok && cfa_parse_u64(s, len, max, &n);
	return n;
}

/* A string word, copied into the plan's arena; NULL for "-" and when
 * the cursor went bad (c->ok tells them apart). */
static const char *get_str(struct cursor *c, struct cfa_arena *a)
{
	const char *colon, *s;
	uint64_t n = 0;
	char *out;

	if (c->p < c->end && *c->p == ' ')
		c->p++;
	if (c->ok && c->p < c->end && *c->p == '-') {
		c->p++;
		return NULL;
	}
	colon = c->ok ? memchr(c->p, ':', (size_t)(c->end - c->p)) : NULL;
	c->ok = colon && cfa_parse_u64(c->p, (size_t)(colon - c->p), (uint64_t)(c->end - colon), &n) &&
	        (uint64_t)(c->end - colon - 1) >= n;
	if (!c->ok)
		return NULL;
	s = colon + 1;
	c->p = s + n;
	out = cfa_arena_strndup(a, s, (size_t)n);
	c->ok = out != NULL;
	return out;
}

static bool same_str(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void get_items(struct cursor *c, struct cfapkg_plan *plan)
{
	const struct cfapkg_ctx *ctx = plan->ctx;
	size_t n = (size_t)get_u64(c, MEMO_MAX_ITEMS), i;

	if (!c->ok || !(plan->items = cfa_calloc(n + 1, sizeof(*plan->items)))) {
		c->ok = false;
		return;
	}
	for (i = 0; i < n && c->ok; i++) {
		size_t ri = (size_t)get_u64(c, MEMO_MAX_ITEMS);
		size_t vi = (size_t)get_u64(c, MEMO_MAX_ITEMS);
		unsigned status = (unsigned)get_u64(c, CFAPKG_STATUS_EXPERIMENTAL);
		const char *name = get_str(c, &plan->arena), *version = get_str(c, &plan->arena);
		const struct cfapkg_recipe *r = c->ok && ri < ctx->nrecipes ? ctx->recipes[ri] : NULL;
		c->ok = r && vi < r->nversions && same_str(name, r->name) &&
		        same_str(version, r->versions[vi].version);
		if (c->ok) {
			plan->items[i].version = &r->versions[vi];
			plan->items[i].status = (enum cfapkg_status)status;
			plan->nitems++;
		}
	}
}

static void get_passed(struct cursor *c, struct cfapkg_plan *plan)
{
	size_t n = (size_t)get_u64(c, MEMO_MAX_ITEMS), i, k;
	struct cfa_arena *a = &plan->arena;

	if (c->ok && n && cfa_grow((void **)&plan->passed, &plan->passed_cap, n, sizeof(*plan->passed)))
		c->ok = false;
	for (i = 0; i < n && c->ok; i++) {
		struct cfapkg_problem *p = &plan->passed[i];
		memset(p, 0, sizeof(*p));
		p->kind = (enum cfapkg_problem_kind)get_u64(c, 1000);
		p->group = (unsigned)get_u64(c, UINT32_MAX);
		p->beyond_experimental = get_u64(c, 1) != 0;
		for (k = 0; k < NPROBLEM_TEXTS; k++)
			set_text(p, k, get_str(c, a));
		if (c->ok)
			plan->npassed++;
	}
}

/* ---- the file ---- */

struct entry {
	const char *key, *body;   /* key: up to its space */
	size_t klen, len;
	uint64_t sum;
};

/* The entry at *p, and *p moved past it; false at the end or at damage
 * (nothing after damage is read). */
static bool next_entry(const char **p, const char *end, struct entry *e)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	const char *sp1 = nl ? memchr(*p, ' ', (size_t)(nl - *p)) : NULL;
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(nl - sp1 - 1)) : NULL;
	uint64_t len = 0;

	if (!sp2 || !cfa_parse_u64(sp1 + 1, (size_t)(sp2 - sp1 - 1), (uint64_t)(end - nl), &len) ||
	    !cfa_parse_hex(sp2 + 1, (size_t)(nl - sp2 - 1), UINT64_MAX, &e->sum) ||
	    (uint64_t)(end - nl - 1) < len + 1 || nl[1 + len] != '\n')
		return false;
	e->key = *p;
	e->klen = (size_t)(sp1 - *p);
	e->body = nl + 1;
	e->len = (size_t)len;
	*p = e->body + e->len + 1;
	return true;
}

static uint64_t body_sum(const char *body, size_t len)
{
	struct cfa_key k;

	cfa_key_start(&k);
	cfa_key_add(&k, body, len);
	return k.sum;
}

/* The file's first line, for plans solved by the libsolv of that version. */
static bool memo_header(char out[128], const char *solv_version)
{
	return cfa_snprintf(out, 128, "%s %s %s\n", MEMO_MAGIC, cfapkg_version_string(),
	                    solv_version);
}

/* The entries of the file, without its first line; none when that line
 * names another cfapkg or libsolv.  A plan reads the file before it knows
 * whether it will solve, so it compares with the libsolv it was built
 * against: loading the library to ask would cost what the memo saves.
 * Where the library the process runs with is another, the file is
 * written with that one's version and never read: every plan solves. */
static enum cfapkg_err memo_text(struct cfapkg_ctx *ctx, char **path, char **text, size_t *len)
{
	enum cfapkg_err e = cfa_recipe_cache_file(ctx, MEMO_FILE, path);
	char head[128];
	size_t hlen;

	*text = NULL;
	*len = 0;
	if (e || !*path)
		return e;
	/* Missing or unreadable is only not cached. */
	if ((e = cfa_read_file(ctx, *path, text, len)) && e != CFAPKG_E_NOMEM) {
		cfapkg_ctx_clear_error(ctx);
		e = CFAPKG_E_OK;
	}
	if (*text && memo_header(head, LIBSOLV_VERSION_STRING) && (hlen = strlen(head)) <= *len &&
	    memcmp(*text, head, hlen) == 0) {
		memmove(*text, *text + hlen, *len - hlen + 1);
		*len -= hlen;
	} else if (*text) {
		cfa_free(*text);
		*text = NULL;
		*len = 0;
	}
	return e;
}

/* Fills the plan from body; false (and the plan as it was) when the body
 * does not read whole against the loaded recipes. */
static bool take_body(struct cfapkg_plan *plan, const char *body, size_t len, unsigned *mask)
{
	struct cursor c = {body, body + len, true};

	get_items(&c, plan);
	*mask = (unsigned)get_u64(&c, 15);
	get_passed(&c, plan);
	if (c.ok && c.p == c.end)
		return true;
	cfa_free(plan->items);
	plan->items = NULL;
	plan->nitems = 0;
	plan->npassed = 0;
	return false;
}

enum cfapkg_err cfa_plan_memo_find(struct cfapkg_plan *plan, const char key[65],
                                   unsigned *unchecked, bool *found)
{
	char *path = NULL, *text = NULL;
	const char *p;
	size_t len, klen = strlen(key);
	struct entry en;
	enum cfapkg_err e = memo_text(plan->ctx, &path, &text, &len);

	*found = false;
	for (p = text; !e && p && p < text + len && next_entry(&p, text + len, &en);)
		if (en.klen == klen && memcmp(en.key, key, klen) == 0) {
			*found = body_sum(en.body, en.len) == en.sum &&
			         take_body(plan, en.body, en.len, unchecked);
			break;
		}
	cfa_free(path);
	cfa_free(text);
	return e;
}

/* The entry for key, first, then the other entries of text, the oldest
 * past MEMO_ENTRIES dropped. */
static void put_entries(struct cfa_buf *out, const struct cfa_buf *body, const char *key,
                        const char *text, size_t len)
{
	size_t kept = 1, klen = strlen(key);
	const char *p;
	struct entry en;
	char head[128];

	/* Written after a solve: the libsolv that solved it is loaded. */
	if (memo_header(head, cfa_plat_solv_version()))
		cfa_buf_adds(out, head);
	else
		out->failed = true;
	cfa_buf_printf(out, "%s %lu %016llx\n", key, (unsigned long)body->len,
	               (unsigned long long)body_sum(body->data, body->len));
	cfa_buf_add(out, body->data, body->len);
	cfa_buf_adds(out, "\n");
	for (p = text; p && p < text + len && kept < MEMO_ENTRIES &&
	               next_entry(&p, text + len, &en);)
		if (en.klen != klen || memcmp(en.key, key, klen) != 0) {
			cfa_buf_add(out, en.key, (size_t)(en.body + en.len + 1 - en.key));
			kept++;
		}
}

enum cfapkg_err cfa_plan_memo_keep(struct cfapkg_plan *plan, const char key[65])
{
	struct cfa_buf body, out;
	char *path = NULL, *text = NULL;
	size_t len;
	enum cfapkg_err e = memo_text(plan->ctx, &path, &text, &len);

	cfa_buf_init(&body, SIZE_MAX / 2);
	cfa_buf_init(&out, SIZE_MAX / 2);
	if (!e && path && put_items(&body, plan)) {
		cfa_buf_printf(&body, " %u", plan->unchecked_bits);
		put_passed(&body, plan);
		put_entries(&out, &body, key, text, len);
		if (out.failed || body.failed)
			e = cfa_nomem(plan->ctx);
		/* A cache only saves time: one not written is made again, and
		 * one a power cut emptied or tore (not flushed: a plan that
		 * solves pays no flush for it) is solved again. */
		else if ((e = cfa_write_atomic_unflushed(plan->ctx, path, out.data, out.len)) !=
		         CFAPKG_E_NOMEM) {
			cfapkg_ctx_clear_error(plan->ctx);
			e = CFAPKG_E_OK;
		}
	}
	cfa_buf_fini(&body);
	cfa_buf_fini(&out);
	cfa_free(path);
	cfa_free(text);
	return e;
}
