/*
 * mirrors.c - URL rewrite rules: "PREFIX REPLACEMENT" a line, from
 * ROOT/mirrors.conf and then the user's file, so that a lab points every
 * download at its own mirror without editing a recipe.  A download tries
 * each rule's rewrite first, then its own URLs (fetch.c); the SHA-256 pin
 * still decides what is accepted, so a mirror can only make a download
 * fail over, never change what is installed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/fetch.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* A rule file is a few lines; a larger one is a mistake to name. */
#define FILE_MAX (1u << 20)
/* The rule every message about a bad line shows as an example. */
#define EXAMPLE "(https://github.com/ http://mirror.lab/github.com/)"

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* http:// or https:// and at least one character of a host. */
static bool web_url(const char *s)
{
	size_t n = starts(s, "https://") ? 8 : starts(s, "http://") ? 7 : 0;

	return n && s[n] && s[n] != '/';
}

/* "/srv/mirror", "D:\mirror", "D:/mirror": absolute on one system or the
 * other (a rule file may be written for either). */
static bool absolute_path(const char *s)
{
	char c = (char)(s[0] | 0x20);

	return s[0] == '/' || (c >= 'a' && c <= 'z' && s[1] == ':' && (s[2] == '\\' || s[2] == '/'));
}

/* A path as a file:// URL: backslashes become slashes, a drive letter gets
 * a leading slash, and bytes a URL cannot hold are %-escaped (read back by
 * cfa_file_url_path). */
static char *file_url(struct cfa_arena *a, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	struct cfa_buf b;
	char *out;

	/* The ceiling fits every byte escaped and the scheme: a path is never
	 * refused for its length. */
	cfa_buf_init(&b, 3 * strlen(path) + 16);
	/* A POSIX path brings its own leading slash; D:\x becomes file:///D:/x. */
	cfa_buf_adds(&b, path[0] == '/' ? "file://" : "file:///");
	for (; *path; path++) {
		unsigned char c = (unsigned char)*path;
		char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
		if (c == '\\')
			cfa_buf_add(&b, "/", 1);
		/* Letters, digits and the few marks a path may hold stay as
		 * they are; the rest, '%' included, is escaped. */
		else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		         strchr("/:-._~+,=@", c))
			cfa_buf_add(&b, (const char *)&c, 1);
		else
			cfa_buf_add(&b, esc, 3);
	}
	out = b.failed ? NULL : cfa_arena_strdup(a, b.data);
	cfa_buf_fini(&b);
	return out;
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *cfa_file_url_path(const char *url)
{
	const char *p = starts(url, "file:///") ? url + 7
	                : starts(url, "file://localhost/") ? url + 16 : NULL;
	/* p keeps the path's leading slash; a query or a fragment is no part of
	 * the path. */
	size_t n = p ? strcspn(p, "?#") : 0, i, k = 0;
	char *out = p ? cfa_malloc(n + 1) : NULL;

	for (i = 0; out && i < n; i++) {
		int hi = p[i] == '%' && i + 2 < n ? hex_value(p[i + 1]) : -1;
		int lo = hi >= 0 ? hex_value(p[i + 2]) : -1;
		if (p[i] != '%') {
			out[k++] = p[i];
		} else if (lo < 0 || (hi == 0 && lo == 0)) {
			CFA_FREE(out); /* a bad escape, or a NUL: no file */
		} else {
			out[k++] = (char)(hi * 16 + lo);
			i += 2;
		}
	}
	if (!out)
		return NULL;
	out[k] = '\0';
	if (out[0] == '/' && ((out[1] | 0x20) >= 'a' && (out[1] | 0x20) <= 'z') && out[2] == ':')
		memmove(out, out + 1, k); /* file:///D:/x: a drive letter */
	return out;
}

static enum cfapkg_err bad_line(struct cfapkg_ctx *ctx, const char *file, unsigned line,
                                const char *why, const char *text)
{
	return cfa_fail(ctx, CFAPKG_E_USAGE, "%s:%u: %s \"%s\"; write one rule a line, PREFIX "
	                "REPLACEMENT " EXAMPLE ", the replacement an http://, https:// or "
	                "file:// URL or an absolute path", file, line, why, text);
}

