/*
 * aptrelease.c - an APT source followed by its repository's key.  As apt
 * does, cfapkg fetches dists/SUITE/InRelease, has gpgv check it against
 * the key, and then believes the SHA256 list of the signed text: the
 * index's SHA-256 and size come from there, each .deb's from the index.
 * An InRelease is refused, with nothing recorded, when it is not one
 * clearsigned message, when no good signature of the pinned key (or of
 * the keyring's keys) is on it, when a signature on it is bad, when the
 * signature or the key has expired or the key was revoked, when it names
 * another suite, when its Valid-Until has passed, and when its Date is
 * older than the Date accepted before for the same repository and suite
 * (a replay: an old, once valid file that would hide later fixes).
 */
#include <string.h>

#include "cache/cache.h"
#include "core/channel.h"
#include "core/json.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "trans/apttrust.h"

enum cfapkg_err cfa_apt_fetch_small(struct cfapkg_ctx *ctx, const char *url, uint64_t cap,
                                    const struct cfapkg_fetch_opts *opts, char **out, size_t *len)
{
	struct cfapkg_fetch_opts o = opts ? *opts : (struct cfapkg_fetch_opts){0};
	struct cfapkg_fetch_item it;
	const char *urls[1] = {url};
	enum cfapkg_err e;

	memset(&it, 0, sizeof(it));
	it.label = url;
	it.urls = urls;
	it.nurls = 1;
	it.size = -1;
	/* Nothing pins this file's size, so the cap is what stops an endless
	 * answer: it is cut and refused, never kept. */
	o.max_unknown_size = cap;
	if ((e = cfapkg_fetch(ctx, &it, 1, &o))) {
		cfapkg_ctx_clear_error(ctx);
		e = cfa_fail(ctx, e, "%s: cannot fetch it: %s; nothing was changed", url,
		             it.error ? it.error : cfapkg_strerror(e));
		cfapkg_fetch_item_clear(&it);
		return e;
	}
	e = cfa_read_file(ctx, it.path, out, len);
	cfa_plat_remove(it.path); /* not an artifact: nothing keeps it in the cache */
	cfapkg_fetch_item_clear(&it);
	return e;
}

static enum cfapkg_err refuse(struct cfapkg_ctx *ctx, const char *label, const char *why,
                              const char *a, const char *b)
{
	return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: refused: %s%s%s; nothing was changed", label,
	                why, a ? a : "", b ? b : "");
}

/* A file of its own under ROOT/apt for gpgv to read or write. */
static enum cfapkg_err scratch(struct cfapkg_ctx *ctx, const char *ext, char **path)
{
	static unsigned counter;
	char *dir = cfa_root_path(ctx, CFA_APT, NULL);
	int rc = 0;

	*path = NULL;
	if (!dir)
		return ctx->err_code;
	/* Named check-*, which recovery removes should a kill leave one
	 * (env/gc.c); the time and a counter keep two checks of one run
	 * apart. */
	if (!cfa_plat_is_dir(dir) && (rc = cfa_plat_mkdir_p(dir)) != 0)
		cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot create it: %s", dir, cfa_plat_strerror(rc));
	if (!rc && cfa_path(ctx, path, "%s/check-%.0f-%u.%s", dir, cfa_plat_now() * 1e6,
	                    counter++, ext))
		rc = -1;
	cfa_free(dir);
	return rc ? ctx->err_code : CFAPKG_E_OK;
}

/* The key a signature names: its primary key's fingerprint, else the
 * signing key's, else the key ID of the result line. */
static const char *key_of(const struct cfa_gpg_status *st, int which)
{
	const struct cfa_gpg_sig *s = which >= 0 ? &st->sig[which] : NULL;

	if (!s)
		return "?";
	return s->primary[0] ? s->primary : s->fpr[0] ? s->fpr : s->keyid[0] ? s->keyid : "?";
}

static enum cfapkg_err judge(struct cfapkg_ctx *ctx, const struct cfa_apt_check *c,
                             const struct cfa_gpg_status *st, enum cfa_gpg_verdict v, int which)
{
	const char *key = key_of(st, which), *pin = c->fingerprint;

	switch (v) {
	case CFA_GPG_ACCEPTED:
		return CFAPKG_E_OK;
	case CFA_GPG_BAD:
		return refuse(ctx, c->label, "a signature on it is bad (BADSIG, key ", key,
		              "): the file is not what was signed, changed on the way or on the "
		              "server");
	case CFA_GPG_NOT_ONE:
		return refuse(ctx, c->label, "gpgv did not find exactly one signed message in it", "",
		              "");
	case CFA_GPG_UNSIGNED:
		return refuse(ctx, c->label, "gpgv found no signature it could check", "", "");
	case CFA_GPG_SIG_EXPIRED:
		return refuse(ctx, c->label, "its signature by key ", key, " has expired (EXPSIG)");
	case CFA_GPG_KEY_EXPIRED:
		return refuse(ctx, c->label, "it is signed by key ", key,
		              ", which has expired (EXPKEYSIG); the publisher must extend the key "
		              "or sign with a new one");
	case CFA_GPG_KEY_REVOKED:
		return refuse(ctx, c->label, "it is signed by key ", key, ", which was revoked");
	case CFA_GPG_WEAK_HASH:
		return refuse(ctx, c->label, "it is signed by key ", key,
		              " over SHA-1 or an older hash, which apt refuses too");
	default:
		/* Another key: one the keyring holds (OTHER_KEY), or not even that. */
		if (pin)
			return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: refused: it is signed by key %s, not "
			                "by the pinned %s; nothing was changed", c->label, key, pin);
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: refused: it is signed by key %s, which "
		                "%s does not hold (NO_PUBKEY); nothing was changed", c->label, key,
		                c->keyring);
	}
}

