/*
 * tree.c - what an unpack has put in its staging folder, entry by entry.
 *
 * Links are judged against the whole tree, not one at a time: the text of
 * each link in a chain may stay inside (q -> ., etc -> q/q/../../etc)
 * while the chain leads out, so every symbolic link is resolved here the
 * way the system would resolve it, following the archive's other links,
 * and refused when it leaves the folder or loops.  Names are compared
 * without regard to ASCII case: Windows keeps one file for both.  The
 * manifest is written from this table once every digest is known.
 */
#include <errno.h>
#include <string.h>

#include "cache/cache.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* The kernel's own limit on links followed in one lookup. */
#define MAX_HOPS 40
#define NO_SLOT ((size_t)0)

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static uint32_t name_hash(const char *s, size_t n)
{
	/* FNV-1a (offset basis and prime of the 32-bit variant) over the lower-
	 * cased name: names that differ only in case meet on one probe chain. */
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)lower(s[i])) * 16777619u;
	return h;
}

static bool same_name(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	/* name may be a prefix of a longer path (under_link): an entry matches
	 * only when its own path ends there. */
	return a[n] == '\0';
}

/* The slot holding name (its first n bytes), or the empty slot where it
 * would go.  Slots hold entry index + 1; 0 is empty. */
static size_t *slot_of(const struct cfa_tree *t, const char *name, size_t n)
{
	size_t i = name_hash(name, n) & t->mask;

	/* Linear probing: make_room keeps empty slots, so the walk always ends. */
	while (t->slots[i] != NO_SLOT && !same_name(t->e[t->slots[i] - 1].path, name, n))
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

/* Keeps the table at most half full, so that probes stay short. */
static bool make_room(struct cfa_tree *t)
{
	size_t old = t->mask + 1, i;
	size_t *old_slots = t->slots;

	if (t->slots && (t->n + 1) * 2 <= t->mask)
		return true;
	/* 1024 slots to begin with, doubled when half are taken; every entry is
	 * placed again, and out of memory the old table stands. */
	t->slots = cfa_calloc(old_slots ? old * 2 : 1024, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old_slots;
		return false;
	}
	t->mask = (old_slots ? old * 2 : 1024) - 1;
	for (i = 0; i < t->n; i++)
		*slot_of(t, t->e[i].path, strlen(t->e[i].path)) = i + 1;
	cfa_free(old_slots);
	return true;
}

void cfa_tree_fini(struct cfa_tree *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		cfa_free(t->e[i].path);
		cfa_free(t->e[i].target);
	}
	cfa_free(t->e);
	cfa_free(t->slots);
	memset(t, 0, sizeof(*t));
}

struct cfa_tree_entry *cfa_tree_find(const struct cfa_tree *t, const char *path)
{
	size_t s;

	if (!t->slots)
		return NULL;
	s = *slot_of(t, path, strlen(path));
	return s == NO_SLOT ? NULL : &t->e[s - 1];
}

int cfa_tree_add(struct cfa_tree *t, const char *path, enum cfa_tree_kind kind,
                 const char *target, struct cfa_tree_entry **out)
{
	struct cfa_tree_entry *e;
	size_t *slot;

	/* The same name in another case is the same entry: Windows would keep
	 * one file for both. */
	if ((*out = cfa_tree_find(t, path)))
		return 0;
	if (!make_room(t) || cfa_grow((void **)&t->e, &t->cap, t->n + 1, sizeof(*t->e)) != 0)
		return -1;
	e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->hash = CFA_TREE_NO_HASH;
	e->path = cfa_strdup(path);
	e->target = target ? cfa_strdup(target) : NULL;
	if (!e->path || (target && !e->target)) {
		cfa_free(e->path);
		cfa_free(e->target);
		return -1;
	}
	/* Looked up after make_room: a slot found before a resize would be in
	 * the old table. */
	slot = slot_of(t, path, strlen(path));
	*slot = ++t->n;
	*out = e;
	return 1;
}

static bool is_absolute(const char *p)
{
	/* Absolute on either system: /x, \x, or a drive (C:x); any text whose
	 * second byte is a colon is taken as one. */
	return p[0] == '/' || p[0] == '\\' || (p[0] && p[1] == ':');
}

/* Drops the last component of a path ("a/b" -> "a", "a" -> ""). */
static void cut_last(struct cfa_buf *b)
{
	while (b->len && b->data[b->len - 1] != '/')
		b->len--;
	if (b->len)
		b->len--;
	if (b->data)
		b->data[b->len] = '\0';
}

