/*
 * inrelease_tool.c - checks an InRelease file as an APT source followed
 * by its key does (trans/aptrelease.c), at a time given on the command
 * line, so that a real Debian InRelease with a Valid-Until a week after
 * it was fetched can be judged as of the moment it was valid:
 *
 *   inrelease_tool ROOT KEYRING SUITE NOW INRELEASE [--fingerprint FPR]
 *                  [--index PATH FILE]
 *
 * NOW: seconds since 1970.  Prints "accepted SIGNER DATE VALID_UNTIL",
 * then with --index "index ok" when FILE has the SHA-256 and size the
 * InRelease lists for PATH; a refusal prints "refused: REASON".  Exit 0
 * when all holds, 9 on a refusal, 2 on bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "cfapkg.h"
#include "core/channel.h"
#include "core/json.h"
#include "core/mem.h"
#include "trans/apttrust.h"

static bool number(const char *s, long long *v)
{
	*v = 0;
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || *v > 922337203685477580LL)
			return false;
		*v = *v * 10 + (*s - '0');
	}
	return true;
}

/* FILE against the InRelease's entry for PATH. */
static int check_index(struct cfapkg_ctx *ctx, const struct cfa_apt_release *r, const char *path,
                       const char *file)
{
	char want[65], got[65];
	uint64_t size = 0, got_size = 0;

	if (!cfa_release_find(&r->rel, path, want, &size)) {
		printf("refused: the InRelease lists no %s\n", path);
		return 9;
	}
	if (cfapkg_sha256_file(ctx, file, got, &got_size)) {
		printf("error: %s\n", cfapkg_ctx_error(ctx));
		return 1;
	}
	if (strcmp(want, got) != 0 || size != got_size) {
		printf("refused: %s has SHA-256 %s and %llu bytes, the InRelease lists %s and %llu\n",
		       file, got, (unsigned long long)got_size, want, (unsigned long long)size);
		return 9;
	}
	printf("index ok\n");
	return 0;
}

static int run(struct cfapkg_ctx *ctx, const struct cfa_apt_check *c, const char *file,
               const char *index_path, const char *index_file)
{
	struct cfa_apt_release r;
	char *data = NULL, date[32], until[32] = "-";
	size_t len = 0;
	int rc = 0;

	if (cfa_read_file(ctx, file, &data, &len) || cfa_apt_release_check(ctx, c, data, len, &r,
	                                                                       NULL)) {
		printf("refused: %s\n", cfapkg_ctx_error(ctx));
		cfa_free(data);
		return 9;
	}
	cfa_utc_format(r.rel.date, date);
	if (r.rel.valid_until)
		cfa_utc_format(r.rel.valid_until, until);
	printf("accepted %s %s %s\n", r.signer, date, until);
	if (index_path)
		rc = check_index(ctx, &r, index_path, index_file);
	cfa_apt_release_free(&r);
	cfa_free(data);
	return rc;
}

int main(int argc, char **argv)
{
	struct cfa_apt_check c;
	const char *index_path = NULL, *index_file = NULL;
	struct cfapkg_ctx *ctx;
	long long now;
	int i, rc;

	if (argc < 6 || !number(argv[4], &now)) {
		fprintf(stderr, "usage: inrelease_tool ROOT KEYRING SUITE NOW INRELEASE "
		        "[--fingerprint FPR] [--index PATH FILE]\n");
		return 2;
	}
	memset(&c, 0, sizeof(c));
	c.label = argv[5], c.keyring = argv[2], c.suite = argv[3], c.now = now;
	for (i = 6; i < argc; i++)
		if (strcmp(argv[i], "--fingerprint") == 0 && i + 1 < argc)
			c.fingerprint = argv[++i];
		else if (strcmp(argv[i], "--index") == 0 && i + 2 < argc)
			index_path = argv[i + 1], index_file = argv[i + 2], i += 2;
		else
			return 2;
	if (!(ctx = cfapkg_ctx_new()) || cfapkg_ctx_set_root(ctx, argv[1]))
		return 1;
	rc = run(ctx, &c, argv[5], index_path, index_file);
	cfapkg_ctx_free(ctx);
	return rc;
}
