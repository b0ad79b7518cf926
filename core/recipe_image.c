/*
 * recipe_image.c - parsed recipes saved as this build's own structs.
 *
 * Each recipe becomes one block: its structs, arrays and strings copied
 * into one buffer with pointers written as offsets from the block's start,
 * then the list of those pointer slots.  Reading a block is one read and
 * one pass that adds the block's address to every listed slot: no JSON is
 * parsed and no small allocation made, which is what a warm plan spends
 * its time on (each fresh page of a parse's trees costs a page fault).
 *
 * The GPU table (gpus.json) is kept the same way, as an image of one block.
 *
 * The file is "cfapkg-recipe-image 1 VERSION LAYOUT KEY N\n", a byte-order
 * mark, N table entries (offset, size, slots, checksum) and the blocks.
 * LAYOUT sums the sizes of the structs it holds, so another build's image
 * is not read as this one's; KEY is the recipe index's (the folder's
 * files); each block's checksum finds damage, and a damaged block is
 * parsed from its file instead.
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/dep.h"
#include "core/gpus.h"
#include "core/mem.h"
#include "core/recipe_image.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define IMAGE_MAGIC "cfapkg-recipe-image"
#define IMAGE_FORMAT 1
#define BYTE_ORDER_MARK UINT64_C(0x0102030405060708)
/* Far above any recipe: a larger size in a table is damage. */
#define BLOCK_MAX (64u << 20)

struct entry {
	uint64_t offset, size, nslots, sum;
};

struct cfa_recipe_image {
	struct cfa_rfile *f;         /* read at offsets: a block and its slots are one read */
	uint64_t size;
	struct entry *toc;
	size_t n;
	uint32_t *slots;            /* scratch for one block's slot list */
	size_t slots_cap;
	bool damaged;
};

/* Texts placed so far in a block, by hash, so that each is kept once.
 * at is a string's offset, or a range's, whose text is then the key. */
struct placed_set {
	struct placed {
		uint32_t at, len;   /* len: the key's length and its terminator; 0 empty */
	} *v;
	size_t cap, n;
	bool ranges;
};

/* One block being written. */
struct writer {
	unsigned char *data;
	size_t len, cap;
	uint32_t *slots;
	size_t nslots, slots_cap;
	/* A recipe repeats its names, platforms and targets in every
	 * version; a name's constraint is the same struct wherever it is
	 * written ("cublas = 12" in each version). */
	struct placed_set strings, ranges;
	bool failed;
};

/* ---- writing ---- */

/* Appends size bytes of src (zeros when NULL) at the next multiple of
 * align; their offset. */
static size_t place(struct writer *w, const void *src, size_t size, size_t align)
{
	size_t at = (w->len + align - 1) & ~(align - 1);

	if (w->failed || at + size > BLOCK_MAX ||
	    cfa_grow((void **)&w->data, &w->cap, at + size, 1) != 0) {
		w->failed = true;
		return 0;
	}
	memset(w->data + w->len, 0, at - w->len);
	if (src)
		memcpy(w->data + at, src, size);
	else
		memset(w->data + at, 0, size);
	w->len = at + size;
	return at;
}

/* The pointer at slot is to target (an offset); NULL when !set. */
static void link_to(struct writer *w, size_t slot, size_t target, bool set)
{
	uintptr_t v = set ? (uintptr_t)target : 0;

	if (w->failed)
		return;
	memcpy(w->data + slot, &v, sizeof(v));
	if (!set)
		return;
	if (cfa_grow((void **)&w->slots, &w->slots_cap, w->nslots + 1, sizeof(*w->slots)) != 0) {
		w->failed = true;
		return;
	}
	w->slots[w->nslots++] = (uint32_t)slot;
}

static uint64_t checksum(const unsigned char *p, size_t n, uint64_t h);

/* The text of the range placed at at. */
static const char *placed_text(const struct writer *w, size_t at)
{
	uintptr_t text;

	memcpy(&text, w->data + at + offsetof(struct cfa_range, text), sizeof(text));
	return (const char *)w->data + text;
}

