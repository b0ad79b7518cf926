/*
 * aptlookup.c - what an APT index said about a part's packages, kept so
 * that the next install does not read the whole index again (sid's is
 * about 65 MB).  A lookup lives in ROOT/apt/lookups/SHA-HASH; its first
 * line is its key: cfapkg's version, the index's SHA-256 and size, the
 * architecture and the wanted packages.  The index is content-addressed
 * and was verified, so a lookup can never say more than the index did.
 * A line "sum HASH" of the body follows, then the body: the chosen
 * stanzas in Debian's format, read back through the same reader as the
 * index itself (cfa_deb_index_find), so its entries pass the same checks.
 * A file whose key, sum or stanzas do not match is ignored and written
 * again from the index.
 */
#include <stdint.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/debindex.h"
#include "core/json.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"
#include "trans/trans.h"

#define MAGIC CFA_APT_LOOKUP_MAGIC
/* A lookup holds a few stanzas; anything larger is not one of ours. */
#define LOOKUP_MAX (4u * 1024u * 1024u)

/* FNV-1a, 64 bits: enough to tell a damaged file (a torn write, a
 * flipped byte) from a whole one and to spread keys over file names; the
 * key itself is compared whole.  It is no defence against a hand that
 * edits the root, nor needs to be: the root is its owner's, as are the
 * store and the lock. */
static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static bool spaceless(const char *s)
{
	return s && *s && !strpbrk(s, " \n\r");
}

/* The key line: everything the answer depends on, one field per word (no
 * field holds a space: Debian names and versions cannot); a bare name and
 * "name=version" differ.  False when a field could not be told apart. */
static bool lookup_key(const char *index_sha256, int64_t index_size, const char *arch,
                       const struct cfa_deb_want *want, size_t n, struct cfa_buf *key)
{
	size_t i;

	if (!spaceless(index_sha256) || !spaceless(arch))
		return false;
	/* cfapkg's version is part of the key, so that a lookup an older reader
	 * wrote is never trusted by a newer one that might read stanzas
	 * otherwise. */
	cfa_buf_printf(key, "%s %s %s %lld %s", MAGIC, CFAPKG_VERSION, index_sha256,
	               (long long)index_size, arch);
	for (i = 0; i < n; i++) {
		if (!spaceless(want[i].name) || (want[i].version && !spaceless(want[i].version)))
			return false;
		cfa_buf_printf(key, " %s%s%s", want[i].name, want[i].version ? "=" : "",
		               want[i].version ? want[i].version : "");
	}
	return !key->failed;
}

/* ROOT/apt/lookups/SHA-HASH: the index it came from, then the key's hash. */
static char *lookup_path(struct cfapkg_ctx *ctx, const char *index_sha256,
                         const struct cfa_buf *key)
{
	char *name = cfa_aprintf("lookups/%s-%016llx", index_sha256,
	                         (unsigned long long)fnv1a(key->data, key->len));
	char *path = name ? cfa_root_path(ctx, CFA_APT, name) : NULL;

	cfa_free(name);
	return path;
}

/* The stanzas that give found[0..n): one per wanted package, in the
 * wanted order.  The Architecture is the one asked for, which the reader
 * takes as the index's own ("all" fits the same way). */
static bool lookup_body(const char *arch, const struct cfa_deb_want *want,
                        const struct cfa_deb_found *found, size_t n, struct cfa_buf *b)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cfa_buf_printf(b, "Package: %s\nVersion: %s\nArchitecture: %s\nFilename: %s\n"
		               "Size: %lld\nSHA256: %s\n", want[i].name, found[i].version, arch,
		               found[i].filename, (long long)found[i].size, found[i].sha256);
		if (found[i].depends)
			cfa_buf_printf(b, "Depends: %s\n", found[i].depends);
		cfa_buf_add(b, "\n", 1);
	}
	return !b->failed;
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Whether the body reads back to exactly what the index gave: a value
 * the stanza reader would read back otherwise (a Depends whose lines end
 * in blanks, which it trims) is not kept, and that index is read each
 * time. */
