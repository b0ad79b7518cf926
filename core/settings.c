/*
 * settings.c - cfapkg's defaults from cfapkg.conf files and environment
 * variables: parallel downloads, retries, the stall cut, proxy and CA
 * bundle, the default environment, offline.
 *
 * Precedence, weakest first: the system's file, the user's, the root's
 * (ROOT/cfapkg.conf: a root shared by a lab says how it is reached), then
 * the environment variables; the command line's options beat them all
 * (the front end applies those).  A proxy variable of libcurl's own
 * (https_proxy, ...) beats a "proxy" line: libcurl then picks the proxy
 * per scheme and honours no_proxy itself.
 *
 * A file is "key = value" lines; "#" starts a comment; a key that is not
 * known, or a value that does not parse, is an error naming the file and
 * the line, so a typo never silently changes nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

enum kind { NUMBER, SWITCH, TEXT, PATH };

/* Kept sorted by name, the order cfapkg_settings_items lists them in. */
static const struct key {
	const char *name;
	enum kind kind;
	uint64_t lo, hi;         /* a number's range */
	const char *variable;    /* the environment variable that overrides it */
} keys[] = {
	{"ca-bundle", PATH, 0, 0, "CFAPKG_CA_BUNDLE"},
	{"env", TEXT, 0, 0, "CFAPKG_ENV"},
	{"no-proxy", TEXT, 0, 0, NULL},
	{"offline", SWITCH, 0, 0, "CFAPKG_OFFLINE"},
	{"parallel", NUMBER, 1, 16, "CFAPKG_PARALLEL"},
	{"proxy", TEXT, 0, 0, NULL},
	{"retries", NUMBER, 0, 20, "CFAPKG_RETRIES"},
	{"stall-timeout", NUMBER, 1, 3600, "CFAPKG_STALL_TIMEOUT"},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* libcurl's own proxy variables (curl's documented names). */
static const char *const proxy_variables[] = {"https_proxy", "HTTPS_PROXY", "http_proxy",
                                              "ALL_PROXY", "all_proxy"};
static const char *const no_proxy_variables[] = {"no_proxy", "NO_PROXY"};

struct cfapkg_settings {
	char *value[NKEYS];      /* cfa_malloc'd; NULL when not set */
	char *from[NKEYS];       /* "FILE:LINE" or the variable's name */
	char *files[3];          /* system, user, root; NULL when there is none */
	bool found[3];
	/* What cfapkg_settings_items and _files lend: the above as public
	 * records, made once the load is done (the strings are the above). */
	struct cfapkg_setting items[NKEYS];
	struct cfapkg_settings_file file_list[3];
};

static const char *const file_roles[3] = {"system", "user", "root"};

static int key_index(const char *name, size_t len)
{
	size_t i;

	/* The length is compared first, so that a key is never matched by a
	 * longer or shorter one that shares its start. */
	for (i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == len && strncmp(keys[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

/* true, false, and the spellings people write for them. */
static bool parse_switch(const char *v, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
	                                                                            "off", "0"};
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0)
			return (*out = true);
		if (strcmp(v, no[i]) == 0)
			return !(*out = false);
	}
	return false;
}

/* Whether value suits key k; why not in why. */
static bool valid(const struct key *k, const char *value, const char **why)
{
	uint64_t n;
	bool b;

	switch (k->kind) {
	case NUMBER:
		*why = "expected a whole number in its range";
		return cfa_parse_u64(value, strlen(value), k->hi, &n) && n >= k->lo;
	case SWITCH:
		*why = "expected true or false";
		return parse_switch(value, &b);
	case PATH:
		*why = "no such file";
		return cfa_plat_is_file(value);
	case TEXT:
		*why = "expected a value";
		return *value != '\0';
	}
	return false;
}

static enum cfapkg_err bad_value(struct cfapkg_ctx *ctx, const char *where, const struct key *k,
                                 const char *value, const char *why)
{
	if (k->kind == NUMBER)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s: %s \"%s\": %s, %llu..%llu", where, k->name,
		                value, why, (unsigned long long)k->lo, (unsigned long long)k->hi);
	return cfa_fail(ctx, CFAPKG_E_USAGE, "%s: %s \"%s\": %s", where, k->name, value, why);
}

static enum cfapkg_err set(struct cfapkg_ctx *ctx, struct cfapkg_settings *s, size_t k,
                           const char *value, size_t len, const char *from)
{
	char *v = cfa_malloc(len + 1), *f = cfa_aprintf("%s", from);
	const char *why = NULL;

	if (!v || !f) {
		cfa_free(v);
		cfa_free(f);
		return cfa_nomem(ctx);
	}
	memcpy(v, value, len);
	v[len] = '\0';
	/* Checked before anything is replaced: a bad value is an error, never a
	 * way to unset what a weaker source set. */
	if (!valid(&keys[k], v, &why)) {
		enum cfapkg_err e = bad_value(ctx, from, &keys[k], v, why);
		cfa_free(v);
		cfa_free(f);
		return e;
	}
	/* A stronger source replaces the value and where it came from together,
	 * so that what is shown as the source is always the one that won. */
	cfa_free(s->value[k]);
	cfa_free(s->from[k]);
	s->value[k] = v;
	s->from[k] = f;
	return CFAPKG_E_OK;
}

