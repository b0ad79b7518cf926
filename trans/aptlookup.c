/*
 * aptlookup.c - what an APT index said about a part's packages, kept so
 * that the next install does not read the whole index again (sid's is
 * about 65 MB).  A lookup lives in ROOT/apt/lookups/KEY, KEY being the
 * SHA-256 of cfapkg's version, the index's SHA-256 and size, the
 * architecture and the wanted packages: the index is content-addressed and already
 * verified, so a lookup can never say more than the index did.  The file
 * is a first line "cfapkg-apt-lookup KEY BODY-SHA256" and a body of the
 * chosen stanzas, in Debian's format; it is read back through the same
 * reader as the index itself (cfa_deb_index_find), so its entries pass
 * the same checks.  A file whose line or body does not match is ignored
 * and written again from the index.
 */
#include <string.h>

#include "cache/cache.h"
#include "core/atomic_file.h"
#include "core/debindex.h"
#include "core/json.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"
#include "trans/trans.h"

#define MAGIC "cfapkg-apt-lookup"
/* A lookup holds a few stanzas; anything larger is not one of ours. */
#define LOOKUP_MAX (4u * 1024u * 1024u)

/* The key: everything the answer depends on, NUL-separated so that no two
 * inputs spell the same text; a bare name and "name=" differ by the '='. */
static bool lookup_key(const char *index_sha256, int64_t index_size, const char *arch,
                       const struct cfa_deb_want *want, size_t n, char key[65])
{
	struct cfa_buf b;
	bool ok;
	size_t i;

	cfa_buf_init(&b, LOOKUP_MAX);
	cfa_buf_printf(&b, "%s %s", MAGIC, CFAPKG_VERSION);
	cfa_buf_add(&b, "", 1);
	cfa_buf_printf(&b, "%s %lld", index_sha256, (long long)index_size);
	cfa_buf_add(&b, "", 1);
	cfa_buf_printf(&b, "%s", arch);
	for (i = 0; i < n; i++) {
		cfa_buf_add(&b, "", 1);
		cfa_buf_printf(&b, "%s%s%s", want[i].name, want[i].version ? "=" : "",
		               want[i].version ? want[i].version : "");
	}
	ok = !b.failed && cfa_sha256_buf(b.data, b.len, key);
	cfa_buf_fini(&b);
	return ok;
}

static char *lookup_path(struct cfapkg_ctx *ctx, const char *key)
{
	char *name = cfa_aprintf("lookups/%s", key);
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

/* Whether the body reads back to exactly what the index gave: a value the
 * stanza format cannot carry (a line break in a Depends) is not kept. */
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
	char key[65], body_sha[65], head[sizeof(MAGIC) + 2 * 65 + 2];
	char *path = NULL, *text = NULL, *body;
	size_t len = 0, hlen;
	bool hit = false;

	if (!n || !lookup_key(index_sha256, index_size, arch, want, n, key) ||
	    !(path = lookup_path(ctx, key)))
		return false;
	if (cfa_plat_is_file(path) && !cfa_read_file(ctx, path, &text, &len) &&
	    (body = memchr(text, '\n', len)) != NULL) {
		body++;
		hlen = (size_t)(body - text);
		hit = cfa_snprintf(head, sizeof(head), "%s %s ", MAGIC, key) &&
		      hlen == strlen(head) + 65 && memcmp(text, head, strlen(head)) == 0 &&
		      cfa_sha256_buf(body, len - hlen, body_sha) &&
		      memcmp(text + strlen(head), body_sha, 64) == 0 &&
		      !cfa_deb_index_find(ctx, path, body, len - hlen, arch, want, n, arena, found);
	}
	/* A miss is no failure: the index is read instead. */
	if (!hit)
		cfapkg_ctx_clear_error(ctx);
	cfa_free(text);
	cfa_free(path);
	return hit;
}

static void lookup_write(struct cfapkg_ctx *ctx, const char *key, const struct cfa_buf *body)
{
	char body_sha[65], *path = lookup_path(ctx, key), *dir = cfa_root_path(ctx, CFA_APT, "lookups");
	struct cfa_buf file;

	cfa_buf_init(&file, LOOKUP_MAX);
	if (path && dir && cfa_sha256_buf(body->data, body->len, body_sha) &&
	    cfa_buf_printf(&file, "%s %s %s\n", MAGIC, key, body_sha) &&
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
	char key[65];
	struct cfa_buf body;

	cfa_buf_init(&body, LOOKUP_MAX);
	if (n && lookup_key(index_sha256, index_size, arch, want, n, key) &&
	    lookup_body(arch, want, found, n, &body) &&
	    round_trips(ctx, arch, &body, want, found, n))
		lookup_write(ctx, key, &body);
	/* Only a cache: a root that cannot hold it still installs. */
	cfapkg_ctx_clear_error(ctx);
	cfa_buf_fini(&body);
}