static const char *key_at(const struct writer *w, const struct placed_set *t, size_t at)
{
	return t->ranges ? placed_text(w, at) : (const char *)w->data + at;
}

/* The set's slot for the key s[0..n): where it was placed, or the empty
 * slot it goes in. */
static struct placed *placed_slot(struct writer *w, struct placed_set *t, const char *s, size_t n)
{
	size_t mask = t->cap - 1;
	size_t i = (size_t)checksum((const unsigned char *)s, n, UINT64_C(0xcbf29ce484222325)) & mask;

	for (;; i = (i + 1) & mask) {
		struct placed *p = &t->v[i];
		if (!p->len || (p->len == n + 1 && memcmp(key_at(w, t, p->at), s, n) == 0))
			return p;
	}
}

/* Room in t for one more key, the set kept at most half full (first: its
 * first size); false for want of memory. */
static bool room_for_one(struct writer *w, struct placed_set *t, size_t first)
{
	struct placed *old = t->v;
	size_t i, cap = t->cap;

	if ((t->n + 1) * 2 <= cap)
		return true;
	t->cap = cap ? cap * 2 : first;
	if (!(t->v = cfa_calloc(t->cap, sizeof(*t->v)))) {
		t->v = old;
		t->cap = cap;
		return false;
	}
	for (i = 0; i < cap; i++)
		if (old[i].len)
			*placed_slot(w, t, key_at(w, t, old[i].at), old[i].len - 1) = old[i];
	cfa_free(old);
	return true;
}

/* n bytes of s and a terminator, kept once per block (a version's label
 * is a slice of its text, not a string of its own). */
static void put_bytes(struct writer *w, size_t slot, const char *s, size_t n)
{
	struct placed *p = NULL;

	if (s && !w->failed && !room_for_one(w, &w->strings, 256))
		w->failed = true;
	if (s && !w->failed && !(p = placed_slot(w, &w->strings, s, n))->len) {
		p->at = (uint32_t)place(w, s, n, 1);
		place(w, NULL, 1, 1);
		p->len = (uint32_t)n + 1;
		w->strings.n++;
	}
	link_to(w, slot, p ? p->at : 0, s != NULL);
}

static void put_str(struct writer *w, size_t slot, const char *s)
{
	put_bytes(w, slot, s, s ? strlen(s) : 0);
}

/* n strings, and a NULL after them as the parser leaves some lists. */
static void put_strv(struct writer *w, size_t slot, const char *const *v, size_t n)
{
	size_t at = v ? place(w, NULL, (n + 1) * sizeof(char *), alignof(char *)) : 0;
	size_t i;

	for (i = 0; v && i < n; i++)
		put_str(w, at + i * sizeof(char *), v[i]);
	link_to(w, slot, at, v != NULL);
}

/* Each element of an array is copied whole, then every pointer in it is
 * rewritten by its type's function, field by field. */
typedef void put_fn(struct writer *w, size_t at, const void *elem);

#define FIELD(at, type, field) ((at) + offsetof(type, field))
#define STRUCT_ALIGN alignof(max_align_t)

static void put_array(struct writer *w, size_t slot, const void *v, size_t n, size_t size,
                      put_fn *each)
{
	size_t at = v ? place(w, v, n * size, STRUCT_ALIGN) : 0, i;

	for (i = 0; v && i < n; i++)
		each(w, at + i * size, (const char *)v + i * size);
	link_to(w, slot, at, v != NULL);
}

/* A version and a clause are rewritten field by field over zeros: parsed
 * on the stack, they bring stale bytes in their padding, and the image of
 * the same files must be the same file. */
