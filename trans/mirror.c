/*
 * mirror.c - 'cfapkg mirror create': every archive a locked set needs,
 * copied into a folder laid out by URL (DIR/HOST/PATH), so that any web
 * server serves it as it is, with the rewrite rules a client needs
 * (DIR/mirrors.conf.example).  Each archive comes from the download cache
 * when it is there, else is fetched; either way its copy in DIR takes its
 * name only once it hashes to the pin, so the mirror holds only pinned
 * bytes (and a client checks them again).
 */
#include <string.h>

#include "cache/cache.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "trans/trans.h"

/* One mirror create.  Every list is sized once by start() for the most files
 * the lock can need, so adding to them never reallocates. */
struct job {
	struct cfapkg_ctx *ctx;
	const char *dir;
	struct cfapkg_mirror_result *r;
	struct cfapkg_mirror_file *files; /* r->files, being filled */
	const char ***urls;                /* each file's URL and its mirrors, for a fetch */
	size_t *nurls;
	const char **prefixes, **folders, **left;
	size_t cap;                        /* of each list */
};

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Compared by address: url_place and decode_path return this very string so
 * their callers can tell running out of memory from a URL refused. */
static const char out_of_memory[] = "out of memory";

/* A name that ends a path segment: not empty, ".", or "..". */
static bool name_ok(const char *name, size_t len)
{
	return len && !(len == 1 && name[0] == '.') && !(len == 2 && name[0] == '.' && name[1] == '.');
}

/* The path of a URL as a web server maps it to a file, %-escapes
 * decoded, into out; NULL, or what no file name can be. */
static const char *decode_path(const char *s, size_t n, struct cfa_buf *out)
{
	size_t i, seg = out->len;

	for (i = 0; i <= n; i++) {
		int c = i < n ? (unsigned char)s[i] : '/';
		char ch;
		if (c == '%' && (i + 2 >= n || hex_digit(s[i + 1]) < 0 || hex_digit(s[i + 2]) < 0))
			return "a % that is not an escape";
		/* An escaped "/" would make two URLs that a server tells apart
		 * land on one file here, so it is refused rather than
		 * decoded. */
		if (c == '%') {
			c = hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]);
			i += 2;
			if (c == '/')
				return "an escaped / in the path";
		} else if (c == '/') {
			if (!name_ok(out->data ? out->data + seg : "", out->len - seg))
				return "an empty name, \".\" or \"..\" in the path";
			if (i < n)
				cfa_buf_add(out, "/", 1);
			seg = out->len;
			continue;
		}
		/* Refused on every OS: a mirror folder made on Linux may be
		 * copied to a Windows share. */
		if (c < 0x20 || c == 0x7f || strchr("\\:*?\"<>|", c))
			return "a character a file name cannot hold on Windows";
		ch = (char)c;
		cfa_buf_add(out, &ch, 1);
	}
	return out->failed ? out_of_memory : NULL;
}

/* Where url's file lies under DIR (HOST/PATH, HOST_PORT/PATH), and the
 * prefix a rule rewrites ("https://HOST[:PORT]/"); NULL, or why not. */
