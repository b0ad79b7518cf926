/*
 * test_apt_trust.c - the parsers an APT repository's trust rests on, at
 * exact answers: Release dates to the second, the clearsigned shape, the
 * Release fields, gpgv's status lines to each verdict, a key file's
 * fingerprints (a fixture key that gpg made, with a signing subkey, whose
 * fingerprints gpg printed), and dpkg's order for "the newest version"
 * (digit runs longer than any integer type included), and an index read
 * through its compression: empty, plain and gzip read back, damaged gzip
 * data refused with what is wrong with it; and the base64 a channel's keys
 * and signatures are written in, decoded without libcrypto and checked
 * against libcrypto's encoder.
 *
 *   test_apt_trust FIXTURE_KEY.gpg FIXTURE_KEY.asc
 */
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "core/channel.h"
#include "check.h"
#include "core/debindex.h"
#include "core/gpgstatus.h"
#include "core/inrelease.h"
#include "core/mem.h"
#include "core/pgpkey.h"
#include "core/version.h"

#define FIXTURE_FPR "BAD029A5A4B8D6EFF824DB8936F040286435E1CE"
#define FPR_A "3E915D75C15C2DF47469BFD55645FEAC878326F8"
#define FPR_B "B8E5F13176D2A7A75220028078DBA3BC47EF2265"

static void check_dates(void)
{
	static const struct {
		const char *text;
		long long want; /* -1: refused */
	} cases[] = {
		{"Fri, 30 Oct 2026 08:08:01 UTC", 1793347681},
		{"30 Oct 2026 08:08:01 +0100", 1793344081},
		{"Tue, 1 Jan 2030 01:02:03 -0930", 1893493923},
		{"Mon, 29 Feb 2028 23:59:59 GMT", 1835481599},
		{"1 Jan 1970 00:00:00 Z", 0},
		{"29 Feb 2027 00:00:00 UTC", -1},   /* not a leap year */
		{"31 Apr 2026 00:00:00 UTC", -1},
		{"30 Oct 2026 24:00:00 UTC", -1},
		{"30 Oct 2026 08:08:01", -1},       /* no zone */
		{"30 Oct 2026 08:08:01 CEST", -1},
		{"30 Okt 2026 08:08:01 UTC", -1},
		{"30 Oct 2026 08:08:01 UTC extra", -1},
		{"2026-10-30T08:08:01Z", -1},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t t = -1;
		bool ok = cfa_release_date_parse(cases[i].text, strlen(cases[i].text), &t);
		CHECK(cases[i].want < 0 ? !ok : ok && t == cases[i].want, "%s: %s, %lld",
		      cases[i].text, ok ? "read" : "refused", (long long)t);
	}
}

#define SIGNATURE "-----BEGIN PGP SIGNATURE-----\n\niHUEARYIAB0=\n=abcd\n" \
                  "-----END PGP SIGNATURE-----\n"
#define RELEASE                                                                         \
	"Origin: cfapkg\nSuite: unstable\nCodename: sid\n"                                \
	"Date: Fri, 30 Oct 2026 08:08:01 UTC\nValid-Until: Fri, 06 Nov 2026 08:08:01 UTC\n" \
	"Acquire-By-Hash: yes\nSHA256:\n"                                                 \
	" 28476C952CD0732E0BA28E3C14FBB9A8BEB412EB2B3CB96BF9D067D54CAACF1B 10824484 "     \
	"main/binary-amd64/Packages.xz\n"                                                 \
	" db5df6f8c6ff9c8e2e90907c9c7bd55512715433e978d3b94600842e74c3d31b    64988655 "  \
	"main/binary-amd64/Packages\n"
#define SIGNED "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n" RELEASE SIGNATURE

static bool framed(const char *text)
{
	const char *why = NULL;

	return cfa_clearsign_framed(text, strlen(text), &why);
}

