/*
 * layout.c - the one place that knows the names of a root's folders.
 */
#include <string.h>

#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"

static const char *folder(enum cfa_place place)
{
	switch (place) {
	case CFA_LOCK_FILE:
		return "lock";
	case CFA_STORE:
		return "store";
	case CFA_DOWNLOADS:
		return "downloads";
	case CFA_ENVS:
		return "envs";
	case CFA_CHANNELS:
		return "channels";
	case CFA_VENVS:
		return "venvs";
	case CFA_APT:
		return "apt";
	case CFA_FIRST_USE:
		return "first-use.json";
	case CFA_CACHE:
		return "cache";
	/* Every other place is named above; the trash is the one left. */
	default:
		return "trash";
	}
}

char *cfa_root_path(struct cfapkg_ctx *ctx, enum cfa_place place, const char *name)
{
	struct cfa_buf b;
	size_t len;

	if (!ctx->root && cfapkg_ctx_set_root(ctx, NULL))
		return NULL; /* the reason is in ctx */
	/* Far past what any system opens: such a path is a mistake to name. */
	cfa_buf_init(&b, 1u << 16);
	/* Pieces, not a format: a command makes dozens of these. */
	cfa_buf_adds(&b, ctx->root);
	cfa_buf_adds(&b, "/");
	cfa_buf_adds(&b, folder(place));
	if (name) {
		cfa_buf_adds(&b, "/");
		cfa_buf_adds(&b, name);
	}
	if (!b.failed)
		return b.data; /* the buffer's memory is the caller's now */
	/* The length tells a path too long for the bound from running out of
	 * memory, so that each gets its own message. */
	len = strlen(ctx->root) + strlen(folder(place)) + (name ? strlen(name) + 1 : 0) + 1;
	cfa_buf_fini(&b);
	if (len <= (1u << 16))
		cfa_nomem(ctx);
	else
		cfa_fail(ctx, CFAPKG_E_IO, "%s/%s%s%s: path too long", ctx->root, folder(place),
		         name ? "/" : "", name ? name : "");
	return NULL;
}

enum cfapkg_err cfa_root_path_buf(struct cfapkg_ctx *ctx, enum cfa_place place, const char *name,
                                  char *buf, size_t len)
{
	char *path = cfa_root_path(ctx, place, name);
	bool fits;

	if (!path)
		return ctx->err_code;
	fits = cfa_snprintf(buf, len, "%s", path);
	if (!fits)
		cfa_fail(ctx, CFAPKG_E_IO, "%s: path too long for this system", path);
	cfa_free(path);
	return fits ? CFAPKG_E_OK : ctx->err_code;
}

/* What a version may keep in a file name.  ':' is not allowed in Windows
 * names and separates PATH entries on Linux; '~' spells Windows short
 * names (a missing "rocm-6~1" could open another folder by its short
 * name).  Escaping all the rest keeps the rule one line long. */
static bool name_safe(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '+' || c == '-';
}

char *cfa_store_name(const char *name, const char *version, const char *sha256)
{
	static const char hex[] = "0123456789ABCDEF";
	struct cfa_buf b;
	const char *p;

	cfa_buf_init(&b, 1u << 16);
	cfa_buf_printf(&b, "%s-", name);
	for (p = version; *p; p++) {
		unsigned char c = (unsigned char)*p;
		/* '@' is not a safe character itself, so an escape can never be
		 * mistaken for a version's own text, and two versions never
		 * share a name. */
		char esc[3] = {'@', hex[c >> 4], hex[c & 15]};
		if (name_safe(*p))
			cfa_buf_add(&b, p, 1);
		else
			cfa_buf_add(&b, esc, 3);
	}
	/* Eight digits of the hash tell two builds of one version apart; the
	 * whole hash is what each download is checked against. */
	cfa_buf_printf(&b, "-%.8s", sha256);
	if (!b.failed)
		return b.data; /* the buffer's memory is the caller's now */
	cfa_buf_fini(&b);
	return NULL;
}
