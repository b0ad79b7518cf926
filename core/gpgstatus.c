/*
 * gpgstatus.c - gpgv's status lines into signature records, and the
 * verdict.  GnuPG starts each signature with NEWSIG, then gives one result
 * line (GOODSIG, EXPSIG, EXPKEYSIG, REVKEYSIG, BADSIG or ERRSIG, the last
 * followed by NO_PUBKEY when the key is missing) and, for a signature it
 * could check, VALIDSIG with the fingerprints and the hash algorithm.  A
 * result line without its NEWSIG starts a record of its own, so a gpgv
 * that leaves NEWSIG out is read the same way.  Only the keywords below
 * are read; the user IDs that follow a key ID are never looked at.
 */
#include "core/gpgstatus.h"

#include <string.h>

#include "core/strbuf.h"

#define PREFIX "[GNUPG:] "
#define WORDS_MAX 12

struct words {
	const char *w[WORDS_MAX];
	size_t n[WORDS_MAX];
	size_t count;
};

static void split(const char *s, size_t len, struct words *out)
{
	size_t i = 0;

	out->count = 0;
	/* Words past WORDS_MAX are dropped: nothing read here lies further than
	 * VALIDSIG's eleventh. */
	while (i < len && out->count < WORDS_MAX) {
		while (i < len && s[i] == ' ')
			i++;
		if (i >= len)
			break;
		out->w[out->count] = s + i;
		while (i < len && s[i] != ' ')
			i++;
		out->n[out->count] = (size_t)(s + i - out->w[out->count]);
		out->count++;
	}
}

static bool word_is(const struct words *w, size_t k, const char *s)
{
	return k < w->count && w->n[k] == strlen(s) && memcmp(w->w[k], s, w->n[k]) == 0;
}

/* A key ID or fingerprint: hex digits only, copied upper case; "" when
 * the word is missing or is not one. */
static void take_hex(const struct words *w, size_t k, char out[CFA_GPG_FPR_MAX + 1])
{
	size_t i;

	out[0] = '\0';
	if (k >= w->count || w->n[k] > CFA_GPG_FPR_MAX)
		return;
	for (i = 0; i < w->n[k]; i++) {
		char c = w->w[k][i];
		if (c >= 'a' && c <= 'f')
			c = (char)(c - 'a' + 'A');
		if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) {
			out[0] = '\0';
			return;
		}
		out[i] = c;
	}
	out[w->n[k]] = '\0';
}

static struct cfa_gpg_sig *new_sig(struct cfa_gpg_status *st)
{
	struct cfa_gpg_sig *s;

	/* More signatures than are kept marks the status as overflowed, which
	 * the verdict refuses: a file is never judged on only part of them. */
	if (st->nsigs == CFA_GPG_SIGS_MAX) {
		st->overflow = true;
		return NULL;
	}
	s = &st->sig[st->nsigs++];
	memset(s, 0, sizeof(*s));
	return s;
}

/* The record a result line belongs to: the open one, else a new one. */
static struct cfa_gpg_sig *for_result(struct cfa_gpg_status *st)
{
	struct cfa_gpg_sig *cur = st->nsigs ? &st->sig[st->nsigs - 1] : NULL;

	return cur && cur->state == CFA_SIG_NONE ? cur : new_sig(st);
}

static const struct {
	const char *word;
	enum cfa_sig_state state;
} results[] = {
	{"GOODSIG", CFA_SIG_GOOD},           {"EXPSIG", CFA_SIG_EXPIRED_SIG},
	{"EXPKEYSIG", CFA_SIG_EXPIRED_KEY},  {"REVKEYSIG", CFA_SIG_REVOKED_KEY},
	{"BADSIG", CFA_SIG_BAD},             {"ERRSIG", CFA_SIG_ERROR},
};

static bool result_line(struct cfa_gpg_status *st, const struct words *w)
{
	struct cfa_gpg_sig *s;
	size_t k;

	for (k = 0; k < sizeof(results) / sizeof(results[0]); k++)
		if (word_is(w, 0, results[k].word))
			break;
	if (k == sizeof(results) / sizeof(results[0]))
		return false;
	if ((s = for_result(st)) != NULL) {
		s->state = results[k].state;
		take_hex(w, 1, s->keyid);
		/* ERRSIG KEYID PKALGO HASHALGO CLASS TIME RC [FPR]: RC 9 is "no
		 * public key", which NO_PUBKEY also says. */
		if (s->state == CFA_SIG_ERROR && word_is(w, 6, "9"))
			s->state = CFA_SIG_NO_KEY;
	}
	return true;
}

/* VALIDSIG FPR DATE TIME EXPIRE VERSION RESERVED PKALGO HASHALGO CLASS
 * [PRIMARY-FPR]: for the signature whose result came just before. */
static void validsig_line(struct cfa_gpg_status *st, const struct words *w)
{
	struct cfa_gpg_sig *s = st->nsigs ? &st->sig[st->nsigs - 1] : NULL;
	uint64_t algo = 0;

	/* Taken only after a result that checked the signature: after BADSIG
	 * or an error it would vouch for nothing.  The primary key's
	 * fingerprint is the eleventh word; where it is missing, the signing
	 * key's own stands in. */
	if (!s || s->valid || s->state == CFA_SIG_NONE || s->state == CFA_SIG_BAD ||
	    s->state == CFA_SIG_ERROR || s->state == CFA_SIG_NO_KEY)
		return;
	take_hex(w, 1, s->fpr);
	if (w->count > 8 && !cfa_parse_u64(w->w[8], w->n[8], 255, &algo))
		algo = 0;
	s->hash_algo = (unsigned)algo;
	take_hex(w, w->count > 10 ? 10 : 1, s->primary);
	s->valid = s->fpr[0] != '\0';
}

