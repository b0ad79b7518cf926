/*
 * image_read.c - recipe images read back (the format: recipe_image.c,
 * image_format.h).
 *
 * Opening an image reads its header and table; a recipe is then read
 * whole, its region in one read, or as its head alone, each version
 * told where its details wait (cfa_pending), to be read once a plan has
 * picked it.  Every block is checked against its checksum before its
 * pointers are relocated; a block found damaged marks the image, and its
 * caller reads the recipe file instead.
 */
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "core/gpus.h"
#include "core/image_format.h"
#include "core/mem.h"
#include "core/recipe_image.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* Where a version's details wait: its image (path, key and count, kept
 * once per image in the set's arena) and its block's entry. */
struct cfa_pending_image {
	char *path;
	char key[65];
	size_t n;
};
struct cfa_pending {
	const struct cfa_pending_image *image;
	struct entry at;
};

struct cfa_recipe_image {
	struct cfa_rfile *f;         /* read at offsets: a block and its slots are one read */
	uint64_t size;
	struct entry *toc;
	size_t n;
	unsigned char *scratch;     /* one block's slot list (and a head's table) */
	size_t scratch_cap;
	char *path;
	char key[65];
	const struct cfa_pending_image *pending; /* what its heads' versions point to */
	bool damaged;
};

/* Where an entry's details table starts, from its region's start. */
static uint64_t table_at(const struct entry *t)
{
	return (t->size + t->nslots * sizeof(uint32_t) + STRUCT_ALIGN - 1) &
	       ~(uint64_t)(STRUCT_ALIGN - 1);
}

/* Where a head read ends: after the details table, or after the slots
 * of a region without details. */
static uint64_t head_end(const struct entry *t)
{
	return t->ndetails ? table_at(t) + t->ndetails * sizeof(*t)
	                   : t->size + t->nslots * sizeof(uint32_t);
}

/* A block's own bounds: padded as written (so that its slot list after
 * it is aligned), at least its first struct, its slots within it. */
static bool block_sane(const struct entry *t, size_t first)
{
	return t->size >= first && t->size <= BLOCK_MAX && t->size % STRUCT_ALIGN == 0 &&
	       t->nslots <= t->size / sizeof(void *);
}

static bool entry_sane(const struct entry *t, uint64_t file_size)
{
	/* Each block's first struct is at least a pointer's size. */
	return block_sane(t, sizeof(void *)) && t->offset <= file_size &&
	       t->span <= file_size - t->offset && t->ndetails <= t->span / sizeof(*t) &&
	       head_end(t) <= t->span;
}

/* A details entry of region t: a block inside it, aligned from its start. */
static bool details_sane(const struct entry *d, const struct entry *t)
{
	uint64_t at = d->offset - t->offset;

	return block_sane(d, sizeof(struct cfapkg_version)) && d->offset >= t->offset &&
	       at <= t->span && at % STRUCT_ALIGN == 0 &&
	       d->size + d->nslots * sizeof(uint32_t) <= t->span - at;
}

/* n bytes at off: from head (the file's first hlen bytes, already read)
 * where it holds them, else from the file. */
static bool read_at(struct cfa_rfile *f, const char *head, size_t hlen, void *dst, size_t n,
                    uint64_t off)
{
	if (off <= hlen && n <= hlen - off) {
		memcpy(dst, head + off, n);
		return true;
	}
	return cfa_plat_rfile_read(f, dst, n, off) == n;
}

/* The table after the header line (at off), each entry within the file. */
static bool read_table(struct cfa_recipe_image *im, const char *head, size_t hlen, size_t off)
{
	uint64_t mark = 0;
	size_t i;

	if (!read_at(im->f, head, hlen, &mark, sizeof(mark), off) || mark != BYTE_ORDER_MARK ||
	    !read_at(im->f, head, hlen, im->toc, im->n * sizeof(*im->toc), off + sizeof(mark)))
		return false;
	for (i = 0; i < im->n; i++)
		if (!entry_sane(&im->toc[i], im->size))
			return false;
	return true;
}

/* The count in line when it is this build's header for key (the count
 * itself left open), else false. */
static bool header_count(const char *line, const char key[65], size_t *n)
{
	char want[256];
	size_t len, digits;
	uint64_t got = 0;

	if (!cfa_image_header(want, sizeof(want), key, 0))
		return false;
	/* want ends in "0\n": everything before it must match. */
	len = strlen(want) - 2;
	if (strncmp(line, want, len) != 0)
		return false;
	digits = strspn(line + len, "0123456789");
	if (strcmp(line + len + digits, "\n") != 0 ||
	    !cfa_parse_u64(line + len, digits, SIZE_MAX, &got))
		return false;
	*n = (size_t)got;
	return true;
}

