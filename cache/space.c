/*
 * space.c - whether a download and its unpacking fit on the disk before
 * either starts: a transfer that fills the disk two gigabytes in fails
 * late, and leaves the disk full for everything else on it.
 */
#include <string.h>

#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

uint64_t cfapkg_unpacked_estimate(const char *format, int64_t size, int64_t unpacked_size)
{
	if (unpacked_size >= 0)
		return (uint64_t)unpacked_size;
	/* Unknown size: no estimate, and so no refusal on its account. */
	if (size < 0)
		return 0;
	/* A plain tar holds its files as they are; the compressed formats
	 * shrink these packages (libraries, headers) about two to three times. */
	if (format && strcmp(format, "tar") == 0)
		return (uint64_t)size;
	return (uint64_t)size * CFAPKG_UNPACK_ESTIMATE;
}

/* "2.5 GiB", "800.0 MiB", "12 bytes": at most 2^64 / 2^40 = 16777216.0
 * TiB, which a 32-byte buf holds; false if it ever did not. */
static bool human(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	size_t u = 0;

	if (n < 1024)
		return cfa_snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	for (v /= 1024; v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0]); u++)
		v /= 1024;
	return cfa_snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* The root may not exist yet: the nearest folder above it that does.
 * Nonzero when not known (out of memory, no folder answers). */
static int free_space_at(const char *root, uint64_t *bytes)
{
	char *dir = cfa_strdup(root), *cut;
	int rc = -1;

	while (dir && (rc = cfa_plat_free_space(dir, bytes)) != 0) {
		cut = strrchr(dir, '/');
		if (!cut)
			cut = strrchr(dir, '\\');
		if (!cut || cut == dir) {
			/* The top: the system's root for an absolute path, the
			 * current folder for a relative one. */
			rc = cfa_plat_free_space(cut ? "/" : ".", bytes);
			break;
		}
		*cut = '\0';
	}
	cfa_free(dir);
	return rc;
}

/* CFAPKG_TEST_FREE_BYTES: the test seam, as CFAPKG_SYSROOT is for
 * detection; tests cannot make a disk of a given size everywhere. */
static bool test_free_bytes(uint64_t *bytes)
{
	char buf[32];
	const char *v = cfa_plat_getenv("CFAPKG_TEST_FREE_BYTES", buf, sizeof(buf));

	return v && *v && cfa_parse_u64(v, strlen(v), UINT64_MAX, bytes);
}

enum cfapkg_err cfapkg_check_space(struct cfapkg_ctx *ctx, uint64_t download_bytes,
                                   uint64_t unpack_bytes)
{
	const char *root = cfapkg_ctx_root(ctx) ? cfapkg_ctx_root(ctx) : ".";
	uint64_t need = download_bytes + unpack_bytes, avail = 0;
	char n[32], d[32], u[32], f[32];

	/* The sum wrapped: more than any disk holds. */
	if (need < download_bytes)
		need = UINT64_MAX;
	if (!test_free_bytes(&avail) && free_space_at(root, &avail) != 0)
		return CFAPKG_E_OK; /* not known: the writes themselves will say */
	if (need <= avail)
		return CFAPKG_E_OK;
	if (!human(need, n, sizeof(n)) || !human(download_bytes, d, sizeof(d)) ||
	    !human(unpack_bytes, u, sizeof(u)) || !human(avail, f, sizeof(f)))
		return cfa_fail(ctx, CFAPKG_E_IO, "needs %llu bytes, %llu free on the disk holding %s",
		                (unsigned long long)need, (unsigned long long)avail, root);
	return cfa_fail(ctx, CFAPKG_E_IO, "needs %s (%s download + %s unpacked), %s free on the "
	                "disk holding %s; free space or set CFAPKG_ROOT to another disk", n, d, u, f,
	                root);
}