static void put_ver(struct writer *w, size_t at, const void *elem)
{
	const struct cfa_ver *v = elem;
	struct cfa_ver clean;

	memset(&clean, 0, sizeof(clean));
	memcpy(clean.rel, v->rel, sizeof(clean.rel));
	clean.nrel = v->nrel;
	clean.rank = v->rank;
	clean.prenum = v->prenum;
	clean.labellen = v->labellen;
	clean.epoch = v->epoch;
	clean.revlen = v->revlen;
	if (!w->failed)
		memcpy(w->data + at, &clean, sizeof(clean));
	put_bytes(w, FIELD(at, struct cfa_ver, label), v->label, v->labellen);
	put_bytes(w, FIELD(at, struct cfa_ver, rev), v->rev, v->revlen);
}

static void put_clause(struct writer *w, size_t at, const void *elem)
{
	const struct cfa_clause *c = elem;
	struct cfa_clause clean;

	memset(&clean, 0, sizeof(clean));
	clean.op = c->op;
	if (!w->failed)
		memcpy(w->data + at, &clean, sizeof(clean));
	put_ver(w, FIELD(at, struct cfa_clause, ver), &c->ver);
}

static void put_range(struct writer *w, size_t at, const void *elem)
{
	const struct cfa_range *r = elem;

	put_str(w, FIELD(at, struct cfa_range, name), r->name);
	put_str(w, FIELD(at, struct cfa_range, text), r->text);
	put_array(w, FIELD(at, struct cfa_range, clauses), r->clauses, r->nclauses,
	          sizeof(*r->clauses), put_clause);
}

/* A dependency's range, placed once per text: the text names the range
 * whole (name and clauses are parsed from it). */
static void put_shared_range(struct writer *w, size_t slot, const struct cfa_range *r)
{
	struct placed *p = NULL;
	uintptr_t at;

	if (r && r->text && !w->failed && !room_for_one(w, &w->ranges, 64))
		w->failed = true;
	if (r && r->text && !w->failed &&
	    (p = placed_slot(w, &w->ranges, r->text, strlen(r->text)))->len) {
		link_to(w, slot, p->at, true);
		return;
	}
	put_array(w, slot, r, 1, sizeof(*r), put_range);
	if (p && !w->failed) {
		memcpy(&at, w->data + slot, sizeof(at));
		p->at = (uint32_t)at;
		p->len = (uint32_t)strlen(r->text) + 1;
		w->ranges.n++;
	}
}

static void put_dep(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_dep *d = elem;

	put_str(w, FIELD(at, struct cfapkg_dep, text), d->text);
	put_str(w, FIELD(at, struct cfapkg_dep, name), d->name);
	put_strv(w, FIELD(at, struct cfapkg_dep, os), d->os, d->nos);
	put_strv(w, FIELD(at, struct cfapkg_dep, gfx), d->gfx, d->ngfx);
	put_shared_range(w, FIELD(at, struct cfapkg_dep, range), d->range);
}

static void put_artifact(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_artifact *a = elem;

	put_str(w, FIELD(at, struct cfapkg_artifact, url), a->url);
	put_strv(w, FIELD(at, struct cfapkg_artifact, mirrors), a->mirrors, a->nmirrors);
	put_str(w, FIELD(at, struct cfapkg_artifact, sha256), a->sha256);
	put_str(w, FIELD(at, struct cfapkg_artifact, format), a->format);
}

static void put_pin(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_deb_pin *p = elem;

	put_str(w, FIELD(at, struct cfapkg_deb_pin, name), p->name);
	put_str(w, FIELD(at, struct cfapkg_deb_pin, version), p->version);
	put_str(w, FIELD(at, struct cfapkg_deb_pin, file), p->file);
	put_str(w, FIELD(at, struct cfapkg_deb_pin, sha256), p->sha256);
	put_str(w, FIELD(at, struct cfapkg_deb_pin, suite), p->suite);
	put_str(w, FIELD(at, struct cfapkg_deb_pin, depends), p->depends);
	put_str(w, FIELD(at, struct cfapkg_deb_pin, provides), p->provides);
}

