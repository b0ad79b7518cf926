/*
 * debrelease.c - the fields of a Debian InRelease (or Release) file that
 * say where and when an index was published: Suite, Codename, Date,
 * Valid-Until, and the SHA256 list of the indexes it covers, which is
 * how a Packages file is tied to the signed file.  An InRelease is
 * clear-signed: the text between the armour's header and the signature
 * is read, with dash-escaped lines ("- -----") undone.  The signature
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
	const char *label;
	struct cfa_arena *arena;
	struct cfa_deb_release *out;
	bool stanza_done;          /* only the first stanza is the Release */
	enum cfapkg_err err;
};

static const char *keep(struct rel_reader *r, const char *v, size_t n)
{
	const char *c = cfa_arena_strndup(r->arena, v, n);

	if (!c)
		r->err = cfa_nomem(r->ctx);
	return c;
}

static const char *skip_blanks(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* " HEX SIZE PATH" lines of the SHA256 field. */
static bool take_hashes(struct rel_reader *r, const char *v, size_t n)
{
	const char *end = v + n, *line;
	size_t count = 0, k = 0;

	for (line = v; line < end; line++)
		count += *line == '\n';
	r->out->files = cfa_arena_alloc(r->arena, (count + 1) * sizeof(*r->out->files));
	if (!r->out->files) {
		r->err = cfa_nomem(r->ctx);
		return false;
	}
	for (line = v; line < end && k <= count;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line)), *stop = nl ? nl : end;
		const char *hex = skip_blanks(line, stop), *num, *path, *num_end;
		uint64_t size;
		/* Columns are padded to line up: any run of blanks separates. */
		num_end = num = skip_blanks(hex + (stop - hex >= 64 ? 64 : 0), stop);
		while (num_end < stop && *num_end != ' ' && *num_end != '\t')
			num_end++;
		path = skip_blanks(num_end, stop);
		if (num > hex + 64 && path < stop && num_end > num &&
		    cfa_parse_u64(num, (size_t)(num_end - num), (uint64_t)INT64_MAX, &size)) {
			struct cfa_deb_release_file *f = &r->out->files[k++];
			f->sha256 = keep(r, hex, 64);
			f->size = (int64_t)size;
			f->path = keep(r, path, (size_t)(stop - path));
		}
		line = nl ? nl + 1 : end;
	}
	r->out->nfiles = k;
	return !r->err;
}

static bool rel_field(void *arg, const char *name, size_t nlen, const char *v, size_t vlen)
{
	struct rel_reader *r = arg;
	struct cfa_deb_release *o = r->out;

	if (r->stanza_done)
		return false;
	if (cfa_deb_field_is(name, nlen, "Suite"))
		o->suite = keep(r, v, vlen);
	else if (cfa_deb_field_is(name, nlen, "Codename"))
		o->codename = keep(r, v, vlen);
	else if (cfa_deb_field_is(name, nlen, "Date"))
		o->date = keep(r, v, vlen);
	else if (cfa_deb_field_is(name, nlen, "Valid-Until"))
		o->valid_until = keep(r, v, vlen);
	else if (cfa_deb_field_is(name, nlen, "SHA256"))
		return take_hashes(r, v, vlen);
	return !r->err;
}

static bool rel_end(void *arg)
{
	struct rel_reader *r = arg;

	/* Blank lines before the fields are not the stanza's end. */
	r->stanza_done |= r->out->suite || r->out->date || r->out->nfiles;
	return !r->stanza_done;
}

/* The signed text of a clear-signed file, dash-escaping undone, in the
 * arena; a plain Release is taken whole. */
static const char *signed_body(struct rel_reader *r, const char *text, size_t len,
                               size_t *out_len)
{
	const char *s = text, *end = text + len, *sig;
	struct cfa_buf b;
	const char *body;

	if (len < sizeof(SIGNED_HEAD) - 1 || memcmp(text, SIGNED_HEAD, sizeof(SIGNED_HEAD) - 1)) {
		*out_len = len;
		return text;
	}
	r->out->clearsigned = true;
	/* The armour header ("Hash: SHA256") ends at the first empty line. */
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		s = nl ? nl + 1 : end;
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
	struct rel_reader r = {ctx, label, arena, out, false, CFAPKG_E_OK};
	const struct cfa_deb_scan_fns fns = {rel_field, rel_end, &r};
	const char *body;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (!(body = signed_body(&r, text, len, &n)))
		return r.err;
	cfa_deb_scan(body, n, &fns);
	if (r.err)
		return r.err;
	if (!out->date || !out->nfiles)
		return cfa_fail(ctx, CFAPKG_E_INTEGRITY, "%s: not a Release file (it names no Date "
		                "or no SHA256 list)", label);
	return CFAPKG_E_OK;
}

const struct cfa_deb_release_file *cfa_deb_release_find(const struct cfa_deb_release *r,
                                                        const char *path)
{
	size_t i;

	for (i = 0; i < r->nfiles; i++)
		if (strcmp(r->files[i].path, path) == 0)
			return &r->files[i];
	return NULL;
}
