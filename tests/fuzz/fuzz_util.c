/*
 * fuzz_util.c - scratch files and property failures for the harnesses.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"
#include "tests/fuzz/fuzz.h"

static char scratch[1024];

static void remove_scratch(void)
{
	if (scratch[0])
		cfa_plat_remove_tree(scratch);
}

const char *fuzz_scratch(void)
{
	const char *tmp = getenv("TMPDIR");

	if (scratch[0])
		return scratch;
	snprintf(scratch, sizeof(scratch), "%s/cfapkg-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		scratch[0] = '\0'; /* nothing of ours to remove */
		fuzz_fail("cannot make a scratch folder under %s", tmp && *tmp ? tmp : "/tmp");
	}
	atexit(remove_scratch);
	return scratch;
}

void fuzz_path(char *out, size_t len, const char *name)
{
	if (!cfa_snprintf(out, len, "%s/%s", fuzz_scratch(), name))
		fuzz_fail("scratch path for %s is too long", name);
}

void fuzz_write(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		fuzz_fail("cannot write %s", path);
}

char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		fuzz_fail("out of memory");
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz property broken: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	/* abort() skips atexit: the scratch folder would stay behind. */
	remove_scratch();
	abort();
}

const char *fuzz_why(const char *fmt, ...)
{
	static char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}