/* The header line of head as a string in line; its length, 0 for none. */
static size_t header_line(const char *head, size_t hlen, char *line, size_t len)
{
	const char *nl = memchr(head, '\n', hlen);
	size_t n = nl ? (size_t)(nl - head) + 1 : 0;

	if (!n || n >= len)
		return 0;
	memcpy(line, head, n);
	line[n] = '\0';
	return n;
}

static enum cfapkg_err image_new(struct cfapkg_ctx *ctx, struct cfa_rfile *f, uint64_t size,
                                 const char *path, const char key[65], size_t n,
                                 struct cfa_recipe_image **out)
{
	struct cfa_recipe_image *im = cfa_calloc(1, sizeof(*im));

	if (!im || !(im->toc = cfa_calloc(n + 1, sizeof(*im->toc))) ||
	    !(im->path = cfa_strdup(path))) {
		if (im)
			cfa_free(im->toc);
		cfa_free(im);
		cfa_plat_rfile_close(f);
		return cfa_nomem(ctx);
	}
	im->f = f;
	im->size = size;
	im->n = n;
	memcpy(im->key, key, sizeof(im->key));
	*out = im;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_recipe_image_open(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                      size_t n, struct cfa_recipe_image **out)
{
	struct cfa_recipe_image *im = NULL;
	enum cfa_rfile_kind kind;
	/* The header and, for a folder's few recipes, the whole table: one
	 * read, kept on the stack.  Blocks are not served from it but read
	 * again straight into their arena: a copy would touch twice the
	 * fresh pages, and a page fault costs more than a read. */
	char head[1024], line[256];
	uint64_t size = 0;
	size_t got = 0, hlen = 0, table = 0;
	struct cfa_rfile *f = cfa_plat_rfile_open(path, &size, &kind);
	enum cfapkg_err e;

	if (f)
		hlen = cfa_plat_rfile_read(f, head, size < sizeof(head) ? (size_t)size : sizeof(head), 0);
	/* A count the file cannot hold is damage, not a reason to allocate. */
	*out = NULL;
	if (!f || !(table = header_line(head, hlen, line, sizeof(line))) ||
	    !header_count(line, key, &got) || (n != CFA_IMAGE_ANY && got != n) ||
	    got > size / sizeof(struct entry)) {
		cfa_plat_rfile_close(f);
		return CFAPKG_E_OK;
	}
	if ((e = image_new(ctx, f, size, path, key, got, &im)))
		return e;
	if (read_table(im, head, hlen, table))
		*out = im;
	else
		cfa_recipe_image_close(im);
	return CFAPKG_E_OK;
}

size_t cfa_recipe_image_count(const struct cfa_recipe_image *im)
{
	return im->n;
}

/* Adds base to every slot of a block checked whole; false when a slot or
 * what it points to lies outside the block. */
static bool relocate(unsigned char *data, size_t size, const uint32_t *slots, size_t n)
{
	uintptr_t v;
	size_t i;

	for (i = 0; i < n; i++) {
		if (slots[i] % alignof(void *) || slots[i] > size - sizeof(v))
			return false;
		memcpy(&v, data + slots[i], sizeof(v));
		if (v > size)
			return false;
		v += (uintptr_t)data;
		memcpy(data + slots[i], &v, sizeof(v));
	}
	return true;
}

void cfa_version_take_details(struct cfapkg_version *v, const struct cfapkg_version *from)
{
	size_t i;

	v->user_files = from->user_files;
	v->nuser_files = from->nuser_files;
	v->layout = from->layout;
	v->nlayout = from->nlayout;
	v->launcher = from->launcher;
	v->path = from->path;
	v->npath = from->npath;
	v->env = from->env;
	v->nenv = from->nenv;
	v->stage = from->stage;
	v->nstage = from->nstage;
	v->note = from->note;
	for (i = 0; i < v->nsources; i++) {
		/* The version's own, in the arena of the set it belongs to. */
		struct cfapkg_source *s = (struct cfapkg_source *)&v->sources[i];
		const struct cfapkg_source *f = &from->sources[i];
		s->artifacts = f->artifacts;
		s->nartifacts = f->nartifacts;
		s->mirrors = f->mirrors;
		s->nmirrors = f->nmirrors;
		if (s->apt && f->apt) {
			struct cfapkg_apt_source *a = (struct cfapkg_apt_source *)s->apt;
			a->packages = f->apt->packages;
			a->npackages = f->apt->npackages;
			a->pins = f->apt->pins;
			a->mirrors = f->apt->mirrors;
			a->nmirrors = f->apt->nmirrors;
		}
	}
	v->pending = NULL;
}

/* A details block d (its data, its slots after it) checked, relocated
 * and put into v; false when it is damaged or not v's. */
static bool apply_details(unsigned char *data, const struct entry *d, const uint32_t *slots,
                          struct cfapkg_version *v)
{
	const struct cfapkg_version *from = (const struct cfapkg_version *)data;

