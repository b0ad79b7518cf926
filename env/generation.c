/*
 * generation.c - generations: written whole under a hidden name, checked,
 * renamed into place, and only then made current by replacing one small
 * file.  A kill at any moment leaves 'current' naming a complete
 * generation, old or new.  Switching back (rollback) is the same last step
 * alone.  History is the generations' own records plus a log of switches,
 * ordered by a sequence number both share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/json_build.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

/* What a scan of an environment's folder found: every generation folder by
 * number, and the highest. */
struct gen_scan {
	unsigned max;
	unsigned *list;
	size_t n, cap;
	bool failed;
};

/* A generation folder's name: a decimal number from 1 with no leading zero, so
 * ".new-3", "current" and "03" are never taken for one. */
static bool gen_number(const char *name, unsigned *out)
{
	uint64_t v;

	if (!cfa_parse_u64(name, strlen(name), 1000000000u, &v) || v == 0 || name[0] == '0')
		return false;
	*out = (unsigned)v;
	return true;
}

/* A name that is no generation is skipped; running out of memory is remembered
 * and reported once the listing ends. */
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

enum cfapkg_err cfa_env_generations(struct cfapkg_ctx *ctx, const char *envdir, unsigned **list,
                                    size_t *n)
{
	struct gen_scan s;
	enum cfapkg_err e = scan_gens(ctx, envdir, &s);

	*list = e ? NULL : s.list;
	*n = e ? 0 : s.n;
	return e;
}

struct history;
static enum cfapkg_err collect(struct cfapkg_ctx *ctx, const char *env, bool exists,
                               struct history *h);
static void history_fini(struct history *h);
static unsigned history_max_seq(const struct history *h);

/* The next history sequence number: one past everything recorded.
 * newest: the newest generation folder where the caller has listed them,
 * 0 to list them here. */
static enum cfapkg_err next_seq(struct cfapkg_ctx *ctx, const char *env, unsigned newest,
                                unsigned *seq);

/* NULL when out of memory. */
static cJSON *meta_json(unsigned gen, unsigned prev, unsigned seq, const char *command,
                        const char *const *changes, size_t nchanges)
{
	struct cfa_json_build jb = {false};
	cJSON *o = cfa_json_new_object(&jb), *a;
	char now[32];
	size_t i;

	/* "previous" is the generation that was current when this one was
	 * made, and "seq" orders it among the switches in history. */
	cfa_utc_now(now);
	cfa_json_add_number(&jb, o, "generation", gen);
	cfa_json_add_number(&jb, o, "previous", prev);
	cfa_json_add_number(&jb, o, "seq", seq);
	cfa_json_add_string(&jb, o, "created", now);
	cfa_json_add_string(&jb, o, "command", command ? command : "");
	a = cfa_json_add_array(&jb, o, "changes");
	for (i = 0; i < nchanges; i++)
		cfa_json_append_string(&jb, a, changes[i]);
	return cfa_json_finish(&jb, o);
}

/* dir/name written from doc (consumed; NULL: its build ran out of memory). */
static enum cfapkg_err write_doc(struct cfapkg_ctx *ctx, const char *dir, const char *name,
                                 cJSON *doc)
{
	char *path;
	enum cfapkg_err e = cfa_path(ctx, &path, "%s/%s", dir, name);

	if (e)
		cJSON_Delete(doc);
	else
		e = cfa_write_json(ctx, path, doc);
	cfa_free(path);
	return e;
}

/* What the load check found: the first library that cannot load (the
 * generation is refused) and the first that loads only from this system. */
struct load_findings {
	char *refusal;
	struct cfapkg_commit_result *r;
};

/* The load check's finding as one sentence; it names the part and the file
 * first so that a cut text still says where the problem is. */