static void check_frame(void)
{
	CHECK(framed(SIGNED), "one clearsigned message");
	CHECK(framed(SIGNED "\n\n"), "blank lines after it");
	CHECK(!framed("x\n" SIGNED), "text before it");
	CHECK(!framed(SIGNED "Origin: evil\n"), "text after it");
	CHECK(!framed(SIGNED SIGNED), "two messages");
	CHECK(framed("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n- -dashed\n" SIGNATURE),
	      "a dash-escaped line");
	CHECK(!framed("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n-x\n" SIGNATURE),
	      "a line starting with '-' not escaped");
	CHECK(!framed("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n" RELEASE),
	      "no signature block");
}

static bool parses(const char *text, struct cfa_release *r, const char **why)
{
	return cfa_release_parse(text, strlen(text), r, why);
}

static void check_release(void)
{
	struct cfa_release r;
	const char *why = NULL;
	char sha[65];
	uint64_t size = 0;

	CHECK(parses(RELEASE, &r, &why), "Release: %s", why);
	CHECK(r.date == 1793347681 && r.valid_until == 1793347681 + 7 * 86400 && r.by_hash,
	      "Date %lld, Valid-Until %lld", (long long)r.date, (long long)r.valid_until);
	CHECK(r.codename.n == 3 && memcmp(r.codename.s, "sid", 3) == 0 && r.suite.n == 8,
	      "Suite and Codename");
	CHECK(cfa_release_find(&r, "main/binary-amd64/Packages.xz", sha, &size) && size == 10824484 &&
	      strcmp(sha, "28476c952cd0732e0ba28e3c14fbb9a8beb412eb2b3cb96bf9d067d54caacf1b") == 0,
	      "Packages.xz: %s %llu", sha, (unsigned long long)size);
	CHECK(cfa_release_find(&r, "main/binary-amd64/Packages", sha, &size) && size == 64988655,
	      "Packages, aligned with more blanks");
	CHECK(!cfa_release_find(&r, "main/binary-amd64/Packages.gz", sha, &size), "not listed");
	CHECK(!parses("Suite: sid\n", &r, &why) && strstr(why, "no Date"), "no Date: %s", why);
	CHECK(!parses(RELEASE "Date: Sat, 31 Oct 2026 08:08:01 UTC\n", &r, &why) &&
	      strstr(why, "twice"), "Date twice: %s", why);
	CHECK(!parses("Date: Fri, 30 Oct 2026 08:08:01 UTC\nSHA256:\n nothex 1 x\n", &r, &why) &&
	      strstr(why, "HEX SIZE PATH"), "a bad list line: %s", why);
}

/* One signature's status lines. */
static void sig(char *out, size_t len, const char *result, const char *fpr, int hash,
                const char *primary)
{
	size_t n = strlen(out);

	snprintf(out + n, len - n, "[GNUPG:] NEWSIG\n[GNUPG:] %s %s x <x@example.org>\n", result,
	         fpr + 24);
	n = strlen(out);
	if (strcmp(result, "BADSIG") != 0)
		snprintf(out + n, len - n, "[GNUPG:] VALIDSIG %s 2026-10-30 1793347767 0 4 0 22 %d 01 %s\n",
		         fpr, hash, primary ? primary : fpr);
}

static enum cfa_gpg_verdict verdict(const char *text, const char *pin)
{
	struct cfa_gpg_status st;
	int which;

	cfa_gpg_status_parse(text, strlen(text), &st);
	return cfa_gpg_judge(&st, pin, &which);
}

