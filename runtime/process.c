/*
 * process.c - starting programs: finding them on PATH, replacing cfapkg
 * with them (cfapkg run), capturing their output with a time limit, and
 * running cfapkg-probe for one library and reading its verdict.
 */
#include <errno.h>
#include <string.h>

#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

static bool windows(void)
{
	return strcmp(cfa_plat_os(), "windows") == 0;
}

/* dir/name, and on Windows dir/name.exe when name has no extension. */
static bool try_path(const char *dir, const char *name, char *buf, size_t len)
{
	const char *base = strrchr(name, '/');

	cfa_snprintf(buf, len, "%s%s%s", dir, *dir ? "/" : "", name);
	if (cfa_plat_is_file(buf))
		return true;
	base = base ? base : name;
	if (windows() && !strchr(base, '.')) {
		cfa_snprintf(buf, len, "%s%s%s.exe", dir, *dir ? "/" : "", name);
		return cfa_plat_is_file(buf);
	}
	return false;
}

const char *cfapkg_host_os(void)
{
	return cfa_plat_os();
}

enum cfapkg_err cfapkg_find_program(struct cfapkg_ctx *ctx, const char *name, char *buf,
                                    size_t len)
{
	static char path[1 << 16];
	char dir[CFA_PATH_MAX];
	const char *p;

	if (strchr(name, '/') || strchr(name, '\\')) {
		if (try_path("", name, buf, len))
			return CFAPKG_E_OK;
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s: no such program", name);
	}
	for (p = cfa_plat_getenv("PATH", path, sizeof(path)); p && *p;) {
		size_t n = strcspn(p, (char[]){cfa_plat_path_list_sep(), '\0'});
		cfa_snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		if (n && try_path(dir, name, buf, len))
			return CFAPKG_E_OK;
		p += n + (p[n] != '\0');
	}
	return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s: not found in PATH", name);
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

	*timed_out = rc == ETIMEDOUT;
	if (rc && rc != ETIMEDOUT)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot start it: %s", argv[0],
		                cfa_plat_strerror(rc));
	return CFAPKG_E_OK;
}

static const char *const libraries[] = {"cuda", "cublas", "cublaslt", "cusparse",
                                        "cufft", "nvml", "cudnn", NULL};

const char *const *cfapkg_probe_libraries(void)
{
	return libraries;
}

const char *cfapkg_probe_status_name(enum cfapkg_probe_status s)
{
	static const char *const names[] = {"OK", "MISSING", "FAILED", "WRONG RESULT",
	                                    "TIMEOUT", "CRASHED", "SKIPPED"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* "RESULT STATUS FILE DETAIL" and "STEP CALL" lines into out.  A Windows
 * probe writes its standard output in text mode, so a line may end in
 * "\r\n": the "\r" belongs to no field. */
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
			cfa_snprintf(out->last_step, sizeof(out->last_step), "%s", line + 5);
		if (strncmp(line, "RESULT ", 7) != 0)
			continue;
		line += 7;
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			size_t n = strlen(words[i].word);
			if (strncmp(line, words[i].word, n) == 0 && line[n] == ' ') {
				size_t f = strcspn(line + n + 1, " ");
				out->status = words[i].status;
				cfa_snprintf(out->file, sizeof(out->file), "%.*s", (int)f, line + n + 1);
				cfa_snprintf(out->detail, sizeof(out->detail), "%s",
				             line + n + 1 + f + (line[n + 1 + f] == ' '));
				*got = true;
			}
		}
	}
}

static enum cfapkg_err probe_program(struct cfapkg_ctx *ctx, char *buf, size_t len)
{
	char dir[CFA_PATH_MAX];

	if (cfa_plat_exe_dir(dir, sizeof(dir)) == 0 && try_path(dir, "cfapkg-probe", buf, len))
		return CFAPKG_E_OK;
	return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "cfapkg-probe is not beside cfapkg in %s; "
	                "reinstall cfapkg", dir);
}

enum cfapkg_err cfapkg_probe(struct cfapkg_ctx *ctx, const char *library,
                             const char *const *dirs, size_t ndirs, unsigned timeout_ms,
                             struct cfapkg_probe_result *out)
{
	static char text[1 << 16];
	const char *argv[2 * 16 + 4];
	char prog[CFA_PATH_MAX];
	size_t i, n = 0;
	int status = 0;
	bool timed_out = false, got = false;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	out->library = library;
	if ((e = probe_program(ctx, prog, sizeof(prog))))
		return e;
	argv[n++] = prog;
	argv[n++] = library;
	for (i = 0; i < ndirs && i < 16; i++) {
		argv[n++] = "--lib-dir";
		argv[n++] = dirs[i];
	}
	argv[n] = NULL;
	if ((e = cfapkg_run_capture(ctx, argv, timeout_ms, text, sizeof(text), &status,
	                            &timed_out)))
		return e;
	parse_output(text, out, &got);
	if (timed_out) {
		out->status = CFAPKG_PROBE_TIMEOUT;
		cfa_snprintf(out->detail, sizeof(out->detail), "no answer in %u s (last call: %s)",
		             timeout_ms / 1000, out->last_step[0] ? out->last_step : "none");
	} else if (!got) {
		char how[32];
		/* A Windows crash's status is its exception code (0xC0000005 for an
		 * access violation), which Windows documents in hex. */
		if ((unsigned)status >= 0xC0000000u)
			cfa_snprintf(how, sizeof(how), "exception 0x%08X", (unsigned)status);
		else
			cfa_snprintf(how, sizeof(how), "status %d", status);
		out->status = CFAPKG_PROBE_CRASHED;
		cfa_snprintf(out->detail, sizeof(out->detail), "the probe died (%s) in %s", how,
		             out->last_step[0] ? out->last_step : "loading the library");
	}
	return CFAPKG_E_OK;
}
