/*
 * unpack_write.c - the writing every way of unpacking shares (an archive
 * read whole, one streamed, a zip settled, the links made last): a
 * member's path in the staging folder, its parent folders, its bytes
 * within the size cap, and the mode a stored file gets.
 */
#include <stdio.h>
#include <string.h>

#include "cache/unpack_int.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

char *cfa_unpack_full(struct unpacker *u, const char *name)
{
	char *full = cfa_aprintf("%s/%s", u->staging, name);

	if (!full)
		cfa_nomem(u->ctx);
	return full;
}

enum cfapkg_err cfa_unpack_make_parent(struct unpacker *u, const char *full)
{
	const char *slash = strrchr(full, '/');
	enum cfapkg_err e = CFAPKG_E_OK;
	char *dir;
	int rc;

	if (!slash)
		return CFAPKG_E_OK;
	if (!(dir = cfa_strndup(full, (size_t)(slash - full))))
		return cfa_nomem(u->ctx);
	if (!cfa_plat_is_dir(dir) && (rc = cfa_plat_mkdir_p(dir)) != 0)
		e = cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot create: %s", dir, cfa_plat_strerror(rc));
	cfa_free(dir);
	return e;
}

/* Appends bytes to a file being unpacked, within the size cap. */
enum cfapkg_err cfa_unpack_put(struct unpacker *u, FILE *f, const char *name, const char *full,
                               const void *data, size_t n, uint64_t *size)
{
	u->total += n;
	if (u->total > u->cap)
		return cfa_unpack_refuse(u, name, "the archive expands past the size cap (a "
		                         "decompression bomb?)");
	if (fwrite(data, 1, n, f) != n)
		return cfa_fail(u->ctx, CFAPKG_E_IO, "%s: cannot write: %s", full,
		                cfa_plat_strerror(cfa_plat_write_errno()));
	/* Every 8 MiB: start the disk on it now rather than at the final sync. */
	if ((*size + n) >> 23 != *size >> 23)
		cfa_plat_start_writeback(f);
	*size += n;
	return CFAPKG_E_OK;
}

/* The bits a stored file gets: the archive's, never set-id or sticky,
 * always owner-readable (the hasher and cfapkg verify read it back), and
 * never writable: a store file is shared by every view that links it, so
 * a program writing into "its" copy would change all of them.  Each file
 * gets them once it is written, before the folder is committed, and the
 * manifest records them as stored. */
unsigned cfa_unpack_mode(unsigned archive_perm)
{
	return ((archive_perm & 0777) | 0400) & ~0222u;
}
