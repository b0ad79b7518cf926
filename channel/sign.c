/*
 * sign.c - ed25519 keys and signatures for channel indexes, through
 * OpenSSL's EVP interface.  A public key travels as the base64 of its 32
 * raw bytes; a private key is a PKCS#8 PEM file only its owner may read.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <string.h>

#include "channel/channel.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* Creates path.tmp readable by its owner only from its first moment, then
 * renames it into place. */
static enum cfapkg_err write_private(struct cfapkg_ctx *ctx, const char *path, const char *pem,
                                     size_t len)
{
	char *tmp = cfa_aprintf("%s.tmp", path);
	FILE *f = tmp ? cfa_plat_fopen_private(tmp) : NULL;
	int rc = 0;

	if (!tmp)
		return cfa_nomem(ctx);
	if (!f) {
		rc = cfa_plat_write_errno();
		cfa_free(tmp);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot write: %s", path, cfa_plat_strerror(rc));
	}
	if (fwrite(pem, 1, len, f) != len || cfa_plat_fsync(f))
		rc = cfa_plat_write_errno();
	if (fclose(f) != 0 && !rc)
		rc = cfa_plat_write_errno();
	/* The key appears under its name only whole and flushed: an
	 * interrupted keygen leaves no half key that would look like one. */
	if (!rc)
		rc = cfa_plat_rename(tmp, path);
	if (rc)
		cfa_plat_remove(tmp);
	cfa_free(tmp);
	return rc ? cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot write: %s", path, cfa_plat_strerror(rc))
	          : CFAPKG_E_OK;
}

static enum cfapkg_err save_pem(struct cfapkg_ctx *ctx, EVP_PKEY *key, const char *path)
{
	BIO *mem = BIO_new(BIO_s_mem());
	enum cfapkg_err e;
	char *pem = NULL;
	long len;

	/* No cipher and no passphrase: PKCS#8 in the clear, protected by the
	 * file's mode alone. */
	if (!mem || !PEM_write_bio_PrivateKey(mem, key, NULL, NULL, 0, NULL, NULL)) {
		BIO_free(mem);
		return cfa_fail(ctx, CFAPKG_E_NOMEM, "cannot encode the private key (OpenSSL)");
	}
	/* pem points into the BIO's own buffer, valid until BIO_free; it is
	 * not terminated. */
	len = BIO_get_mem_data(mem, &pem);
	e = write_private(ctx, path, pem, (size_t)len);
	BIO_free(mem);
	return e;
}

enum cfapkg_err cfa_key_generate(struct cfapkg_ctx *ctx, const char *private_path,
                                 char pub_b64[CFA_PUBKEY_B64_LEN + 1])
{
	EVP_PKEY_CTX *kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	unsigned char pub[CFA_PUBKEY_LEN];
	size_t publen = sizeof(pub);
	EVP_PKEY *key = NULL;
	enum cfapkg_err e;

	/* The key comes from OpenSSL's default random source, seeded by the
	 * system. */
	if (!kctx || EVP_PKEY_keygen_init(kctx) != 1 || EVP_PKEY_keygen(kctx, &key) != 1 ||
	    EVP_PKEY_get_raw_public_key(key, pub, &publen) != 1 || publen != sizeof(pub)) {
		e = cfa_fail(ctx, CFAPKG_E_NOMEM, "cannot make an ed25519 key (OpenSSL)");
		goto out;
	}
	if (!(e = save_pem(ctx, key, private_path)))
		cfa_b64_encode(pub, sizeof(pub), pub_b64);
out:
	EVP_PKEY_free(key);
	EVP_PKEY_CTX_free(kctx);
	return e;
}

enum cfapkg_err cfa_key_load_private(struct cfapkg_ctx *ctx, const char *path, EVP_PKEY **out)
{
	char *pem = NULL;
	size_t len = 0;
	enum cfapkg_err e = cfa_read_file(ctx, path, &pem, &len);
	BIO *mem;

	*out = NULL;
	if (e)
		return e;
	/* A read-only BIO over the text; it borrows pem, freed only after the
	 * BIO. */
	mem = BIO_new_mem_buf(pem, (int)len);
	/* No passphrase callback: an encrypted key fails to load rather than
	 * prompting. */
	*out = mem ? PEM_read_bio_PrivateKey(mem, NULL, NULL, NULL) : NULL;
	BIO_free(mem);
	cfa_free(pem);
	/* Another key type (RSA, ECDSA) would load fine but could not make
	 * the signatures clients check. */
	if (!*out || EVP_PKEY_id(*out) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(*out);
		*out = NULL;
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s: not an ed25519 private key (make one with "
		                "'cfapkg channel keygen')", path);
	}
	return CFAPKG_E_OK;
}