static void status_line(struct cfa_gpg_status *st, const char *s, size_t n)
{
	struct words w;
	struct cfa_gpg_sig *last = st->nsigs ? &st->sig[st->nsigs - 1] : NULL;

	split(s, n, &w);
	if (word_is(&w, 0, "NEWSIG"))
		new_sig(st);
	else if (word_is(&w, 0, "PLAINTEXT"))
		st->plaintexts++;
	else if (word_is(&w, 0, "VALIDSIG"))
		validsig_line(st, &w);
	else if (word_is(&w, 0, "NO_PUBKEY") && last && last->state == CFA_SIG_ERROR)
		last->state = CFA_SIG_NO_KEY;
	else
		result_line(st, &w);
}

void cfa_gpg_status_parse(const char *text, size_t len, struct cfa_gpg_status *out)
{
	size_t pos = 0, plen = strlen(PREFIX);

	memset(out, 0, sizeof(*out));
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
		if (n && text[pos + n - 1] == '\r')
			n--;
		/* Lines without the prefix are gpgv's messages for people:
		 * never read. */
		if (n > plen && memcmp(text + pos, PREFIX, plen) == 0)
			status_line(out, text + pos + plen, n - plen);
		pos = end + 1;
	}
}

static bool same_hex(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if ((*a | 0x20) != (*b | 0x20))
			return false;
	return *a == *b;
}

bool cfa_gpg_sig_by(const struct cfa_gpg_sig *s, const char *pin)
{
	/* A pin may name the signing subkey or its primary key; either one's
	 * fingerprint counts. */
	return (s->fpr[0] && same_hex(s->fpr, pin)) || (s->primary[0] && same_hex(s->primary, pin));
}

/* SHA-2 and SHA-3 (OpenPGP's 8 to 14); MD5 (1), SHA-1 (2) and RIPEMD-160
 * (3) are refused, as apt refuses them. */
static bool strong_hash(unsigned algo)
{
	/* 13 is a number OpenPGP leaves reserved, not a hash. */
	return algo >= 8 && algo <= 14 && algo != 13;
}

static bool by(const struct cfa_gpg_sig *s, const char *pin)
{
	/* No pin: any key gpgv was given may sign. */
	return !pin || cfa_gpg_sig_by(s, pin);
}

/* Why the pinned key's signature is no good, when it is there. */
static enum cfa_gpg_verdict pinned_reason(const struct cfa_gpg_status *st, const char *pin,
                                          int *which)
{
	static const enum cfa_gpg_verdict reason[] = {
		[CFA_SIG_EXPIRED_SIG] = CFA_GPG_SIG_EXPIRED,
		[CFA_SIG_EXPIRED_KEY] = CFA_GPG_KEY_EXPIRED,
		[CFA_SIG_REVOKED_KEY] = CFA_GPG_KEY_REVOKED,
		[CFA_SIG_GOOD] = CFA_GPG_WEAK_HASH,
	};
	size_t i;

	for (i = 0; i < st->nsigs; i++) {
		const struct cfa_gpg_sig *s = &st->sig[i];
		if (s->valid && by(s, pin) && s->state >= CFA_SIG_GOOD &&
		    s->state <= CFA_SIG_REVOKED_KEY) {
			*which = (int)i;
			return reason[s->state];
		}
	}
	return CFA_GPG_ACCEPTED; /* none: the caller looks further */
}

static int first_in(const struct cfa_gpg_status *st, bool (*test)(const struct cfa_gpg_sig *s))
{
	size_t i;

	for (i = 0; i < st->nsigs; i++)
		if (test(&st->sig[i]))
			return (int)i;
	return -1;
}

static bool is_bad(const struct cfa_gpg_sig *s)
{
	return s->state == CFA_SIG_BAD;
}

static bool is_valid(const struct cfa_gpg_sig *s)
{
	return s->valid;
}

static bool is_unknown(const struct cfa_gpg_sig *s)
{
	return s->state == CFA_SIG_NO_KEY || s->state == CFA_SIG_ERROR;
}

enum cfa_gpg_verdict cfa_gpg_judge(const struct cfa_gpg_status *st, const char *pin, int *which)
{
	enum cfa_gpg_verdict v;
	size_t i;

	*which = -1;
	if (st->nsigs == 0)
		return CFA_GPG_UNSIGNED;
	/* Exactly one signed text: a file with two could show one text to a
	 * reader and have the other checked. */
	if (st->plaintexts != 1 || st->overflow)
		return CFA_GPG_NOT_ONE;
	/* One bad signature is enough to refuse: the file was changed after
	 * it was signed, whatever else holds. */
	if ((*which = first_in(st, is_bad)) >= 0)
		return CFA_GPG_BAD;
	for (i = 0; i < st->nsigs; i++) {
		const struct cfa_gpg_sig *s = &st->sig[i];
		if (s->state == CFA_SIG_GOOD && s->valid && by(s, pin) && strong_hash(s->hash_algo)) {
			*which = (int)i;
			return CFA_GPG_ACCEPTED;
		}
	}
	if ((v = pinned_reason(st, pin, which)) != CFA_GPG_ACCEPTED)
		return v;
	if ((*which = first_in(st, is_valid)) >= 0)
		return CFA_GPG_OTHER_KEY;
	if ((*which = first_in(st, is_unknown)) >= 0)
		return CFA_GPG_UNKNOWN_KEY;
	return CFA_GPG_UNSIGNED;
}
