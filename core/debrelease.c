/*
 * debrelease.c - a Debian InRelease (or Release) file a mirror keeps, for
 * `recipe deb-set`: where and when its indexes were published (Suite,
 * Codename, Date, Valid-Until) and the SHA256 list that ties a Packages
 * file to it.  An InRelease is clear-signed: its frame is checked as
 * trust checks it, and the text between the armour's header and the
 * signature is read, dash-escaped lines ("- -----") undone.  The fields
 * are read by trust's own reader (core/inrelease.c).  The signature
 * itself is not checked here: apt checked it when it fetched the file,
 * and a source trusted by its key checks it before this reads it.
 */
#include <string.h>

#include "core/debindex.h"
#include "core/strbuf.h"

#define SIGNED_HEAD "-----BEGIN PGP SIGNED MESSAGE-----"
#define SIG_HEAD "-----BEGIN PGP SIGNATURE-----"

struct rel_reader {
	struct cfapkg_ctx *ctx;
	struct cfa_arena *arena;
	struct cfa_deb_release *out;
	enum cfapkg_err err;
};

/* A field's text into the arena; NULL for an absent one. */
static const char *keep(struct rel_reader *r, struct cfa_span v)
{
	const char *c = v.s ? cfa_arena_strndup(r->arena, v.s, v.n) : NULL;

	if (v.s && !c)
		r->err = cfa_nomem(r->ctx);
	return c;
}

/* The signed text of a clear-signed file, dash-escaping undone, in the
 * arena; a plain Release is copied there whole. */
static const char *signed_body(struct rel_reader *r, const char *text, size_t len,
                               size_t *out_len)
{
	const char *s = text, *end = text + len, *sig;
	struct cfa_buf b;
	const char *body;

	if (len < sizeof(SIGNED_HEAD) - 1 || memcmp(text, SIGNED_HEAD, sizeof(SIGNED_HEAD) - 1)) {
		/* Into the arena too: the fields point into it and outlive the
		 * caller's text. */
		if (!(body = cfa_arena_strndup(r->arena, text, len)))
			r->err = cfa_nomem(r->ctx);
		*out_len = len;
		return body;
	}
	r->out->clearsigned = true;
	/* The armour header ("Hash: SHA256") ends at the first empty line. */
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		s = nl ? nl + 1 : end;
		/* An empty line, or one that is only a "\r" (a file written on
		 * Windows). */
		if (n == 0 || (n == 1 && s[-2] == '\r'))
			break;
	}
	cfa_buf_init(&b, len + 1);
	for (sig = s; s < end; s = sig) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		sig = nl ? nl + 1 : end;
		if ((size_t)(end - s) >= sizeof(SIG_HEAD) - 1 &&
		    memcmp(s, SIG_HEAD, sizeof(SIG_HEAD) - 1) == 0)
			break;
		/* "- " starts a dash-escaped line: the escape goes, the line
		 * stays, as a reader of the signed text sees it. */
		if (sig - s >= 2 && s[0] == '-' && s[1] == ' ')
			s += 2;
		cfa_buf_add(&b, s, (size_t)(sig - s));
	}
	body = b.failed ? NULL : cfa_arena_strndup(r->arena, cfa_buf_str(&b), b.len);
	*out_len = b.len;
	cfa_buf_fini(&b);
	if (!body)
		r->err = cfa_nomem(r->ctx);
	return body;
}

enum cfapkg_err cfa_deb_release_read(struct cfapkg_ctx *ctx, const char *label, const char *text,
                                     size_t len, struct cfa_arena *arena,
                                     struct cfa_deb_release *out)
{
	struct rel_reader r = {ctx, arena, out, CFAPKG_E_OK};
	struct cfa_release *f = &out->fields;
	const char *body, *why = NULL;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	/* The same shape trust demands of an InRelease: text outside the
	 * signed part would be read here and by no one who checked it. */
	if (len >= sizeof(SIGNED_HEAD) - 1 && memcmp(text, SIGNED_HEAD, sizeof(SIGNED_HEAD) - 1) == 0 &&
	    !cfa_clearsign_framed(text, len, &why))
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: not one clearsigned Release: %s", label,
		                why);
	if (!(body = signed_body(&r, text, len, &n)))
		return r.err;
	/* One reader of Release fields for trust and for this: the two can
	 * never disagree on what a file lists. */
	if (!cfa_release_parse(body, n, f, &why))
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: not a Release file: %s", label, why);
	/* A Release without its SHA256 list pins no index, which is all this
	 * file is read for. */
	if (!f->sha256.s)
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: not a Release file: it lists no index "
		                "(no SHA256 field)", label);
	out->suite = keep(&r, f->suite);
	out->codename = keep(&r, f->codename);
	out->date = keep(&r, f->date_text);
	out->valid_until = keep(&r, f->valid_until_text);
	return r.err;
}