static void put_apt(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_apt_source *a = elem;

	put_str(w, FIELD(at, struct cfapkg_apt_source, repository), a->repository);
	put_str(w, FIELD(at, struct cfapkg_apt_source, suite), a->suite);
	put_str(w, FIELD(at, struct cfapkg_apt_source, component), a->component);
	put_str(w, FIELD(at, struct cfapkg_apt_source, arch), a->arch);
	put_str(w, FIELD(at, struct cfapkg_apt_source, index), a->index);
	put_str(w, FIELD(at, struct cfapkg_apt_source, index_sha256), a->index_sha256);
	put_strv(w, FIELD(at, struct cfapkg_apt_source, packages), a->packages, a->npackages);
	put_str(w, FIELD(at, struct cfapkg_apt_source, key_fingerprint), a->key_fingerprint);
	put_str(w, FIELD(at, struct cfapkg_apt_source, key_url), a->key_url);
	put_str(w, FIELD(at, struct cfapkg_apt_source, keyring), a->keyring);
	put_array(w, FIELD(at, struct cfapkg_apt_source, pins), a->pins, a->npackages,
	          sizeof(*a->pins), put_pin);
	put_strv(w, FIELD(at, struct cfapkg_apt_source, mirrors), a->mirrors, a->nmirrors);
	put_str(w, FIELD(at, struct cfapkg_apt_source, seen), a->seen);
}

static void put_source(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_source *s = elem;

	put_str(w, FIELD(at, struct cfapkg_source, platform), s->platform);
	put_array(w, FIELD(at, struct cfapkg_source, artifacts), s->artifacts, s->nartifacts,
	          sizeof(*s->artifacts), put_artifact);
	put_array(w, FIELD(at, struct cfapkg_source, apt), s->apt, 1, sizeof(*s->apt), put_apt);
	put_str(w, FIELD(at, struct cfapkg_source, url), s->url);
	put_strv(w, FIELD(at, struct cfapkg_source, mirrors), s->mirrors, s->nmirrors);
	put_str(w, FIELD(at, struct cfapkg_source, sha256), s->sha256);
	put_str(w, FIELD(at, struct cfapkg_source, format), s->format);
	put_str(w, FIELD(at, struct cfapkg_source, unavailable), s->unavailable);
	put_str(w, FIELD(at, struct cfapkg_source, provenance), s->provenance);
	put_str(w, FIELD(at, struct cfapkg_source, first_use), s->first_use);
}

/* The small records of two strings. */
static void put_rule(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_file_rule *r = elem;

	put_str(w, FIELD(at, struct cfapkg_file_rule, path), r->path);
	put_str(w, FIELD(at, struct cfapkg_file_rule, as), r->as);
}

static void put_user_file(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_user_file *u = elem;

	put_str(w, FIELD(at, struct cfapkg_user_file, name), u->name);
	put_str(w, FIELD(at, struct cfapkg_user_file, sha256), u->sha256);
}

static void put_env(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_env_var *v = elem;

	put_str(w, FIELD(at, struct cfapkg_env_var, name), v->name);
	put_str(w, FIELD(at, struct cfapkg_env_var, value), v->value);
}

static void put_status(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_gpu_status *g = elem;

	put_str(w, FIELD(at, struct cfapkg_gpu_status, gfx), g->gfx);
}

static void put_note(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_note *n = elem;

	put_str(w, FIELD(at, struct cfapkg_note, name), n->name);
	put_strv(w, FIELD(at, struct cfapkg_note, os), n->os, n->nos);
	put_str(w, FIELD(at, struct cfapkg_note, text), n->text);
}

#define V(field) FIELD(at, struct cfapkg_version, field)

