/*
 * digest.c - SHA-256 of files, streamed through OpenSSL's EVP interface in
 * fixed-size blocks (never the whole file in memory), and of small texts
 * already in memory.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define BLOCK (256u * 1024u)

void cfa_sha256_hex(const unsigned char *md, char hex[65])
{
	/* Lower case, the case of the cache's file names. */
	static const char digits[] = "0123456789abcdef";
	unsigned i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

bool cfa_sha256_buf(const void *data, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;

	/* SHA-256 is always 32 bytes; the check keeps the hex conversion from
	 * reading past what was written. */
	if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
		return false;
	cfa_sha256_hex(md, hex);
	return true;
}

enum cfapkg_err cfapkg_sha256_file(struct cfapkg_ctx *ctx, const char *path, char hex[65],
                                   uint64_t *size)
{
	/* One block per call, so threads may hash files at the same time. */
	unsigned char *buf = cfa_malloc(BLOCK);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	uint64_t total = 0;
	enum cfapkg_err e = CFAPKG_E_OK;
	EVP_MD_CTX *md_ctx;
	FILE *f;
	size_t n;

	if (!buf)
		return cfa_nomem(ctx);
	f = cfa_plat_fopen(path, "rb");
	if (!f) {
		cfa_free(buf);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot open: %s", path,
		                cfa_plat_strerror(errno));
	}
	md_ctx = EVP_MD_CTX_new();
	if (!md_ctx || EVP_DigestInit_ex(md_ctx, EVP_sha256(), NULL) != 1) {
		e = cfa_fail(ctx, CFAPKG_E_NOMEM, "cannot start SHA-256 (OpenSSL)");
		goto out;
	}
	/* A read error ends the loop as the end of the file would; ferror below
	 * tells them apart. */
	while ((n = fread(buf, 1, BLOCK, f)) > 0) {
		if (EVP_DigestUpdate(md_ctx, buf, n) != 1) {
			e = cfa_fail(ctx, CFAPKG_E_IO, "SHA-256 update failed (OpenSSL)");
			goto out;
		}
		total += n;
	}
	if (ferror(f)) {
		e = cfa_fail(ctx, CFAPKG_E_IO, "%s: read error", path);
		goto out;
	}
	if (EVP_DigestFinal_ex(md_ctx, md, &mdlen) != 1 || mdlen != 32) {
		e = cfa_fail(ctx, CFAPKG_E_IO, "SHA-256 final failed (OpenSSL)");
		goto out;
	}
	cfa_sha256_hex(md, hex);
	if (size)
		*size = total;
out:
	EVP_MD_CTX_free(md_ctx);
	fclose(f);
	cfa_free(buf);
	return e;
}


void cfapkg_artifact_set_digest(const struct cfapkg_artifact *artifacts, size_t n,
                                char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	EVP_MD_CTX *md_ctx = EVP_MD_CTX_new();
	bool ok = md_ctx && EVP_DigestInit_ex(md_ctx, EVP_sha256(), NULL) == 1;
	size_t i;

	/* One line per archive: what it is and how it is unpacked, so that a
	 * set unpacked differently is another store folder. */
	for (i = 0; ok && i < n; i++) {
		/* 64 digits, a format name and a number: a line too long fails
		 * the digest rather than being cut into another one. */
		char line[128];
		ok = cfa_snprintf(line, sizeof(line), "%s %s %u\n", artifacts[i].sha256,
		                  artifacts[i].format, artifacts[i].strip) &&
		     EVP_DigestUpdate(md_ctx, line, strlen(line)) == 1;
	}
	ok = ok && EVP_DigestFinal_ex(md_ctx, md, &mdlen) == 1 && mdlen == 32;
	EVP_MD_CTX_free(md_ctx);
	/* Empty on failure: no digest, never a wrong one. */
	if (ok)
		cfa_sha256_hex(md, hex);
	else
		hex[0] = '\0';
}
