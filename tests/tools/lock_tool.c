/*
 * lock_tool.c - two locks for the lock test.  The root's writer lock:
 *   lock_tool ROOT TIMEOUT_MS
 * prints "locked" once it holds the lock, keeps it until its standard
 * input closes, then prints "released".  Exit 3 when the lock stayed busy.
 * A lockfile's checks before an install, on the machine it was made for
 * with another GPU when one is given:
 *   lock_tool verify FILE [GFX] [--allow-experimental]
 * prints "ok" (exit 0) or "refused: WHY" (exit 1).
 */
#include <stdio.h>
#include <string.h>

#include "cfapkg.h"

static int verify(struct cfapkg_ctx *ctx, int argc, char **argv)
{
	struct cfapkg_lockfile_verify_opts opts = {false};
	struct cfapkg_lockfile *lock = NULL;
	struct cfapkg_facts facts = {0};
	enum cfapkg_err e;
	int i;

	if ((e = cfapkg_lockfile_read(ctx, argv[2], &lock))) {
		printf("refused: %s\n", cfapkg_ctx_error(ctx));
		return 1;
	}
	/* A copy: setting the GPU must not change the lock's own facts. */
	if ((e = cfapkg_facts_copy(&lock->facts, &facts)))
		printf("refused: out of memory\n");
	for (i = 3; i < argc && !e; i++)
		if (strcmp(argv[i], "--allow-experimental") == 0)
			opts.allow_experimental = true;
		else
			e = cfapkg_facts_set(ctx, &facts, "gpu", argv[i]);
	if (!e)
		e = cfapkg_lockfile_verify(ctx, lock, &facts, &opts);
	if (e)
		printf("refused: %s\n", cfapkg_ctx_error(ctx));
	else
		printf("ok\n");
	cfapkg_facts_clear(&facts);
	cfapkg_lockfile_free(lock);
	return e ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_writer_lock *lock = NULL;
	unsigned long timeout = 0;
	enum cfapkg_err e;
	const char *p;
	int rc;

	if (ctx && argc >= 3 && strcmp(argv[1], "verify") == 0) {
		rc = verify(ctx, argc, argv);
		cfapkg_ctx_free(ctx);
		return rc;
	}
	if (argc != 3 || !ctx)
		return 2;
	for (p = argv[2]; *p >= '0' && *p <= '9'; p++)
		timeout = timeout * 10 + (unsigned long)(*p - '0');
	cfapkg_ctx_set_root(ctx, argv[1]);
	e = cfapkg_writer_lock(ctx, (unsigned)timeout, &lock);
	if (e) {
		printf("busy: %s\n", cfapkg_ctx_error(ctx));
		cfapkg_ctx_free(ctx);
		return e == CFAPKG_E_BUSY ? 3 : 1;
	}
	printf("locked\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	cfapkg_writer_unlock(lock);
	printf("released\n");
	cfapkg_ctx_free(ctx);
	return 0;
}