/* The replacement as a URL (a path made one). */
static enum cfapkg_err replacement(struct cfapkg_ctx *ctx, struct cfa_arena *a, const char *file,
                                   unsigned line, const char *text, const char **url)
{
	if (absolute_path(text))
		*url = file_url(a, text);
	/* A path may hold spaces, a URL may not: after a space in a URL comes a
	 * third field. */
	else if (strpbrk(text, " \t"))
		return bad_line(ctx, file, line, "more than two fields (only a path may have spaces):",
		                text);
	else if (web_url(text) || starts(text, "file:///"))
		*url = cfa_arena_strdup(a, text);
	else
		return bad_line(ctx, file, line, "the replacement is neither a URL nor an absolute "
		                "path:", text);
	return *url ? CFAPKG_E_OK : cfa_nomem(ctx);
}

/* One line, without its end: *r filled, or skipped (blank, a comment). */
static enum cfapkg_err parse_line(struct cfapkg_ctx *ctx, struct cfa_arena *a, const char *file,
                                  unsigned line, char *text, struct cfapkg_mirror_rule *r,
                                  bool *got)
{
	char *end = text + strlen(text), *sep;
	enum cfapkg_err e;
	size_t np, nr;

	*got = false;
	while (*text == ' ' || *text == '\t')
		text++;
	while (end > text && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	if (!*text || *text == '#')
		return CFAPKG_E_OK;
	sep = text + strcspn(text, " \t");
	if (!*sep)
		return bad_line(ctx, file, line, "no replacement after", text);
	*sep++ = '\0';
	while (*sep == ' ' || *sep == '\t')
		sep++;
	if (!web_url(text))
		return bad_line(ctx, file, line, "the prefix is not an http:// or https:// URL with a "
		                "host:", text);
	if ((e = replacement(ctx, a, file, line, sep, &r->replacement)))
		return e;
	/* Neither is empty: the prefix is a web URL, and a replacement follows
	 * the separator (the line's end was trimmed). */
	np = strlen(text);
	nr = strlen(sep);
	if ((text[np - 1] == '/') != (sep[nr - 1] == '/' || sep[nr - 1] == '\\'))
		return bad_line(ctx, file, line, "one of the two ends in / and the other does not, "
		                "which runs names together:", sep);
	if (!(r->prefix = cfa_arena_strdup(a, text)))
		return cfa_nomem(ctx);
	/* A name from m->files, in the arena: rules and the names they cite are
	 * freed together. */
	r->file = file;
	r->line = line;
	*got = true;
	return CFAPKG_E_OK;
}

/* The whole file into *text (cfa_free); *text NULL when it is not there. */
static enum cfapkg_err read_text(struct cfapkg_ctx *ctx, const char *path, char **text)
{
	FILE *f = cfa_plat_fopen(path, "rb");
	size_t n;

	*text = NULL;
	if (!f)
		return errno == ENOENT ? CFAPKG_E_OK
		                       : cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot read: %s", path,
		                                  cfa_plat_strerror(errno));
	if (!(*text = cfa_malloc(FILE_MAX + 1))) {
		fclose(f);
		return cfa_nomem(ctx);
	}
	/* One byte more than allowed is asked for, so that a file too large is
	 * told from one just large enough; a NUL inside shows as a shorter
	 * string. */
	n = fread(*text, 1, FILE_MAX + 1, f);
	(*text)[n <= FILE_MAX ? n : FILE_MAX] = '\0';
	if (ferror(f) || n > FILE_MAX || strlen(*text) != n) {
		fclose(f);
		CFA_FREE(*text);
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s: not a mirror rule file (more than 1 MiB, a "
		                "NUL byte, or unreadable); write one rule a line, PREFIX REPLACEMENT "
		                EXAMPLE, path);
	}
	fclose(f);
	return CFAPKG_E_OK;
}

static enum cfapkg_err add_rule(struct cfapkg_ctx *ctx, struct cfapkg_mirrors *m, size_t *cap,
                                const struct cfapkg_mirror_rule *r)
{
	struct cfapkg_mirror_rule *rules = (struct cfapkg_mirror_rule *)m->rules;

	if (cfa_grow((void **)&rules, cap, m->nrules + 1, sizeof(*rules)) != 0)
		return cfa_nomem(ctx);
	rules[m->nrules++] = *r;
	m->rules = rules;
	return CFAPKG_E_OK;
}