/* What a version needs on a machine: its relations and constraints. */
static void put_version_needs(struct writer *w, size_t at, const struct cfapkg_version *v)
{
	put_array(w, V(requires), v->requires, v->nrequires, sizeof(*v->requires), put_dep);
	put_array(w, V(conflicts), v->conflicts, v->nconflicts, sizeof(*v->conflicts), put_dep);
	put_array(w, V(provides), v->provides, v->nprovides, sizeof(*v->provides), put_dep);
	put_strv(w, V(os), v->os, v->nos);
	put_strv(w, V(arch), v->arch, v->narch);
	put_strv(w, V(gfx), v->gfx, v->ngfx);
	put_array(w, V(status), v->status, v->nstatus, sizeof(*v->status), put_status);
}

static void put_version(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_version *v = elem;

	put_str(w, V(version), v->version);
	/* Every version's recipe is the block's first struct. */
	link_to(w, V(recipe), 0, true);
	put_version_needs(w, at, v);
	put_array(w, V(sources), v->sources, v->nsources, sizeof(*v->sources), put_source);
	put_array(w, V(user_files), v->user_files, v->nuser_files, sizeof(*v->user_files),
	          put_user_file);
	put_array(w, V(layout), v->layout, v->nlayout, sizeof(*v->layout), put_rule);
	put_str(w, V(launcher), v->launcher);
	put_strv(w, V(path), v->path, v->npath);
	put_array(w, V(env), v->env, v->nenv, sizeof(*v->env), put_env);
	put_strv(w, V(stage), v->stage, v->nstage);
	put_str(w, V(note), v->note);
	put_array(w, V(parsed), v->parsed, 1, sizeof(*v->parsed), put_ver);
}

#undef V
#define R(field) FIELD(0, struct cfapkg_recipe, field)

/* The recipe's block, the recipe itself at offset 0. */
static void put_recipe(struct writer *w, const struct cfapkg_recipe *r)
{
	place(w, r, sizeof(*r), STRUCT_ALIGN);
	put_str(w, R(name), r->name);
	put_str(w, R(summary), r->summary);
	put_str(w, R(license), r->license);
	put_str(w, R(homepage), r->homepage);
	put_str(w, R(fact), r->fact);
	put_str(w, R(install_hint), r->install_hint);
	put_array(w, R(versions), r->versions, r->nversions, sizeof(*r->versions), put_version);
	put_array(w, R(notes), r->notes, r->nnotes, sizeof(*r->notes), put_note);
	put_str(w, R(file), r->file);
	put_str(w, R(upstream_releases), r->upstream_releases);
	put_str(w, R(upstream_tag), r->upstream_tag);
	put_str(w, R(origin), r->origin);
}

#undef R

/* FNV-1a over 8-byte words: damage is what it finds, not a forger (who
 * could as well rewrite the recipe files themselves). */
static uint64_t checksum(const unsigned char *p, size_t n, uint64_t h)
{
	uint64_t word;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&word, p, 8);
		h = (h ^ word) * UINT64_C(0x100000001b3);
	}
	for (; n; p++, n--)
		h = (h ^ *p) * UINT64_C(0x100000001b3);
	return h;
}

static uint64_t block_sum(const unsigned char *data, size_t size, const uint32_t *slots,
                          size_t nslots)
{
	uint64_t h = checksum(data, size, UINT64_C(0xcbf29ce484222325));

	return checksum((const unsigned char *)slots, nslots * sizeof(*slots), h);
}

/* Stands for the layout of every struct an image holds. */
static unsigned long layout_sign(void)
{
	return (unsigned long)(sizeof(void *) + 3 * sizeof(struct cfapkg_recipe) +
	                       5 * sizeof(struct cfapkg_version) + 7 * sizeof(struct cfapkg_dep) +
	                       11 * sizeof(struct cfapkg_source) + 13 * sizeof(struct cfapkg_artifact) +
	                       17 * sizeof(struct cfapkg_apt_source) + 19 * sizeof(struct cfapkg_deb_pin) +
	                       23 * sizeof(struct cfa_range) + 29 * sizeof(struct cfa_ver) +
	                       31 * sizeof(struct cfapkg_note) + 37 * sizeof(struct cfa_clause));
}

