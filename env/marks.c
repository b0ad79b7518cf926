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

#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

#define MARKS_FILE "marks.log"
#define CHECKED_FILE "checked"
/* An older cfapkg wrote this after the static checks alone: it reads as
 * "checked", never as known-good. */
#define OLD_GOOD_FILE "good"

const char *cfapkg_gen_state_name(enum cfapkg_gen_state s)
{
	static const char *const names[] = {"unchecked", "checked", "known-good"};
	return (unsigned)s < 3 ? names[s] : "?";
}

const char *cfapkg_mark_source_name(enum cfapkg_mark_source by)
{
	return by == CFAPKG_MARK_HAND ? "hand" : "doctor";
}

enum cfapkg_err cfa_append_line(struct cfapkg_ctx *ctx, const char *path, cJSON *o,
                                const char *what)
{
	char *line = cJSON_PrintUnformatted(o);
	FILE *f;
	int bad;

	cJSON_Delete(o);
	if (!line)
		return cfa_nomem(ctx);
	f = cfa_plat_fopen(path, "ab");
	bad = !f || fprintf(f, "%s\n", line) < 0;
	bad |= f && cfa_plat_fsync(f) != 0;
	bad |= f && fclose(f) != 0;
	cJSON_free(line);
	return bad ? cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot record %s", path, what) : CFAPKG_E_OK;
}

enum cfapkg_err cfa_write_checked(struct cfapkg_ctx *ctx, const char *gendir)
{
	char path[CFA_PATH_MAX], now[32];

	cfa_utc_now(now);
	cfa_snprintf(path, sizeof(path), "%s/%s", gendir, CHECKED_FILE);
	return cfa_write_atomic(ctx, path, now, strlen(now));
}