/* gpgv on data; the signed text into out->text when the verdict is good. */
static enum cfapkg_err verify(struct cfapkg_ctx *ctx, const struct cfa_apt_check *c,
                              struct cfa_apt_release *out, enum cfa_gpg_verdict *verdict)
{
	struct cfa_gpg_status st;
	char *in = NULL, *text = NULL;
	int which = -1;
	enum cfapkg_err e;

	/* gpgv reads a file, so the bytes are written out: the same bytes that
	 * were hashed and that will be kept. */
	if (!(e = scratch(ctx, "InRelease", &in)) && !(e = scratch(ctx, "txt", &text)) &&
	    !(e = cfa_write_atomic(ctx, in, out->file, out->file_len)) &&
	    !(e = cfa_gpgv_verify(ctx, c->keyring, in, text, &st))) {
		*verdict = cfa_gpg_judge(&st, c->fingerprint, &which);
		e = judge(ctx, c, &st, *verdict, which);
		/* Only the text gpgv verified is read, never the file's own bytes. */
		if (!e)
			e = cfa_snprintf(out->signer, sizeof(out->signer), "%s", key_of(&st, which))
			            ? cfa_read_file(ctx, text, &out->text, &out->len)
			            : cfa_nomem(ctx);
	}
	if (in)
		cfa_plat_remove(in);
	if (text)
		cfa_plat_remove(text);
	cfa_free(in);
	cfa_free(text);
	return e;
}

static bool names_suite(const struct cfa_span *s, const char *suite)
{
	return s->s && s->n == strlen(suite) && memcmp(s->s, suite, s->n) == 0;
}

/* The fields of the signed text: readable, for this suite, unexpired. */
static enum cfapkg_err read_fields(struct cfapkg_ctx *ctx, const struct cfa_apt_check *c,
                                   struct cfa_apt_release *out)
{
	struct cfa_release *r = &out->rel;
	const char *why = NULL;
	char when[32];

	if (!cfa_release_parse(out->text, out->len, r, &why))
		return refuse(ctx, c->label, "its Release fields cannot be read: ", why, "");
	/* Another suite's file, though signed by the same key, is not this
	 * one's: a mirror must not answer for sid with experimental.  A file
	 * that names neither has nothing to compare, and is taken on its
	 * signature alone. */
	if ((r->suite.s || r->codename.s) && !names_suite(&r->suite, c->suite) &&
	    !names_suite(&r->codename, c->suite))
		return refuse(ctx, c->label, "its Suite and Codename do not name ", c->suite,
		              " (the file of another suite)");
	if (r->valid_until && r->valid_until <= c->now) {
		cfa_utc_format(r->valid_until, when);
		return refuse(ctx, c->label, "it expired on ", when,
		              " (Valid-Until): a mirror that stopped following the repository, or "
		              "an old file served again");
	}
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_apt_release_check(struct cfapkg_ctx *ctx, const struct cfa_apt_check *c,
                                      const char *data, size_t len, struct cfa_apt_release *out,
                                      enum cfa_gpg_verdict *verdict)
{
	enum cfa_gpg_verdict scratch_verdict = CFA_GPG_UNSIGNED;
	const char *why = NULL;
	enum cfapkg_err e;

	memset(out, 0, sizeof(*out));
	if (!verdict)
		verdict = &scratch_verdict;
	*verdict = CFA_GPG_UNSIGNED;
	/* Checked before gpgv runs: text outside the one clearsigned message
	 * would be read by some tools and covered by no signature. */
	if (!cfa_clearsign_framed(data, len, &why))
		return refuse(ctx, c->label, "it is not one clearsigned message: ", why, "");
	if (!(out->file = cfa_malloc(len + 1)))
		return cfa_nomem(ctx);
	memcpy(out->file, data, len);
	out->file[len] = '\0';
	out->file_len = len;
	if (!cfa_sha256_buf(data, len, out->sha256))
		e = cfa_nomem(ctx);
	else if (!(e = verify(ctx, c, out, verdict)))
		e = read_fields(ctx, c, out);
	if (e)
		cfa_apt_release_free(out);
	return e;
}

void cfa_apt_release_free(struct cfa_apt_release *r)
{
	CFA_FREE(r->file);
	CFA_FREE(r->text);
}