static bool header(char *buf, size_t len, const char key[65], size_t n)
{
	return cfa_snprintf(buf, len, "%s %d %s %lx %s %lu\n", IMAGE_MAGIC, IMAGE_FORMAT,
	                    cfapkg_version_string(), layout_sign(), key, (unsigned long)n);
}

/* What fills block i of an image. */
typedef void block_fn(struct writer *w, size_t i, const void *arg);

/* Appends block i to file and its entry to toc. */
static bool add_block(struct cfa_buf *file, struct entry *toc, block_fn *fill, size_t i,
                      const void *arg)
{
	struct writer w;
	bool ok;

	memset(&w, 0, sizeof(w));
	w.ranges.ranges = true;
	fill(&w, i, arg);
	ok = !w.failed;
	if (ok) {
		toc->offset = file->len;
		toc->size = w.len;
		toc->nslots = w.nslots;
		toc->sum = block_sum(w.data, w.len, w.slots, w.nslots);
		cfa_buf_add(file, (const char *)w.data, w.len);
		cfa_buf_add(file, (const char *)w.slots, w.nslots * sizeof(*w.slots));
	}
	cfa_free(w.data);
	cfa_free(w.slots);
	cfa_free(w.strings.v);
	cfa_free(w.ranges.v);
	return ok;
}

static enum cfapkg_err write_image(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                   size_t n, block_fn *fill, const void *arg)
{
	struct cfa_buf file;
	struct entry *toc = cfa_calloc(n + 1, sizeof(*toc));
	char head[256] = "";
	uint64_t mark = BYTE_ORDER_MARK;
	size_t i, at;
	bool ok = toc && header(head, sizeof(head), key, n);
	enum cfapkg_err e = CFAPKG_E_OK;

	/* No ceiling of its own: each block has one (BLOCK_MAX). */
	cfa_buf_init(&file, SIZE_MAX / 2);
	cfa_buf_adds(&file, head);
	cfa_buf_add(&file, (const char *)&mark, sizeof(mark));
	at = file.len;
	/* The table is written over once the blocks are placed. */
	if (ok)
		cfa_buf_add(&file, (const char *)toc, n * sizeof(*toc));
	for (i = 0; ok && i < n; i++)
		ok = add_block(&file, &toc[i], fill, i, arg);
	if (ok && !file.failed) {
		memcpy(file.data + at, toc, n * sizeof(*toc));
		/* A cache only saves time: a full disk means the next command
		 * builds it again. */
		if ((e = cfa_write_atomic(ctx, path, file.data, file.len)) != CFAPKG_E_NOMEM) {
			cfapkg_ctx_clear_error(ctx);
			e = CFAPKG_E_OK;
		}
	} else if (!toc || file.failed)
		e = cfa_nomem(ctx);
	cfa_buf_fini(&file);
	cfa_free(toc);
	return e;
}

static void recipe_block(struct writer *w, size_t i, const void *arg)
{
	put_recipe(w, ((struct cfapkg_recipe *const *)arg)[i]);
}

enum cfapkg_err cfa_recipe_image_write(struct cfapkg_ctx *ctx, const char *path,
                                       const char key[65], struct cfapkg_recipe *const *recipes,
                                       size_t n)
{
	return write_image(ctx, path, key, n, recipe_block, recipes);
}

/* ---- reading ---- */

