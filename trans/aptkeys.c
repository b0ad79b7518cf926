/*
 * aptkeys.c - the keyring an APT source is checked against.  A recipe
 * names its repository's key as apt's signed-by does: a keyring file the
 * system provides (debian-archive-keyring's), or a fingerprint with the
 * URL its key is published at (AMD's rocm.gpg.key).  A key fetched by URL
 * is kept only if the file holds a key with exactly that fingerprint, and
 * only that key is kept: the fingerprint is the pin, the URL only where
 * the bytes come from.  gpgv reads binary keyrings only, so armored files
 * are decoded first (core/pgpkey.c).
 */
#include <string.h>

#include "cache/cache.h"
#include "core/json.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/pgpkey.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "trans/apttrust.h"

/* A key file is a few kilobytes; a whole distribution's keyring less
 * than a megabyte. */
#define KEY_FILE_MAX (4u * 1024u * 1024u)

struct keyfile {
	unsigned char *bin;        /* the binary packets; cfa_free */
	size_t len;
	struct cfa_pgp_key keys[CFA_PGP_KEYS_MAX];
	size_t nkeys;
};

/* data (armored or binary) decoded and its keys listed; the error names
 * where it came from. */
static enum cfapkg_err read_keys(struct cfapkg_ctx *ctx, const char *label, const char *data,
                                 size_t len, struct keyfile *kf)
{
	const char *why = NULL;

	if (!cfa_pgp_dearmor(data, len, &kf->bin, &kf->len, &why))
		return why ? cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: not an OpenPGP key: %s; nothing "
		                      "was changed", label, why)
		           : cfa_nomem(ctx);
	if (!cfa_pgp_keys(kf->bin, kf->len, kf->keys, &kf->nkeys, &why))
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: not an OpenPGP key: %s; nothing was "
		                "changed", label, why);
	if (!kf->nkeys)
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s holds no public key; nothing was changed",
		                label);
	return CFAPKG_E_OK;
}

/* Compared exactly: a recipe's pin is made upper case when it is read
 * (core/recipe_source.c), as the fingerprints computed here are. */
static const struct cfa_pgp_key *key_with(const struct keyfile *kf, const char *fpr)
{
	size_t i;

	for (i = 0; i < kf->nkeys; i++)
		if (strcmp(kf->keys[i].fpr, fpr) == 0)
			return &kf->keys[i];
	return NULL;
}

/* "A, B and 3 more": the fingerprints a file holds, for a refusal. */
static void list_keys(const struct keyfile *kf, char *buf, size_t len)
{
	struct cfa_buf b;
	size_t i;

	/* At most three in full: the message is to tell the keys apart, not to
	 * list a distribution's keyring. */
	cfa_buf_init(&b, len - 1);
	for (i = 0; i < kf->nkeys && i < 3; i++)
		cfa_buf_printf(&b, "%s%s", i ? ", " : "", kf->keys[i].fpr);
	if (kf->nkeys > 3)
		cfa_buf_printf(&b, " and %lu more", (unsigned long)(kf->nkeys - 3));
	if (!cfa_snprintf(buf, len, "%s", b.failed ? "several keys" : cfa_buf_str(&b)))
		buf[0] = '\0';
	cfa_buf_fini(&b);
}

static enum cfapkg_err keys_dir(struct cfapkg_ctx *ctx, const char *name, char **path)
{
	char *dir = cfa_root_path(ctx, CFA_APT, "keys");
	int rc = 0;

	if (!dir)
		return ctx->err_code;
	if (!cfa_plat_is_dir(dir) && (rc = cfa_plat_mkdir_p(dir)) != 0)
		cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create it: %s", dir, cfa_plat_strerror(rc));
	if (!rc && cfa_path(ctx, path, "%s/%s", dir, name))
		rc = -1;
	cfa_free(dir);
	return rc ? ctx->err_code : CFAPKG_E_OK;
}

/* The key at a->key_url, kept only when it is the pinned one, and then
 * only its own packets, never the rest of the file: another key published
 * beside it must not come to be trusted with it. */
