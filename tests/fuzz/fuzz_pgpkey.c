/*
 * fuzz_pgpkey.c - OpenPGP armor and key packets (core/pgpkey.c): the
 * input as a key file (armored, or binary when its first byte starts a
 * packet).  Properties beyond not crashing:
 *   - binary input comes back from the decoder unchanged;
 *   - the keys found lie in order inside the packets, without overlap,
 *     each with a fingerprint of 40 or 64 upper-case hex digits that a
 *     recipe could pin;
 *   - each key cut out alone (what ROOT/apt/keys keeps) is read again as
 *     exactly one key with the same fingerprint;
 *   - the packets armored again (OpenSSL's base64, 64 columns) decode to
 *     the same bytes with the same keys.
 */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/pgpkey.h"
#include "tests/fuzz/fuzz.h"

static struct cfa_pgp_key keys[CFA_PGP_KEYS_MAX], again[CFA_PGP_KEYS_MAX];

static void check_keys(const unsigned char *bin, size_t len, size_t n)
{
	size_t i, m;
	const char *why = NULL;

	for (i = 0; i < n; i++) {
		FUZZ_CHECK(keys[i].off < len && keys[i].len > 0 && keys[i].len <= len - keys[i].off,
		           "key %zu at %zu+%zu of %zu", i, keys[i].off, keys[i].len, len);
		FUZZ_CHECK(i == 0 || keys[i].off == keys[i - 1].off + keys[i - 1].len,
		           "key %zu does not follow key %zu", i, i - 1);
		FUZZ_CHECK(cfa_pgp_fpr_valid(keys[i].fpr) && !strpbrk(keys[i].fpr, "abcdef"),
		           "key %zu: fingerprint %s", i, keys[i].fpr);
		FUZZ_CHECK(cfa_pgp_keys(bin + keys[i].off, keys[i].len, again, &m, &why) && m == 1 &&
		               strcmp(again[0].fpr, keys[i].fpr) == 0,
		           "key %zu cut out reads as %zu keys (%s)", i, m, why ? why : "");
	}
}

/* The packets as one armored block, decoded again. */
static void check_rearmor(const unsigned char *bin, size_t len, size_t n)
{
	size_t room = 128 + len / 48 * 66 + 70, used, i, m = 0;
	char *text = malloc(room);
	unsigned char *back = NULL;
	size_t back_len = 0;
	const char *why = NULL;

	if (!text)
		fuzz_fail("out of memory");
	used = (size_t)snprintf(text, room, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n");
	for (i = 0; i < len; i += 48) {
		used += (size_t)EVP_EncodeBlock((unsigned char *)text + used, bin + i,
		                                (int)(len - i < 48 ? len - i : 48));
		text[used++] = '\n';
	}
	used += (size_t)snprintf(text + used, room - used, "-----END PGP PUBLIC KEY BLOCK-----\n");
	FUZZ_CHECK(cfa_pgp_dearmor(text, used, &back, &back_len, &why) && back_len == len &&
	               memcmp(back, bin, len) == 0,
	           "armored again, %zu bytes decode to %zu (%s)", len, back_len, why ? why : "");
	FUZZ_CHECK(cfa_pgp_keys(back, back_len, again, &m, &why) && m == n,
	           "armored again: %zu keys, not %zu", m, n);
	cfa_free(back);
	free(text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *bin = NULL;
	size_t len = 0, n = 0;
	const char *why = NULL;

	if (!cfa_pgp_dearmor((const char *)data, size, &bin, &len, &why))
		return 0;
	if (size && (data[0] & 0x80))
		FUZZ_CHECK(len == size && memcmp(bin, data, size) == 0, "binary input changed");
	if (len && (bin[0] & 0x80) && cfa_pgp_keys(bin, len, keys, &n, &why)) {
		check_keys(bin, len, n);
		check_rearmor(bin, len, n);
	}
	cfa_free(bin);
	return 0;
}
