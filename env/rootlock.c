/*
 * rootlock.c - one writer per root.  Taking the lock is also when the work
 * an interrupted writer left behind gets finished or undone
 * (cfapkg_recover, gc.c), which is why the lock sits at the top of env/:
 * every environment file below it may be recovered, none calls it.
 */
#include <errno.h>

#include "cfapkg.h"
#include "core/ctx.h"
#include "core/layout.h"
#include "core/mem.h"
#include "platform/platform.h"

enum cfapkg_err cfapkg_writer_lock(struct cfapkg_ctx *ctx, unsigned timeout_ms,
                                 struct cfapkg_writer_lock **out)
{
	char *path = cfa_root_path(ctx, CFA_LOCK_FILE, NULL);
	struct cfa_lock *l = NULL;
	unsigned cleaned;
	int rc;

	*out = NULL;
	if (!path)
		return ctx->err_code;
	/* The root is made here because the lock file lives in it: the first
	 * writer of a new root has nothing else to lock on. */
	if ((rc = cfa_plat_mkdir_p(ctx->root)) != 0) {
		cfa_free(path);
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create: %s", ctx->root,
		                cfa_plat_strerror(rc));
	}
	rc = cfa_plat_lock(path, timeout_ms, &l);
	if (rc == ETIMEDOUT)
		cfa_fail(ctx, CFAPKG_E_BUSY, "%s is held by another cfapkg that is changing this "
		         "root; waited %u s (try again when it has finished)", path, timeout_ms / 1000);
	else if (rc)
		cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot lock: %s", path, cfa_plat_strerror(rc));
	cfa_free(path);
	if (rc)
		return ctx->err_code;
	*out = (struct cfapkg_writer_lock *)l;
	/* The first writer after an interrupted one finishes its cleanup. */
	return cfapkg_recover(ctx, &cleaned);
}

/* The lock goes with its handle; a writer killed without calling this loses it
 * too, as the system drops a dead process's locks. */
void cfapkg_writer_unlock(struct cfapkg_writer_lock *lock)
{
	cfa_plat_unlock((struct cfa_lock *)lock);
}
