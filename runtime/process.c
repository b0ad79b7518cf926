/*
 * process.c - starting programs: finding them on PATH, replacing cfapkg
 * with them (cfapkg run), capturing their output with a time limit, and
 * running cfapkg-probe for one library and reading its verdict.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

static bool windows(void)
{
	return strcmp(cfa_plat_os(), "windows") == 0;
}

/* dir/name, and on Windows dir/name.exe when name has no extension: the
 * one that is a file in *out (cfa_free), else *out NULL. */
static enum cfapkg_err try_path(struct cfapkg_ctx *ctx, const char *dir, const char *name,
                                char **out)
{
	/* Windows' own separator: the path becomes the program's argv[0], and
	 * cmd.exe reads a '/' anywhere in its command line as a switch. */
	const char *sep = !*dir ? "" : windows() ? "\\" : "/";
	const char *base = name, *p;
	enum cfapkg_err e;

	for (p = name; *p; p++)
		if (*p == '/' || *p == '\\')
			base = p + 1;
	if ((e = cfa_path(ctx, out, "%s%s%s", dir, sep, name)) || cfa_plat_is_file(*out))
		return e;
	CFA_FREE(*out);
	/* A name typed without an extension also finds NAME.exe on Windows, as
	 * a command line does; one with an extension is taken as it is. */
	if (windows() && !strchr(base, '.') &&
	    !(e = cfa_path(ctx, out, "%s%s%s.exe", dir, sep, name)) && !cfa_plat_is_file(*out))
		CFA_FREE(*out);
	return e;
}

const char *cfapkg_host_os(void)
{
	return cfa_plat_os();
}

/* The first folder of PATH holding the program (*out, cfa_free), else *out
 * NULL. */
static enum cfapkg_err search_path(struct cfapkg_ctx *ctx, const char *name, char **out)
{
	const char seps[] = {cfa_plat_path_list_sep(), '\0'};
	char *path = NULL, *dir = NULL;
	const char *p;
	enum cfapkg_err e = CFAPKG_E_OK;
	int rc = cfa_plat_getenv_dup("PATH", &path);

	*out = NULL;
	if (rc == ENOMEM)
		return cfa_nomem(ctx);
	for (p = rc ? NULL : path; p && *p && !*out && !e;) {
		size_t n = strcspn(p, seps);
		/* An empty entry would mean the current folder: a program is
		 * never picked up from there by accident. */
		if (n && !(dir = cfa_strndup(p, n)))
			e = cfa_nomem(ctx);
		else if (n)
			e = try_path(ctx, dir, name, out);
		CFA_FREE(dir);
		p += n + (p[n] != '\0');
	}
	free(path); /* the platform's allocation */
	return e;
}

enum cfapkg_err cfapkg_find_program(struct cfapkg_ctx *ctx, const char *name, char *buf,
                                    size_t len)
{
	/* A name with a folder in it is a path, as a shell takes it, and PATH
	 * is not searched. */
	bool has_dir = strchr(name, '/') || strchr(name, '\\');
	char *found = NULL;
	enum cfapkg_err e = has_dir ? try_path(ctx, "", name, &found)
	                            : search_path(ctx, name, &found);

	if (e)
		return e;
	if (!found)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, has_dir ? "%s: no such program"
		                                                : "%s: not found in PATH", name);
	/* The caller's buffer is the public interface's: a path it cannot hold
	 * is refused, never handed back cut. */
	if (!cfa_snprintf(buf, len, "%s", found))
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: path too long (more than %lu bytes)", found,
		             (unsigned long)(len ? len - 1 : 0));
	cfa_free(found);
	return e;
}

enum cfapkg_err cfapkg_exec(struct cfapkg_ctx *ctx, const char *const *argv, int *status)
{
	int rc = cfa_plat_exec(argv, status);