/* The rules of files[k]; one that is not there has none, unless must. */
static enum cfapkg_err load_file(struct cfapkg_ctx *ctx, struct cfapkg_mirrors *m, size_t k,
                                 bool must, size_t *cap)
{
	const char *path = m->files[k];
	char *text, *line, *next;
	struct cfapkg_mirror_rule r;
	enum cfapkg_err e;
	unsigned no = 0;
	bool got;

	if (!path || (e = read_text(ctx, path, &text)))
		return path ? e : CFAPKG_E_OK;
	if (!text && must)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: no such file (named by CFAPKG_MIRRORS)", path);
	m->found[k] = text != NULL;
	/* A byte order mark, as Notepad writes, is no part of a prefix. */
	line = text && starts(text, "\xEF\xBB\xBF") ? text + 3 : text;
	for (e = CFAPKG_E_OK; line && *line && !e; line = next) {
		/* A \r before the \n (a file written on Windows) is trimmed by
		 * parse_line. */
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		memset(&r, 0, sizeof(r));
		e = parse_line(ctx, m->arena, path, ++no, line, &r, &got);
		if (!e && got)
			e = add_rule(ctx, m, cap, &r);
	}
	cfa_free(text);
	return e;
}

/* Where the user's file is: CFAPKG_MIRRORS (*named), else the platform's
 * configuration folder; NULL when there is none. */
static enum cfapkg_err user_file(struct cfapkg_ctx *ctx, struct cfa_arena *a, const char **out,
                                 bool *named)
{
	char *v = NULL;
	int rc = cfa_plat_getenv_dup("CFAPKG_MIRRORS", &v);

	*out = NULL;
	/* An empty CFAPKG_MIRRORS names no file: the user's rules are then
	 * turned off, and the configuration folder is not looked in. */
	*named = rc == 0;
	if (rc == ENOENT)
		rc = cfa_plat_config_dir(&v);
	if (rc == ENOMEM)
		return cfa_nomem(ctx);
	if (!rc && *v) {
		char *path = *named ? cfa_aprintf("%s", v) : cfa_aprintf("%s/mirrors.conf", v);
		*out = path ? cfa_arena_strdup(a, path) : NULL;
		cfa_free(path);
		if (!*out)
			rc = ENOMEM;
	}
	free(v); /* the platform's allocation */
	return rc == ENOMEM ? cfa_nomem(ctx) : CFAPKG_E_OK;
}

void cfapkg_mirrors_free(struct cfapkg_mirrors *m)
{
	if (!m)
		return;
	cfa_free((void *)m->rules);
	if (m->arena)
		cfa_arena_fini(m->arena);
	cfa_free(m->arena);
	cfa_free(m);
}

enum cfapkg_err cfapkg_mirrors_load(struct cfapkg_ctx *ctx, struct cfapkg_mirrors **out)
{
	struct cfapkg_mirrors *m = cfa_calloc(1, sizeof(*m));
	enum cfapkg_err e = CFAPKG_E_OK;
	char *root = NULL;
	size_t cap = 0;
	bool named = false;

	*out = NULL;
	if (!m || !(m->arena = cfa_calloc(1, sizeof(*m->arena)))) {
		cfapkg_mirrors_free(m);
		return cfa_nomem(ctx);
	}
	cfa_arena_init(m->arena);
	if (!ctx->root)
		e = cfapkg_ctx_set_root(ctx, NULL);
	if (!e && (!(root = cfa_aprintf("%s/mirrors.conf", ctx->root)) ||
	           !(m->files[0] = cfa_arena_strdup(m->arena, root))))
		e = cfa_nomem(ctx);
	cfa_free(root);
	if (!e)
		e = user_file(ctx, m->arena, &m->files[1], &named);
	/* The root's file first, then the user's: the rules are tried in the
	 * order they were read. */
	if (!e)
		e = load_file(ctx, m, 0, false, &cap);
	if (!e)
		e = load_file(ctx, m, 1, named, &cap);
	if (e)
		cfapkg_mirrors_free(m);
	else
		*out = m;
	return e;
}

/* Appends s to the list unless it is there; false: out of memory. */
static bool push_new(char ***v, size_t *n, size_t *cap, char *s)
{
	size_t i;

	if (!s)
		return false;
	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0) {
			cfa_free(s);
			return true;
		}
	if (cfa_grow((void **)v, cap, *n + 1, sizeof(**v)) != 0) {
		cfa_free(s);
		return false;
	}
	(*v)[(*n)++] = s;
	return true;
}