static void issue_text(const struct cfapkg_load_issue *is, char *buf, size_t len)
{
	/* Only words for a person: a cut one still names the library. */
	cfa_fit_text(buf, len, "%s %s: %s needs %s, which %s%s%s%s%s%s", is->part, is->version,
	             is->file, is->needed,
	             is->host ? "only this system provides (" : "neither the environment nor the "
	                        "C library provides, and this system has none",
	             is->host ? is->host : "", is->host ? ")" : "",
	             is->carrier ? "; the package that should carry it: " : "",
	             is->carrier ? is->carrier : "", is->carrier ? "" : "");
	if (is->carrier && strlen(buf) + 4 < len) {
		size_t n = strlen(buf);
		cfa_fit_text(buf + n, len - n, " (%s)", is->carrier_why);
	}
}

/* Only the first of each kind is kept: the first refusal becomes the error,
 * the first host-only library the commit's note. */
static void on_issue(void *arg, const struct cfapkg_load_issue *is)
{
	struct load_findings *f = arg;
	char text[1024];

	if (is->host ? f->r->load_note != NULL : f->refusal != NULL)
		return;
	issue_text(is, text, sizeof(text));
	if (is->host)
		f->r->load_note = cfa_strdup(text);
	else
		f->refusal = cfa_strdup(text);
}

/* A library of the set that cannot load refuses the generation. */
static enum cfapkg_err load_check(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                  const char *dir, struct cfapkg_commit_result *r)
{
	struct load_findings f = {NULL, r};
	size_t missing = 0;
	enum cfapkg_err e = cfa_load_check_gen(ctx, lock, dir, on_issue, &f, &missing,
	                                       &r->load_host);

	/* A library that neither the environment nor the C library provides,
	 * and this system lacks too, would fail at run time: the generation is
	 * refused before it is made current. */
	if (!e && missing)
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s%s; add what carries it to the recipe, or "
		             "install on a system that has it", f.refusal ? f.refusal : "a library "
		             "cannot load", missing > 1 ? " (and more names like it)" : "");
	cfa_free(f.refusal);
	return e;
}

/* The image of the lock.json just written (lockimage.c). */
static enum cfapkg_err write_lock_image(struct cfapkg_ctx *ctx, const char *dir)
{
	char *json = NULL, *image = NULL;
	enum cfapkg_err e;

	if (!(e = cfa_path(ctx, &json, "%s/lock.json", dir)) &&
	    !(e = cfa_path(ctx, &image, "%s/lock.img", dir)))
		e = cfa_lock_image_save(ctx, json, image);
	cfa_free(json);
	cfa_free(image);
	return e;
}

/* Everything of the new generation, under its hidden name. */
static enum cfapkg_err write_gen(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                 const char *dir, cJSON *meta, struct cfapkg_commit_result *r)
{
	enum cfapkg_err e;

	/* A .new-N folder left by a run that was killed is removed first: its
	 * contents are not known to be whole. */
	cfa_plat_remove_tree(dir);
	if ((e = cfa_make_dir(ctx, dir))) {
		cJSON_Delete(meta);
		return e;
	}
	if ((e = write_doc(ctx, dir, "meta.json", meta)) ||
	    (e = write_doc(ctx, dir, "lock.json", cfa_lock_json(lock))) ||
	    (e = write_lock_image(ctx, dir)) ||
	    (e = cfa_view_build(ctx, lock, dir, r)) || (e = load_check(ctx, lock, dir, r)) ||
	    (e = write_doc(ctx, dir, "runtime.json", cfa_runtime_json(ctx, lock, dir))))
		return e;
	/* The view's checks passed: recorded inside the generation before it
	 * is renamed into place, so no generation is ever seen unrecorded.
	 * Known-good needs more (env/marks.c). */
	return cfa_write_checked(ctx, dir);
}

/* The new generation under envdir/.new-N, then renamed to envdir/N. */
static enum cfapkg_err make_gen(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                const char *envdir, unsigned gen, cJSON *meta,
                                struct cfapkg_commit_result *out)
{
	char *tmp = NULL, *dir = NULL;
	enum cfapkg_err e;