static const char *url_place(struct cfa_arena *a, const char *url, const char **prefix,
                             const char **folder, const char **rel)
{
	size_t skip = starts(url, "https://") ? 8 : starts(url, "http://") ? 7 : 0, n, i;
	const char *host = url + skip, *path, *why;
	struct cfa_buf b;

	if (!skip || !(path = strchr(host, '/')) || path == host)
		return "not an http:// or https:// URL with a host and a path";
	/* user@host and [IPv6] hosts would need quoting in a folder name and
	 * in the rules: refused rather than mapped. */
	for (i = 0; host + i < path; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:", host[i]))
			return "a host other than a name or an address (a user name, [IPv6])";
	cfa_buf_init(&b, 1u << 16);
	for (i = 0; host + i < path; i++)
		/* "host:port" becomes "host_port": Windows folder names cannot
		 * hold ":". */
		cfa_buf_add(&b, host[i] == ':' ? "_" : host + i, 1);
	if (!b.failed && !(*folder = cfa_arena_strdup(a, b.data)))
		b.failed = true;
	cfa_buf_add(&b, "/", 1);
	n = strcspn(path + 1, "?#");
	why = b.failed ? out_of_memory : decode_path(path + 1, n, &b);
	if (!why && (!(*rel = cfa_arena_strdup(a, b.data)) ||
	             !(*prefix = cfa_arena_strndup(a, url, (size_t)(path + 1 - url)))))
		why = out_of_memory;
	cfa_buf_fini(&b);
	return why;
}

/* One rule per distinct prefix: every file under one host and port is served
 * through the same rewrite. */
static enum cfapkg_err note_prefix(struct job *j, const char *prefix, const char *folder)
{
	struct cfapkg_mirror_result *r = j->r;
	size_t i;

	for (i = 0; i < r->nprefixes; i++)
		if (strcmp(j->prefixes[i], prefix) == 0)
			return CFAPKG_E_OK;
	j->prefixes[r->nprefixes] = prefix;
	j->folders[r->nprefixes++] = folder;
	return CFAPKG_E_OK;
}

/* One file for the mirror (a URL listed twice is copied once). */
static enum cfapkg_err add_file(struct job *j, const struct cfapkg_lockfile_part *p, const char *url,
                                const char *const *mirrors, size_t nmirrors, const char *sha256,
                                int64_t size, bool index)
{
	struct cfapkg_mirror_result *r = j->r;
	struct cfapkg_mirror_file *f = &j->files[r->nfiles];
	const char *prefix = NULL, *folder = NULL, *why;
	const char **urls;
	size_t i;

	/* Two parts may share an archive; it is copied once and the first part
	 * names it. */
	for (i = 0; i < r->nfiles; i++)
		if (strcmp(j->files[i].url, url) == 0)
			return CFAPKG_E_OK;
	if ((why = url_place(r->arena, url, &prefix, &folder, &f->path)) == out_of_memory)
		return cfa_nomem(j->ctx);
	if (why)
		return cfa_fail(j->ctx, CFAPKG_E_UNSUPPORTED, "%s %s: %s cannot be mirrored: %s",
		                p->name, p->version, url, why);
	if (!(urls = cfa_arena_alloc(r->arena, (nmirrors + 1) * sizeof(*urls))))
		return cfa_nomem(j->ctx);
	/* The lock's own URL first, then its mirrors, as an install would try
	 * them. */
	urls[0] = url;
	for (i = 0; i < nmirrors; i++)
		urls[i + 1] = mirrors[i];
	j->urls[r->nfiles] = urls;
	j->nurls[r->nfiles] = nmirrors + 1;
	f->part = p->name;
	f->version = p->version;
	f->url = url;
	f->sha256 = sha256;
	f->size = size;
	f->index = index;
	r->nfiles++;
	return note_prefix(j, prefix, folder);
}

/* A part's APT source: its own, or, for a lock read from a file (which
 * keeps only the .debs), its recipe's for the lock's system. */
static const struct cfapkg_apt_source *apt_of(struct cfapkg_ctx *ctx,
                                              const struct cfapkg_lockfile *lock,
                                              const struct cfapkg_lockfile_part *p)
{
	const struct cfapkg_recipe *r = p->nartifacts ? cfapkg_recipe_find(ctx, p->name) : NULL;
	const struct cfapkg_source *s;
	size_t i;

	if (p->apt)
		return p->apt;
	for (i = 0; r && i < r->nversions; i++)
		if (strcmp(r->versions[i].version, p->version) == 0 &&
		    (s = cfapkg_version_source(&r->versions[i], lock->facts.os, lock->facts.arch)) &&
		    s->apt && s->apt->index_sha256 && s->apt->index_size >= 0)
			return s->apt;
	return NULL;
}

/* A package's archives (and its APT index); user files stay out. */
static enum cfapkg_err add_part(struct job *j, const struct cfapkg_lockfile *lock,
                                const struct cfapkg_lockfile_part *p)
{
	const struct cfapkg_apt_source *apt = apt_of(j->ctx, lock, p);
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	/* Files the user supplies are not mirrored ('cfapkg add-file' brings
	 * them to each machine): they are listed as left out, and the mirror
	 * is still made. */
	if (p->kind == CFAPKG_KIND_USER && p->nuser_files) {
		const char *why;
		char *text = cfa_aprintf("%s %s: files you supply are not mirrored; add them on each "
		                         "machine with 'cfapkg add-file'", p->name, p->version);
		why = text ? cfa_arena_strdup(j->r->arena, text) : NULL;
		cfa_free(text);
		j->left[j->r->nleft_out++] = why;
		return why ? CFAPKG_E_OK : cfa_nomem(j->ctx);
	}
	if (p->kind != CFAPKG_KIND_PACKAGE)
		return CFAPKG_E_OK;
	/* The SHA-256 decides; a size not recorded is learnt when it is copied. */
	if (!p->nartifacts && (!p->url || !p->sha256))
		return cfa_fail(j->ctx, CFAPKG_E_UNSUPPORTED, "%s %s cannot be mirrored: its download "
		                "has no %s", p->name, p->version, !p->url ? "URL" : "SHA-256");
	if (!p->nartifacts)
		return add_file(j, p, p->url, p->mirrors, p->nmirrors, p->sha256, p->size, false);
	for (i = 0; i < p->nartifacts && !e; i++) {
		const struct cfapkg_artifact *a = &p->artifacts[i];
		e = add_file(j, p, a->url, a->mirrors, a->nmirrors, a->sha256, a->size, false);
	}
	/* An index pinned by the recipe is mirrored with the .debs; one a
	 * signed InRelease pins is the repository's to serve (a lockfile
	 * records the .debs it named). */
	if (!e && apt && apt->index_sha256) {
		char *url = cfa_apt_index_url(apt);
		const char *kept = url ? cfa_arena_strdup(j->r->arena, url) : NULL;
		cfa_free(url);
		if (!kept)
			return cfa_nomem(j->ctx);
		e = add_file(j, p, kept, NULL, 0, apt->index_sha256, apt->index_size, true);
	}
	return e;
}

/* src copied to dest by way of dest.cfapkg-part, which takes dest's name
 * only when it hashes to sha256; *bad when it does not (nothing is left).
 * The hash is checked on the copy, not the source, so what takes the name in
 * DIR is exactly the pinned bytes. */
static enum cfapkg_err copy_checked(struct cfapkg_ctx *ctx, const char *src, const char *dest,
                                    const char *sha256, bool *bad)
{
	char *tmp = cfa_aprintf("%s.cfapkg-part", dest), hex[65];
	enum cfapkg_err e = CFAPKG_E_OK;
	int rc;

	*bad = false;
	if (!tmp)
		return cfa_nomem(ctx);
	/* A .cfapkg-part from an earlier run that was cut short is not
	 * resumed: the copy starts afresh. */
	cfa_plat_remove(tmp);
	if ((rc = cfa_plat_copy_file(src, tmp)) != 0)
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot copy to %s: %s", src, tmp,
		             cfa_plat_strerror(rc));
	else if (!(e = cfapkg_sha256_file(ctx, tmp, hex, NULL)) && !(*bad = strcmp(hex, sha256) != 0) &&
	         (rc = cfa_plat_rename(tmp, dest)) != 0)
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot rename to %s: %s", tmp, dest,
		             cfa_plat_strerror(rc));
	if (e || *bad)
		cfa_plat_remove(tmp);
	cfa_free(tmp);
	return e;
}

