/*
 * pgpkey.h - just enough of OpenPGP's key format (RFC 4880, RFC 9580) to
 * name a key by its fingerprint: ASCII armor decoded, packets walked,
 * each primary key's fingerprint computed, and one transferable key (its
 * primary key packet and the packets up to the next primary key) cut out
 * as a binary keyring that gpgv reads.  Signatures are gpgv's to check.
 */
#ifndef CFA_PGPKEY_H
#define CFA_PGPKEY_H

#include <stdbool.h>
#include <stddef.h>

#define CFA_PGP_FPR_MAX 64         /* hex digits of a v5/v6 fingerprint (v4: 40) */
#define CFA_PGP_KEYS_MAX 256       /* primary keys read from one file */

/* The binary packets of data: data itself when its first byte starts a
 * packet, else each "-----BEGIN PGP PUBLIC KEY BLOCK-----" block decoded
 * (its checksum, when given, checked).  *out: cfa_free.  False with *why
 * (or out of memory: *why NULL). */
bool cfa_pgp_dearmor(const char *data, size_t len, unsigned char **out, size_t *outlen,
                     const char **why);

struct cfa_pgp_key {
	char fpr[CFA_PGP_FPR_MAX + 1]; /* upper-case hex */
	size_t off, len;               /* the transferable key's packets */
};

/* Every primary public key of the binary packets p, in order (at most
 * CFA_PGP_KEYS_MAX).  False with *why when a packet header is broken or
 * runs past the end, or when a key is of a version without a fingerprint
 * rule here (v3). */
bool cfa_pgp_keys(const unsigned char *p, size_t n, struct cfa_pgp_key *keys, size_t *nkeys,
                  const char **why);

/* Whether s is a fingerprint as a recipe pins it: 40 or 64 hex digits. */
bool cfa_pgp_fpr_valid(const char *s);

#endif