static enum cfapkg_err fetch_key(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                 const struct cfapkg_fetch_opts *opts, const char *path)
{
	struct keyfile kf = {0};
	const struct cfa_pgp_key *k = NULL;
	char *data = NULL, held[400];
	size_t len = 0;
	enum cfapkg_err e = cfa_apt_fetch_small(ctx, a->key_url, KEY_FILE_MAX, opts, &data, &len);

	if (!e)
		e = read_keys(ctx, a->key_url, data, len, &kf);
	if (!e && !(k = key_with(&kf, a->key_fingerprint))) {
		list_keys(&kf, held, sizeof(held));
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: refused: the key there has fingerprint %s, "
		             "not the pinned %s (a key the recipe does not name); nothing was changed",
		             a->key_url, held, a->key_fingerprint);
	}
	if (!e)
		e = cfa_write_atomic(ctx, path, (const char *)kf.bin + k->off, k->len);
	cfa_free(kf.bin);
	cfa_free(data);
	return e;
}

static enum cfapkg_err pinned_key(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                  bool refresh, const struct cfapkg_fetch_opts *opts, char **path)
{
	char name[CFA_PGP_FPR_MAX + 8];
	enum cfapkg_err e;

	if (!cfa_snprintf(name, sizeof(name), "%s.gpg", a->key_fingerprint))
		return cfa_nomem(ctx); /* a checked fingerprint always fits */
	if ((e = keys_dir(ctx, name, path)))
		return e;
	/* A kept key is used as it is; refresh fetches it again, for a key
	 * whose expiry was extended under the same fingerprint. */
	if ((refresh || !cfa_plat_is_file(*path)) && (e = fetch_key(ctx, a, opts, *path)))
		CFA_FREE(*path);
	return e;
}

/* A system keyring: binary as gpgv reads it, else decoded into
 * ROOT/apt/keys under the name of its contents' hash. */
static enum cfapkg_err system_keyring(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                      char **path)
{
	struct keyfile kf = {0};
	char *data = NULL, hex[65], name[40];
	size_t len = 0;
	enum cfapkg_err e = cfa_read_file(ctx, a->keyring, &data, &len);

	if (e) {
		cfapkg_ctx_clear_error(ctx);
		return cfa_fail(ctx, CFAPKG_E_UNSUPPORTED, "%s: the APT source's keyring cannot be read "
		                "(install the package that provides it, e.g. debian-archive-keyring)",
		                a->keyring);
	}
	if (!(e = read_keys(ctx, a->keyring, data, len, &kf)) && a->key_fingerprint &&
	    !key_with(&kf, a->key_fingerprint))
		e = cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s holds no key with the pinned fingerprint %s; "
		             "refused, nothing was changed", a->keyring, a->key_fingerprint);
	/* A binary keyring is used where it lies, so that an update of the
	 * package that ships it is seen at once.  An armored one is decoded
	 * into a file named by its contents, so that a changed keyring gets a
	 * new file rather than a stale one. */
	if (!e && kf.len == len && memcmp(kf.bin, data, len) == 0) {
		*path = cfa_strdup(a->keyring);
		e = *path ? CFAPKG_E_OK : cfa_nomem(ctx);
	} else if (!e) {
		if (!cfa_sha256_buf(kf.bin, kf.len, hex) ||
		    !cfa_snprintf(name, sizeof(name), "keyring-%.16s.gpg", hex))
			e = cfa_nomem(ctx);
		if (!e && !(e = keys_dir(ctx, name, path)) && !cfa_plat_is_file(*path))
			e = cfa_write_atomic(ctx, *path, (const char *)kf.bin, kf.len);
	}
	cfa_free(kf.bin);
	cfa_free(data);
	return e;
}

enum cfapkg_err cfa_apt_keyring(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                bool refresh, const struct cfapkg_fetch_opts *opts, char **path)
{
	*path = NULL;
	if (a->keyring)
		return system_keyring(ctx, a, path);
	return pinned_key(ctx, a, refresh, opts, path);
}
