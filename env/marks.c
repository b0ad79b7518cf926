/*
 * marks.c - what is known of a generation beyond its files.  Its static
 * checks leave N/checked, which proves only that every promised file is
 * there.  Known-good must be proven: a live 'cfapkg doctor' probe that
 * passes here, or the user's word ('cfapkg mark-good'); a failing probe or
 * 'cfapkg unmark' takes it back.  Each mark is a line appended to
 * N/marks.log, which lives and dies with its generation (a later
 * generation that reuses the number starts with no marks).  The last
 * complete line decides; a torn last line, left by a kill mid-write, is as
 * if that mark never happened.
 */
#include <string.h>

#include "core/json_build.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

#define MARKS_FILE "marks.log"
#define CHECKED_FILE "checked"
/* An older cfapkg wrote this after the static checks alone: it reads as
 * "checked", never as known-good. */
#define OLD_GOOD_FILE "good"

/* Indexed by the enum, so a new state without a name reads "?" rather than
 * past the table. */
const char *cfapkg_gen_state_name(enum cfapkg_gen_state s)
{
	static const char *const names[] = {[CFAPKG_GEN_UNCHECKED] = "unchecked",
	                                    [CFAPKG_GEN_CHECKED] = "checked",
	                                    [CFAPKG_GEN_KNOWN_GOOD] = "known-good"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* Two sources only, and this is the text marks.log keeps: mark_from_json reads
 * "hand" back and takes anything else for the doctor. */
const char *cfapkg_mark_source_name(enum cfapkg_mark_source by)
{
	return by == CFAPKG_MARK_HAND ? "hand" : "doctor";
}

/* One record appended as a single line; with flush, on the disk before the
 * call returns, so that a mark reported as recorded survives a power cut. */
enum cfapkg_err cfa_append_text(struct cfapkg_ctx *ctx, const char *path, const char *line,
                                const char *what, bool flush)
{
	FILE *f;
	char *text = NULL;
	int bad;
	bool torn;

	/* Unbuffered, and the record given in one piece: the last byte is
	 * read alone and the record written in one call, where a buffer would
	 * read the file's tail twice and could split the write. */
	if ((f = cfa_plat_fopen(path, "a+b")))
		setvbuf(f, NULL, _IONBF, 0);
	/* A kill in an earlier append leaves a torn line: the record starts a
	 * line of its own, or the torn bytes would swallow it. */
	torn = f && fseek(f, -1, SEEK_END) == 0 && fgetc(f) != '\n';
	if (f && !(text = cfa_aprintf("%s%s\n", torn ? "\n" : "", line))) {
		fclose(f);
		return cfa_nomem(ctx);
	}
	bad = !f || fseek(f, 0, SEEK_END) != 0 || fputs(text, f) == EOF;
	bad |= f && flush && cfa_plat_fsync(f) != 0;
	bad |= f && fclose(f) != 0;
	cfa_free(text);
	return bad ? cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot record %s", path, what) : CFAPKG_E_OK;
}

/* o is consumed whatever happens. */
enum cfapkg_err cfa_append_line(struct cfapkg_ctx *ctx, const char *path, cJSON *o,
                                const char *what, bool flush)
{
	char *line = cJSON_PrintUnformatted(o);
	enum cfapkg_err e;

	cJSON_Delete(o);
	if (!line)
		return cfa_nomem(ctx);
	e = cfa_append_text(ctx, path, line, what, flush);
	cJSON_free(line);
	return e;
}

/* N/checked holds the time the static checks passed; its presence, not its
 * text, is what makes the generation "checked". */
enum cfapkg_err cfa_write_checked(struct cfapkg_ctx *ctx, const char *gendir)
{
	char *path, now[32];
	enum cfapkg_err e = cfa_path(ctx, &path, "%s/%s", gendir, CHECKED_FILE);

	/* The time is only for people to read; the file's presence is the
	 * record, written atomically so that a kill never leaves half of
	 * one. */
	cfa_utc_now(now);
	if (!e)
		e = cfa_write_atomic(ctx, path, now, strlen(now));
	cfa_free(path);
	return e;
}

/* A member fitted into a fixed field, "" when absent.  Only the time goes here,
 * which is shown, never parsed: a hand-edited one too long for the field ends
 * in "..." rather than failing the read. */
static void copy_field(char *dst, size_t len, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	cfa_fit_text(dst, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* A string member, "" when absent: borrowed from o, copied by the pack. */
static const char *text_field(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

struct cfapkg_gen_mark *cfa_marks_pack(const struct cfapkg_gen_mark *m, size_t n)
{
	size_t size = n * sizeof(*m), i, len;
	struct cfapkg_gen_mark *out;
	char *text;

	/* One block for the records and their text, so that a list of marks is
	 * freed with one call; a NULL text is kept as "" so readers need not
	 * test. */
	for (i = 0; i < n; i++)
		size += strlen(m[i].reason ? m[i].reason : "") +
		        strlen(m[i].command ? m[i].command : "") + 2;
	if (!(out = cfa_malloc(size ? size : 1)))
		return NULL;
	/* The records first, then each one's text: char needs no alignment. */
	text = (char *)(out + n);
	for (i = 0; i < n; i++) {
		out[i] = m[i];
		len = strlen(m[i].reason ? m[i].reason : "") + 1;
		out[i].reason = memcpy(text, m[i].reason ? m[i].reason : "", len);
		text += len;
		len = strlen(m[i].command ? m[i].command : "") + 1;
		out[i].command = memcpy(text, m[i].command ? m[i].command : "", len);
		text += len;
	}
	return out;
}

/* One line of marks.log; false when it is not a mark (skipped).
 * Any "by" other than "hand" reads as doctor: only the user's word is told
 * apart. */
static bool mark_from_json(const cJSON *o, unsigned gen, struct cfapkg_gen_mark *m)
{
	const cJSON *good = cJSON_GetObjectItemCaseSensitive(o, "good");
	const cJSON *by = cJSON_GetObjectItemCaseSensitive(o, "by");

	/* Without both it is not a mark (another record, or a hand edit), and
	 * it is skipped rather than read as one of either kind. */
	if (!cJSON_IsBool(good) || !cJSON_IsString(by))
		return false;
	memset(m, 0, sizeof(*m));
	m->generation = gen;
	m->good = cJSON_IsTrue(good);
	m->by = strcmp(by->valuestring, "hand") == 0 ? CFAPKG_MARK_HAND : CFAPKG_MARK_DOCTOR;
	copy_field(m->time, sizeof(m->time), o, "time");
	m->reason = text_field(o, "reason");
	m->command = text_field(o, "command");
	return true;
}

enum cfapkg_err cfa_marks_read(struct cfapkg_ctx *ctx, const char *gendir, unsigned gen,
                               struct cfapkg_gen_mark **out, size_t *n)
{
	struct cfapkg_gen_mark *read = NULL;
	struct cfa_buf line;
	cJSON *held = cJSON_CreateArray(); /* the lines the records borrow from */
	char *path;
	size_t cap = 0, count = 0;
	/* A line that is torn or does not parse is skipped; only running out
	 * of memory fails the read. */
	bool ok = held != NULL, whole;
	FILE *f = NULL;
	enum cfapkg_err e;

	*out = NULL;
	*n = 0;
	if (!ok || cfa_path(ctx, &path, "%s/%s", gendir, MARKS_FILE)) {
		cJSON_Delete(held);
		return ok ? ctx->err_code : cfa_nomem(ctx);
	}
	/* A missing marks.log leaves f NULL and e OK: a generation with no
	 * marks. */
	e = cfa_open_if_there(ctx, path, &f);
	cfa_free(path);
	cfa_buf_init(&line, (size_t)1 << 30); /* a line is one mark, however long */
	while (f && ok && cfa_read_line(f, &line, &whole)) {
		cJSON *o = whole && !line.failed ? cJSON_Parse(cfa_buf_str(&line)) : NULL;
		struct cfapkg_gen_mark m;
		ok = !line.failed;
		if (o && mark_from_json(o, gen, &m) &&
		    (ok = cfa_grow((void **)&read, &cap, count + 1, sizeof(*read)) == 0)) {
			read[count++] = m;
			cJSON_AddItemToArray(held, o);
		} else {
			cJSON_Delete(o);
		}
	}
	if (f)
		fclose(f);
	cfa_buf_fini(&line);
	if (!e && ok && count && !(*out = cfa_marks_pack(read, count)))
		ok = false;
	*n = *out ? count : 0;
	cfa_free(read);
	cJSON_Delete(held);
	if (!e && !ok)
		return cfa_nomem(ctx);
	return e;
}

/* Whether gendir holds the file name; *there false when out of memory. */
static enum cfapkg_err has_file(struct cfapkg_ctx *ctx, const char *gendir, const char *name,
                                bool *there)
{
	char *path;

	*there = false;
	if (cfa_path(ctx, &path, "%s/%s", gendir, name))
		return ctx->err_code;
	*there = cfa_plat_is_file(path);
	cfa_free(path);
	return CFAPKG_E_OK;
}

/* The last complete mark decides: a later unmark takes back an earlier
 * known-good, and an old "good" file never counts for more than checked. */
enum cfapkg_err cfa_gen_state_of(struct cfapkg_ctx *ctx, const char *gendir,
                                 const struct cfapkg_gen_mark *marks, size_t n,
                                 enum cfapkg_gen_state *out)
{
	bool checked = false, old_good = false;
	enum cfapkg_err e;

	*out = CFAPKG_GEN_UNCHECKED;
	/* Only the last mark counts, and a mark is a verdict on the whole
	 * generation, so a known-good one decides without a look at the
	 * files. */
	if (n && marks[n - 1].good) {
		*out = CFAPKG_GEN_KNOWN_GOOD;
		return CFAPKG_E_OK;
	}
	if ((e = has_file(ctx, gendir, CHECKED_FILE, &checked)) ||
	    (!checked && (e = has_file(ctx, gendir, OLD_GOOD_FILE, &old_good))))
		return e;
	*out = checked || old_good ? CFAPKG_GEN_CHECKED : CFAPKG_GEN_UNCHECKED;
	return CFAPKG_E_OK;
}

/* ROOT/envs/ENV/N of an existing generation (gen 0: the current one).
 * A generation exists when its lock.json does: a folder without one was never
 * completed and cannot be marked. */
static enum cfapkg_err existing_gen(struct cfapkg_ctx *ctx, const char *env, unsigned *gen,
                                    char **dir)
{
	char *lock = NULL;
	enum cfapkg_err e;

	*dir = NULL;
	/* gen 0 is resolved to the current generation here, so that the
	 * caller goes on with the number it stands for. */
	if (*gen == 0 && (e = cfapkg_env_current(ctx, env, gen)))
		return e;
	if (!(e = cfa_gen_file(ctx, env, *gen, "lock.json", &lock)) && !cfa_plat_is_file(lock))
		e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has no generation %u "
		             "('cfapkg history --env %s' lists them)", env, *gen, env);
	if (!e)
		e = cfa_gen_dir(ctx, env, *gen, dir);
	cfa_free(lock);
	return e;
}

/* One mark as marks.log keeps it; NULL when out of memory.  The reason and
 * command are kept as given ("" for none), so that history can say why and by
 * what each mark was made. */
static cJSON *mark_json(enum cfapkg_gen_state state, enum cfapkg_mark_source by,
                        const char *reason, const char *command)
{
	struct cfa_json_build jb = {false};
	cJSON *o = cfa_json_new_object(&jb);
	char now[32];

	cfa_utc_now(now);
	cfa_json_add_string(&jb, o, "time", now);
	cfa_json_add_bool(&jb, o, "good", state == CFAPKG_GEN_KNOWN_GOOD);
	cfa_json_add_string(&jb, o, "by", cfapkg_mark_source_name(by));
	cfa_json_add_string(&jb, o, "reason", reason ? reason : "");
	cfa_json_add_string(&jb, o, "command", command ? command : "");
	return cfa_json_finish(&jb, o);
}

enum cfapkg_err cfapkg_env_mark(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                enum cfapkg_gen_state state, enum cfapkg_mark_source by,
                                const char *reason, const char *command)
{
	char *dir = NULL, *path = NULL;
	cJSON *o;
	enum cfapkg_err e;

	/* Unchecked is what the static checks decide, not a mark: only
	 * known-good and its taking back (checked) can be recorded. */
	if (state != CFAPKG_GEN_KNOWN_GOOD && state != CFAPKG_GEN_CHECKED)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "a generation is marked known-good or unmarked "
		                "(checked); its static checks are not set by hand");
	if ((e = existing_gen(ctx, env, &gen, &dir)) ||
	    (e = cfa_path(ctx, &path, "%s/%s", dir, MARKS_FILE))) {
		cfa_free(dir);
		return e;
	}
	if (!(o = mark_json(state, by, reason, command))) {
		e = cfa_nomem(ctx);
	} else {
		/* Nothing is written yet: a crash test stopping here must leave
		 * the marks as they were. */
		cfa_crash_point();
		/* Every call appends, even one that leaves the state as it
		 * was: history shows each time someone said so. */
		e = cfa_append_line(ctx, path, o, "the mark", true);
	}
	cfa_free(dir);
	cfa_free(path);
	return e;
}

enum cfapkg_err cfapkg_env_marks(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                 struct cfapkg_gen_mark **out, size_t *n)
{
	char *dir;
	enum cfapkg_err e;

	*out = NULL;
	*n = 0;
	if (!(e = existing_gen(ctx, env, &gen, &dir)))
		e = cfa_marks_read(ctx, dir, gen, out, n);
	cfa_free(dir);
	return e;
}

enum cfapkg_err cfapkg_env_gen_state(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                     enum cfapkg_gen_state *state)
{
	struct cfapkg_gen_mark *marks = NULL;
	char *dir;
	size_t n = 0;
	enum cfapkg_err e;

	if (!(e = existing_gen(ctx, env, &gen, &dir)) &&
	    !(e = cfa_marks_read(ctx, dir, gen, &marks, &n)))
		e = cfa_gen_state_of(ctx, dir, marks, n, state);
	cfa_free(marks);
	cfa_free(dir);
	return e;
}