	if ((e = cfa_path(ctx, &tmp, "%s/.new-%u", envdir, gen)) ||
	    (e = cfa_path(ctx, &dir, "%s/%u", envdir, gen))) {
		cJSON_Delete(meta);
		cfa_free(tmp);
		return e;
	}
	/* The generation is flushed to disk before the rename, so that after
	 * a crash the name N never stands for a folder whose files did not
	 * reach the disk. */
	e = write_gen(ctx, lock, tmp, meta, out);
	if (!e)
		e = cfa_env_write_number(ctx, tmp, gen);
	if (!e) {
		cfa_plat_sync_fs(tmp);
		cfa_crash_point();
		if (cfa_plat_rename(tmp, dir) != 0)
			e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot rename it to %s", tmp, dir);
	}
	/* A generation that failed is removed, so no half-written .new-N
	 * stays on disk. */
	if (e)
		cfa_plat_remove_tree(tmp);
	cfa_free(tmp);
	cfa_free(dir);
	return e;
}

/* The number of the next generation: past every one on disk and current.
 * A number that names a folder is never taken again.  *newest: the newest
 * folder on disk (0: none). */
static enum cfapkg_err new_gen_number(struct cfapkg_ctx *ctx, const char *envdir, unsigned prev,
                                      unsigned *gen, unsigned *newest)
{
	struct gen_scan s;
	enum cfapkg_err e;

	if ((e = cfa_make_dir(ctx, envdir)) || (e = scan_gens(ctx, envdir, &s)))
		return e;
	cfa_free(s.list);
	*newest = s.max;
	*gen = (s.max > prev ? s.max : prev) + 1;
	return CFAPKG_E_OK;
}

/* On failure 'current' still names the generation it named before, so
 * the environment programs see is unchanged. */
enum cfapkg_err cfapkg_env_commit(struct cfapkg_ctx *ctx, const char *env,
                                  const struct cfapkg_lockfile *lock, const char *command,
                                  const char *const *changes, size_t nchanges,
                                  struct cfapkg_commit_result *out)
{
	char *envdir = NULL;
	unsigned prev = 0, gen = 0, seq = 0, newest = 0;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if ((e = cfa_env_dir(ctx, env, &envdir)) || (e = cfapkg_env_current(ctx, env, &prev)) ||
	    (e = new_gen_number(ctx, envdir, prev, &gen, &newest)) ||
	    (e = next_seq(ctx, env, newest, &seq)))
		goto out;
	e = make_gen(ctx, lock, envdir, gen, meta_json(gen, prev, seq, command, changes, nchanges),
	             out);
	if (e)
		goto out;
	/* The rename is made durable before 'current' names the new number, so
	 * a crash cannot leave 'current' naming a folder that was never
	 * renamed. */
	cfa_plat_sync_dir(envdir);
	cfa_crash_point();
	if ((e = cfa_env_make_current(ctx, envdir, gen)))
		goto out;
	out->generation = gen;
	out->previous = prev;
	out->checked = true;
out:
	/* A failed commit made no generation: its note says nothing. */
	if (e)
		cfapkg_commit_result_clear(out);
	cfa_free(envdir);
	return e;
}

void cfapkg_commit_result_clear(struct cfapkg_commit_result *r)
{
	if (!r)
		return;
	cfa_free(r->load_note);
	memset(r, 0, sizeof(*r));
}

/* One JSON object per line, appended: a torn last line from a crash is skipped
 * by add_switches, and every earlier line stays readable.  The line is not
 * flushed to the disk: the switch itself is ('current' and the active
 * link), and the log is only its history, as apt's and pacman's logs are.
 * A power cut can drop the newest line, never the switch; rollback's
 * target is read from the generation folders, not from here. */
static enum cfapkg_err log_switch(struct cfapkg_ctx *ctx, const char *envdir, unsigned seq,
                                  unsigned from, unsigned to, const char *command)
{
	struct cfa_buf line;
	char *path, now[32];
	enum cfapkg_err e;

	/* Spelt here rather than built with cJSON, which a rollback has no
	 * other use for: the same members, in the same order. */
	cfa_utc_now(now);
	cfa_buf_init(&line, (size_t)1 << 20);
	cfa_buf_printf(&line, "{\"seq\":%u,\"time\":\"%s\",\"from\":%u,\"to\":%u,\"command\":",
	               seq, now, from, to);
	cfa_buf_add_json_string(&line, command ? command : "");
	cfa_buf_adds(&line, "}");
	if (line.failed)
		e = cfa_nomem(ctx);
	else if (!(e = cfa_path(ctx, &path, "%s/switches.log", envdir))) {
		e = cfa_append_text(ctx, path, cfa_buf_str(&line), "the switch", false);
		cfa_free(path);
	}
	cfa_buf_fini(&line);
	return e;
}

