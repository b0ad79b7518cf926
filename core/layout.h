/*
 * layout.h - where everything lives in a root.  Every path under ROOT is
 * made by cfa_root_path, so the layout is written down once:
 *
 *   ROOT/lock                  the writer lock
 *   ROOT/store/NAME            an unpacked package, never changed
 *                              (NAME: cfa_store_name)
 *   ROOT/downloads/NAME        a verified artifact (NAME: its SHA-256),
 *                              or NAME.part while it downloads
 *   ROOT/envs/NAME             an environment and its generations
 *   ROOT/channels/NAME         a channel: its URL, trusted keys and the
 *                              last index accepted
 *   ROOT/venvs/ID.json         a Python environment cfapkg staged into:
 *                              its folder and the environment it follows
 *   ROOT/apt/keys/FPR.gpg      an APT repository's key, accepted by its
 *                              fingerprint
 *   ROOT/apt/releases/ID       the last InRelease accepted per repository
 *                              and suite (replay protection)
 *   ROOT/apt/lookups/SHA-HASH  what the index SHA gave for a part's
 *                              packages (trans/aptlookup.c: HASH, of the
 *                              key: the index's SHA-256 and size, the
 *                              packages, cfapkg's version)
 *   ROOT/apt/gnupg             gpgv's home folder, kept empty
 *   ROOT/apt/check-*           gpgv's input and output while it checks an
 *                              InRelease (recovery removes what is left)
 *   ROOT/first-use.json        pins recorded by trusting a first download
 *   ROOT/trash                 what is being removed
 */
#ifndef CFA_LAYOUT_H
#define CFA_LAYOUT_H

#include "core/ctx.h"

/* The first word of an APT lookup's key line (trans/aptlookup.c writes
 * them, env/gc.c removes those no longer read). */
#define CFA_APT_LOOKUP_MAGIC "cfapkg-apt-lookup"

enum cfa_place {
	CFA_LOCK_FILE,
	CFA_STORE,      /* name NULL: the folder; else one package */
	CFA_DOWNLOADS,  /* name NULL: the folder; else one artifact */
	CFA_ENVS,       /* name NULL: the folder; else one environment */
	CFA_CHANNELS,   /* name NULL: the folder; else one channel */
	CFA_VENVS,      /* name NULL: the folder; else one staged venv's entry */
	CFA_APT,        /* APT trust: keys/, releases/ (name: a path below) */
	CFA_FIRST_USE,  /* the file of pins trusted on first use */
	CFA_CACHE,      /* what is rebuilt from other files: recipes/ (folder indexes) */
	CFA_TRASH
};

/* The path of a place, or NULL with the reason in ctx (no root could be
 * chosen, out of memory).  A root that was never set is the default one
 * (cfapkg_ctx_set_root(ctx, NULL)), the same for every caller.  Owned:
 * cfa_free. */
char *cfa_root_path(struct cfapkg_ctx *ctx, enum cfa_place place, const char *name);
/* The same into buf; a path that does not fit is an error (CFAPKG_E_IO,
 * naming it), never a silent cut. */
enum cfapkg_err cfa_root_path_buf(struct cfapkg_ctx *ctx, enum cfa_place place, const char *name,
                                  char *buf, size_t len);

/* A package's store folder name: NAME-VERSION-SHA8 (the first 8 hex digits
 * of sha256).  The version is escaped so that the name is valid on Windows
 * and Linux: every byte other than a letter, digit, '.', '_', '+' or '-'
 * becomes '@' and two upper-case hex digits, so 1:2.3-1 becomes 1@3A2.3-1
 * and 1.0-1~bpo1 becomes 1.0-1@7Ebpo1.  '@' itself is escaped, so no two
 * versions share a name.  Owned: cfa_free; NULL when out of memory. */
char *cfa_store_name(const char *name, const char *version, const char *sha256);

#endif