/* Whether dest holds the pinned file already.
 * The size is compared first: it is cheap, and a file of the wrong size cannot
 * have the pinned hash. */
static bool present(struct cfapkg_ctx *ctx, const char *dest, const struct cfapkg_mirror_file *f)
{
	long long size = cfa_plat_file_size(dest);
	char hex[65];

	if (size < 0 || (f->size >= 0 && size != f->size))
		return false;
	if (cfapkg_sha256_file(ctx, dest, hex, NULL)) {
		cfapkg_ctx_clear_error(ctx); /* unreadable: copied again */
		return false;
	}
	return strcmp(hex, f->sha256) == 0;
}

/* DIR/PATH of file k, its folder made.
 * The path always holds a "/" (HOST/PATH), so the cut at the last one names
 * the folder. */
static enum cfapkg_err dest_path(struct job *j, size_t k, char **dest)
{
	char *slash;
	enum cfapkg_err e;

	if (!(*dest = cfa_aprintf("%s/%s", j->dir, j->files[k].path)))
		return cfa_nomem(j->ctx);
	slash = strrchr(*dest, '/');
	*slash = '\0';
	e = cfa_make_dir(j->ctx, *dest);
	*slash = '/';
	return e;
}

/* File k from the cache, or left to fetch (*fetch). */
static enum cfapkg_err from_cache(struct job *j, size_t k, bool *fetch)
{
	struct cfapkg_mirror_file *f = &j->files[k];
	char *dest = NULL, *src = NULL;
	enum cfapkg_err e;
	bool bad = false;

