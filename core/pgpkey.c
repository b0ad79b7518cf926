/*
 * pgpkey.c - OpenPGP armor and key packets, read only as far as naming a
 * key needs.  Armor is base64 between BEGIN and END lines, after armor
 * headers and an empty line; its "=XXXX" checksum line is skipped, as RFC
 * 9580 says a reader must not reject on it (the fingerprint is the check
 * that counts).  A packet starts with a header byte with bit 7 set: the
 * new format (bit 6) gives the tag in its low six bits and a one, two or
 * five byte length; the old format the tag in bits 5-2 and a length whose
 * size bits 1-0 give.  Key packets never use partial or indeterminate
 * lengths, so those are refused.  A version 4 key's fingerprint is the
 * SHA-1 of 0x99, the body's two-byte length and the body; versions 5 and
 * 6 use SHA-256 over 0x9A / 0x9B and a four-byte length.
 */
#include "core/pgpkey.h"

#include <openssl/evp.h>
#include <string.h>

#include "core/mem.h"

enum { TAG_SECRET_KEY = 5, TAG_PUBLIC_KEY = 6 };

/* Always false, so that a check and its reason read as one return; a NULL
 * reason means out of memory. */
static bool refuse(const char **why, const char *reason)
{
	*why = reason;
	return false;
}

struct packet {
	unsigned tag;
	size_t body;               /* offset of the body */
	size_t len;                /* its length */
};

static bool new_length(const unsigned char *p, size_t n, size_t off, struct packet *pk,
                       const char **why)
{
	unsigned o1;

	if (off + 1 >= n)
		return refuse(why, "a packet header runs past the end");
	o1 = p[off + 1];
	/* One byte below 192, two from 192 to 223, and 255 then four; 224 to
	 * 254 are partial lengths.  Each branch checks that its length bytes
	 * are there before reading them, so a cut file never reads past n. */
	if (o1 < 192) {
		pk->body = off + 2, pk->len = o1;
	} else if (o1 < 224) {
		if (off + 2 >= n)
			return refuse(why, "a packet header runs past the end");
		pk->body = off + 3, pk->len = ((size_t)(o1 - 192) << 8) + p[off + 2] + 192;
	} else if (o1 == 255) {
		if (off + 5 >= n)
			return refuse(why, "a packet header runs past the end");
		pk->body = off + 6;
		pk->len = (size_t)p[off + 2] << 24 | (size_t)p[off + 3] << 16 |
		          (size_t)p[off + 4] << 8 | p[off + 5];
	} else {
		return refuse(why, "a packet has a partial length, which no key packet uses");
	}
	return true;
}

static bool old_length(const unsigned char *p, size_t n, size_t off, struct packet *pk,
                       const char **why)
{
	unsigned type = p[off] & 3, bytes = type == 0 ? 1 : type == 1 ? 2 : 4, i;

	/* Bits 1-0: one, two or four length bytes, or 3 for a length the packet
	 * does not give. */
	if (type == 3)
		return refuse(why, "a packet has an indeterminate length, which no key packet uses");
	if (off + bytes >= n)
		return refuse(why, "a packet header runs past the end");
	pk->len = 0;
	for (i = 0; i < bytes; i++)
		pk->len = pk->len << 8 | p[off + 1 + i];
	pk->body = off + 1 + bytes;
	return true;
}

/* The packet at off: its tag and body, checked to end within n. */
static bool packet_at(const unsigned char *p, size_t n, size_t off, struct packet *pk,
                      const char **why)
{
	bool ok;

	if (!(p[off] & 0x80))
		return refuse(why, "a byte that should start a packet does not (not OpenPGP data)");
	if (p[off] & 0x40) {
		pk->tag = p[off] & 0x3f;
		ok = new_length(p, n, off, pk, why);
	} else {
		pk->tag = (p[off] >> 2) & 0x0f;
		ok = old_length(p, n, off, pk, why);
	}
	/* Compared as len > n - body, not body + len > n, so that a huge length
	 * cannot wrap round. */
	if (ok && pk->len > n - pk->body)
		return refuse(why, "a packet runs past the end of the file");
	return ok;
}