/* A switch is only the last step of a commit: the generation must exist
 * whole (its lock.json), and only 'current', the active link and the log
 * line are written. */
enum cfapkg_err cfa_env_switch_from(struct cfapkg_ctx *ctx, const char *env, unsigned prev,
                                    unsigned newest, unsigned gen, const char *command)
{
	char *envdir = NULL, *lock = NULL;
	unsigned seq;
	enum cfapkg_err e;

	/* Numbers start at 1; 0 would be read as "the current one" below and
	 * leave a 'current' that names no generation. */
	if (!gen)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "environment \"%s\": generation numbers start "
		                "at 1 ('cfapkg history --env %s' lists them)", env, env);
	if ((e = cfa_env_dir(ctx, env, &envdir)) ||
	    (e = cfa_gen_file(ctx, env, gen, "lock.json", &lock)))
		goto out;
	if (!cfa_plat_is_file(lock)) {
		e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has no generation %u "
		             "('cfapkg history --env %s' lists them)", env, gen, env);
		goto out;
	}
	/* To the current generation: nothing changes and history gets no line;
	 * only records that disagree are mended (a link a kill left behind
	 * 'current', a 'current' a power cut left empty), as recovery does. */
	if (gen == prev) {
		cfa_env_relink(ctx, envdir);
		goto out;
	}
	if ((e = next_seq(ctx, env, newest, &seq)) || (e = cfa_env_make_current(ctx, envdir, gen)))
		goto out;
	cfa_crash_point();
	e = log_switch(ctx, envdir, seq, prev, gen, command);
out:
	cfa_free(envdir);
	cfa_free(lock);
	return e;
}

enum cfapkg_err cfapkg_env_switch(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                  const char *command)
{
	unsigned prev;
	enum cfapkg_err e;

	/* A 'current' that holds no number, with no link to read instead, is
	 * what a switch to a chosen generation sets again: it is recorded as a
	 * switch from 0. */
	if ((e = cfapkg_env_current(ctx, env, &prev)) == CFAPKG_E_LOCKFILE) {
		cfapkg_ctx_clear_error(ctx);
		e = CFAPKG_E_OK;
	}
	return e ? e : cfa_env_switch_from(ctx, env, prev, 0, gen, command);
}

/* The changes as one line ("+zluda 7-preview.10, ~libtorch-cuda ..."),
 * "" when there are none; NULL when out of memory. */
static char *join_changes(const cJSON *a)
{
	struct cfa_buf b;
	const cJSON *c;
	char *out;

	cfa_buf_init(&b, (size_t)1 << 20); /* a bound far past any real set */
	cJSON_ArrayForEach(c, a)
	{
		if (cJSON_IsString(c))
			cfa_buf_printf(&b, "%s%s", b.len ? ", " : "", c->valuestring);
	}
	out = b.failed ? NULL : cfa_strdup(cfa_buf_str(&b));
	cfa_buf_fini(&b);
	return out;
}

/* Into a fixed field: time stamps are short, so a cut is only possible on a
 * damaged record. */
static void copy_str(char *dst, size_t len, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	cfa_fit_text(dst, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* A string member as the caller's own copy ("" when absent). */
static char *dup_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cfa_strdup(cJSON_IsString(v) ? v->valuestring : "");
}

/* The largest seq or generation number a record may hold. */
#define SEQ_MAX 3999999999u

/* A missing or impossible number reads as 0, which orders a damaged record
 * first rather than failing the whole history. */
static unsigned get_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 4e9
	           ? (unsigned)v->valuedouble
	           : 0;
}