static const char *trim(const char *p, const char **end)
{
	while (p < *end && (*p == ' ' || *p == '\t'))
		p++;
	/* A "\r" at the end is a line of a file written on Windows. */
	while (*end > p && ((*end)[-1] == ' ' || (*end)[-1] == '\t' || (*end)[-1] == '\r'))
		(*end)--;
	return p;
}

static enum cfapkg_err unknown_key(struct cfapkg_ctx *ctx, const char *where, const char *key,
                                   size_t len)
{
	const char *names[NKEYS];
	/* Room for every key's name; a list that ever outgrew it would end in
	 * "..." rather than run past it. */
	char list[256] = "", typed[64], *like;
	enum cfapkg_err e;
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		names[i] = keys[i].name;
		cfa_fit_text(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
		             keys[i].name);
	}
	cfa_fit_text(typed, sizeof(typed), "%.*s", (int)len, key);
	like = cfapkg_names_suggest(typed, names, NKEYS);
	e = cfa_fail(ctx, CFAPKG_E_USAGE, "%s: unknown setting \"%.*s\"%s%s; the settings are: %s",
	             where, (int)len, key, like ? "; did you mean: " : "", like ? like : "", list);
	cfa_free(like);
	return e;
}

/* One line: blank, a comment, or "key = value". */
static enum cfapkg_err parse_line(struct cfapkg_ctx *ctx, struct cfapkg_settings *s,
                                  const char *path, unsigned no, const char *line,
                                  const char *end)
{
	const char *eq, *kend, *key, *value;
	char where[4200];
	int k;

	key = trim(line, &end);
	if (key == end || *key == '#')
		return CFAPKG_E_OK;
	if (!cfa_snprintf(where, sizeof(where), "%s:%u", path, no))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: path too long", path);
	if (!(eq = memchr(key, '=', (size_t)(end - key))))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s: expected \"key = value\" (for example "
		                "\"parallel = 8\")", where);
	kend = eq;
	key = trim(key, &kend);
	value = trim(eq + 1, &end);
	if ((k = key_index(key, (size_t)(kend - key))) < 0)
		return unknown_key(ctx, where, key, (size_t)(kend - key));
	return set(ctx, s, (size_t)k, value, (size_t)(end - value), where);
}

static enum cfapkg_err load_file(struct cfapkg_ctx *ctx, struct cfapkg_settings *s, size_t i)
{
	char *text = NULL, *line, *next;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t len = 0;
	unsigned no = 0;

	if (!s->files[i] || !cfa_plat_is_file(s->files[i]))
		return CFAPKG_E_OK;
	if ((e = cfa_read_file(ctx, s->files[i], &text, &len)))
		return e;
	s->found[i] = true;
	/* A NUL would end the text early and hide the lines after it, so the
	 * file is refused rather than read in part. */
	if (strlen(text) != len)
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "%s: a NUL byte: not a settings file", s->files[i]);
	/* A byte order mark, as Notepad writes, is no part of the first key. */
	line = strncmp(text, "\xEF\xBB\xBF", 3) == 0 ? text + 3 : text;
	for (; !e && *line; line = next) {
		next = line + strcspn(line, "\n");
		e = parse_line(ctx, s, s->files[i], ++no, line, next);
		next += *next == '\n';
	}
	cfa_free(text);
	return e;
}

/* A folder's cfapkg.conf (the platform's allocation: free), or NULL. */
static enum cfapkg_err in_dir(struct cfapkg_ctx *ctx, int rc, char *dir, char **out)
{
	*out = NULL;
	if (rc == ENOMEM)
		return cfa_nomem(ctx);
	if (!rc && !(*out = cfa_aprintf("%s/cfapkg.conf", dir)))
		rc = ENOMEM;
	free(dir);
	return rc == ENOMEM ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

/* The variable named (a test, or another place), else the folder's file;
 * an empty variable names none. */
static enum cfapkg_err file_of(struct cfapkg_ctx *ctx, const char *variable, bool system,
                               char **out)
{
	char *v = NULL, *dir = NULL;
	int rc = cfa_plat_getenv_dup(variable, &v);

	*out = NULL;
	if (rc == ENOMEM)
		return cfa_nomem(ctx);
	if (!rc) {
		if (*v && !(*out = cfa_aprintf("%s", v)))
			rc = ENOMEM;
		free(v);
		return rc ? cfa_nomem(ctx) : CFAPKG_E_OK;
	}
	rc = system ? cfa_plat_system_config_dir(&dir) : cfa_plat_config_dir(&dir);
	return in_dir(ctx, rc, dir, out);
}

/* A variable set (not empty) overrides its key. */
static enum cfapkg_err from_environment(struct cfapkg_ctx *ctx, struct cfapkg_settings *s)
{
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < NKEYS && !e; i++) {
		char *v = NULL;
		int rc = keys[i].variable ? cfa_plat_getenv_dup(keys[i].variable, &v) : ENOENT;
		if (rc == ENOMEM)
			return cfa_nomem(ctx);
		if (!rc && *v)
			e = set(ctx, s, i, v, strlen(v), keys[i].variable);
		free(v);
	}
	return e;
}