	if (cfa_image_block_sum(data, d->size, slots, d->nslots) != d->sum ||
	    !relocate(data, d->size, slots, d->nslots) || from->nsources != v->nsources)
		return false;
	cfa_version_take_details(v, from);
	return true;
}

/* A recipe's region read whole at base: its head and every version's
 * details checked and relocated, the details put into their versions. */
static bool whole_region(unsigned char *base, const struct entry *t)
{
	const unsigned char *table = base + table_at(t);
	struct cfapkg_recipe *r = (struct cfapkg_recipe *)base;
	uint64_t sum = cfa_image_block_sum(base, t->size, (const uint32_t *)(base + t->size), t->nslots);
	struct entry d;
	size_t k;

	if (cfa_image_checksum(table, t->ndetails * sizeof(d), sum) != t->sum ||
	    !relocate(base, t->size, (const uint32_t *)(base + t->size), t->nslots) ||
	    r->nversions != t->ndetails)
		return false;
	for (k = 0; k < t->ndetails; k++) {
		memcpy(&d, table + k * sizeof(d), sizeof(d));
		if (!details_sane(&d, t) ||
		    !apply_details(base + (d.offset - t->offset), &d,
		                   (const uint32_t *)(base + (d.offset - t->offset) + d.size),
		                   (struct cfapkg_version *)&r->versions[k]))
			return false;
	}
	return true;
}

enum cfapkg_err cfa_recipe_image_get(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im, size_t i,
                                     struct cfapkg_recipe **out)
{
	const struct entry *t = &im->toc[i];
	unsigned char *base;

	*out = NULL;
	if (im->damaged || t->size < sizeof(**out))
		return CFAPKG_E_OK;
	/* The region in one read: its slot lists and table come along,
	 * a few hundred bytes, against a read per version. */
	if (!(base = cfa_arena_alloc_raw(&ctx->arena, t->span)))
		return cfa_nomem(ctx);
	if (cfa_plat_rfile_read(im->f, base, t->span, t->offset) == t->span && whole_region(base, t))
		*out = (struct cfapkg_recipe *)base;
	else
		im->damaged = true;
	return CFAPKG_E_OK;
}

/* Room for n bytes of scratch. */
static bool scratch_for(struct cfa_recipe_image *im, size_t n)
{
	return cfa_grow((void **)&im->scratch, &im->scratch_cap, n + 1, 1) == 0;
}

/* Entry i's block copied into arena and relocated, in *out (NULL when
 * damaged); its slots and details table, which come in the same read,
 * stay in the scratch (the table at table_at(t) - t->size). */
static enum cfapkg_err read_head(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im, size_t i,
                                 struct cfa_arena *arena, void **out)
{
	const struct entry *t = &im->toc[i];
	size_t more = (size_t)(head_end(t) - t->size);
	unsigned char *data;
	uint64_t sum;

	*out = NULL;
	if (im->damaged)
		return CFAPKG_E_OK;
	if (!scratch_for(im, more) || !(data = cfa_arena_alloc_raw(arena, t->size)))
		return cfa_nomem(ctx);
	if (cfa_plat_rfile_read2(im->f, data, t->size, im->scratch, more, t->offset)) {
		sum = cfa_image_block_sum(data, t->size, (const uint32_t *)im->scratch, t->nslots);
		sum = cfa_image_checksum(im->scratch + (more - t->ndetails * sizeof(*t)),
		               t->ndetails * sizeof(*t), sum);
		if (sum == t->sum && relocate(data, t->size, (const uint32_t *)im->scratch, t->nslots))
			*out = data;
	}
	im->damaged = !*out;
	return CFAPKG_E_OK;
}

static const struct cfa_pending_image *pending_image(struct cfapkg_ctx *ctx,
                                                     struct cfa_recipe_image *im)
{
	struct cfa_pending_image *p;