bool cfa_key_public(EVP_PKEY *key, unsigned char pub[CFA_PUBKEY_LEN])
{
	size_t n = CFA_PUBKEY_LEN;

	/* The 32 raw bytes, the form the index's "keys" and a .pub file carry
	 * in base64. */
	return EVP_PKEY_get_raw_public_key(key, pub, &n) == 1 && n == CFA_PUBKEY_LEN;
}

enum cfapkg_err cfa_sign(struct cfapkg_ctx *ctx, EVP_PKEY *key, const void *data, size_t len,
                         unsigned char sig[CFA_SIG_LEN])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t siglen = CFA_SIG_LEN;
	/* Ed25519 hashes internally: the digest must be NULL and the data
	 * signed in one EVP_DigestSign call, not by updates. */
	bool ok = md && EVP_DigestSignInit(md, NULL, NULL, NULL, key) == 1 &&
	          EVP_DigestSign(md, sig, &siglen, data, len) == 1 && siglen == CFA_SIG_LEN;

	EVP_MD_CTX_free(md);
	return ok ? CFAPKG_E_OK : cfa_fail(ctx, CFAPKG_E_NOMEM, "cannot sign (OpenSSL)");
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Exactly one key in text: "ed25519 BASE64" or a bare BASE64, with what
 * an editor adds around it (a UTF-8 byte order mark, blanks, CRLF, empty
 * lines), nothing else.  False with *why. */
static bool one_key(const char *text, size_t len, unsigned char pub[CFA_PUBKEY_LEN],
                    const char **why)
{
	const char *end = text + len, *tok;
	char *b64;
	bool ok;

	/* Notepad used to add a byte order mark when saving UTF-8. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		text += 3;
	while (text < end && blank(*text))
		text++;
	/* "ed25519 KEY" and "ed25519: KEY" are both taken. */
	if (end - text > 7 && strncmp(text, "ed25519", 7) == 0 && (blank(text[7]) || text[7] == ':'))
		for (text += 7; text < end && (blank(*text) || *text == ':'); text++)
			;
	for (tok = text; text < end && !blank(*text); text++)
		;
	if (!(b64 = cfa_strndup(tok, (size_t)(text - tok))))
		return !(*why = "out of memory");
	/* A NUL inside the word would end the copy early: the lengths must
	 * agree. */
	ok = strlen(b64) == (size_t)(text - tok) && cfa_b64_decode(b64, pub, CFA_PUBKEY_LEN);
	cfa_free(b64);
	while (text < end && blank(*text))
		text++;
	if (!ok)
		*why = "its text is not the base64 of an ed25519 public key's 32 bytes";
	else if (text < end)
		*why = "it holds more after the key (a second key, a stray word): a key file holds "
		       "one key";
	return ok && text == end;
}

/* "ed25519 BASE64", a bare BASE64, or a file holding either. */
enum cfapkg_err cfa_key_parse_public(struct cfapkg_ctx *ctx, const char *text,
                                     unsigned char pub[CFA_PUBKEY_LEN])
{
	static const char *const how = "give the channel's .pub file or the base64 text in it "
	                               "('cfapkg channel keygen' makes both)";
	const char *why = NULL;
	char *file = NULL;
	size_t len = 0;
	enum cfapkg_err e;

	/* An existing file of that name wins over reading the argument as key
	 * text. */
	if (!cfa_plat_is_file(text) && one_key(text, strlen(text), pub, &why))
		return CFAPKG_E_OK;
	/* One word that is neither a file nor a key is most likely a mistyped
	 * file name: the message says so. */
	if (!cfa_plat_is_file(text) && !cfa_plat_is_dir(text) && !strchr(text, ' '))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "'%s' is neither a file (there is no such file) "
		                "nor the text of an ed25519 public key; %s", text, how);
	if (!cfa_plat_is_file(text))
		return cfa_fail(ctx, CFAPKG_E_USAGE, "'%s' is not an ed25519 public key: %s; %s",
		                text, cfa_plat_is_dir(text) ? "it is a folder" : why, how);
	if ((e = cfa_read_file(ctx, text, &file, &len)))
		return e; /* names the file and why it cannot be read */
	if (!one_key(file, len, pub, &why))
		e = cfa_fail(ctx, CFAPKG_E_USAGE, "%s: not an ed25519 public key file: %s; %s", text,
		             strlen(file) != len ? "it holds a NUL byte" : why, how);
	cfa_free(file);
	return e;
}