/* The strings of v packed with their array into one allocation. */
static char **pack(char **v, size_t n)
{
	size_t i, bytes = (n + 1) * sizeof(char *);
	char **out, *at;

	for (i = 0; i < n; i++)
		bytes += strlen(v[i]) + 1;
	if (!(out = cfa_malloc(bytes)))
		return NULL;
	/* The strings follow the n pointers and the NULL that ends them. */
	at = (char *)(out + n + 1);
	for (i = 0; i < n; i++) {
		size_t len = strlen(v[i]) + 1;
		out[i] = memcpy(at, v[i], len);
		at += len;
	}
	out[n] = NULL;
	return out;
}

/* The rewrites m's rules give urls[0], then urls, repeats left out;
 * *nrule: how many came from rules.  One allocation, NULL-ended. */
static enum cfapkg_err mirror_list(struct cfapkg_ctx *ctx, const struct cfapkg_mirrors *m,
                                   const char *const *urls, size_t n, char ***out, size_t *nout,
                                   size_t *nrule)
{
	char **v = NULL;
	size_t cap = 0, i, count = 0;
	bool ok = true;

	*out = NULL;
	*nout = *nrule = 0;
	/* Every rule whose prefix starts the first URL adds a rewrite, in the
	 * order read; the item's later URLs are not rewritten. */
	for (i = 0; m && n && ok && i < m->nrules; i++)
		if (starts(urls[0], m->rules[i].prefix))
			ok = push_new(&v, &count, &cap, cfa_aprintf("%s%s", m->rules[i].replacement,
			                                           urls[0] + strlen(m->rules[i].prefix)));
	*nrule = count;
	for (i = 0; ok && i < n; i++)
		ok = push_new(&v, &count, &cap, cfa_strdup(urls[i]));
	if (ok && !(*out = pack(v, count)))
		ok = false;
	*nout = ok ? count : 0;
	for (i = 0; i < count; i++)
		cfa_free(v[i]);
	cfa_free(v);
	return ok ? CFAPKG_E_OK : cfa_nomem(ctx);
}

enum cfapkg_err cfapkg_mirrors_expand(struct cfapkg_ctx *ctx, const struct cfapkg_mirrors *m,
                                      const char *url, char ***out, size_t *n, size_t *nrule)
{
	return mirror_list(ctx, m, &url, 1, out, n, nrule);
}

/* Case-insensitive, as URL schemes and host names are. */
static bool starts_nocase(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if ((*s | 0x20) != (*prefix | 0x20))
			return false;
	return true;
}

bool cfa_url_secure(const char *url)
{
	static const char *const loopback[] = {"http://127.0.0.1", "http://[::1]",
	                                       "http://localhost"};
	size_t i, n;

	/* Any host over https: TLS guards it on the way. */
	if (starts_nocase(url, "https://"))
		return url[8] && url[8] != '/';
	for (i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++) {
		n = strlen(loopback[i]);
		/* The host ends there: "http://localhost.example" is not it. */
		if (starts_nocase(url, loopback[i]) &&
		    (url[n] == ':' || url[n] == '/' || url[n] == '\0'))
			return true;
	}
	return false;
}

/* A download that will be trusted on its first arrival takes only the
 * URLs no one on the way could alter: a mirror rule's plain http:// or
 * file:// rewrite is left out (the list's strings stay in its one block). */
static void keep_secure(struct xfer *x)
{
	size_t i, k = 0;

	for (i = 0; i < x->nurls; i++)
		if (cfa_url_secure(x->urls[i]))
			x->urls[k++] = x->urls[i];
	x->urls[k] = NULL;
	x->nurls = k;
	/* No file:// URL is left: none counts as local. */
	x->nlocal = 0;
}

enum cfapkg_err cfa_fetch_urls(struct cfapkg_ctx *ctx, struct xfer *x, struct cfapkg_mirrors **m)
{
	const struct cfapkg_fetch_item *it = x->item;
	enum cfapkg_err e;

	/* The rules are read once per cfapkg_fetch, for the first item that
	 * needs them, and shared by the rest. */
	if (!*m && (e = cfapkg_mirrors_load(ctx, m)))
		return e;
	if ((e = mirror_list(ctx, *m, it->urls, it->nurls, &x->urls, &x->nurls, &x->nlocal)))
		return e;
	/* URLs from the command line may all be files: the user named them. */
	if (it->user_urls)
		x->nlocal = x->nurls;
	if (it->https_only)
		keep_secure(x);
	return CFAPKG_E_OK;
}
