/*
 * lockimage.c - a generation's lock kept as an image beside its JSON.
 *
 * Every no-op install, launch and listing reads the current generation's
 * lock.json; parsing it was a sixth of a no-op install's work, and the
 * only reason to map cJSON at all.  At commit the JSON just written is
 * read back and saved as lock.img (core/recipe_image.c's format), keyed
 * by the JSON's checksum and length, so the image holds exactly what the
 * JSON reads as.  A reader takes the image only while the JSON still has
 * that key: a lock edited by hand, a damaged image or one another build
 * wrote sends it back to the JSON.
 */
#include "core/json.h"
#include "core/mem.h"
#include "core/recipe_image.h"
#include "env/env.h"

/* The key of the JSON at path; false when it cannot be read (the JSON
 * reader then says why). */
static enum cfapkg_err json_key(struct cfapkg_ctx *ctx, const char *path, char key[65], bool *ok)
{
	char *text = NULL;
	size_t len = 0;
	enum cfapkg_err e = cfa_read_file(ctx, path, &text, &len);

	*ok = !e;
	if (e == CFAPKG_E_NOMEM)
		return e;
	cfapkg_ctx_clear_error(ctx);
	if (*ok)
		cfa_lock_image_key(text, len, key);
	cfa_free(text);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_lock_image_save(struct cfapkg_ctx *ctx, const char *path, const char *image)
{
	struct cfapkg_lockfile *back = NULL;
	char key[65];
	bool ok = false;
	enum cfapkg_err e = json_key(ctx, path, key, &ok);

	if (!e && ok && !(e = cfapkg_lockfile_read(ctx, path, &back)))
		e = cfa_lock_image_write(ctx, image, key, back);
	cfapkg_lockfile_free(back);
	/* Only time is lost without an image: the commit goes on. */
	if (e && e != CFAPKG_E_NOMEM) {
		cfapkg_ctx_clear_error(ctx);
		e = CFAPKG_E_OK;
	}
	return e;
}

/* l's set from the image's block; its facts copied out, as every lock
 * owns its own. */
static enum cfapkg_err take(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *l, const char *path,
                            const struct cfapkg_lockfile *saved)
{
	if (!(l->file = cfa_arena_strdup(l->arena, path)) ||
	    cfapkg_facts_copy(&saved->facts, &l->facts))
		return cfa_nomem(ctx);
	l->format = saved->format;
	l->requests = saved->requests;
	l->nrequests = saved->nrequests;
	l->parts = saved->parts;
	l->nparts = saved->nparts;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_lock_image_load(struct cfapkg_ctx *ctx, const char *path, const char *image,
                                    struct cfapkg_lockfile **out)
{
	const struct cfapkg_lockfile *saved = NULL;
	struct cfapkg_lockfile *l;
	char key[65];
	bool ok = false;
	enum cfapkg_err e = json_key(ctx, path, key, &ok);

	*out = NULL;
	if (e || !ok)
		return e;
	if (!(l = cfa_lock_new()))
		return cfa_nomem(ctx);
	e = cfa_lock_image_read(ctx, image, key, l->arena, &saved);
	if (!e && saved)
		e = take(ctx, l, path, saved);
	if (e || !saved) {
		cfapkg_lockfile_free(l);
		return e;
	}
	*out = l;
	return CFAPKG_E_OK;
}