	*fetch = false;
	if ((e = dest_path(j, k, &dest)))
		goto out;
	if (present(j->ctx, dest, f)) {
		f->how = CFAPKG_MIRROR_PRESENT;
		goto out;
	}
	*fetch = true;
	if (!cfa_in_cache(j->ctx, f->sha256))
		goto out;
	/* A cache file whose bytes do not match its name is damaged: it is
	 * removed, so that neither this mirror nor a later install uses it. */
	if (!(src = cfa_cache_path(j->ctx, f->sha256)))
		e = j->ctx->err_code;
	else if (!(e = copy_checked(j->ctx, src, dest, f->sha256, &bad)) && bad)
		cfa_plat_remove(src); /* named by a hash it does not have: fetched again */
	*fetch = e || bad;
	f->how = CFAPKG_MIRROR_FROM_CACHE;
	if (!*fetch && f->size < 0)
		f->size = cfa_plat_file_size(dest);
out:
	cfa_free(dest);
	cfa_free(src);
	return e;
}

/* The files the cache lacked: fetched (verified), then copied.
 * The fetch checks each file's hash as it arrives, and the copy checks it
 * again, so a file changed in between is caught. */
static enum cfapkg_err fetch_rest(struct job *j, const bool *fetch,
                                  const struct cfapkg_fetch_opts *opts)
{
	struct cfapkg_mirror_result *r = j->r;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t k, n = 0;
	bool bad = false;

	if (!(r->items = cfa_calloc(r->nfiles + 1, sizeof(*r->items))))
		return cfa_nomem(j->ctx);
	for (k = 0; k < r->nfiles; k++) {
		struct cfapkg_fetch_item *it = &r->items[n];
		if (!fetch[k])
			continue;
		it->label = j->files[k].part;
		it->urls = j->urls[k];
		it->nurls = j->nurls[k];
		it->sha256 = j->files[k].sha256;
		it->size = j->files[k].size;
		n++;
	}
	r->nitems = n;
	/* The items stay in r, each with its own result, so that the caller
	 * can name every download that failed. */
	if (n && (e = cfapkg_fetch(j->ctx, r->items, n, opts)))
		return e;
	for (k = 0, n = 0; k < r->nfiles && !e; k++) {
		char *dest = NULL;
		if (!fetch[k])
			continue;
		if (j->files[k].size < 0)
			j->files[k].size = (int64_t)r->items[n].size_out;
		if (!(e = dest_path(j, k, &dest)))
			e = copy_checked(j->ctx, r->items[n++].path, dest, j->files[k].sha256, &bad);
		if (!e && bad)
			e = cfa_fail(j->ctx, CFAPKG_E_INTEGRITY, "%s: changed after it was verified; "
			             "run the command again", dest);
		j->files[k].how = CFAPKG_MIRROR_DOWNLOADED;
		cfa_free(dest);
	}
	return e;
}

/* The rules a client needs, one a prefix, MIRROR for the server.
 * Written atomically, so an earlier example is only replaced by a whole new
 * one. */
static enum cfapkg_err write_example(struct job *j)
{
	struct cfapkg_mirror_result *r = j->r;
	struct cfa_buf b;
	enum cfapkg_err e;
	char *path = cfa_aprintf("%s/mirrors.conf.example", j->dir);
	size_t i;