/* seq is kept beside the entries rather than in them: it orders the entries
 * and is not part of the public history entry. */
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

/* What is known of generation g: its state and latest mark.
 * The state comes from the generation's checked record and its marks; the
 * latest mark is the one history shows. */
static enum cfapkg_err add_state(struct cfapkg_ctx *ctx, struct cfapkg_history_entry *x,
                                 const char *gendir, unsigned g)
{
	struct cfapkg_gen_mark *marks = NULL;
	size_t n = 0;
	enum cfapkg_err e;

	if ((e = cfa_marks_read(ctx, gendir, g, &marks, &n)) ||
	    (e = cfa_gen_state_of(ctx, gendir, marks, n, &x->state))) {
		cfa_free(marks);
		return e;
	}
	x->good = x->state == CFAPKG_GEN_KNOWN_GOOD;
	x->checked = x->state >= CFAPKG_GEN_CHECKED;
	x->nmarks = n;
	if (n) {
		/* The entry keeps its own copy: the list goes now. */
		x->mark = marks[n - 1];
		x->mark.reason = cfa_strdup(marks[n - 1].reason);
		x->mark.command = cfa_strdup(marks[n - 1].command);
	}
	cfa_free(marks);
	return n && (!x->mark.reason || !x->mark.command) ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

/* A generation's meta.json; *meta NULL when it cannot be read (history
 * shows the generation without its details). */
static enum cfapkg_err read_meta(struct cfapkg_ctx *ctx, const char *gendir, cJSON **meta)
{
	char *path;

	*meta = NULL;
	if (cfa_path(ctx, &path, "%s/meta.json", gendir))
		return ctx->err_code;
	if (cfa_json_read_file(ctx, path, CFAPKG_E_IO, meta) != CFAPKG_E_OK) {
		cfapkg_ctx_clear_error(ctx);
		*meta = NULL;
	}
	cfa_free(path);
	return CFAPKG_E_OK;
}

/* A generation without a readable meta.json still appears, with seq 0 and no
 * details, so that nothing on disk is hidden from history. */
static enum cfapkg_err add_gen(struct cfapkg_ctx *ctx, struct history *h, const char *envdir,
                               unsigned g)
{
	struct cfapkg_history_entry *x;
	char *gendir;
	cJSON *meta = NULL;
	enum cfapkg_err e;

	if ((e = cfa_path(ctx, &gendir, "%s/%u", envdir, g)))
		return e;
	if ((e = read_meta(ctx, gendir, &meta))) {
		cfa_free(gendir);
		return e;
	}
	if (!(x = history_add(h, get_num(meta, "seq")))) {
		e = cfa_nomem(ctx);
	} else {
		x->generation = g;
		x->exists = true;
		copy_str(x->time, sizeof(x->time), meta, "created");
		x->command = dup_str(meta, "command");
		x->changes = join_changes(cJSON_GetObjectItemCaseSensitive(meta, "changes"));
		if (!x->command || !x->changes)
			e = cfa_nomem(ctx);
		else
			e = add_state(ctx, x, gendir, g);
	}
	cJSON_Delete(meta);
	cfa_free(gendir);
	return e;
}

static bool add_switch(struct history *h, const cJSON *o)
{
	struct cfapkg_history_entry *x = history_add(h, get_num(o, "seq"));

	if (!x)
		return false;
	x->is_switch = true;
	x->generation = get_num(o, "to");
	x->from = get_num(o, "from");
	copy_str(x->time, sizeof(x->time), o, "time");
	/* A switch changes no part: "" says so, as a generation's would. */
	return (x->command = dup_str(o, "command")) != NULL && (x->changes = cfa_strdup("")) != NULL;
}

/* Switch records, one JSON object per line; a torn last line is skipped. */
static enum cfapkg_err add_switches(struct cfapkg_ctx *ctx, struct history *h, const char *envdir)
{
	struct cfa_buf line;
	char *path;
	FILE *f;
	bool ok = true, whole;
	enum cfapkg_err e;

	if (cfa_path(ctx, &path, "%s/switches.log", envdir))
		return ctx->err_code;
	e = cfa_open_if_there(ctx, path, &f);
	cfa_free(path);
	if (e || !f)
		return e;
	cfa_buf_init(&line, (size_t)1 << 30); /* a line is one record, however long */
	while (ok && cfa_read_line(f, &line, &whole)) {
		cJSON *o = whole && !line.failed ? cJSON_Parse(cfa_buf_str(&line)) : NULL;
		/* A line that does not parse is skipped rather than ending the
		 * history; only running out of memory stops it. */
		ok = !line.failed && (!o || add_switch(h, o));
		cJSON_Delete(o);
	}
	fclose(f);
	cfa_buf_fini(&line);
	return ok ? CFAPKG_E_OK : cfa_nomem(ctx);
}

static void history_fini(struct history *h)
{
	cfapkg_history_free(h->v, h->n);
	cfa_free(h->seq);
}

void cfapkg_history_free(struct cfapkg_history_entry *h, size_t n)
{
	size_t i;

	for (i = 0; h && i < n; i++) {
		cfa_free(h[i].command);
		cfa_free(h[i].changes);
		cfa_free((void *)h[i].mark.reason);
		cfa_free((void *)h[i].mark.command);
	}
	cfa_free(h);
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

/* The history, oldest first.  exists: whether to look up each switch's
 * target, which only a listing needs (a stat per switch ever made). */
static enum cfapkg_err collect(struct cfapkg_ctx *ctx, const char *env, bool exists,
                               struct history *h)
{
	char *envdir, *dir;
	struct gen_scan s;
	size_t i;
	enum cfapkg_err e;

	memset(h, 0, sizeof(*h));
	if ((e = cfa_env_dir(ctx, env, &envdir)))
		return e;
	if ((e = scan_gens(ctx, envdir, &s))) {
		cfa_free(envdir);
		return e;
	}
	for (i = 0; !e && i < s.n; i++)
		e = add_gen(ctx, h, envdir, s.list[i]);
	cfa_free(s.list);
	if (!e)
		e = add_switches(ctx, h, envdir);
	for (i = 0; !e && exists && i < h->n; i++)
		/* A switch's target may since have been removed by gc:
		 * "exists" says whether a rollback could still go there. */
		if (h->v[i].is_switch && !(e = cfa_path(ctx, &dir, "%s/%u", envdir, h->v[i].generation))) {
			h->v[i].exists = cfa_plat_is_dir(dir);
			cfa_free(dir);
		}
	cfa_free(envdir);
	if (e) {
		history_fini(h);
		return e;
	}
	sort_history(h);
	return CFAPKG_E_OK;
}

/* A switch record is far shorter than this; a longer last line is left to
 * the whole history. */
#define SWITCH_TAIL 4096

/* The seq of switches.log's last whole line in *seq (0: no log); false when
 * the line cannot be read or holds no seq.  Only the file's tail is read. */
static bool last_switch_seq(const char *path, unsigned *seq)
{
	char buf[SWITCH_TAIL + 1], *end, *start;
	enum cfa_rfile_kind kind;
	uint64_t size = 0, off;
	struct cfa_rfile *f = cfa_plat_rfile_open(path, &size, &kind);
	size_t got = 0;
	uint64_t v;

	*seq = 0;
	if (!f)
		return kind == CFA_RFILE_ERROR && errno == ENOENT;
	off = size > SWITCH_TAIL ? size - SWITCH_TAIL : 0;
	got = cfa_plat_rfile_read(f, buf, (size_t)(size - off), off);
	cfa_plat_rfile_close(f);
	/* A short read could hide the true last line. */
	if (got != size - off)
		return false;
	buf[got] = '\0';
	/* A torn last line (no newline yet) was never a whole record. */
	if (!(end = strrchr(buf, '\n')))
		return size == 0;
	*end = '\0';
	start = strrchr(buf, '\n');
	if (!start && off)
		return false;
	start = start ? start + 1 : buf;
	if (!cfa_json_peek_uint(start, strlen(start), "seq", SEQ_MAX, &v))
		return false;
	*seq = (unsigned)v;
	return *seq != 0;
}

/* The seq of the newest generation's record; 0 when it has none (or it
 * does not read). */
static enum cfapkg_err newest_gen_seq(struct cfapkg_ctx *ctx, const char *envdir,
                                      unsigned newest, unsigned *seq)
{
	struct gen_scan s;
	char *path, *text = NULL;
	size_t len;
	uint64_t v;
	enum cfapkg_err e;

	*seq = 0;
	if (!newest) {
		if ((e = scan_gens(ctx, envdir, &s)))
			return e;
		cfa_free(s.list);
		newest = s.max;
	}
	if (!newest)
		return CFAPKG_E_OK;
	if ((e = cfa_path(ctx, &path, "%s/%u/meta.json", envdir, newest)))
		return e;
	/* Only its seq is wanted, found without parsing the rest. */
	if (cfa_read_file(ctx, path, &text, &len) != CFAPKG_E_OK)
		cfapkg_ctx_clear_error(ctx);
	else if (cfa_json_peek_uint(text, len, "seq", SEQ_MAX, &v))
		*seq = (unsigned)v;
	cfa_free(text);
	cfa_free(path);
	return CFAPKG_E_OK;
}

/* One past everything recorded.  Numbers and seqs grow together (each new
 * generation is numbered past every folder and sequenced past every
 * record, and the log is appended in order), so the newest generation and
 * the log's last line hold the greatest: a rollback reads two records, not
 * the whole history.  Either one missing its seq (damaged, or written
 * before seqs) sends it to the whole history. */
static enum cfapkg_err next_seq(struct cfapkg_ctx *ctx, const char *env, unsigned newest,
                                unsigned *seq)
{
	struct history h;
	char *envdir, *log;
	unsigned gen = 0, sw = 0;
	bool fast = false;
	enum cfapkg_err e;

	if ((e = cfa_env_dir(ctx, env, &envdir)))
		return e;
	if (!(e = newest_gen_seq(ctx, envdir, newest, &gen)) &&
	    !(e = cfa_path(ctx, &log, "%s/switches.log", envdir))) {
		fast = gen && last_switch_seq(log, &sw);
		cfa_free(log);
	}
	cfa_free(envdir);
	if (e || fast) {
		*seq = e ? 0 : (gen > sw ? gen : sw) + 1;
		return e;
	}
	e = collect(ctx, env, false, &h);
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

	if ((e = cfapkg_env_current(ctx, env, &cur)) || (e = collect(ctx, env, true, &h)))
		return e;
	for (i = 0; i < h.n; i++)
		/* Only the generation's own entry is marked current, not the
		 * switches that went to it. */
		h.v[i].current = h.v[i].generation == cur && !h.v[i].is_switch;
	cfa_free(h.seq);
	*out = h.v;
	*n = h.n;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_env_gen_changes(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                       char ***lines, size_t *n)
{
	char *envdir, *gendir = NULL, *path = NULL;
	cJSON *meta = NULL;
	enum cfapkg_err e;

	*lines = NULL;
	*n = 0;
	if ((e = cfa_env_dir(ctx, env, &envdir)))
		return e;
	if (!(e = cfa_path(ctx, &gendir, "%s/%u", envdir, gen)) &&
	    !(e = cfa_path(ctx, &path, "%s/meta.json", gendir))) {
		/* A generation removed by gc has no changes to read: that is
		 * NOTFOUND, not an I/O error. */
		if (!cfa_plat_is_dir(gendir))
			e = cfa_fail(ctx, CFAPKG_E_NOTFOUND,
			                  "environment \"%s\" has no generation %u; 'cfapkg history --env %s' "
			                  "lists them",
			                  env, gen, env);
		else if (!(e = cfa_json_read_file(ctx, path, CFAPKG_E_IO, &meta)) &&
		         !(*lines = cfa_json_strings(cJSON_GetObjectItemCaseSensitive(meta, "changes"), n)))
			e = cfa_nomem(ctx);
	}
	cJSON_Delete(meta);
	cfa_free(path);
	cfa_free(gendir);
	cfa_free(envdir);
	return e;
}
