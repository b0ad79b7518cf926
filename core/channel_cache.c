/*
 * channel_cache.c - an accepted channel index kept as images: its recipes
 * and its GPU table (recipe_image.c), so that planning from a channel
 * parses no JSON and needs no crypto library.  The images stand only for
 * the index that was accepted: their key is the index file's path, its
 * stamp and the accepted version, and they are read only while the file
 * still has the stamp recorded when its signatures were checked.
 */
#include <string.h>

#include "core/channel.h"
#include "core/gpus.h"
#include "core/mem.h"
#include "core/recipe_cache.h"
#include "core/recipe_image.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* The key of one accepted index.  An index with a GPU table gets another
 * key than one without, so an image never stands for a table that is
 * missing beside it. */
static void channel_key(const struct cfa_channel_seen *seen, bool gpus, char key[65])
{
	char ver[24] = "";
	const char *parts[5] = {"channel", seen->label, seen->stamp, ver, gpus ? "gpus" : "none"};

	/* 24 bytes hold any 64-bit number, so the text is never cut. */
	if (!cfa_snprintf(ver, sizeof(ver), "%llu", (unsigned long long)seen->version))
		ver[0] = '\0';
	cfa_recipe_cache_hash(parts, 5, key);
}

/* ROOT/cache/recipes/SHA.img and .gpus for the index, both NULL when
 * there is no cache folder. */
static enum cfapkg_err cache_paths(struct cfapkg_ctx *ctx, const char *label, char **img,
                                   char **gpus)
{
	return cfa_recipe_cache_pair(ctx, label, "img", "gpus", img, gpus);
}

static void remove_both(const char *img, const char *gpus)
{
	cfa_plat_remove(img);
	cfa_plat_remove(gpus);
}

void cfa_channel_cache_drop(struct cfapkg_ctx *ctx, const char *label)
{
	char *img = NULL, *gpus = NULL;

	/* Only a want of memory fails here, and then nothing is removed: a
	 * cache keyed to another stamp is never read anyway. */
	if (!cache_paths(ctx, label, &img, &gpus) && img)
		remove_both(img, gpus);
	cfa_free(img);
	cfa_free(gpus);
}

/* Every recipe of the image, each given origin, in *list; NULL when a
 * block is damaged. */
static enum cfapkg_err all_recipes(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im,
                                   const char *origin, struct cfapkg_recipe ***list, size_t *n)
{
	size_t count = cfa_recipe_image_count(im), i;
	struct cfapkg_recipe **out = cfa_calloc(count + 1, sizeof(*out));
	enum cfapkg_err e = out ? CFAPKG_E_OK : cfa_nomem(ctx);

	for (i = 0; i < count && !e; i++) {
		if ((e = cfa_recipe_image_get(ctx, im, i, &out[i])) || !out[i])
			break;
		/* The origin is the context's own string, as a parse gives. */
		out[i]->origin = origin;
	}
	if (!e && i == count) {
		*list = out;
		*n = count;
	} else
		cfa_free(out);
	return e;
}

/* The image written for seen, trying the key with a GPU table first. */
static enum cfapkg_err open_image(struct cfapkg_ctx *ctx, const char *img,
                                  const struct cfa_channel_seen *seen, char key[65],
                                  bool *with_gpus, struct cfa_recipe_image **im)
{
	enum cfapkg_err e;

	*with_gpus = true;
	channel_key(seen, true, key);
	if ((e = cfa_recipe_image_open(ctx, img, key, CFA_IMAGE_ANY, im)) || *im)
		return e;
	*with_gpus = false;
	channel_key(seen, false, key);
	return cfa_recipe_image_open(ctx, img, key, CFA_IMAGE_ANY, im);
}

enum cfapkg_err cfa_channel_cached(struct cfapkg_ctx *ctx, const struct cfa_channel_seen *seen,
                                   const char *origin, struct cfapkg_recipe ***list, size_t *n,
                                   struct cfa_gpus **gpus)
{
	char key[65], *img = NULL, *gpath = NULL;
	struct cfa_recipe_image *im = NULL;
	bool with_gpus = false, damaged;
	enum cfapkg_err e = cache_paths(ctx, seen->label, &img, &gpath);

	*list = NULL;
	*gpus = NULL;
	if (!e && img)
		e = open_image(ctx, img, seen, key, &with_gpus, &im);
	if (!e && im && with_gpus)
		e = cfa_gpus_image_read(ctx, gpath, key, gpus);
	if (!e && im && (*gpus || !with_gpus))
		e = all_recipes(ctx, im, origin, list, n);
	/* A damaged block, or a table gone from beside its image: both are
	 * made again from the index. */
	damaged = !e && im && !*list;
	cfa_recipe_image_close(im);
	if (!*list) {
		cfa_gpus_free(*gpus);
		*gpus = NULL;
	}
	/* Removed once closed: Windows removes no file that is open. */
	if (damaged)
		remove_both(img, gpath);
	cfa_free(img);
	cfa_free(gpath);
	return e;
}

enum cfapkg_err cfa_channel_cache_write(struct cfapkg_ctx *ctx,
                                        const struct cfa_channel_seen *seen,
                                        struct cfapkg_recipe *const *recipes, size_t n,
                                        const struct cfa_gpus *gpus)
{
	char key[65], *img = NULL, *gpath = NULL;
	enum cfapkg_err e = cache_paths(ctx, seen->label, &img, &gpath);

	channel_key(seen, gpus != NULL, key);
	/* The table first: an image whose key names a table is only read
	 * with that table beside it. */
	if (!e && img && gpus)
		e = cfa_gpus_image_write(ctx, gpath, key, gpus);
	if (!e && img)
		e = cfa_recipe_image_write(ctx, img, key, recipes, n);
	cfa_free(img);
	cfa_free(gpath);
	return e;
}