static void check_verdicts(void)
{
	static const struct {
		const char *result, *pin;
		int hash;
		enum cfa_gpg_verdict want;
	} one[] = {
		{"GOODSIG", FPR_A, 8, CFA_GPG_ACCEPTED},     {"GOODSIG", NULL, 10, CFA_GPG_ACCEPTED},
		{"GOODSIG", FPR_B, 8, CFA_GPG_OTHER_KEY},    {"GOODSIG", FPR_A, 2, CFA_GPG_WEAK_HASH},
		{"EXPSIG", FPR_A, 8, CFA_GPG_SIG_EXPIRED},   {"EXPKEYSIG", FPR_A, 8, CFA_GPG_KEY_EXPIRED},
		{"REVKEYSIG", FPR_A, 8, CFA_GPG_KEY_REVOKED}, {"BADSIG", FPR_A, 8, CFA_GPG_BAD},
	};
	char text[2048];
	size_t i;

	for (i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		snprintf(text, sizeof(text), "[GNUPG:] PLAINTEXT 74 0 \n");
		sig(text, sizeof(text), one[i].result, FPR_A, one[i].hash, NULL);
		CHECK(verdict(text, one[i].pin) == one[i].want, "%s (hash %d) for %s: %d",
		      one[i].result, one[i].hash, one[i].pin ? one[i].pin : "any", verdict(text,
		                                                                          one[i].pin));
	}
	snprintf(text, sizeof(text), "[GNUPG:] PLAINTEXT 74 0 \n");
	sig(text, sizeof(text), "GOODSIG", FPR_B, 8, FPR_A);
	CHECK(verdict(text, FPR_A) == CFA_GPG_ACCEPTED, "by a subkey of the pinned key");
	sig(text, sizeof(text), "BADSIG", FPR_A, 8, NULL);
	CHECK(verdict(text, FPR_A) == CFA_GPG_BAD, "a good and a bad signature");
	snprintf(text, sizeof(text), "[GNUPG:] PLAINTEXT 74 0 \n[GNUPG:] NEWSIG\n[GNUPG:] ERRSIG "
	         "5645FEAC878326F8 22 8 01 1796154908 9 " FPR_A "\n[GNUPG:] NO_PUBKEY "
	         "5645FEAC878326F8\n");
	CHECK(verdict(text, NULL) == CFA_GPG_UNKNOWN_KEY, "a key the keyring lacks");
	sig(text, sizeof(text), "GOODSIG", FPR_B, 8, NULL);
	CHECK(verdict(text, FPR_B) == CFA_GPG_ACCEPTED, "one unknown key beside a good one");
	snprintf(text, sizeof(text), "[GNUPG:] PLAINTEXT 74 0 \n[GNUPG:] PLAINTEXT 74 0 \n");
	sig(text, sizeof(text), "GOODSIG", FPR_A, 8, NULL);
	CHECK(verdict(text, FPR_A) == CFA_GPG_NOT_ONE, "two messages");
	CHECK(verdict("", NULL) == CFA_GPG_UNSIGNED, "no status at all");
}

static void check_key_file(const char *path, const char *label)
{
	FILE *f = fopen(path, "rb");
	char data[8192];
	size_t len = f ? fread(data, 1, sizeof(data), f) : 0, n = 0;
	unsigned char *bin = NULL;
	size_t blen = 0;
	struct cfa_pgp_key keys[4];
	const char *why = NULL;

	if (f)
		fclose(f);
	CHECK(len > 0 && cfa_pgp_dearmor(data, len, &bin, &blen, &why), "%s: %s", label, why);
	CHECK(bin && cfa_pgp_keys(bin, blen, keys, &n, &why) && n == 1 &&
	      strcmp(keys[0].fpr, FIXTURE_FPR) == 0 && keys[0].off == 0 && keys[0].len == blen,
	      "%s: one primary key, %s, its subkey within it (%zu keys)", label,
	      n ? keys[0].fpr : "-", n);
	cfa_free(bin);
}

static void check_deb_order(void)
{
	static const char *const ordered[] = {"1.0~rc1-1", "1.0-1", "1.0-1.1", "1.9-1",
	                                      "1.10-1", "1.10-1+b1", "1.4294967301-1",
	                                      "1.20240101123456789012-1", "1:0.1-1"};
	size_t i;

	for (i = 0; i + 1 < sizeof(ordered) / sizeof(ordered[0]); i++)
		CHECK(cfa_deb_version_cmp(ordered[i], strlen(ordered[i]), ordered[i + 1],
		                          strlen(ordered[i + 1])) < 0 &&
		          cfa_deb_version_cmp(ordered[i + 1], strlen(ordered[i + 1]), ordered[i],
		                              strlen(ordered[i])) > 0,
		      "%s < %s", ordered[i], ordered[i + 1]);
	CHECK(cfa_deb_name_valid("hip-runtime-amd", 15) && !cfa_deb_name_valid("Hip", 3) &&
	      !cfa_deb_name_valid("a", 1), "Debian package names");
}

