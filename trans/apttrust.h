/*
 * apttrust.h - an APT repository trusted by its OpenPGP key, as apt
 * trusts one: the keyring (aptkeys.c), gpgv run on the InRelease file
 * (aptgpgv.c), the InRelease judged and its index's pin taken from it
 * (aptrelease.c), and what was accepted kept per repository and suite so
 * that an older InRelease is refused (aptstate.c).
 */
#ifndef CFA_APTTRUST_H
#define CFA_APTTRUST_H

#include <stdbool.h>
#include <stdint.h>

#include "cfapkg.h"
#include "core/gpgstatus.h"
#include "core/inrelease.h"

/* A small file fetched without a pin (an InRelease, a key), at most cap
 * bytes, into memory; the download cache keeps no copy.  *out: cfa_free
 * (NUL-terminated). */
enum cfapkg_err cfa_apt_fetch_small(struct cfapkg_ctx *ctx, const char *url, uint64_t cap,
                                    const struct cfapkg_fetch_opts *opts, char **out,
                                    size_t *len);

/* aptkeys.c: the keyring file gpgv is to read for a, into *path
 * (cfa_free): a system keyring as it is (dearmored into ROOT/apt/keys
 * when armored), or the pinned key kept in ROOT/apt/keys/FPR.gpg, fetched
 * from its URL when not kept yet or when refresh (an expiry extended
 * under the same fingerprint), and accepted only with that fingerprint. */
enum cfapkg_err cfa_apt_keyring(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                bool refresh, const struct cfapkg_fetch_opts *opts, char **path);

/* aptgpgv.c: gpgv --status-fd on signed_file against keyring, the signed
 * text written to out_file; *st gets the status lines read. */
enum cfapkg_err cfa_gpgv_verify(struct cfapkg_ctx *ctx, const char *keyring,
                                const char *signed_file, const char *out_file,
                                struct cfa_gpg_status *st);

/* What one InRelease check is about. */
struct cfa_apt_check {
	const char *label;         /* the InRelease's URL, for messages */
	const char *keyring;       /* for gpgv */
	const char *fingerprint;   /* the pinned key, or NULL: any of the keyring */
	const char *suite;         /* must be its Suite or Codename, when it names them */
	int64_t now;               /* the time Valid-Until is judged at */
};

/* What an accepted InRelease says (text owns the release's spans). */
struct cfa_apt_release {
	char *file;                /* the InRelease file's bytes; cfa_free */
	size_t file_len;
	char *text;                /* the signed text gpgv wrote; cfa_free */
	size_t len;
	struct cfa_release rel;
	char signer[CFA_GPG_FPR_MAX + 1]; /* the accepted signature's primary key */
	char sha256[65];           /* of the InRelease file as fetched */
};

/* aptrelease.c: the InRelease file's bytes checked as cfa_apt_check
 * says: one clearsigned message, a good signature by the key, unexpired,
 * for the suite.  Each refusal is CFAPKG_E_INTEGRITY with its own reason;
 * *verdict (may be NULL) says which gpgv gave. */
enum cfapkg_err cfa_apt_release_check(struct cfapkg_ctx *ctx, const struct cfa_apt_check *c,
                                      const char *data, size_t len, struct cfa_apt_release *out,
                                      enum cfa_gpg_verdict *verdict);
void cfa_apt_release_free(struct cfa_apt_release *r);

/* One index file an accepted InRelease lists, as it pins it. */
struct cfa_apt_index_file {
	char *urls[2];             /* by-hash (when offered), then by name; cfa_free */
	size_t nurls;
	char *path;                /* "main/binary-amd64/Packages.xz"; cfa_free */
	char sha256[65];
	int64_t size;
};

#define CFA_APT_INDEX_FILES 4      /* .xz, .gz, .bz2, plain */

/* The index an APT source followed by its key reads: the files of it the
 * InRelease lists, in the order to try (a repository need not serve
 * every compression it lists; one that does not is passed over). */
struct cfa_apt_pinned_index {
	struct cfa_apt_index_file file[CFA_APT_INDEX_FILES];
	size_t nfiles;
	struct cfa_apt_release release;
};

/* Fetches and checks dists/SUITE/InRelease of a (with --offline: the
 * copy accepted last), refuses one older than accepted before, and picks
 * the index's files (compressed first, as apt does).  Nothing is recorded yet:
 * cfa_apt_release_accept does that once the index matched. */
enum cfapkg_err cfa_apt_trusted_index(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                      const struct cfapkg_fetch_opts *opts,
                                      struct cfa_apt_pinned_index *out);
void cfa_apt_pinned_index_free(struct cfa_apt_pinned_index *ix);

/* aptstate.c: the Date accepted last for a's repository and suite (0:
 * none yet), and recording an accepted InRelease (its file kept beside,
 * for --offline), each file replaced atomically. */
enum cfapkg_err cfa_apt_state_date(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                   int64_t *date);
/* The kept InRelease file's path (*path NULL when none is kept). */
enum cfapkg_err cfa_apt_state_inrelease(struct cfapkg_ctx *ctx,
                                        const struct cfapkg_apt_source *a, char **path);
enum cfapkg_err cfa_apt_release_accept(struct cfapkg_ctx *ctx, const struct cfapkg_apt_source *a,
                                       const struct cfa_apt_release *r);

#endif