	cfa_buf_init(&b, 1u << 20);
	cfa_buf_adds(&b, "# Rules for a client of this mirror, written by 'cfapkg mirror create'.\n"
	                 "# Write the mirror's address (host or host:port) for MIRROR, and put\n"
	                 "# the lines in ROOT/mirrors.conf or in the user's mirrors.conf\n"
	                 "# (~/.config/cfapkg/ on Linux, %APPDATA%\\cfapkg\\ on Windows).\n"
	                 "# A copy of this folder on a disk or a share serves too: write its\n"
	                 "# path instead of the URL (/media/usb/mirror/HOST/, D:\\mirror\\HOST\\).\n");
	for (i = 0; i < r->nprefixes; i++)
		cfa_buf_printf(&b, "%s http://MIRROR/%s/\n", j->prefixes[i], j->folders[i]);
	if (!path || b.failed)
		e = cfa_nomem(j->ctx);
	else if (!(e = cfa_write_atomic(j->ctx, path, b.data, b.len)) &&
	         !(r->example = cfa_arena_strdup(r->arena, path)))
		e = cfa_nomem(j->ctx);
	cfa_buf_fini(&b);
	cfa_free(path);
	return e;
}

/* The lists, sized for every archive of every part (and an index each). */
static enum cfapkg_err start(struct job *j, const struct cfapkg_lockfile *lock)
{
	struct cfapkg_mirror_result *r = j->r;
	struct cfa_arena *a = r->arena;
	size_t i;

	/* Per part: each artifact, one file when it has none, and one APT
	 * index. */
	j->cap = 1;
	for (i = 0; i < lock->nparts; i++)
		j->cap += lock->parts[i].nartifacts + 2;
	j->files = cfa_arena_alloc(a, j->cap * sizeof(*j->files));
	j->urls = cfa_arena_alloc(a, j->cap * sizeof(*j->urls));
	j->nurls = cfa_arena_alloc(a, j->cap * sizeof(*j->nurls));
	j->prefixes = cfa_arena_alloc(a, j->cap * sizeof(*j->prefixes));
	j->folders = cfa_arena_alloc(a, j->cap * sizeof(*j->folders));
	j->left = cfa_arena_alloc(a, j->cap * sizeof(*j->left));
	if (!j->files || !j->urls || !j->nurls || !j->prefixes || !j->folders || !j->left)
		return cfa_nomem(j->ctx);
	r->files = j->files;
	r->prefixes = j->prefixes;
	r->folders = j->folders;
	r->left_out = j->left;
	return CFAPKG_E_OK;
}

static enum cfapkg_err fill(struct job *j, struct cfapkg_lockfile *lock,
                            const struct cfapkg_fetch_opts *opts)
{
	enum cfapkg_err e;
	bool *fetch;
	size_t i;

	/* An APT part's .debs are only known once its index is read: resolve
	 * first, then count and place the files. */
	if ((e = cfapkg_lockfile_resolve(j->ctx, lock, opts)) || (e = start(j, lock)) ||
	    (e = cfa_make_dir(j->ctx, j->dir)))
		return e;
	for (i = 0; i < lock->nparts && !e; i++)
		e = add_part(j, lock, &lock->parts[i]);
	if (e || !(fetch = cfa_calloc(j->r->nfiles + 1, sizeof(*fetch))))
		return e ? e : cfa_nomem(j->ctx);
	for (i = 0; i < j->r->nfiles && !e; i++)
		e = from_cache(j, i, &fetch[i]);
	if (!e)
		e = fetch_rest(j, fetch, opts);
	cfa_free(fetch);
	if (!e)
		e = write_example(j);
	return e;
}

void cfapkg_mirror_result_free(struct cfapkg_mirror_result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->items && i < r->nitems; i++)
		cfapkg_fetch_item_clear(&r->items[i]);
	cfa_free(r->items);
	if (r->arena)
		cfa_arena_fini(r->arena);
	cfa_free(r->arena);
	cfa_free(r);
}

/* *out is kept on failure too, once it could be allocated: its items say which
 * downloads failed.  The caller frees it with cfapkg_mirror_result_free. */
enum cfapkg_err cfapkg_mirror_create(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                                     const char *dir, const struct cfapkg_fetch_opts *opts,
                                     struct cfapkg_mirror_result **out)
{
	struct job j;

	memset(&j, 0, sizeof(j));
	*out = cfa_calloc(1, sizeof(**out));
	if (!*out || !((*out)->arena = cfa_calloc(1, sizeof(*(*out)->arena)))) {
		cfapkg_mirror_result_free(*out);
		*out = NULL;
		return cfa_nomem(ctx);
	}
	cfa_arena_init((*out)->arena);
	j.ctx = ctx;
	j.dir = dir;
	j.r = *out;
	return fill(&j, lock, opts);
}
