/*
 * fuzz_gpgstatus.c - gpgv's status lines (core/gpgstatus.c): the input as
 * what gpgv wrote on --status-fd, judged for no pinned key, for each
 * fingerprint it names and for one it does not.  Properties beyond not
 * crashing:
 *   - no more records than room; each key ID and fingerprint terminated,
 *     upper-case hex only;
 *   - an accepted verdict rests on a record that is GOODSIG with VALIDSIG,
 *     over SHA-2 or SHA-3, by the pinned key, with exactly one PLAINTEXT
 *     and no BADSIG anywhere;
 *   - a fingerprint no record names is never accepted;
 *   - a bad signature added at the end makes no file accepted.
 */
#include <stdlib.h>
#include <string.h>

#include "core/gpgstatus.h"
#include "tests/fuzz/fuzz.h"

#define NOBODY "0123456789ABCDEF0123456789ABCDEF01234567"

static bool hex_field(const char *s, size_t room)
{
	const char *end = memchr(s, '\0', room);
	const char *c;

	if (!end)
		return false;
	for (c = s; c < end; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'F')))
			return false;
	return true;
}

static void check_records(const struct cfa_gpg_status *st)
{
	size_t i;

	FUZZ_CHECK(st->nsigs <= CFA_GPG_SIGS_MAX, "%zu records", st->nsigs);
	for (i = 0; i < st->nsigs; i++) {
		const struct cfa_gpg_sig *s = &st->sig[i];
		FUZZ_CHECK(hex_field(s->keyid, sizeof(s->keyid)) && hex_field(s->fpr, sizeof(s->fpr)) &&
		               hex_field(s->primary, sizeof(s->primary)),
		           "record %zu: a field that is not upper-case hex", i);
		FUZZ_CHECK(!s->valid || s->fpr[0], "record %zu: VALIDSIG without a fingerprint", i);
	}
}

static bool any_bad(const struct cfa_gpg_status *st)
{
	size_t i;

	for (i = 0; i < st->nsigs; i++)
		if (st->sig[i].state == CFA_SIG_BAD)
			return true;
	return false;
}

static void check_verdict(const struct cfa_gpg_status *st, const char *pin)
{
	int which = -2;
	enum cfa_gpg_verdict v = cfa_gpg_judge(st, pin, &which);
	const struct cfa_gpg_sig *s;

	FUZZ_CHECK(which >= -1 && which < (int)st->nsigs, "which %d of %zu", which, st->nsigs);
	if (v != CFA_GPG_ACCEPTED)
		return;
	FUZZ_CHECK(which >= 0, "accepted on no signature");
	s = &st->sig[which];
	FUZZ_CHECK(s->state == CFA_SIG_GOOD && s->valid && s->hash_algo >= 8 && s->hash_algo <= 14,
	           "accepted on state %d, valid %d, hash %u", s->state, s->valid, s->hash_algo);
	FUZZ_CHECK(!pin || cfa_gpg_sig_by(s, pin), "accepted by %s/%s for pin %s", s->fpr,
	           s->primary, pin);
	FUZZ_CHECK(st->plaintexts == 1 && !any_bad(st) && !st->overflow,
	           "accepted with %u plaintexts, a bad signature or too many", st->plaintexts);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char bad[] = "\n[GNUPG:] BADSIG 0123456789ABCDEF someone\n";
	struct cfa_gpg_status *st = malloc(sizeof(*st));
	char *more = malloc(size + sizeof(bad));
	int which;
	size_t i;

	if (!st || !more)
		fuzz_fail("out of memory");
	cfa_gpg_status_parse((const char *)data, size, st);
	check_records(st);
	check_verdict(st, NULL);
	for (i = 0; i < st->nsigs; i++) {
		if (st->sig[i].fpr[0])
			check_verdict(st, st->sig[i].fpr);
		if (st->sig[i].primary[0])
			check_verdict(st, st->sig[i].primary);
	}
	for (i = 0; i < st->nsigs; i++)
		if (strcmp(st->sig[i].fpr, NOBODY) == 0 || strcmp(st->sig[i].primary, NOBODY) == 0)
			break;
	if (i == st->nsigs)
		FUZZ_CHECK(cfa_gpg_judge(st, NOBODY, &which) != CFA_GPG_ACCEPTED,
		           "accepted for a key no line names");
	memcpy(more, data, size);
	memcpy(more + size, bad, sizeof(bad) - 1);
	cfa_gpg_status_parse(more, size + sizeof(bad) - 1, st);
	FUZZ_CHECK(cfa_gpg_judge(st, NULL, &which) != CFA_GPG_ACCEPTED,
	           "accepted with a bad signature added");
	free(more);
	free(st);
	return 0;
}