static bool round_trips(struct cfapkg_ctx *ctx, const char *arch, const struct cfa_buf *body,
                        const struct cfa_deb_want *want, const struct cfa_deb_found *found,
                        size_t n)
{
	struct cfa_deb_found *back = cfa_calloc(n ? n : 1, sizeof(*back));
	struct cfa_arena arena;
	bool same;
	size_t i;

	cfa_arena_init(&arena);
	same = back && !cfa_deb_index_find(ctx, "lookup", body->data, body->len, arch, want, n,
	                                   &arena, back);
	for (i = 0; same && i < n; i++)
		same = same_text(back[i].version, found[i].version) &&
		       same_text(back[i].filename, found[i].filename) &&
		       back[i].size == found[i].size && same_text(back[i].sha256, found[i].sha256) &&
		       same_text(back[i].depends, found[i].depends);
	cfa_arena_fini(&arena);
	cfa_free(back);
	return same;
}

bool cfa_apt_lookup_load(struct cfapkg_ctx *ctx, const char *index_sha256, int64_t index_size,
                         const char *arch, const struct cfa_deb_want *want, size_t n,
                         struct cfa_arena *arena, struct cfa_deb_found *found)
{
	char *path = NULL, *text = NULL, sum[32];
	struct cfa_buf key;
	size_t len = 0, head;
	bool hit = false;

	cfa_buf_init(&key, LOOKUP_MAX);
	if (n && lookup_key(index_sha256, index_size, arch, want, n, &key) &&
	    (path = lookup_path(ctx, index_sha256, &key)) && cfa_plat_is_file(path) &&
	    !cfa_read_file(ctx, path, &text, &len) && len > key.len &&
	    memcmp(text, key.data, key.len) == 0 && text[key.len] == '\n') {
		/* "KEY\nsum HASH\n", then the body the hash is of. */
		const char *body = memchr(text + key.len + 1, '\n', len - key.len - 1);
		head = body ? (size_t)(++body - text) : 0;
		hit = body && cfa_snprintf(sum, sizeof(sum), "sum %016llx\n",
		                           (unsigned long long)fnv1a(body, len - head)) &&
		      head - key.len - 1 == strlen(sum) &&
		      memcmp(text + key.len + 1, sum, strlen(sum)) == 0 &&
		      !cfa_deb_index_find(ctx, path, body, len - head, arch, want, n, arena, found);
	}
	/* A miss is no failure: the index is read instead. */
	if (!hit)
		cfapkg_ctx_clear_error(ctx);
	cfa_buf_fini(&key);
	cfa_free(text);
	cfa_free(path);
	return hit;
}

/* Written whole or not at all (cfa_write_atomic), so that a reader never takes
 * a torn file for a lookup; a failure only means the next install reads the
 * index again. */
static void lookup_write(struct cfapkg_ctx *ctx, const char *index_sha256,
                         const struct cfa_buf *key, const struct cfa_buf *body)
{
	char *path = lookup_path(ctx, index_sha256, key);
	char *dir = cfa_root_path(ctx, CFA_APT, "lookups");
	struct cfa_buf file;

	cfa_buf_init(&file, LOOKUP_MAX);
	if (path && dir &&
	    cfa_buf_printf(&file, "%s\nsum %016llx\n", key->data,
	                   (unsigned long long)fnv1a(body->data, body->len)) &&
	    cfa_buf_add(&file, body->data, body->len) &&
	    (cfa_plat_is_dir(dir) || cfa_plat_mkdir_p(dir) == 0))
		(void)cfa_write_atomic(ctx, path, file.data, file.len);
	cfa_buf_fini(&file);
	cfa_free(path);
	cfa_free(dir);
}

void cfa_apt_lookup_store(struct cfapkg_ctx *ctx, const char *index_sha256, int64_t index_size,
                          const char *arch, const struct cfa_deb_want *want,
                          const struct cfa_deb_found *found, size_t n)
{
	struct cfa_buf key, body;

	cfa_buf_init(&key, LOOKUP_MAX);
	cfa_buf_init(&body, LOOKUP_MAX);
	if (n && lookup_key(index_sha256, index_size, arch, want, n, &key) &&
	    lookup_body(arch, want, found, n, &body) &&
	    round_trips(ctx, arch, &body, want, found, n))
		lookup_write(ctx, index_sha256, &key, &body);
	/* Only a cache: a root that cannot hold it still installs. */
	cfapkg_ctx_clear_error(ctx);
	cfa_buf_fini(&key);
	cfa_buf_fini(&body);
}
