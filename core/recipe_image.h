/*
 * recipe_image.h - a recipe folder's parsed recipes kept on disk in the
 * form this build holds them in memory, so that a plan copies the few it
 * reaches instead of parsing their JSON again.
 */
#ifndef CFA_RECIPE_IMAGE_H
#define CFA_RECIPE_IMAGE_H

#include <stddef.h>

#include "core/ctx.h"

struct cfa_recipe_image;

/* Writes the n recipes (in the folder's order) to path for key; like the
 * index, an image that cannot be written is only not written. */
enum cfapkg_err cfa_recipe_image_write(struct cfapkg_ctx *ctx, const char *path,
                                       const char key[65], struct cfapkg_recipe *const *recipes,
                                       size_t n);

/* The image at path when this build wrote it for key with n recipes
 * (CFA_IMAGE_ANY: however many it holds), in *out; NULL otherwise
 * (missing, another build, another folder).  Only a want of memory fails. */
#define CFA_IMAGE_ANY ((size_t)-1)
enum cfapkg_err cfa_recipe_image_open(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                      size_t n, struct cfa_recipe_image **out);

/* How many recipes the image holds. */
size_t cfa_recipe_image_count(const struct cfa_recipe_image *im);

/* Recipe i of the image, whole, copied into ctx's arena, in *out; *out
 * NULL when a block of it is damaged (the caller parses the file
 * instead). */
enum cfapkg_err cfa_recipe_image_get(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im, size_t i,
                                     struct cfapkg_recipe **out);

/* Recipe i's head, as cfa_recipe_image_get gives it but without its
 * versions' details: each version's pending says where they wait. */
enum cfapkg_err cfa_recipe_image_head(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im,
                                      size_t i, struct cfapkg_recipe **out);

/* The image v's details wait in (v->pending), opened again as
 * cfa_recipe_image_open opens one: NULL when it is gone or was written
 * since for other files. */
enum cfapkg_err cfa_pending_open(struct cfapkg_ctx *ctx, const struct cfa_pending *p,
                                 struct cfa_recipe_image **out);
bool cfa_pending_same_image(const struct cfa_pending *a, const struct cfa_pending *b);
/* Whether p's details wait in im (which must still be open); with p NULL,
 * whether any head read from im waits for its details. */
bool cfa_recipe_image_holds(const struct cfa_recipe_image *im, const struct cfa_pending *p);

/* Reads v's details from im (the image its pending names) into ctx's
 * arena and puts them into v; *ok false when their block is damaged. */
enum cfapkg_err cfa_recipe_image_details(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im,
                                         struct cfapkg_version *v, bool *ok);

/* The details of from (the same version, read whole) put into v, whose
 * pending is then NULL. */
void cfa_version_take_details(struct cfapkg_version *v, const struct cfapkg_version *from);

/* The file im was opened from. */
const char *cfa_recipe_image_path(const struct cfa_recipe_image *im);

/* Whether a block was found damaged (the image is then made again). */
bool cfa_recipe_image_damaged(const struct cfa_recipe_image *im);

void cfa_recipe_image_close(struct cfa_recipe_image *im);

/* The GPU table the same way: written for key, read back in *out (NULL
 * when there is none for key or it is damaged; a damaged one is removed). */
struct cfa_gpus;
enum cfapkg_err cfa_gpus_image_write(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                     const struct cfa_gpus *g);
enum cfapkg_err cfa_gpus_image_read(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                    struct cfa_gpus **out);

/* A generation's lock the same way, keyed by its JSON text
 * (cfa_lock_image_key: the text's checksum and length).  Read back into
 * arena, in *out: the lock's struct with its parts and requests; its facts
 * still point into the block and its arena and file are NULL.  *out NULL
 * when there is no image for key or it is damaged. */
void cfa_lock_image_key(const void *json, size_t len, char key[65]);
enum cfapkg_err cfa_lock_image_write(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                     const struct cfapkg_lockfile *l);
enum cfapkg_err cfa_lock_image_read(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                    struct cfa_arena *arena, const struct cfapkg_lockfile **out);

#endif
