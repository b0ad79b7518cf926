/*
 * lazy_crypto.c - libcrypto's functions that cfapkg calls, bound on first
 * use (lazylib.h).  Mapping and relocating libcrypto costs a few
 * milliseconds at every start, more than a warm plan's own work, and only
 * downloads, channel signatures and keys use it.  Each is defined with
 * OpenSSL's own declaration, so a mismatch with the headers fails the
 * build.
 */
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "platform/lazylib.h"

#define MD EVP_MD_CTX *c
#define ENC EVP_ENCODE_CTX *c
#define UC unsigned char
/* X(return type, name, parameters, arguments) */
#define CRYPTO_FUNCS(X)                                                                      \
	X(long, BIO_ctrl, (BIO *b, int cmd, long larg, void *parg), (b, cmd, larg, parg))    \
	X(int, BIO_free, (BIO *b), (b))                                                      \
	X(BIO *, BIO_new, (const BIO_METHOD *t), (t))                                        \
	X(BIO *, BIO_new_mem_buf, (const void *buf, int len), (buf, len))                    \
	X(const BIO_METHOD *, BIO_s_mem, (void), ())                                         \
	X(int, EVP_DecodeBlock, (UC *t, const UC *f, int n), (t, f, n))                      \
	X(int, EVP_DecodeFinal, (ENC, UC *out, int *outl), (c, out, outl))                   \
	X(void, EVP_DecodeInit, (ENC), (c))                                                  \
	X(int, EVP_DecodeUpdate, (ENC, UC *out, int *outl, const UC *in, int inl),           \
	  (c, out, outl, in, inl))                                                           \
	X(int, EVP_Digest, (const void *d, size_t n, UC *md, unsigned int *size,             \
	                    const EVP_MD *t, ENGINE *impl), (d, n, md, size, t, impl))       \
	X(int, EVP_DigestFinal_ex, (MD, UC *md, unsigned int *s), (c, md, s))               \
	X(int, EVP_DigestInit_ex, (MD, const EVP_MD *t, ENGINE *impl), (c, t, impl))        \
	X(int, EVP_DigestSign, (MD, UC *sig, size_t *siglen, const UC *tbs, size_t tbslen), \
	  (c, sig, siglen, tbs, tbslen))                                                     \
	X(int, EVP_DigestSignInit, (MD, EVP_PKEY_CTX **p, const EVP_MD *t, ENGINE *e,       \
	                            EVP_PKEY *k), (c, p, t, e, k))                           \
	X(int, EVP_DigestUpdate, (MD, const void *d, size_t n), (c, d, n))                  \
	X(int, EVP_DigestVerify, (MD, const UC *sig, size_t siglen, const UC *tbs,          \
	                          size_t tbslen), (c, sig, siglen, tbs, tbslen))             \
	X(int, EVP_DigestVerifyInit, (MD, EVP_PKEY_CTX **p, const EVP_MD *t, ENGINE *e,     \
	                              EVP_PKEY *k), (c, p, t, e, k))                         \
	X(void, EVP_ENCODE_CTX_free, (ENC), (c))                                             \
	X(EVP_ENCODE_CTX *, EVP_ENCODE_CTX_new, (void), ())                                  \
	X(int, EVP_EncodeBlock, (UC *t, const UC *f, int n), (t, f, n))                      \
	X(void, EVP_MD_CTX_free, (MD), (c))                                                  \
	X(EVP_MD_CTX *, EVP_MD_CTX_new, (void), ())                                          \
	X(void, EVP_PKEY_CTX_free, (EVP_PKEY_CTX *p), (p))                                   \
	X(EVP_PKEY_CTX *, EVP_PKEY_CTX_new_id, (int id, ENGINE *e), (id, e))                \
	X(void, EVP_PKEY_free, (EVP_PKEY *k), (k))                                           \
	X(int, EVP_PKEY_get_id, (const EVP_PKEY *k), (k))                                    \
	X(int, EVP_PKEY_get_raw_public_key, (const EVP_PKEY *k, UC *pub, size_t *len),       \
	  (k, pub, len))                                                                     \
	X(int, EVP_PKEY_keygen, (EVP_PKEY_CTX *p, EVP_PKEY **k), (p, k))                    \
	X(int, EVP_PKEY_keygen_init, (EVP_PKEY_CTX *p), (p))                                 \
	X(EVP_PKEY *, EVP_PKEY_new_raw_public_key, (int t, ENGINE *e, const UC *pub,         \
	                                            size_t len), (t, e, pub, len))           \
	X(const EVP_MD *, EVP_sha1, (void), ())                                              \
	X(const EVP_MD *, EVP_sha256, (void), ())                                            \
	X(const char *, OpenSSL_version, (int t), (t))                                       \
	X(EVP_PKEY *, PEM_read_bio_PrivateKey, (BIO *b, EVP_PKEY **k, pem_password_cb *cb,   \
	                                        void *u), (b, k, cb, u))                     \
	X(int, PEM_write_bio_PrivateKey, (BIO *b, const EVP_PKEY *k, const EVP_CIPHER *enc,  \
	                                  const UC *kstr, int klen, pem_password_cb *cb,     \
	                                  void *u), (b, k, enc, kstr, klen, cb, u))

enum { CRYPTO_FUNCS(CFA_LAZY_ID) F_COUNT };
static const char *const names[] = {CRYPTO_FUNCS(CFA_LAZY_NAME) NULL};

#ifndef CFA_SONAME_CRYPTO
#define CFA_SONAME_CRYPTO "libcrypto.so.3"
#endif
CFA_LAZYLIB(CFA_SONAME_CRYPTO, names, F_COUNT)

CRYPTO_FUNCS(CFA_LAZY_DEFINE)