/* Writes bytes to a file in the working folder and reads it back as an
 * index; returns whether it was read, and checks the text when it was. */
static bool read_back(const char *bytes, size_t n, const char *want, const char *why)
{
	static const char path[] = "rawread-case.bin";
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	FILE *f = fopen(path, "wb");
	char *text = NULL;
	size_t len = 0;
	bool ok;

	CHECK(ctx && f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
	ok = cfa_read_decompressed(ctx, path, path, 1 << 20, &text, &len) == CFAPKG_E_OK;
	if (ok && want)
		CHECK(len == strlen(want) && memcmp(text, want, len) == 0, "read back: \"%.*s\"",
		      (int)len, text);
	if (!ok && why)
		CHECK(strstr(cfapkg_ctx_error(ctx), why) && strstr(cfapkg_ctx_error(ctx), path),
		      "error: %s", cfapkg_ctx_error(ctx));
	cfa_free(text);
	cfapkg_ctx_free(ctx);
	remove(path);
	return ok;
}

static void check_decompressed(void)
{
	/* gzip -n of "Package: x\n" (no name, no time) */
	static const char gz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x0b\x48\x4c\xce\x4e"
	                         "\x4c\x4f\xb5\x52\xa8\xe0\x02\x00\x41\xc6\x79\x0c\x0b\x00\x00\x00";
	/* gzip's header whole, then a deflate stream that is not one */
	static const char damaged[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xff\xff\xff\xff";

	CHECK(read_back("", 0, "", NULL), "an empty file reads as an empty index");
	CHECK(read_back("Package: x\n", 11, "Package: x\n", NULL), "a plain index reads as itself");
	CHECK(read_back(gz, sizeof(gz) - 1, "Package: x\n", NULL), "a gzip index reads decompressed");
	/* Named as what it is, not as a file that cannot be opened. */
	CHECK(!read_back(damaged, sizeof(damaged) - 1, NULL, "gzip"),
	      "damaged gzip data is refused, and the error names gzip and the file");
}

/* Every length from 0 to 70 bytes round-trips; text that is not exactly
 * the encoding of the wanted length is refused. */
static void check_base64(void)
{
	static const char *bad[] = {"", "QQ", "QQ=", "Q===", "QQ==QQ==", "Q Q=", "QR==", "QUJ=",
	                            "QUJD", "Q@==", "=QQ="};
	unsigned char in[70], out[72];
	char text[100];
	size_t n, i, ok = 0;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 37 + 11);
	for (n = 1; n <= sizeof(in); n++) {
		cfa_b64_encode(in, n, text);
		ok += cfa_b64_decode(text, out, n) && memcmp(in, out, n) == 0 &&
		      !cfa_b64_decode(text, out, n + 1) && !cfa_b64_decode(text, out, n - 1);
	}
	CHECK(ok == sizeof(in), "%zu of %zu lengths round-trip", ok, sizeof(in));
	/* "QQ==" is one byte, 'A'; "QR==" and "QUJ=" leave bits set past theirs. */
	CHECK(cfa_b64_decode("QQ==", out, 1) && out[0] == 'A', "\"QQ==\" is 'A'");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		CHECK(!cfa_b64_decode(bad[i], out, 1) && !cfa_b64_decode(bad[i], out, 2),
		      "\"%s\" is refused", bad[i]);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_apt_trust FIXTURE_KEY.gpg FIXTURE_KEY.asc\n");
		return 2;
	}
	check_dates();
	check_frame();
	check_release();
	check_verdicts();
	check_key_file(argv[1], "binary");
	check_key_file(argv[2], "armored");
	check_deb_order();
	check_decompressed();
	check_base64();
	return check_report();
}