/* One step of a lookup: the next component of todo (at its front) is
 * taken from there and walked from at.  A link met on the way puts its
 * text in front of what is left, as the system would. */
static const char *step(const struct cfa_tree *t, struct cfa_buf *at, struct cfa_buf *todo,
                        unsigned *hops)
{
	/* Either slash ends a component: Windows reads a backslash in a link's
	 * text as one. */
	size_t c = strcspn(todo->data, "/\\"), rest = c + (todo->data[c] != '\0');
	const struct cfa_tree_entry *e;
	char *next;

	if (c == 2 && todo->data[0] == '.' && todo->data[1] == '.') {
		if (!at->len)
			return "a symbolic link that leads outside the archive";
		cut_last(at);
	} else if (c > 0 && !(c == 1 && todo->data[0] == '.')) {
		if (at->len)
			cfa_buf_add(at, "/", 1);
		cfa_buf_add(at, todo->data, c);
		e = cfa_tree_find(t, cfa_buf_str(at));
		if (e && e->kind == CFA_TREE_SYMLINK) {
			if (++*hops > MAX_HOPS)
				return "symbolic links that loop (or chain more than 40 deep)";
			if (is_absolute(e->target))
				return "a symbolic link to an absolute path";
			/* The link's text is read from the folder that holds
			 * the link. */
			cut_last(at);
			next = cfa_strdup(todo->data + rest);
			cfa_buf_reset(todo);
			cfa_buf_printf(todo, "%s/%s", e->target, next ? next : "");
			cfa_free(next);
			return at->failed || todo->failed || !next ? "out of memory" : NULL;
		}
	}
	memmove(todo->data, todo->data + rest, todo->len - rest + 1);
	todo->len -= rest;
	return at->failed ? "out of memory" : NULL;
}

const char *cfa_tree_resolve(const struct cfa_tree *t, const struct cfa_tree_entry *link,
                             struct cfa_buf *at)
{
	struct cfa_buf todo;
	const char *slash = strrchr(link->path, '/'), *why = NULL;
	unsigned hops = 0;

	if (is_absolute(link->target))
		return "a symbolic link to an absolute path";
	cfa_buf_reset(at);
	cfa_buf_add(at, link->path, slash ? (size_t)(slash - link->path) : 0);
	cfa_buf_adds(at, ""); /* terminated even when empty */
	/* A ceiling on the text still to walk: links that keep lengthening it
	 * end as too long, as a loop ends at MAX_HOPS. */
	cfa_buf_init(&todo, 1u << 20);
	cfa_buf_adds(&todo, link->target);
	while (!why && !todo.failed && todo.len)
		why = step(t, at, &todo, &hops);
	if (!why && todo.failed)
		why = "a chain of symbolic links too long to follow";
	cfa_buf_fini(&todo);
	return why;
}

/* No entry may sit below a symbolic link: writing it would write through
 * the link, wherever it points. */
static const char *under_link(const struct cfa_tree *t, const struct cfa_tree_entry *e)
{
	const char *p;
	size_t *slot;

	for (p = strchr(e->path, '/'); p; p = strchr(p + 1, '/')) {
		slot = slot_of(t, e->path, (size_t)(p - e->path));
		if (*slot != NO_SLOT && t->e[*slot - 1].kind == CFA_TREE_SYMLINK)
			return "an entry inside a folder that is a symbolic link";
		if (*slot != NO_SLOT && t->e[*slot - 1].kind != CFA_TREE_DIR)
			return "an entry inside something that is not a folder";
	}
	return NULL;
}

const char *cfa_tree_check(const struct cfa_tree *t, const struct cfa_tree_entry **bad)
{
	struct cfa_buf at;
	const struct cfa_tree_entry *target;
	const char *why = NULL;
	size_t i;

	cfa_buf_init(&at, 1u << 20);
	for (i = 0; i < t->n && !why; i++) {
		const struct cfa_tree_entry *e = &t->e[i];
		/* Set before each entry is judged: the entry why speaks of. */
		*bad = e;
		if ((why = under_link(t, e)))
			break;
		if (e->kind == CFA_TREE_SYMLINK)
			why = cfa_tree_resolve(t, e, &at);
		if (e->kind == CFA_TREE_HARDLINK &&
		    (!(target = cfa_tree_find(t, e->target)) || target->kind != CFA_TREE_FILE))
			why = "a hard link to something that is not a file of the archive";
	}
	cfa_buf_fini(&at);
	return why;
}

/* JSON string contents: the safe-name check let no control character
 * through, so quotes and backslashes are all that need escaping. */