/* Upper-case, as gpg prints fingerprints, so that one read off its output
 * compares as it is. */
static void to_hex(const unsigned char *md, size_t n, char *out)
{
	static const char digits[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The fingerprint of the public key packet body b[0, len). */
static bool fingerprint(const unsigned char *b, size_t len, char out[CFA_PGP_FPR_MAX + 1],
                        const char **why)
{
	unsigned char head[5], md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	size_t hlen;
	EVP_MD_CTX *c;
	bool ok;

	if (len < 1 || (b[0] != 4 && b[0] != 5 && b[0] != 6))
		return refuse(why, "a key is of an OpenPGP version other than 4, 5 or 6");
	if (b[0] == 4 && len > 0xffff)
		return refuse(why, "a version 4 key packet is longer than its format allows");
	/* The packet's length goes into the hash as two bytes for version 4 and
	 * four for the later ones; the head is what RFC 9580 puts before the
	 * body. */
	if (b[0] == 4) {
		head[0] = 0x99, head[1] = (unsigned char)(len >> 8), head[2] = (unsigned char)len;
		hlen = 3;
	} else {
		head[0] = b[0] == 5 ? 0x9a : 0x9b;
		head[1] = (unsigned char)(len >> 24), head[2] = (unsigned char)(len >> 16);
		head[3] = (unsigned char)(len >> 8), head[4] = (unsigned char)len;
		hlen = 5;
	}
	if (!(c = EVP_MD_CTX_new()))
		return refuse(why, NULL);
	ok = EVP_DigestInit_ex(c, b[0] == 4 ? EVP_sha1() : EVP_sha256(), NULL) == 1 &&
	     EVP_DigestUpdate(c, head, hlen) == 1 && EVP_DigestUpdate(c, b, len) == 1 &&
	     EVP_DigestFinal_ex(c, md, &mdlen) == 1 && mdlen <= CFA_PGP_FPR_MAX / 2;
	EVP_MD_CTX_free(c);
	if (!ok)
		return refuse(why, "the fingerprint could not be computed");
	to_hex(md, mdlen, out);
	return true;
}

bool cfa_pgp_keys(const unsigned char *p, size_t n, struct cfa_pgp_key *keys, size_t *nkeys,
                  const char **why)
{
	struct packet pk;
	size_t off = 0;

	*nkeys = 0;
	while (off < n) {
		if (!packet_at(p, n, off, &pk, why))
			return false;
		/* A secret key is refused, never skipped: the file was exported
		 * wrongly, and no secret material is to be kept in the root. */
		if (pk.tag == TAG_SECRET_KEY)
			return refuse(why, "it holds a secret key (export only the public key)");
		/* Only a primary key starts a key.  User IDs, signatures and
		 * subkeys after it are part of it, which is why its length runs
		 * on below. */
		if (pk.tag == TAG_PUBLIC_KEY) {
			if (*nkeys == CFA_PGP_KEYS_MAX)
				return refuse(why, "it holds more keys than cfapkg reads from one file");
			if (!fingerprint(p + pk.body, pk.len, keys[*nkeys].fpr, why))
				return false;
			keys[*nkeys].off = off;
			(*nkeys)++;
		}
		off = pk.body + pk.len;
		/* A key runs to the next primary key or the end. */
		if (*nkeys)
			keys[*nkeys - 1].len = off - keys[*nkeys - 1].off;
	}
	return true;
}

bool cfa_pgp_fpr_valid(const char *s)
{
	size_t n = strlen(s), i;

	/* 40 digits for a version 4 key's SHA-1, 64 for the SHA-256 of versions
	 * 5 and 6; either case, as people copy them. */
	if (n != 40 && n != 64)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

struct armor_reader {
	const char *text, *end;
	EVP_ENCODE_CTX *dec;
	unsigned char *out;
	size_t len;
};

static bool take_line(const char **s, const char *end, const char **line, size_t *n)
{
	const char *nl;

	if (*s >= end)
		return false;
	nl = memchr(*s, '\n', (size_t)(end - *s));
	*line = *s;
	*n = (size_t)((nl ? nl : end) - *s);
	*s = nl ? nl + 1 : end;
	/* Trailing blanks and a "\r" are dropped: armor copied from a web page
	 * or a mail often carries them, and they are no part of the base64. */
	while (*n && ((*line)[*n - 1] == '\r' || (*line)[*n - 1] == ' ' || (*line)[*n - 1] == '\t'))
		(*n)--;
	return true;
}

static bool starts(const char *line, size_t n, const char *s)
{
	return n >= strlen(s) && memcmp(line, s, strlen(s)) == 0;
}

/* One block's body, from after its BEGIN line to its END line. */
static bool armor_block(struct armor_reader *r, const char **s, const char **why)
{
	const char *line;
	size_t n;
	bool headers = true;
	int outl;

	EVP_DecodeInit(r->dec);
	while (take_line(s, r->end, &line, &n)) {
		if (starts(line, n, "-----END PGP PUBLIC KEY BLOCK-----")) {
			if (EVP_DecodeFinal(r->dec, r->out + r->len, &outl) < 0)
				return refuse(why, "its armored key is not valid base64");
			r->len += (size_t)outl;
			return true;
		}
		/* Armor headers ("Comment: ...") end with an empty line. */
		if (headers && (n == 0 || memchr(line, ':', n))) {
			headers = n != 0;
			continue;
		}
		headers = false;
		if (n && line[0] == '=') /* the checksum line */
			continue;
		if (n > 0x7fffffff ||
		    EVP_DecodeUpdate(r->dec, r->out + r->len, &outl, (const unsigned char *)line,
		                     (int)n) < 0)
			return refuse(why, "its armored key is not valid base64");
		r->len += (size_t)outl;
	}
	return refuse(why, "an armored key block has no END line");
}

static bool armor_blocks(struct armor_reader *r, const char **why)
{
	const char *s = r->text, *line;
	size_t n;
	bool any = false;

	while (take_line(&s, r->end, &line, &n)) {
		if (!starts(line, n, "-----BEGIN PGP PUBLIC KEY BLOCK-----"))
			continue;
		if (!armor_block(r, &s, why))
			return false;
		any = true;
	}
	if (!any)
		*why = "it is neither an OpenPGP key nor an armored one (no \"-----BEGIN PGP "
		       "PUBLIC KEY BLOCK-----\")";
	return any;
}

bool cfa_pgp_dearmor(const char *data, size_t len, unsigned char **out, size_t *outlen,
                     const char **why)
{
	struct armor_reader r = {data, data + len, NULL, NULL, 0};
	bool ok;

	*out = NULL;
	*why = NULL;
	/* A binary key starts with a packet header, whose top bit is set; armor
	 * is ASCII text.  A binary key is copied as it is. */
	if (len && ((const unsigned char *)data)[0] & 0x80) {
		if (!(r.out = cfa_malloc(len)))
			return false;
		memcpy(r.out, data, len);
		*out = r.out;
		*outlen = len;
		return true;
	}
	/* Base64 gives at most 3 bytes per 4 characters; one more block of
	 * room for what the decoder keeps back. */
	if (!(r.out = cfa_malloc(len / 4 * 3 + 80)))
		return false;
	if (!(r.dec = EVP_ENCODE_CTX_new())) {
		cfa_free(r.out);
		return false;
	}
	ok = armor_blocks(&r, why);
	EVP_ENCODE_CTX_free(r.dec);
	if (!ok) {
		cfa_free(r.out);
		return false;
	}
	*out = r.out;
	*outlen = r.len;
	return true;
}