	return rc ? cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot start it: %s", argv[0],
	                     cfa_plat_strerror(rc))
	          : CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_run_capture(struct cfapkg_ctx *ctx, const char *const *argv,
                                   unsigned timeout_ms, char *out, size_t len, int *status,
                                   bool *timed_out)
{
	int rc = cfa_plat_run_capture(argv, timeout_ms, out, len, status);

	/* A time-out is no error here: the caller learns of it through
	 * *timed_out and still has what the program printed before it was
	 * stopped. */
	*timed_out = rc == ETIMEDOUT;
	if (rc && rc != ETIMEDOUT)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot start it: %s", argv[0],
		                cfa_plat_strerror(rc));
	return CFAPKG_E_OK;
}

static const char *const libraries[] = {"cuda", "cublas", "cublaslt", "cusparse",
                                        "cufft", "nvml", "cudnn"};

const char *const *cfapkg_probe_libraries(size_t *n)
{
	*n = sizeof(libraries) / sizeof(libraries[0]);
	return libraries;
}

const char *cfapkg_probe_status_name(enum cfapkg_probe_status s)
{
	/* In the order of enum cfapkg_probe_status, which indexes it. */
	static const char *const names[] = {"OK", "MISSING", "FAILED", "WRONG RESULT",
	                                    "TIMEOUT", "CRASHED", "SKIPPED"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* *dst becomes text (NULL when out of memory: the field reads as none). */
static void set_text(char **dst, char *text)
{
	cfa_free(*dst);
	*dst = text;
}

void cfapkg_probe_result_clear(struct cfapkg_probe_result *r)
{
	if (!r)
		return;
	cfa_free(r->file);
	cfa_free(r->detail);
	cfa_free(r->last_step);
	memset(r, 0, sizeof(*r));
}

/* "RESULT STATUS FILE DETAIL" and "STEP CALL" lines into out.  A Windows
 * probe writes its standard output in text mode, so a line may end in
 * "\r\n": the "\r" belongs to no field.  A later line of a field replaces
 * an earlier one. */
static void parse_output(char *text, struct cfapkg_probe_result *out, bool *got)
{
	static const struct {
		const char *word;
		enum cfapkg_probe_status status;
	} words[] = {{"OK", CFAPKG_PROBE_OK},         {"MISSING", CFAPKG_PROBE_MISSING},
	             {"FAILED", CFAPKG_PROBE_FAILED}, {"WRONG", CFAPKG_PROBE_WRONG},
	             {"SKIPPED", CFAPKG_PROBE_SKIPPED}};
	char *line, *next;
	size_t i;

	for (line = text; line && *line; line = next) {
		size_t end;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		end = strlen(line);
		if (end && line[end - 1] == '\r')
			line[end - 1] = '\0';
		if (strncmp(line, "STEP ", 5) == 0)
			set_text(&out->last_step, cfa_strdup(line + 5));
		/* Any other line is the library's or the probe's own chatter,
		 * not a field. */
		if (strncmp(line, "RESULT ", 7) != 0)
			continue;
		line += 7;
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			size_t n = strlen(words[i].word);
			if (strncmp(line, words[i].word, n) == 0 && line[n] == ' ') {
				size_t f = strcspn(line + n + 1, " ");
				out->status = words[i].status;
				set_text(&out->file, cfa_aprintf("%.*s", (int)f, line + n + 1));
				set_text(&out->detail,
				         cfa_strdup(line + n + 1 + f + (line[n + 1 + f] == ' ')));
				*got = true;
			}
		}
	}
}

/* cfapkg-probe beside this program (*out, cfa_free). */
static enum cfapkg_err probe_program(struct cfapkg_ctx *ctx, char **out)
{
	char *dir = NULL;
	int rc = cfa_plat_exe_dir(&dir);
	enum cfapkg_err e = CFAPKG_E_OK;

	*out = NULL;
	if (rc == ENOMEM)
		return cfa_nomem(ctx);
	if (rc == 0 && (e = try_path(ctx, dir, "cfapkg-probe", out)) == CFAPKG_E_OK && !*out)
		e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "cfapkg-probe is not beside cfapkg in %s; "
		             "reinstall cfapkg", dir);
	else if (rc)
		e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "cannot find the folder of cfapkg, where "
		             "cfapkg-probe should be: %s", cfa_plat_strerror(rc));
	free(dir); /* the platform's allocation */
	return e;
}

