/*
 * unpack_tool.c - drives the unpacker for the archive tests:
 *   unpack_tool [--stream] ROOT ARCHIVE FORMAT NAME [STRIP [MAX_BYTES]]
 * prints one JSON object and exits 0 on success, 1 on a refusal.
 * --stream unpacks the way a download does: the archive is read front to
 * back as if it were arriving (the file being its own .part), and when
 * that gives up the file is unpacked as after a download; "streamed" says
 * which of the two put the folder in the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cfapkg.h"
#include "platform/platform.h"

static unsigned long long number(const char *s)
{
	unsigned long long v = 0;

	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (unsigned)(*s - '0');
	return v;
}

/* As a download would: stream first, and fall back on the whole file. */
static enum cfapkg_err unpack_streamed(struct cfapkg_ctx *ctx, const char *archive,
                                       const char *format, const char *name,
                                       struct cfapkg_unpack_opts *opts,
                                       struct cfapkg_unpack_result *res, int *streamed)
{
	long long size = cfa_plat_file_size(archive);
	struct cfa_stream *s = NULL;

	*streamed = 0;
	opts->hash_checked = true; /* a streamed download is always pinned */
	opts->label = archive;
	if (size >= 0 && cfa_stream_start(ctx, format, name, opts, (uint64_t)size, archive, &s) ==
	                     CFAPKG_E_OK) {
		cfa_stream_feed(s, (uint64_t)size, true);
		if (cfa_stream_finish(s, true, archive, false, res) == CFAPKG_E_OK) {
			*streamed = 1;
			return CFAPKG_E_OK;
		}
	}
	return cfapkg_unpack(ctx, archive, format, name, opts, res);
}

int main(int argc, char **argv)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_unpack_opts opts;
	struct cfapkg_unpack_result res;
	enum cfapkg_err e;
	int stream = argc > 1 && strcmp(argv[1], "--stream") == 0, streamed = 0;
	const char *p;

	argv += stream;
	argc -= stream;
	if (argc < 5 || !ctx) {
		fprintf(stderr, "usage: unpack_tool [--stream] ROOT ARCHIVE FORMAT NAME "
		                "[STRIP [MAX_BYTES]]\n");
		return 2;
	}
	memset(&opts, 0, sizeof(opts));
	memset(&res, 0, sizeof(res));
	if (argc > 5)
		opts.strip = (unsigned)number(argv[5]);
	if (argc > 6)
		opts.max_bytes = number(argv[6]);
	cfapkg_ctx_set_root(ctx, argv[1]);
	if (stream)
		e = unpack_streamed(ctx, argv[2], argv[3], argv[4], &opts, &res, &streamed);
	else
		e = cfapkg_unpack(ctx, argv[2], argv[3], argv[4], &opts, &res);
	printf("{\"ok\": %s, \"streamed\": %s, \"path\": \"", e ? "false" : "true",
	       streamed ? "true" : "false");
	for (p = res.path ? res.path : ""; *p; p++)
		putchar(*p == '\\' ? '/' : *p);
	printf("\", \"files\": %llu, \"bytes\": %llu, \"existed\": %s, \"error\": \"",
	       (unsigned long long)res.files, (unsigned long long)res.bytes,
	       res.existed ? "true" : "false");
	for (p = cfapkg_ctx_error(ctx); *p; p++)
		putchar(*p == '"' || *p == '\\' ? '\'' : *p);
	printf("\"}\n");
	cfapkg_unpack_result_clear(&res);
	cfapkg_ctx_free(ctx);
	return e ? 1 : 0;
}
