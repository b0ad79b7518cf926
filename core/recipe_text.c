/*
 * recipe_text.c - a new version written into a recipe file's text, not
 * re-serialised: the file is scanned for the spans of its members, the new
 * object is built from the newest version's own text (its shape members
 * copied byte for byte) and its whitespace, and inserted before the first
 * version.  Everything else in the file stays as it was, so a diff shows
 * only the added lines.
 */
#include <string.h>

#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"

#define BAD ((size_t)-1)
#define MEMBERS_MAX 32

struct span {
	size_t start, end; /* [start, end) of the text */
};
struct member {
	struct span key, value; /* the key with its quotes */
};

/* Members of the newest version copied as written: what the package is,
 * not what was learnt of one build (status, note) or where it lives. */
static const char *const shape_keys[] = {"requires", "conflicts", "provides", "os", "arch",
                                         "gfx", "layout", "launcher", "runtime", NULL};

static size_t skip_ws(const char *t, size_t i, size_t n)
{
	while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* The end of the string that opens at t[i]. */
static size_t string_end(const char *t, size_t i, size_t n)
{
	for (i++; i < n; i++) {
		/* A backslash takes the next character with it, so an escaped
		 * quote never ends the string. */
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return BAD;
}

static size_t value_end(const char *t, size_t i, size_t n)
{
	size_t depth = 0;

	if (i >= n)
		return BAD;
	if (t[i] == '"')
		return string_end(t, i, n);
	if (t[i] != '{' && t[i] != '[') {
		while (i < n && !strchr(",]} \t\r\n", t[i]))
			i++;
		return i;
	}
	/* Strings are stepped over whole, so that a bracket inside one is never
	 * counted as nesting. */
	for (; i < n; i++) {
		if (t[i] == '"') {
			size_t e = string_end(t, i, n);
			if (e == BAD)
				return BAD;
			i = e - 1; /* the loop steps past the closing quote */
		} else if (t[i] == '{' || t[i] == '[')
			depth++;
		else if ((t[i] == '}' || t[i] == ']') && --depth == 0)
			return i + 1;
	}
	return BAD;
}

/* The members of the object at t[o], in order. */
static bool members(const char *t, size_t n, size_t o, struct member *m, size_t *count)
{
	size_t i = skip_ws(t, o + 1, n);

	*count = 0;
	if (o >= n || t[o] != '{')
		return false;
	if (i < n && t[i] == '}')
		return true;
	for (;;) {
		struct member *k = &m[*count];
		/* More members than MEMBERS_MAX is refused rather than written
		 * past the array; a recipe's version has a dozen at most. */
		if (i >= n || t[i] != '"' || *count == MEMBERS_MAX)
			return false;
		k->key.start = i;
		if ((k->key.end = string_end(t, i, n)) == BAD)
			return false;
		i = skip_ws(t, k->key.end, n);
		if (i >= n || t[i] != ':')
			return false;
		k->value.start = i = skip_ws(t, i + 1, n);
		if ((k->value.end = value_end(t, i, n)) == BAD)
			return false;
		++*count;
		i = skip_ws(t, k->value.end, n);
		if (i < n && t[i] == '}')
			return true;
		if (i >= n || t[i] != ',')
			return false;
		i = skip_ws(t, i + 1, n);
	}
}

/* A key compared without its quotes: one written with escapes never equals a
 * plain word, which no recipe key needs. */
static bool text_is(const char *t, struct span s, const char *word)
{
	size_t n = strlen(word);
	return s.end - s.start == n + 2 && memcmp(t + s.start + 1, word, n) == 0;
}

static const struct member *find(const char *t, const struct member *m, size_t n,
                                 const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (text_is(t, m[i].key, key))
			return &m[i];
	return NULL;
}

struct piece {
	const char *s;
	size_t n;
};

/* Where the new version goes, and the whitespace around its neighbours. */
struct layout {
	const char *t;
	size_t n;
	size_t insert_at;        /* the first version's first byte */
	bool esep_comma;         /* esep lacks the comma (a single version) */
	struct piece esep;       /* between two versions */
	struct member m[MEMBERS_MAX]; /* the newest version's members */
	size_t nm;
	struct piece open, msep, close, kv; /* inside it: after '{', between
	                            members, before '}', between key and value */
	bool multiline;
	struct piece nl, indent, unit; /* line end; its members' indent; one level */
};

static struct piece between(const char *t, size_t a, size_t b)
{
	struct piece p = {t + a, b > a ? b - a : 0};
	return p;
}

/* What follows the last line end of p (all of p when it has none). */
static struct piece after_newline(struct piece p)
{
	size_t i = p.n;

	while (i > 0 && p.s[i - 1] != '\n')
		i--;
	return (struct piece){p.s + i, p.n - i};
}

static void find_style(struct layout *l, size_t obj, size_t obj_end)
{
	struct piece closing;
	const struct member *m = l->m;

	l->open = between(l->t, obj + 1, m[0].key.start);
	l->kv = between(l->t, m[0].key.end, m[0].value.start);
	l->close = between(l->t, m[l->nm - 1].value.end, obj_end - 1);
	/* The separator between members is copied too; with one member there is
	 * none to copy, so the plainest one. */
	if (l->nm > 1)
		l->msep = between(l->t, m[0].value.end, m[1].key.start);
	else
		l->msep = (struct piece){", ", 2};
	l->multiline = memchr(l->open.s, '\n', l->open.n) != NULL;
	/* The file's own line ends: a file written on Windows keeps "\r\n". */
	l->nl = memchr(l->open.s, '\r', l->open.n) ? (struct piece){"\r\n", 2}
	                                          : (struct piece){"\n", 1};
	l->indent = after_newline(l->open);
	closing = after_newline(l->close);
	/* One level of indent is what the members have beyond the closing
	 * brace; when that cannot be told, a tab or two spaces, after the
	 * file's habit. */
	if (l->indent.n > closing.n && memcmp(l->indent.s, closing.s, closing.n) == 0)
		l->unit = (struct piece){l->indent.s + closing.n, l->indent.n - closing.n};
	else
		l->unit = l->indent.n && l->indent.s[0] == '\t' ? (struct piece){"\t", 1}
		                                               : (struct piece){"  ", 2};
}

/* The "version" of the object at t[o] is newest. */
static bool is_version(const char *t, size_t n, size_t o, const char *newest, struct layout *l)
{
	const struct member *v;

	if (!members(t, n, o, l->m, &l->nm))
		return false;
	v = find(t, l->m, l->nm, "version");
	return v && t[v->value.start] == '"' && text_is(t, v->value, newest);
}

/* Walks the versions array at t[a]: the first version, the separator after
 * it, and the newest version's members and style. */
static bool find_layout(struct layout *l, size_t a, const char *newest)
{
	const char *t = l->t;
	size_t n = l->n, i = skip_ws(t, a + 1, n), end, k;
	bool found = false;

	/* Versions are kept newest first, so the new one goes before the
	 * first. */
	l->insert_at = i;
	for (k = 0; i < n && t[i] != ']'; k++) {
		if ((end = value_end(t, i, n)) == BAD)
			return false;
		if (!found && t[i] == '{' && is_version(t, n, i, newest, l)) {
			found = l->nm > 0;
			if (found)
				find_style(l, i, end);
		}
		i = skip_ws(t, end, n);
		if (k == 0 && i < n && t[i] == ',') {
			l->esep = between(t, end, skip_ws(t, i + 1, n));
		} else if (k == 0) { /* one version: a comma, then what followed '[' */
			l->esep_comma = true;
			l->esep = between(t, a + 1, l->insert_at);
		}
		if (i < n && t[i] == ',')
			i = skip_ws(t, i + 1, n);
	}
	return found && i < n;
}

static void add(struct cfa_buf *b, struct piece p)
{
	cfa_buf_add(b, p.s, p.n);
}

/* Whitespace that opens (what 0), separates (1) or closes (2) an object
 * nested level deep in the version object. */
static void add_ws(struct cfa_buf *b, const struct layout *l, int what, unsigned level)
{
	unsigned i;

	if (!l->multiline) {
		add(b, what == 0 ? l->open : what == 1 ? l->msep : l->close);
		return;
	}
	if (what == 1)
		cfa_buf_adds(b, ",");
	add(b, l->nl);
	add(b, l->indent);
	for (i = what == 2 ? 1 : 0; i < level; i++)
		add(b, l->unit);
}

static void add_key(struct cfa_buf *b, const struct layout *l, const char *key)
{
	cfa_buf_add_json_string(b, key);
	add(b, l->kv);
}

static void add_source(struct cfa_buf *b, const struct layout *l,
                       const struct cfapkg_new_source *s)
{
	add_key(b, l, s->platform);
	cfa_buf_adds(b, "{");
	add_ws(b, l, 0, 2);
	add_key(b, l, "url");
	cfa_buf_add_json_string(b, s->url);
	add_ws(b, l, 1, 2);
	add_key(b, l, "sha256");
	cfa_buf_add_json_string(b, s->sha256);
	add_ws(b, l, 1, 2);
	add_key(b, l, "size");
	cfa_buf_printf(b, "%lld", (long long)s->size);
	add_ws(b, l, 1, 2);
	add_key(b, l, "format");
	cfa_buf_add_json_string(b, s->format);
	/* strip is written only when it was given, so that a source that needs
	 * none carries no line for it. */
	if (s->strip >= 0) {
		add_ws(b, l, 1, 2);
		add_key(b, l, "strip");
		cfa_buf_printf(b, "%d", s->strip);
	}
	add_ws(b, l, 2, 2);
	cfa_buf_adds(b, "}");
}

static void add_sources(struct cfa_buf *b, const struct layout *l,
                        const struct cfapkg_new_version *nv)
{
	size_t i;

	add_key(b, l, "sources");
	cfa_buf_adds(b, "{");
	add_ws(b, l, 0, 1);
	for (i = 0; i < nv->nsources; i++) {
		if (i)
			add_ws(b, l, 1, 1);
		add_source(b, l, &nv->sources[i]);
	}
	add_ws(b, l, 2, 1);
	cfa_buf_adds(b, "}");
}

static bool is_shape_key(const char *t, struct span key)
{
	const char *const *k;

	for (k = shape_keys; *k; k++)
		if (text_is(t, key, *k))
			return true;
	return false;
}

/* The new version object, its members in the newest version's order. */
static void add_version(struct cfa_buf *b, const struct layout *l,
                        const struct cfapkg_new_version *nv)
{
	bool first = true;
	size_t i;

	cfa_buf_adds(b, "{");
	add(b, l->open);
	for (i = 0; i < l->nm; i++) {
		const struct member *m = &l->m[i];
		bool version = text_is(l->t, m->key, "version"), sources = text_is(l->t, m->key,
		                                                                   "sources");
		/* status and note are what was learnt of the newest build: a
		 * new version starts without them, to be judged on its own. */
		if (!version && !sources && !is_shape_key(l->t, m->key))
			continue;
		if (!first)
			add(b, l->msep);
		first = false;
		if (version) {
			add_key(b, l, "version");
			cfa_buf_add_json_string(b, nv->version);
		} else if (sources) {
			add_sources(b, l, nv);
		} else {
			cfa_buf_add(b, l->t + m->key.start, m->value.end - m->key.start);
		}
	}
	add(b, l->close);
	cfa_buf_adds(b, "}");
}

enum cfapkg_err cfa_recipe_text_insert(struct cfapkg_ctx *ctx, const char *file, const char *text,
                                       size_t len, const char *newest,
                                       const struct cfapkg_new_version *nv, char **out,
                                       size_t *outlen)
{
	struct member top[MEMBERS_MAX];
	const struct member *vs;
	struct layout l;
	struct cfa_buf b;
	size_t ntop, root = skip_ws(text, 0, len);

	memset(&l, 0, sizeof(l));
	l.t = text;
	l.n = len;
	if (!members(text, len, root, top, &ntop) || !(vs = find(text, top, ntop, "versions")) ||
	    text[vs->value.start] != '[' || !find_layout(&l, vs->value.start, newest))
		return cfa_fail(ctx, CFAPKG_E_RECIPE, "%s: the \"versions\" array or its version \"%s\" "
		                "cannot be found in the text (the file changed since it was read?)",
		                file, newest);
	/* The new version adds far less than a MiB; the bound only stops a
	 * runaway. */
	cfa_buf_init(&b, len + (1u << 20));
	cfa_buf_add(&b, text, l.insert_at);
	add_version(&b, &l, nv);
	if (l.esep_comma)
		cfa_buf_adds(&b, ",");
	add(&b, l.esep);
	cfa_buf_add(&b, text + l.insert_at, len - l.insert_at);
	if (b.failed) {
		cfa_buf_fini(&b);
		return cfa_nomem(ctx);
	}
	*outlen = b.len;
	*out = b.data;
	return CFAPKG_E_OK;
}