/* The probe's verdict when it gave none: a time-out or a death. */
static void no_verdict(struct cfapkg_probe_result *out, bool timed_out, int status,
                       unsigned timeout_ms)
{
	char how[32];
	const char *step = out->last_step && out->last_step[0] ? out->last_step : NULL;

	if (timed_out) {
		out->status = CFAPKG_PROBE_TIMEOUT;
		set_text(&out->detail, cfa_aprintf("no answer in %u s (last call: %s)",
		                                   timeout_ms / 1000, step ? step : "none"));
		return;
	}
	/* A Windows crash's status is its exception code (0xC0000005 for an
	 * access violation), which Windows documents in hex.  Either form of
	 * a 32-bit number fits. */
	if (!((unsigned)status >= 0xC0000000u
	      ? cfa_snprintf(how, sizeof(how), "exception 0x%08X", (unsigned)status)
	      : cfa_snprintf(how, sizeof(how), "status %d", status)))
		how[0] = '\0';
	out->status = CFAPKG_PROBE_CRASHED;
	set_text(&out->detail, cfa_aprintf("the probe died (%s) in %s", how,
	                                   step ? step : "loading the library"));
}

/* What a probe may print before its verdict is read: 64 KiB, on the heap
 * (much for a stack, and kept out of every command's image). */
#define PROBE_OUTPUT_MAX (1u << 16)

/* The probe's output in text (PROBE_OUTPUT_MAX bytes) read into out. */
static enum cfapkg_err probe_into(struct cfapkg_ctx *ctx, const char *library,
                                  const char *const *dirs, size_t ndirs, unsigned timeout_ms,
                                  char *text, struct cfapkg_probe_result *out)
{
	const char **argv = NULL;
	char *prog = NULL;
	size_t i, n = 0;
	int status = 0;
	bool timed_out = false, got = false, full;
	enum cfapkg_err e;

	if ((e = probe_program(ctx, &prog)))
		return e;
	/* Every folder is passed on, however many. */
	if (!(argv = cfa_calloc(2 * ndirs + 3, sizeof(*argv)))) {
		cfa_free(prog);
		return cfa_nomem(ctx);
	}
	/* The probe is given only the folders to look in: it loads the library
	 * itself, so a crash or a hang is its own and cfapkg can report it. */
	argv[n++] = prog;
	argv[n++] = library;
	for (i = 0; i < ndirs; i++) {
		argv[n++] = "--lib-dir";
		argv[n++] = dirs[i];
	}
	argv[n] = NULL;
	e = cfapkg_run_capture(ctx, argv, timeout_ms, text, PROBE_OUTPUT_MAX, &status, &timed_out);
	cfa_free(argv);
	cfa_free(prog);
	if (e)
		return e;
	/* The capture keeps the first PROBE_OUTPUT_MAX - 1 bytes: a full
	 * buffer without a verdict may have lost it, which is no crash. */
	full = strlen(text) == PROBE_OUTPUT_MAX - 1;
	parse_output(text, out, &got);
	if (timed_out || (!got && !full)) {
		no_verdict(out, timed_out, status, timeout_ms);
	} else if (!got) {
		out->status = CFAPKG_PROBE_FAILED;
		set_text(&out->detail, cfa_aprintf("the probe printed more than %lu bytes (the "
		                                   "library wrote to its output) and no verdict in "
		                                   "them", (unsigned long)PROBE_OUTPUT_MAX - 1));
	}
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_probe(struct cfapkg_ctx *ctx, const char *library,
                             const char *const *dirs, size_t ndirs, unsigned timeout_ms,
                             struct cfapkg_probe_result *out)
{
	char *text;
	enum cfapkg_err e;

	memset(out, 0, sizeof(out[0]));
	out->library = library;
	if (!(text = cfa_malloc(PROBE_OUTPUT_MAX)))
		return cfa_nomem(ctx);
	e = probe_into(ctx, library, dirs, ndirs, timeout_ms, text, out);
	cfa_free(text);
	return e;
}
