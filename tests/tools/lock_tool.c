/*
 * lock_tool.c - holds a root's writer lock for the lock test:
 *   lock_tool ROOT TIMEOUT_MS
 * prints "locked" once it holds the lock, keeps it until its standard
 * input closes, then prints "released".  Exit 3 when the lock stayed busy.
 */
#include <stdio.h>

#include "cfapkg.h"

int main(int argc, char **argv)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_root_lock *lock = NULL;
	unsigned long timeout = 0;
	enum cfapkg_err e;
	const char *p;

	if (argc != 3 || !ctx)
		return 2;
	for (p = argv[2]; *p >= '0' && *p <= '9'; p++)
		timeout = timeout * 10 + (unsigned long)(*p - '0');
	cfapkg_ctx_set_root(ctx, argv[1]);
	e = cfapkg_root_lock(ctx, (unsigned)timeout, &lock);
	if (e) {
		printf("busy: %s\n", cfapkg_ctx_error(ctx));
		cfapkg_ctx_free(ctx);
		return e == CFAPKG_E_BUSY ? 3 : 1;
	}
	printf("locked\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	cfapkg_root_unlock(lock);
	printf("released\n");
	cfapkg_ctx_free(ctx);
	return 0;
}