static bool entry_sane(const struct entry *t, uint64_t file_size)
{
	/* Each block's first struct is at least a pointer's size. */
	return t->size >= sizeof(void *) && t->size <= BLOCK_MAX &&
	       t->nslots <= t->size / sizeof(void *) && t->offset <= file_size &&
	       t->size + t->nslots * sizeof(uint32_t) <= file_size - t->offset;
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

	if (!header(want, sizeof(want), key, 0))
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

enum cfapkg_err cfa_recipe_image_open(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                      size_t n, struct cfa_recipe_image **out)
{
	struct cfa_recipe_image *im;
	enum cfa_rfile_kind kind;
	/* The header and, for a folder's few recipes, the whole table: one
	 * read, kept on the stack.  Blocks are not served from it but read
	 * again straight into their arena: a copy would touch twice the
	 * fresh pages, and a page fault costs more than a read. */
	char head[1024], line[256];
	uint64_t size = 0;
	size_t got = 0, hlen = 0, table = 0;
	struct cfa_rfile *f = cfa_plat_rfile_open(path, &size, &kind);

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
	if (!(im = cfa_calloc(1, sizeof(*im))) || !(im->toc = cfa_calloc(got + 1, sizeof(*im->toc)))) {
		cfa_free(im);
		cfa_plat_rfile_close(f);
		return cfa_nomem(ctx);
	}
	im->f = f;
	im->size = size;
	im->n = got;
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

/* Block i copied into arena and relocated, in *out; NULL when damaged.
 * Its slot list follows it in the file: both come in one read. */
static enum cfapkg_err read_block(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im, size_t i,
                                  struct cfa_arena *arena, void **out)
{
	const struct entry *t = &im->toc[i];
	unsigned char *data;

	*out = NULL;
	if (im->damaged)
		return CFAPKG_E_OK;
	if (cfa_grow((void **)&im->slots, &im->slots_cap, t->nslots + 1, sizeof(*im->slots)) != 0 ||
	    !(data = cfa_arena_alloc_raw(arena, t->size)))
		return cfa_nomem(ctx);
	if (cfa_plat_rfile_read2(im->f, data, t->size, im->slots, t->nslots * sizeof(*im->slots),
	                         t->offset) &&
	    block_sum(data, t->size, im->slots, t->nslots) == t->sum &&
	    relocate(data, t->size, im->slots, t->nslots))
		*out = data;
	else
		im->damaged = true;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_recipe_image_get(struct cfapkg_ctx *ctx, struct cfa_recipe_image *im, size_t i,
                                     struct cfapkg_recipe **out)
{
	void *data = NULL;
	enum cfapkg_err e = im->toc[i].size < sizeof(**out) ? CFAPKG_E_OK
	                    : read_block(ctx, im, i, &ctx->arena, &data);

	*out = data;
	return e;
}

/* The GPU table's one block: the table's struct, its arena left out. */
static void put_target(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_gpu_target *t = elem;

	put_str(w, FIELD(at, struct cfapkg_gpu_target, gfx), t->gfx);
	put_str(w, FIELD(at, struct cfapkg_gpu_target, generation), t->generation);
	put_str(w, FIELD(at, struct cfapkg_gpu_target, min_hip_sdk), t->min_hip_sdk);
	put_str(w, FIELD(at, struct cfapkg_gpu_target, hsa_override), t->hsa_override);
}

static void put_device(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_gpu_device *d = elem;

	put_str(w, FIELD(at, struct cfapkg_gpu_device, chip), d->chip);
	put_str(w, FIELD(at, struct cfapkg_gpu_device, gfx), d->gfx);
	put_str(w, FIELD(at, struct cfapkg_gpu_device, name), d->name);
}

static void gpus_block(struct writer *w, size_t i, const void *arg)
{
	struct cfa_gpus g = *(const struct cfa_gpus *)arg;

	(void)i;
	memset(&g.arena, 0, sizeof(g.arena));
	place(w, &g, sizeof(g), STRUCT_ALIGN);
	put_array(w, offsetof(struct cfa_gpus, targets), g.targets, g.ntargets, sizeof(*g.targets),
	          put_target);
	put_array(w, offsetof(struct cfa_gpus, devices), g.devices, g.ndevices, sizeof(*g.devices),
	          put_device);
}

enum cfapkg_err cfa_gpus_image_write(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                     const struct cfa_gpus *g)
{
	return write_image(ctx, path, key, 1, gpus_block, g);
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
		e = read_block(ctx, im, 0, &g->arena, (void **)&saved);
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
	cfa_free(im->slots);
	cfa_free(im);
}
