/*
 * gpgstatus.h - gpgv's machine-readable status lines ("[GNUPG:] KEYWORD
 * ARGS", written with --status-fd; GnuPG's doc/DETAILS) read into one
 * record per signature, and the verdict apt would reach on them: the file
 * is trusted when one signature is good and valid, by an accepted key,
 * over a strong hash, and no signature on it is bad.
 */
#ifndef CFA_GPGSTATUS_H
#define CFA_GPGSTATUS_H

#include <stdbool.h>
#include <stddef.h>

enum cfa_sig_state {
	CFA_SIG_NONE,              /* NEWSIG seen, no result yet */
	CFA_SIG_GOOD,              /* GOODSIG */
	CFA_SIG_EXPIRED_SIG,       /* EXPSIG: the signature's own expiry passed */
	CFA_SIG_EXPIRED_KEY,       /* EXPKEYSIG: made by a key that has expired */
	CFA_SIG_REVOKED_KEY,       /* REVKEYSIG */
	CFA_SIG_BAD,               /* BADSIG: the file is not what was signed */
	CFA_SIG_NO_KEY,            /* ERRSIG with NO_PUBKEY: a key the keyring lacks */
	CFA_SIG_ERROR              /* ERRSIG otherwise (an algorithm gpgv cannot use) */
};

#define CFA_GPG_SIGS_MAX 16
#define CFA_GPG_FPR_MAX 64         /* hex digits of a v5/v6 fingerprint */

struct cfa_gpg_sig {
	enum cfa_sig_state state;
	char keyid[CFA_GPG_FPR_MAX + 1];   /* as the result line names it */
	char fpr[CFA_GPG_FPR_MAX + 1];     /* VALIDSIG: the signing (sub)key; "" */
	char primary[CFA_GPG_FPR_MAX + 1]; /* VALIDSIG: its primary key; "" */
	unsigned hash_algo;                /* VALIDSIG: OpenPGP's number (8: SHA-256) */
	bool valid;                        /* a VALIDSIG line came for it */
};

struct cfa_gpg_status {
	struct cfa_gpg_sig sig[CFA_GPG_SIGS_MAX];
	size_t nsigs;
	unsigned plaintexts;       /* PLAINTEXT lines: one message gives one */
	bool overflow;             /* more signatures than CFA_GPG_SIGS_MAX */
};

/* Reads the status lines of text (other lines are skipped).  Never fails:
 * what it cannot read leaves a signature without a result. */
void cfa_gpg_status_parse(const char *text, size_t len, struct cfa_gpg_status *out);

enum cfa_gpg_verdict {
	CFA_GPG_ACCEPTED,
	CFA_GPG_BAD,               /* a signature does not match the file */
	CFA_GPG_NOT_ONE,           /* not exactly one signed message */
	CFA_GPG_UNSIGNED,          /* no signature at all */
	CFA_GPG_SIG_EXPIRED,
	CFA_GPG_KEY_EXPIRED,
	CFA_GPG_KEY_REVOKED,
	CFA_GPG_WEAK_HASH,         /* MD5, SHA-1 or RIPEMD-160, as apt refuses */
	CFA_GPG_OTHER_KEY,         /* good, but by a key other than the pinned one */
	CFA_GPG_UNKNOWN_KEY        /* by a key the keyring does not hold */
};

/* The verdict on st for the pinned fingerprint (NULL: any key of the
 * keyring); *which: the signature it rests on, or -1. */
enum cfa_gpg_verdict cfa_gpg_judge(const struct cfa_gpg_status *st, const char *pin, int *which);
/* Whether signature s was made by the key with fingerprint pin (the
 * signing key or its primary key), compared without regard to case. */
bool cfa_gpg_sig_by(const struct cfa_gpg_sig *s, const char *pin);

#endif
