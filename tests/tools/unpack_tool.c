/*
 * unpack_tool.c - drives cfapkg_unpack for the archive tests:
 *   unpack_tool ROOT ARCHIVE FORMAT NAME [STRIP [MAX_BYTES]]
 * prints one JSON object and exits 0 on success, 1 on a refusal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"

static unsigned long long number(const char *s)
{
	unsigned long long v = 0;

	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (unsigned)(*s - '0');
	return v;
}

int main(int argc, char **argv)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_unpack_opts opts;
	struct cfapkg_unpack_result res;
	enum cfapkg_err e;
	const char *p;

	if (argc < 5 || !ctx) {
		fprintf(stderr, "usage: unpack_tool ROOT ARCHIVE FORMAT NAME [STRIP [MAX_BYTES]]\n");
		return 2;
	}
	memset(&opts, 0, sizeof(opts));
	if (argc > 5)
		opts.strip = (unsigned)number(argv[5]);
	if (argc > 6)
		opts.max_bytes = number(argv[6]);
	cfapkg_ctx_set_root(ctx, argv[1]);
	e = cfapkg_unpack(ctx, argv[2], argv[3], argv[4], &opts, &res);
	printf("{\"ok\": %s, \"path\": \"", e ? "false" : "true");
	for (p = res.path; *p; p++)
		putchar(*p == '\\' ? '/' : *p);
	printf("\", \"files\": %llu, \"bytes\": %llu, \"existed\": %s, \"error\": \"",
	       (unsigned long long)res.files, (unsigned long long)res.bytes,
	       res.existed ? "true" : "false");
	for (p = cfapkg_ctx_error(ctx); *p; p++)
		putchar(*p == '"' || *p == '\\' ? '\'' : *p);
	printf("\"}\n");
	cfapkg_ctx_free(ctx);
	return e ? 1 : 0;
}
