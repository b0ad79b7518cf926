/*
 * generation.c - generations: written whole under a hidden name, checked,
 * renamed into place, and only then made current by replacing one small
 * file.  A kill at any moment leaves 'current' naming a complete
 * generation, old or new.  Switching back (rollback) is the same last step
 * alone.  History is the generations' own records plus a log of switches,
 * ordered by a sequence number both share.
 */
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

struct gen_scan {
	unsigned max;
	unsigned *list;
	size_t n, cap;
	bool failed;
};

static bool gen_number(const char *name, unsigned *out)
{
	uint64_t v;

	if (!cfa_parse_u64(name, strlen(name), 1000000000u, &v) || v == 0 || name[0] == '0')
		return false;
	*out = (unsigned)v;
	return true;
}

static int scan_one(const char *name, void *arg)
{
	struct gen_scan *s = arg;
	unsigned g;

	if (!gen_number(name, &g))
		return 0;
	s->max = g > s->max ? g : s->max;
	if (cfa_grow((void **)&s->list, &s->cap, s->n + 1, sizeof(*s->list)) != 0)
		s->failed = true;
	else
		s->list[s->n++] = g;
	return 0;
}

static int by_number(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* The generations on disk, sorted.  The caller frees s->list. */
static enum cfapkg_err scan_gens(struct cfapkg_ctx *ctx, const char *envdir, struct gen_scan *s)
{
	memset(s, 0, sizeof(*s));
	cfa_plat_list_dir(envdir, scan_one, s);
	if (s->failed) {
		cfa_free(s->list);
		return cfa_nomem(ctx);
	}
	if (s->n)
		qsort(s->list, s->n, sizeof(*s->list), by_number);
	return CFAPKG_E_OK;
}

struct history;
static enum cfapkg_err collect(struct cfapkg_ctx *ctx, const char *env, struct history *h);
static void history_fini(struct history *h);
static unsigned history_max_seq(const struct history *h);

/* The next history sequence number: one past everything recorded. */
static enum cfapkg_err next_seq(struct cfapkg_ctx *ctx, const char *env, unsigned *seq);

static cJSON *meta_json(unsigned gen, unsigned prev, unsigned seq, const char *command,
                        const char *const *changes, size_t nchanges)
{
	cJSON *o = cJSON_CreateObject(), *a;
	char now[32];
	size_t i;

	cfa_utc_now(now);
	cJSON_AddNumberToObject(o, "generation", gen);
	cJSON_AddNumberToObject(o, "previous", prev);
	cJSON_AddNumberToObject(o, "seq", seq);
	cJSON_AddStringToObject(o, "created", now);
	cJSON_AddStringToObject(o, "command", command ? command : "");
	a = cJSON_AddArrayToObject(o, "changes");
	for (i = 0; i < nchanges; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(changes[i]));
	return o;
}

static enum cfapkg_err set_current(struct cfapkg_ctx *ctx, const char *envdir, unsigned gen)
{
	char path[CFA_PATH_MAX], text[32];

	cfa_snprintf(path, sizeof(path), "%s/current", envdir);
	cfa_snprintf(text, sizeof(text), "%u\n", gen);
	return cfa_write_atomic(ctx, path, text, strlen(text));
}

/* Everything of the new generation, under its hidden name. */
static enum cfapkg_err write_gen(struct cfapkg_ctx *ctx, const struct cfapkg_lock *lock,
                                 const char *dir, cJSON *meta, struct cfapkg_commit_result *r)
{
	char path[CFA_PATH_MAX];
	enum cfapkg_err e;

	cfa_plat_remove_tree(dir);
	if (cfa_plat_mkdir_p(dir) != 0) {
		cJSON_Delete(meta);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create the folder", dir);
	}
	cfa_snprintf(path, sizeof(path), "%s/meta.json", dir);
	if ((e = cfa_write_json(ctx, path, meta)))
		return e;
	cfa_snprintf(path, sizeof(path), "%s/lock.json", dir);
	if ((e = cfa_write_json(ctx, path, cfa_lock_json(lock))) ||
	    (e = cfa_view_build(ctx, lock, dir, r)))
		return e;
	cfa_snprintf(path, sizeof(path), "%s/runtime.json", dir);
	if ((e = cfa_write_json(ctx, path, cfa_runtime_json(ctx, lock, dir))))
		return e;
	/* The view's checks passed: recorded inside the generation before it
	 * is renamed into place, so no generation is ever seen unrecorded.
	 * Known-good needs more (env/marks.c). */
	return cfa_write_checked(ctx, dir);
}

enum cfapkg_err cfapkg_env_commit(struct cfapkg_ctx *ctx, const char *env,
                                  const struct cfapkg_lock *lock, const char *command,
                                  const char *const *changes, size_t nchanges,
                                  struct cfapkg_commit_result *out)
{
	char envdir[CFA_PATH_MAX], tmp[CFA_PATH_MAX], dir[CFA_PATH_MAX];
	struct gen_scan s;
	unsigned prev, gen, seq;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if ((e = cfa_env_dir(ctx, env, envdir, sizeof(envdir))) ||
	    (e = cfapkg_env_current(ctx, env, &prev)) || (e = next_seq(ctx, env, &seq)))
		return e;
	if (cfa_plat_mkdir_p(envdir) != 0)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create the folder", envdir);
	if ((e = scan_gens(ctx, envdir, &s)))
		return e;
	cfa_free(s.list);
	gen = (s.max > prev ? s.max : prev) + 1;
	cfa_snprintf(tmp, sizeof(tmp), "%s/.new-%u", envdir, gen);
	cfa_snprintf(dir, sizeof(dir), "%s/%u", envdir, gen);
	e = write_gen(ctx, lock, tmp, meta_json(gen, prev, seq, command, changes, nchanges), out);
	if (!e) {
		cfa_plat_sync_fs(tmp);
		cfa_crash_point();
		if (cfa_plat_rename(tmp, dir) != 0)
			e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot rename it to %s", tmp, dir);
	}
	if (e) {
		cfa_plat_remove_tree(tmp);
		return e;
	}
	cfa_plat_sync_dir(envdir);
	cfa_crash_point();
	if ((e = set_current(ctx, envdir, gen)))
		return e;
	out->generation = gen;
	out->previous = prev;
	out->checked = true;
	return CFAPKG_E_OK;
}

static enum cfapkg_err log_switch(struct cfapkg_ctx *ctx, const char *envdir, unsigned seq,
                                  unsigned from, unsigned to, const char *command)
{
	cJSON *o = cJSON_CreateObject();
	char path[CFA_PATH_MAX], now[32];

	cfa_utc_now(now);
	cJSON_AddNumberToObject(o, "seq", seq);
	cJSON_AddStringToObject(o, "time", now);
	cJSON_AddNumberToObject(o, "from", from);
	cJSON_AddNumberToObject(o, "to", to);
	cJSON_AddStringToObject(o, "command", command ? command : "");
	cfa_snprintf(path, sizeof(path), "%s/switches.log", envdir);
	return cfa_append_line(ctx, path, o, "the switch");
}

enum cfapkg_err cfapkg_env_switch(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                  const char *command)
{
	char envdir[CFA_PATH_MAX], lock[CFA_PATH_MAX];
	unsigned prev, seq;
	enum cfapkg_err e;

	if ((e = cfa_env_dir(ctx, env, envdir, sizeof(envdir))) ||
	    (e = cfapkg_env_current(ctx, env, &prev)) ||
	    (e = cfapkg_gen_path(ctx, env, gen, "lock.json", lock, sizeof(lock))))
		return e;
	if (!cfa_plat_is_file(lock))
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has no generation %u "
		                "('cfapkg history --env %s' lists them)", env, gen, env);
	if ((e = next_seq(ctx, env, &seq)) || (e = set_current(ctx, envdir, gen)))
		return e;
	cfa_crash_point();
	return log_switch(ctx, envdir, seq, prev, gen, command);
}

