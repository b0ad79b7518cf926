/*
 * fuzz.h - what the fuzz harnesses share.  Each fuzz_NAME.c defines the
 * two libFuzzer entry points; the same file links either with libFuzzer
 * (scripts/fuzz) or with replay.c, which runs saved inputs once (the
 * fuzz-regressions test).  A harness checks properties, not only the
 * absence of crashes: a broken property aborts, so that libFuzzer keeps
 * the input that broke it.
 */
#ifndef CFA_FUZZ_H
#define CFA_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/compat.h"
#include "core/strbuf.h" /* cfa_snprintf: a bounded format that says when it cut */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* This process's scratch folder, made on first use (under $TMPDIR) and
 * removed at exit. */
const char *fuzz_scratch(void);
/* scratch/name into out; aborts when it does not fit. */
void fuzz_path(char *out, size_t len, const char *name);
/* Writes data to path, replacing it; aborts on failure (the scratch
 * folder is ours, so failing to write there is the harness's fault). */
void fuzz_write(const char *path, const void *data, size_t size);
/* The input as a NUL-terminated string (malloc'd): parsers of text take
 * C strings, so an embedded NUL ends the text as it would for them. */
char *fuzz_text(const uint8_t *data, size_t size);
/* A broken property: says which and aborts. */
_Noreturn void fuzz_fail(const char *fmt, ...) CFA_PRINTF(1, 2);

#define FUZZ_CHECK(cond, ...)                                               \
	do {                                                                \
		if (!(cond))                                                \
			fuzz_fail("%s:%d: %s: %s", __FILE__, __LINE__, #cond, \
			          fuzz_why(__VA_ARGS__));                   \
	} while (0)

/* Formats a FUZZ_CHECK's explanation into a static buffer. */
const char *fuzz_why(const char *fmt, ...) CFA_PRINTF(1, 2);

#endif