/* libcurl's variables beat the files' proxy lines: the line is dropped,
 * and the variable named as where the setting comes from. */
static void curl_variables(struct cfapkg_settings *s, const char *key,
                           const char *const *names, size_t n)
{
	size_t i, k = (size_t)key_index(key, strlen(key));

	for (i = 0; i < n; i++) {
		char *v = NULL;
		bool set = cfa_plat_getenv_dup(names[i], &v) == 0 && *v;
		free(v);
		if (!set)
			continue;
		cfa_free(s->value[k]);
		cfa_free(s->from[k]);
		s->value[k] = NULL;
		s->from[k] = cfa_aprintf("%s (libcurl reads it)", names[i]);
		return;
	}
}

void cfapkg_settings_free(struct cfapkg_settings *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < NKEYS; i++) {
		cfa_free(s->value[i]);
		cfa_free(s->from[i]);
	}
	for (i = 0; i < 3; i++)
		cfa_free(s->files[i]);
	cfa_free(s);
}

/* The records the list calls lend, from what the load read. */
static void publish(struct cfapkg_settings *s)
{
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		s->items[i].key = keys[i].name;
		s->items[i].value = s->value[i];
		s->items[i].from = s->from[i];
	}
	for (i = 0; i < 3; i++) {
		s->file_list[i].role = file_roles[i];
		s->file_list[i].path = s->files[i];
		s->file_list[i].found = s->found[i];
	}
}

enum cfapkg_err cfapkg_settings_load(struct cfapkg_ctx *ctx, struct cfapkg_settings **out)
{
	struct cfapkg_settings *s = cfa_calloc(1, sizeof(*s));
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	*out = NULL;
	if (!s)
		return cfa_nomem(ctx);
	/* The root's own file needs the root, so it is settled first
	 * (CFAPKG_ROOT or the default). */
	if (!ctx->root)
		e = cfapkg_ctx_set_root(ctx, NULL);
	if (!e)
		e = file_of(ctx, "CFAPKG_SYSTEM_CONFIG", true, &s->files[0]);
	if (!e)
		e = file_of(ctx, "CFAPKG_CONFIG", false, &s->files[1]);
	if (!e && !(s->files[2] = cfa_aprintf("%s/cfapkg.conf", ctx->root)))
		e = cfa_nomem(ctx);
	/* The files weakest first, then the variables, which beat them all;
	 * each later source replaces what an earlier one set. */
	for (i = 0; i < 3 && !e; i++)
		e = load_file(ctx, s, i);
	if (!e)
		e = from_environment(ctx, s);
	if (!e) {
		curl_variables(s, "proxy", proxy_variables, 5);
		curl_variables(s, "no-proxy", no_proxy_variables, 2);
	}
	if (e) {
		cfapkg_settings_free(s);
		return e;
	}
	publish(s);
	*out = s;
	return CFAPKG_E_OK;
}

const char *cfapkg_setting(const struct cfapkg_settings *s, const char *key, const char **from)
{
	int k = s ? key_index(key, strlen(key)) : -1;

	if (from)
		*from = k >= 0 ? s->from[k] : NULL;
	return k >= 0 ? s->value[k] : NULL;
}

bool cfapkg_setting_switch(const struct cfapkg_settings *s, const char *key)
{
	const char *v = cfapkg_setting(s, key, NULL);
	bool on = false;

	/* A value that does not parse (which loading refuses anyway) reads as
	 * off. */
	return v && parse_switch(v, &on) && on;
}

const struct cfapkg_setting *cfapkg_settings_items(const struct cfapkg_settings *s, size_t *n)
{
	*n = s ? NKEYS : 0;
	return s ? s->items : NULL;
}

const struct cfapkg_settings_file *cfapkg_settings_files(const struct cfapkg_settings *s,
                                                         size_t *n)
{
	*n = s ? 3 : 0;
	return s ? s->file_list : NULL;
}