static void join_changes(const cJSON *a, char *buf, size_t len)
{
	const cJSON *c;
	size_t used = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(c, a)
	{
		if (!cJSON_IsString(c))
			continue;
		cfa_snprintf(buf + used, len - used, "%s%s", used ? ", " : "", c->valuestring);
		used = strlen(buf);
	}
}

static void copy_str(char *dst, size_t len, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	cfa_snprintf(dst, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static unsigned get_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 4e9
	           ? (unsigned)v->valuedouble
	           : 0;
}

struct history {
	struct cfapkg_history_entry *v;
	unsigned *seq;
	size_t n, cap, seqcap;
};

static struct cfapkg_history_entry *history_add(struct history *h, unsigned seq)
{
	if (cfa_grow((void **)&h->v, &h->cap, h->n + 1, sizeof(*h->v)) != 0 ||
	    cfa_grow((void **)&h->seq, &h->seqcap, h->n + 1, sizeof(*h->seq)) != 0)
		return NULL;
	memset(&h->v[h->n], 0, sizeof(*h->v));
	h->seq[h->n] = seq;
	return &h->v[h->n++];
}

/* What is known of generation g: its state and latest mark. */
static bool add_state(struct cfapkg_ctx *ctx, struct cfapkg_history_entry *x, const char *gendir,
                      unsigned g)
{
	struct cfapkg_gen_mark *marks = NULL;
	size_t n = 0;

	if (cfa_marks_read(ctx, gendir, g, &marks, &n))
		return false;
	x->state = cfa_gen_state_of(gendir, marks, n);
	x->good = x->state == CFAPKG_GEN_KNOWN_GOOD;
	x->checked = x->state >= CFAPKG_GEN_CHECKED;
	x->nmarks = n;
	if (n)
		x->mark = marks[n - 1];
	cfa_free(marks);
	return true;
}

static bool add_gen(struct cfapkg_ctx *ctx, struct history *h, const char *envdir, unsigned g)
{
	struct cfapkg_history_entry *x;
	char path[CFA_PATH_MAX];
	cJSON *meta = NULL;

	cfa_snprintf(path, sizeof(path), "%s/%u/meta.json", envdir, g);
	if (cfa_json_read_file(ctx, path, CFAPKG_E_IO, &meta) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(ctx);
		meta = NULL;
	}
	if (!(x = history_add(h, get_num(meta, "seq")))) {
		cJSON_Delete(meta);
		return false;
	}
	x->generation = g;
	x->exists = true;
	copy_str(x->time, sizeof(x->time), meta, "created");
	copy_str(x->command, sizeof(x->command), meta, "command");
	join_changes(cJSON_GetObjectItemCaseSensitive(meta, "changes"), x->changes,
	             sizeof(x->changes));
	cJSON_Delete(meta);
	cfa_snprintf(path, sizeof(path), "%s/%u", envdir, g);
	return add_state(ctx, x, path, g);
}

/* Switch records, one JSON object per line; a torn last line is skipped. */
static bool add_switches(struct history *h, const char *envdir)
{
	char path[CFA_PATH_MAX], line[2048];
	FILE *f;
	bool ok = true;

	cfa_snprintf(path, sizeof(path), "%s/switches.log", envdir);
	if (!(f = cfa_plat_fopen(path, "rb")))
		return true;
	while (ok && fgets(line, sizeof(line), f)) {
		cJSON *o = strchr(line, '\n') ? cJSON_Parse(line) : NULL;
		struct cfapkg_history_entry *x;
		if (!o)
			continue;
		if ((x = history_add(h, get_num(o, "seq")))) {
			x->is_switch = true;
			x->generation = get_num(o, "to");
			x->from = get_num(o, "from");
			copy_str(x->time, sizeof(x->time), o, "time");
			copy_str(x->command, sizeof(x->command), o, "command");
		}
		ok = x != NULL;
		cJSON_Delete(o);
	}
	fclose(f);
	return ok;
}

static void history_fini(struct history *h)
{
	cfa_free(h->v);
	cfa_free(h->seq);
}

static unsigned history_max_seq(const struct history *h)
{
	unsigned m = 0;
	size_t i;

	for (i = 0; i < h->n; i++)
		m = h->seq[i] > m ? h->seq[i] : m;
	return m;
}

/* Orders by sequence number (insertion sort: histories are short). */
static void sort_history(struct history *h)
{
	size_t i, j;

	for (i = 1; i < h->n; i++)
		for (j = i; j > 0 && h->seq[j - 1] > h->seq[j]; j--) {
			struct cfapkg_history_entry t = h->v[j];
			unsigned s = h->seq[j];
			h->v[j] = h->v[j - 1];
			h->seq[j] = h->seq[j - 1];
			h->v[j - 1] = t;
			h->seq[j - 1] = s;
		}
}

static enum cfapkg_err collect(struct cfapkg_ctx *ctx, const char *env, struct history *h)
{
	char envdir[CFA_PATH_MAX];
	struct gen_scan s;
	size_t i;
	bool ok = true;
	enum cfapkg_err e;

	memset(h, 0, sizeof(*h));
	if ((e = cfa_env_dir(ctx, env, envdir, sizeof(envdir))) || (e = scan_gens(ctx, envdir, &s)))
		return e;
	for (i = 0; ok && i < s.n; i++)
		ok = add_gen(ctx, h, envdir, s.list[i]);
	cfa_free(s.list);
	if (!(ok && add_switches(h, envdir))) {
		history_fini(h);
		return cfa_nomem(ctx);
	}
	for (i = 0; i < h->n; i++)
		if (h->v[i].is_switch) {
			char dir[CFA_PATH_MAX];
			cfa_snprintf(dir, sizeof(dir), "%s/%u", envdir, h->v[i].generation);
			h->v[i].exists = cfa_plat_is_dir(dir);
		}
	sort_history(h);
	return CFAPKG_E_OK;
}

static enum cfapkg_err next_seq(struct cfapkg_ctx *ctx, const char *env, unsigned *seq)
{
	struct history h;
	enum cfapkg_err e = collect(ctx, env, &h);

	*seq = e ? 0 : history_max_seq(&h) + 1;
	history_fini(&h);
	return e;
}

enum cfapkg_err cfapkg_env_history(struct cfapkg_ctx *ctx, const char *env,
                                   struct cfapkg_history_entry **out, size_t *n)
{
	struct history h;
	unsigned cur;
	size_t i;
	enum cfapkg_err e;

	if ((e = cfapkg_env_current(ctx, env, &cur)) || (e = collect(ctx, env, &h)))
		return e;
	for (i = 0; i < h.n; i++)
		h.v[i].current = h.v[i].generation == cur && !h.v[i].is_switch;
	cfa_free(h.seq);
	*out = h.v;
	*n = h.n;
	return CFAPKG_E_OK;
}
