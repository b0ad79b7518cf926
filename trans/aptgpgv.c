/*
 * aptgpgv.c - running gpgv on an InRelease file, as apt does.  gpgv is
 * GnuPG's verify-only tool (Debian's gpgv package, which apt itself
 * depends on): it reads only the keyrings named with --keyring (never a
 * user's keys or trust database), writes the signed text with --output
 * and its verdict as status lines on --status-fd, which are meant for
 * programs and do not change with the locale.  Its exit status is not
 * read: an expired key still exits 0, so the status lines decide
 * (core/gpgstatus.c).  The home folder is an empty one of cfapkg's, so
 * that no gpg.conf of the user's changes what gpgv accepts.
 */
#include <errno.h>
#include <string.h>

#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "trans/apttrust.h"

/* gpgv writes a few lines per signature: far more than any file has. */
#define STATUS_MAX (256u * 1024u)
#define GPGV_TIMEOUT_MS 120000u

static enum cfapkg_err find_gpgv(struct cfapkg_ctx *ctx, char *buf, size_t len)
{
	/* The lookup's own message is replaced by one that says why gpgv is
	 * needed and how to get it. */
	if (!cfapkg_find_program(ctx, "gpgv", buf, len))
		return CFAPKG_E_OK;
	cfapkg_ctx_clear_error(ctx);
	return cfa_fail(ctx, CFAPKG_E_UNSUPPORTED, "gpgv was not found in PATH: cfapkg checks an "
	                "APT repository's signature with it, as apt does; install it (Debian "
	                "and Ubuntu: apt-get install gpgv)");
}

/* ROOT/apt/gnupg: empty, so gpgv reads no configuration of anyone's. */
static enum cfapkg_err empty_home(struct cfapkg_ctx *ctx, char **out)
{
	int rc;

	if (!(*out = cfa_root_path(ctx, CFA_APT, "gnupg")))
		return ctx->err_code;
	if (!cfa_plat_is_dir(*out) && (rc = cfa_plat_mkdir_p(*out)) != 0) {
		cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create it: %s", *out, cfa_plat_strerror(rc));
		CFA_FREE(*out);
		return CFAPKG_E_IO;
	}
	return CFAPKG_E_OK;
}

static enum cfapkg_err run(struct cfapkg_ctx *ctx, const char *const *argv, char *out,
                           const char *signed_file)
{
	int status = 0, rc = cfa_plat_run_capture(argv, GPGV_TIMEOUT_MS, out, STATUS_MAX, &status);

	if (rc == ETIMEDOUT)
		return cfa_fail(ctx, CFAPKG_E_IO, "%s did not finish checking %s within %u s; nothing "
		                "was changed", argv[0], signed_file, GPGV_TIMEOUT_MS / 1000);
	/* 127: the child could not start the program. */
	if (rc || (status == 127 && !strstr(out, "[GNUPG:]")))
		return cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot run it to check %s: %s; nothing was "
		                "changed", argv[0], signed_file,
		                rc ? cfa_plat_strerror(rc) : "it could not be started");
	/* A status that filled the buffer may have been cut, and the part cut
	 * off could hold a BADSIG: refused rather than judged on what is
	 * left. */
	if (strlen(out) + 1 >= STATUS_MAX)
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: gpgv wrote more status than a signed "
		                "file gives; refused, nothing was changed", signed_file);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_gpgv_verify(struct cfapkg_ctx *ctx, const char *keyring,
                                const char *signed_file, const char *out_file,
                                struct cfa_gpg_status *st)
{
	char gpgv[4096], *home = NULL, *out = NULL;
	enum cfapkg_err e;

	if ((e = find_gpgv(ctx, gpgv, sizeof(gpgv))) || (e = empty_home(ctx, &home)))
		return e;
	cfa_plat_remove(out_file); /* gpgv writes a new file */
	if (!(out = cfa_malloc(STATUS_MAX))) {
		cfa_free(home);
		return cfa_nomem(ctx);
	}
	{
		/* "--" ends the options, so that a file name starting with '-'
		 * is never taken for one; the status comes on standard output,
		 * where it is captured. */
		const char *argv[] = {gpgv,     "--homedir", home,     "--status-fd", "1",
		                      "--keyring", keyring,  "--output", out_file,    "--",
		                      signed_file, NULL};
		e = run(ctx, argv, out, signed_file);
	}
	if (!e)
		cfa_gpg_status_parse(out, strlen(out), st);
	cfa_free(out);
	cfa_free(home);
	return e;
}