static void copy_field(char *dst, size_t len, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	cfa_snprintf(dst, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* One line of marks.log; false when it is not a mark (skipped). */
static bool mark_from_json(const cJSON *o, unsigned gen, struct cfapkg_gen_mark *m)
{
	const cJSON *good = cJSON_GetObjectItemCaseSensitive(o, "good");
	const cJSON *by = cJSON_GetObjectItemCaseSensitive(o, "by");

	if (!cJSON_IsBool(good) || !cJSON_IsString(by))
		return false;
	memset(m, 0, sizeof(*m));
	m->generation = gen;
	m->good = cJSON_IsTrue(good);
	m->by = strcmp(by->valuestring, "hand") == 0 ? CFAPKG_MARK_HAND : CFAPKG_MARK_DOCTOR;
	copy_field(m->time, sizeof(m->time), o, "time");
	copy_field(m->reason, sizeof(m->reason), o, "reason");
	copy_field(m->command, sizeof(m->command), o, "command");
	return true;
}

enum cfapkg_err cfa_marks_read(struct cfapkg_ctx *ctx, const char *gendir, unsigned gen,
                               struct cfapkg_gen_mark **out, size_t *n)
{
	char path[CFA_PATH_MAX], line[2048];
	size_t cap = 0;
	bool ok = true;
	FILE *f;

	*out = NULL;
	*n = 0;
	cfa_snprintf(path, sizeof(path), "%s/%s", gendir, MARKS_FILE);
	if (!(f = cfa_plat_fopen(path, "rb")))
		return CFAPKG_E_OK;
	while (ok && fgets(line, sizeof(line), f)) {
		cJSON *o = strchr(line, '\n') ? cJSON_Parse(line) : NULL;
		struct cfapkg_gen_mark m;
		if (o && mark_from_json(o, gen, &m)) {
			ok = cfa_grow((void **)out, &cap, *n + 1, sizeof(**out)) == 0;
			if (ok)
				(*out)[(*n)++] = m;
		}
		cJSON_Delete(o);
	}
	fclose(f);
	if (!ok) {
		CFA_FREE(*out);
		*n = 0;
		return cfa_nomem(ctx);
	}
	return CFAPKG_E_OK;
}

enum cfapkg_gen_state cfa_gen_state_of(const char *gendir, const struct cfapkg_gen_mark *marks,
                                       size_t n)
{
	char path[CFA_PATH_MAX];

	if (n && marks[n - 1].good)
		return CFAPKG_GEN_KNOWN_GOOD;
	cfa_snprintf(path, sizeof(path), "%s/%s", gendir, CHECKED_FILE);
	if (cfa_plat_is_file(path))
		return CFAPKG_GEN_CHECKED;
	cfa_snprintf(path, sizeof(path), "%s/%s", gendir, OLD_GOOD_FILE);
	return cfa_plat_is_file(path) ? CFAPKG_GEN_CHECKED : CFAPKG_GEN_UNCHECKED;
}

/* ROOT/envs/ENV/N of an existing generation (gen 0: the current one). */
static enum cfapkg_err existing_gen(struct cfapkg_ctx *ctx, const char *env, unsigned *gen,
                                    char *dir, size_t len)
{
	char lock[CFA_PATH_MAX];
	enum cfapkg_err e;

	if (*gen == 0 && (e = cfapkg_env_current(ctx, env, gen)))
		return e;
	if ((e = cfapkg_gen_path(ctx, env, *gen, "lock.json", lock, sizeof(lock))) ||
	    (e = cfa_gen_dir(ctx, env, *gen, dir, len)))
		return e;
	if (!cfa_plat_is_file(lock))
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has no generation %u "
		                "('cfapkg history --env %s' lists them)", env, *gen, env);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_env_mark(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                enum cfapkg_gen_state state, enum cfapkg_mark_source by,
                                const char *reason, const char *command)
{
	char dir[CFA_PATH_MAX], path[CFA_PATH_MAX], now[32];
	cJSON *o;
	enum cfapkg_err e;

	if (state != CFAPKG_GEN_KNOWN_GOOD && state != CFAPKG_GEN_CHECKED)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "a generation is marked known-good or unmarked "
		                "(checked); its static checks are not set by hand");
	if ((e = existing_gen(ctx, env, &gen, dir, sizeof(dir))))
		return e;
	cfa_utc_now(now);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "time", now);
	cJSON_AddBoolToObject(o, "good", state == CFAPKG_GEN_KNOWN_GOOD);
	cJSON_AddStringToObject(o, "by", cfapkg_mark_source_name(by));
	cJSON_AddStringToObject(o, "reason", reason ? reason : "");
	cJSON_AddStringToObject(o, "command", command ? command : "");
	cfa_snprintf(path, sizeof(path), "%s/%s", dir, MARKS_FILE);
	cfa_crash_point();
	return cfa_append_line(ctx, path, o, "the mark");
}

enum cfapkg_err cfapkg_env_marks(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                 struct cfapkg_gen_mark **out, size_t *n)
{
	char dir[CFA_PATH_MAX];
	enum cfapkg_err e;

	*out = NULL;
	*n = 0;
	if ((e = existing_gen(ctx, env, &gen, dir, sizeof(dir))))
		return e;
	return cfa_marks_read(ctx, dir, gen, out, n);
}

enum cfapkg_err cfapkg_env_gen_state(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                     enum cfapkg_gen_state *state, struct cfapkg_gen_mark *last)
{
	struct cfapkg_gen_mark *marks = NULL;
	char dir[CFA_PATH_MAX];
	size_t n = 0;
	enum cfapkg_err e;

	if ((e = existing_gen(ctx, env, &gen, dir, sizeof(dir))) ||
	    (e = cfa_marks_read(ctx, dir, gen, &marks, &n)))
		return e;
	*state = cfa_gen_state_of(dir, marks, n);
	if (last && n)
		*last = marks[n - 1];
	else if (last)
		memset(last, 0, sizeof(*last));
	cfa_free(marks);
	return CFAPKG_E_OK;
}