static void add_json_text(struct cfa_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			cfa_buf_add(b, "\\", 1);
		cfa_buf_add(b, s, 1);
	}
}

bool cfa_tree_manifest(const struct cfa_tree *t, struct cfa_buf *out,
                       const char *(*hex)(void *arg, size_t k), void *arg)
{
	size_t i, listed = 0;

	cfa_buf_adds(out, "{\"format\": 1, \"files\": [");
	for (i = 0; i < t->n; i++) {
		const struct cfa_tree_entry *e = &t->e[i];
		bool link = e->kind == CFA_TREE_SYMLINK;
		if (e->kind == CFA_TREE_DIR)
			continue;
		cfa_buf_adds(out, listed++ ? ",\n  {\"path\": \"" : "\n  {\"path\": \"");
		add_json_text(out, e->path);
		if (link) {
			cfa_buf_adds(out, "\", \"type\": \"link\", \"size\": 0, \"sha256\": \"\", "
			                  "\"target\": \"");
			add_json_text(out, e->target);
			cfa_buf_adds(out, "\"}");
			continue;
		}
		cfa_buf_printf(out, "\", \"type\": \"file\", \"size\": %llu, \"mode\": \"%04o\", "
		               "\"sha256\": \"%s\"}", (unsigned long long)e->size, e->mode,
		               e->hash == CFA_TREE_NO_HASH ? "" : hex(arg, e->hash));
	}
	cfa_buf_adds(out, "\n]}\n");
	return !out->failed;
}

/* The quick-look index beside the manifest: "SIZE MODE PATH" per file,
 * which install reads instead of parsing the JSON (8,000 LibTorch headers
 * make that the slow half of a no-op install).  A name with a line break
 * cannot be listed: then there is no index, and the manifest is read. */
static bool tree_sizes(const struct cfa_tree *t, struct cfa_buf *out)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct cfa_tree_entry *e = &t->e[i];
		if (e->kind != CFA_TREE_FILE && e->kind != CFA_TREE_HARDLINK)
			continue;
		if (strpbrk(e->path, "\r\n"))
			return false;
		cfa_buf_printf(out, "%llu %04o %s\n", (unsigned long long)e->size, e->mode, e->path);
	}
	return !out->failed;
}

/* dir/name with text, flushed and read-only; 0 or an errno-style code. */
static int write_sealed(const char *dir, const char *name, const struct cfa_buf *text)
{
	char *path = cfa_aprintf("%s/%s", dir, name);
	FILE *f = path ? cfa_plat_fopen(path, "wb") : NULL;
	int rc = !path ? ENOMEM : !f ? cfa_plat_write_errno() : 0;

	if (f && text->len && fwrite(text->data, 1, text->len, f) != text->len)
		rc = cfa_plat_write_errno();
	if (f && !rc)
		rc = cfa_plat_fsync(f);
	if (f && fclose(f) != 0 && !rc)
		rc = cfa_plat_write_errno();
	if (!rc)
		cfa_plat_set_mode(path, 0444); /* as read-only as the files it lists */
	cfa_free(path);
	return rc;
}

enum cfapkg_err cfa_tree_write_manifest(struct cfapkg_ctx *ctx, const struct cfa_tree *t,
                                        const char *staging,
                                        const char *(*hex)(void *arg, size_t k), void *arg)
{
	char *dir = cfa_aprintf("%s/.cfapkg", staging);
	const char *failed = "manifest.json";
	struct cfa_buf text, sizes;
	bool listed;
	int rc = 0;

	cfa_buf_init(&text, 1u << 30);
	cfa_buf_init(&sizes, 1u << 30);
	listed = tree_sizes(t, &sizes);
	/* No index is no error (a name with a line break); memory running out
	 * is. */
	if (!dir || !cfa_tree_manifest(t, &text, hex, arg) || (!listed && sizes.failed)) {
		cfa_buf_fini(&text);
		cfa_buf_fini(&sizes);
		cfa_free(dir);
		return cfa_nomem(ctx);
	}
	rc = cfa_plat_mkdir_p(dir);
	if (!rc && !(rc = write_sealed(dir, "manifest.json", &text)) && listed &&
	    (rc = write_sealed(dir, "sizes", &sizes)))
		failed = "sizes";
	cfa_buf_fini(&text);
	cfa_buf_fini(&sizes);
	if (rc)
		cfa_fail(ctx, CFAPKG_E_IO, "%s/%s: cannot write the manifest: %s", dir, failed,
		         cfa_plat_strerror(rc));
	cfa_free(dir);
	return rc ? CFAPKG_E_IO : CFAPKG_E_OK;
}