	if (im->pending)
		return im->pending;
	if (!(p = cfa_arena_alloc(&ctx->arena, sizeof(*p))) ||
	    !(p->path = cfa_arena_strdup(&ctx->arena, im->path)))
		return NULL;
	memcpy(p->key, im->key, sizeof(p->key));
	p->n = im->n;
	return im->pending = p;
}

enum cfapkg_err cfa_recipe_image_head(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im,
                                      size_t i, struct cfapkg_recipe **out)
{
	const struct entry *t = &im->toc[i];
	struct cfapkg_recipe *r = NULL;
	struct cfa_pending *p;
	size_t k;
	enum cfapkg_err e = t->size < sizeof(*r) ? CFAPKG_E_OK
	                    : read_head(ctx, im, i, &ctx->arena, (void **)&r);

	*out = NULL;
	if (e || !r)
		return e;
	if (r->nversions != t->ndetails) {
		im->damaged = true;
		return CFAPKG_E_OK;
	}
	p = cfa_arena_alloc(&ctx->arena, (t->ndetails + 1) * sizeof(*p));
	if (!p || !pending_image(ctx, im))
		return cfa_nomem(ctx);
	for (k = 0; k < t->ndetails; k++) {
		p[k].image = im->pending;
		memcpy(&p[k].at, im->scratch + (table_at(t) - t->size) + k * sizeof(p[k].at),
		       sizeof(p[k].at));
		((struct cfapkg_version *)&r->versions[k])->pending = &p[k];
	}
	*out = r;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_pending_open(struct cfapkg_ctx *ctx, const struct cfa_pending *p,
                                 struct cfa_recipe_image **out)
{
	return cfa_recipe_image_open(ctx, p->image->path, p->image->key, p->image->n, out);
}

bool cfa_pending_same_image(const struct cfa_pending *a, const struct cfa_pending *b)
{
	return a->image == b->image;
}

bool cfa_recipe_image_holds(const struct cfa_recipe_image *im, const struct cfa_pending *p)
{
	return im->pending && (!p || p->image == im->pending);
}

enum cfapkg_err cfa_recipe_image_details(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im,
                                         struct cfapkg_version *v, bool *ok)
{
	const struct entry *d = &v->pending->at;
	unsigned char *data;
	size_t nslots = (size_t)d->nslots;

	*ok = false;
	if (im->damaged || !block_sane(d, sizeof(*v)) || d->offset > im->size ||
	    d->size + nslots * sizeof(uint32_t) > im->size - d->offset) {
		im->damaged = true;
		return CFAPKG_E_OK;
	}
	if (!scratch_for(im, nslots * sizeof(uint32_t)) ||
	    !(data = cfa_arena_alloc_raw(&ctx->arena, d->size)))
		return cfa_nomem(ctx);
	*ok = cfa_plat_rfile_read2(im->f, data, d->size, im->scratch, nslots * sizeof(uint32_t),
	                           d->offset) &&
	      apply_details(data, d, (const uint32_t *)im->scratch, v);
	im->damaged = !*ok;
	return CFAPKG_E_OK;
}
enum cfapkg_err cfa_gpus_image_read(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                    struct cfa_gpus **out)
{
	struct cfa_recipe_image *im = NULL;
	struct cfa_gpus *g = NULL;
	const struct cfa_gpus *saved = NULL;
	bool damaged;
	enum cfapkg_err e = cfa_recipe_image_open(ctx, path, key, 1, &im);

	*out = NULL;
	if (!e && im && im->toc[0].size >= sizeof(*g) && !(g = cfa_calloc(1, sizeof(*g))))
		e = cfa_nomem(ctx);
	if (!e && g)
		e = read_head(ctx, im, 0, &g->arena, (void **)&saved);
	if (saved) {
		g->targets = saved->targets;
		g->ntargets = saved->ntargets;
		g->devices = saved->devices;
		g->ndevices = saved->ndevices;
		*out = g;
	} else
		cfa_gpus_free(g);
	damaged = im && im->damaged;
	cfa_recipe_image_close(im);
	/* A damaged table is made again by the next load (removed once
	 * closed: Windows removes no file that is open). */
	if (damaged)
		cfa_plat_remove(path);
	return e;
}

enum cfapkg_err cfa_lock_image_read(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                    struct cfa_arena *arena, const struct cfapkg_lockfile **out)
{
	struct cfa_recipe_image *im = NULL;
	void *saved = NULL;
	enum cfapkg_err e = cfa_recipe_image_open(ctx, path, key, 1, &im);

	/* Damage only means the JSON is read: the generation is the writer's,
	 * and a reader leaves its files as they are. */
	if (!e && im && im->toc[0].size >= sizeof(**out))
		e = read_head(ctx, im, 0, arena, &saved);
	cfa_recipe_image_close(im);
	*out = saved;
	return e;
}

const char *cfa_recipe_image_path(const struct cfa_recipe_image *im)
{
	return im->path;
}

bool cfa_recipe_image_damaged(const struct cfa_recipe_image *im)
{
	return im->damaged;
}

void cfa_recipe_image_close(struct cfa_recipe_image *im)
{
	if (!im)
		return;
	cfa_plat_rfile_close(im->f);
	cfa_free(im->toc);
	cfa_free(im->scratch);
	cfa_free(im->path);
	cfa_free(im);
}
