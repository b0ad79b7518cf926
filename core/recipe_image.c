/*
 * recipe_image.c - parsed recipes saved as this build's own structs.
 *
 * Each recipe becomes a region of blocks: its structs, arrays and strings
 * copied into one buffer with pointers written as offsets from the
 * block's start, then the list of those pointer slots.  Reading a block
 * is one read and one pass that adds the block's address to every listed
 * slot: no JSON is parsed and no small allocation made, which is what a
 * warm plan spends its time on (each fresh page of a parse's trees costs
 * a page fault).
 *
 * A region's first block is the recipe's head: the recipe and what a
 * plan reads of every version it reaches (needs, status, the sources'
 * platforms, downloads and reasons).  Each version's details (its
 * sources' archive lists and mirrors, APT packages and pins, user files,
 * layout, runtime and note) are a block of their own after it, read only
 * for the versions a plan picks (cfa_recipe_image_details), or with the
 * head in one read when the whole recipe is wanted.
 *
 * The GPU table (gpus.json) is kept the same way, as an image of one block,
 * and so is a generation's lock (lock.json read back once at commit), whose
 * key is its JSON's checksum and length: a no-op install and a launch then
 * read the environment's set without parsing JSON or mapping cJSON.
 *
 * The file is "cfapkg-recipe-image 2 VERSION LAYOUT KEY N\n", a byte-order
 * mark, N table entries and the regions.  LAYOUT sums the sizes of the
 * structs it holds, so another build's image is not read as this one's;
 * KEY is the recipe index's (the folder's files); each block's checksum
 * finds damage, and a damaged block is parsed from its file instead.
 * This file writes images; image_read.c reads them back.
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/dep.h"
#include "core/gpus.h"
#include "core/image_format.h"
#include "core/mem.h"
#include "core/recipe_image.h"
#include "core/strbuf.h"
#include "platform/platform.h"

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
	size_t i = (size_t)cfa_image_checksum((const unsigned char *)s, n, FNV_START) & mask;

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

/* Zeros over size bytes at at: a field a block leaves to another. */
static void clear(struct writer *w, size_t at, size_t size)
{
	if (!w->failed)
		memset(w->data + at, 0, size);
}

/* A count or flag copied as it is. */
static void put_plain(struct writer *w, size_t at, const void *v, size_t size)
{
	if (!w->failed)
		memcpy(w->data + at, v, size);
}

#define CLEAR(at, type, field) clear(w, FIELD(at, type, field), sizeof(((type *)0)->field))
#define PLAIN(at, type, field, from) \
	put_plain(w, FIELD(at, type, field), &(from)->field, sizeof((from)->field))

/* An APT source as a plan reads it: where it is and how it is trusted.
 * Its lists (packages, pins, mirrors) wait in the version's details. */
static void put_apt_head(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_apt_source *a = elem;

	put_str(w, FIELD(at, struct cfapkg_apt_source, repository), a->repository);
	put_str(w, FIELD(at, struct cfapkg_apt_source, suite), a->suite);
	put_str(w, FIELD(at, struct cfapkg_apt_source, component), a->component);
	put_str(w, FIELD(at, struct cfapkg_apt_source, arch), a->arch);
	put_str(w, FIELD(at, struct cfapkg_apt_source, index), a->index);
	put_str(w, FIELD(at, struct cfapkg_apt_source, index_sha256), a->index_sha256);
	put_str(w, FIELD(at, struct cfapkg_apt_source, key_fingerprint), a->key_fingerprint);
	put_str(w, FIELD(at, struct cfapkg_apt_source, key_url), a->key_url);
	put_str(w, FIELD(at, struct cfapkg_apt_source, keyring), a->keyring);
	put_str(w, FIELD(at, struct cfapkg_apt_source, seen), a->seen);
	CLEAR(at, struct cfapkg_apt_source, packages);
	CLEAR(at, struct cfapkg_apt_source, npackages);
	CLEAR(at, struct cfapkg_apt_source, pins);
	CLEAR(at, struct cfapkg_apt_source, mirrors);
	CLEAR(at, struct cfapkg_apt_source, nmirrors);
}

/* A source as a plan reads it: its platform, its download and why it
 * cannot be installed.  Its archives and mirrors wait in the details. */
static void put_source_head(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_source *s = elem;

	put_str(w, FIELD(at, struct cfapkg_source, platform), s->platform);
	put_array(w, FIELD(at, struct cfapkg_source, apt), s->apt, 1, sizeof(*s->apt), put_apt_head);
	put_str(w, FIELD(at, struct cfapkg_source, url), s->url);
	put_str(w, FIELD(at, struct cfapkg_source, sha256), s->sha256);
	put_str(w, FIELD(at, struct cfapkg_source, format), s->format);
	put_str(w, FIELD(at, struct cfapkg_source, unavailable), s->unavailable);
	put_str(w, FIELD(at, struct cfapkg_source, provenance), s->provenance);
	put_str(w, FIELD(at, struct cfapkg_source, first_use), s->first_use);
	CLEAR(at, struct cfapkg_source, artifacts);
	CLEAR(at, struct cfapkg_source, nartifacts);
	CLEAR(at, struct cfapkg_source, mirrors);
	CLEAR(at, struct cfapkg_source, nmirrors);
}

/* An APT source's lists: packages, pins and mirrors. */
static void put_apt_lists(struct writer *w, size_t at, const struct cfapkg_apt_source *a)
{
	PLAIN(at, struct cfapkg_apt_source, npackages, a);
	PLAIN(at, struct cfapkg_apt_source, nmirrors, a);
	put_strv(w, FIELD(at, struct cfapkg_apt_source, packages), a->packages, a->npackages);
	put_array(w, FIELD(at, struct cfapkg_apt_source, pins), a->pins, a->npackages,
	          sizeof(*a->pins), put_pin);
	put_strv(w, FIELD(at, struct cfapkg_apt_source, mirrors), a->mirrors, a->nmirrors);
}

/* The details' side of an APT source, over zeros: its lists alone. */
static void put_apt_details(struct writer *w, size_t at, const void *elem)
{
	clear(w, at, sizeof(struct cfapkg_apt_source));
	put_apt_lists(w, at, elem);
}

/* The details' side of a source, over zeros: its archives and mirrors. */
static void put_source_details(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_source *s = elem;

	clear(w, at, sizeof(*s));
	PLAIN(at, struct cfapkg_source, nartifacts, s);
	PLAIN(at, struct cfapkg_source, nmirrors, s);
	put_array(w, FIELD(at, struct cfapkg_source, artifacts), s->artifacts, s->nartifacts,
	          sizeof(*s->artifacts), put_artifact);
	put_strv(w, FIELD(at, struct cfapkg_source, mirrors), s->mirrors, s->nmirrors);
	put_array(w, FIELD(at, struct cfapkg_source, apt), s->apt, 1, sizeof(*s->apt),
	          put_apt_details);
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

/* A version as a plan reads it: its needs, and its sources' heads.  The
 * rest is its details block's (put_details): left empty here, and
 * pending names where it waits once the head is read. */
static void put_version(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_version *v = elem;

	put_str(w, V(version), v->version);
	/* Every version's recipe is the block's first struct. */
	link_to(w, V(recipe), 0, true);
	put_version_needs(w, at, v);
	put_array(w, V(sources), v->sources, v->nsources, sizeof(*v->sources), put_source_head);
	put_array(w, V(parsed), v->parsed, 1, sizeof(*v->parsed), put_ver);
	CLEAR(at, struct cfapkg_version, user_files);
	CLEAR(at, struct cfapkg_version, nuser_files);
	CLEAR(at, struct cfapkg_version, layout);
	CLEAR(at, struct cfapkg_version, nlayout);
	CLEAR(at, struct cfapkg_version, launcher);
	CLEAR(at, struct cfapkg_version, path);
	CLEAR(at, struct cfapkg_version, npath);
	CLEAR(at, struct cfapkg_version, env);
	CLEAR(at, struct cfapkg_version, nenv);
	CLEAR(at, struct cfapkg_version, stage);
	CLEAR(at, struct cfapkg_version, nstage);
	CLEAR(at, struct cfapkg_version, note);
	CLEAR(at, struct cfapkg_version, pending);
}

/* A version's details block: a version struct at offset 0 that holds
 * only what its head leaves out, its sources' details beside it. */
static void put_details(struct writer *w, const struct cfapkg_version *v)
{
	size_t at = place(w, NULL, sizeof(*v), STRUCT_ALIGN);

	PLAIN(at, struct cfapkg_version, nsources, v);
	PLAIN(at, struct cfapkg_version, nuser_files, v);
	PLAIN(at, struct cfapkg_version, nlayout, v);
	PLAIN(at, struct cfapkg_version, npath, v);
	PLAIN(at, struct cfapkg_version, nenv, v);
	PLAIN(at, struct cfapkg_version, nstage, v);
	put_array(w, V(sources), v->sources, v->nsources, sizeof(*v->sources), put_source_details);
	put_array(w, V(user_files), v->user_files, v->nuser_files, sizeof(*v->user_files),
	          put_user_file);
	put_array(w, V(layout), v->layout, v->nlayout, sizeof(*v->layout), put_rule);
	put_str(w, V(launcher), v->launcher);
	put_strv(w, V(path), v->path, v->npath);
	put_array(w, V(env), v->env, v->nenv, sizeof(*v->env), put_env);
	put_strv(w, V(stage), v->stage, v->nstage);
	put_str(w, V(note), v->note);
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
uint64_t cfa_image_checksum(const unsigned char *p, size_t n, uint64_t h)
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

uint64_t cfa_image_block_sum(const unsigned char *data, size_t size, const uint32_t *slots,
                             size_t nslots)
{
	uint64_t h = cfa_image_checksum(data, size, FNV_START);

	return cfa_image_checksum((const unsigned char *)slots, nslots * sizeof(*slots), h);
}

/* Stands for the layout of every struct an image holds. */
static unsigned long layout_sign(void)
{
	return (unsigned long)(sizeof(void *) + 3 * sizeof(struct cfapkg_recipe) +
	                       5 * sizeof(struct cfapkg_version) + 7 * sizeof(struct cfapkg_dep) +
	                       11 * sizeof(struct cfapkg_source) + 13 * sizeof(struct cfapkg_artifact) +
	                       17 * sizeof(struct cfapkg_apt_source) + 19 * sizeof(struct cfapkg_deb_pin) +
	                       23 * sizeof(struct cfa_range) + 29 * sizeof(struct cfa_ver) +
	                       31 * sizeof(struct cfapkg_note) + 37 * sizeof(struct cfa_clause) +
	                       41 * sizeof(struct cfapkg_lockfile) +
	                       43 * sizeof(struct cfapkg_lockfile_part));
}

bool cfa_image_header(char *buf, size_t len, const char key[65], size_t n)
{
	return cfa_snprintf(buf, len, "%s %d %s %lx %s %lu\n", IMAGE_MAGIC, IMAGE_FORMAT,
	                    cfapkg_version_string(), layout_sign(), key, (unsigned long)n);
}

/* What fills block i of an image (k: its k-th details block), and how
 * many details blocks follow it (none for the GPU table). */
typedef void fill_fn(struct writer *w, size_t i, size_t k, const void *arg);
struct image_kind {
	fill_fn *head, *details;
	size_t (*ndetails)(size_t i, const void *arg);
};

/* Zeros up to the next multiple of STRUCT_ALIGN from a region's start:
 * a region read whole keeps every block and list aligned. */
static void pad_from(struct cfa_buf *file, size_t start)
{
	static const char zeros[STRUCT_ALIGN];

	cfa_buf_add(file, zeros, (STRUCT_ALIGN - (file->len - start) % STRUCT_ALIGN) % STRUCT_ALIGN);
}

/* Appends block (i, k), its data padded and its slot list after it, and
 * fills its entry (the sum over data and slots). */
static bool add_block(struct cfa_buf *file, size_t start, struct entry *t, fill_fn *fill,
                      size_t i, size_t k, const void *arg)
{
	struct writer w;
	bool ok;

	memset(&w, 0, sizeof(w));
	w.ranges.ranges = true;
	fill(&w, i, k, arg);
	place(&w, NULL, 0, STRUCT_ALIGN);
	ok = !w.failed;
	if (ok) {
		pad_from(file, start);
		t->offset = file->len;
		t->size = w.len;
		t->nslots = w.nslots;
		t->sum = cfa_image_block_sum(w.data, w.len, w.slots, w.nslots);
		cfa_buf_add(file, (const char *)w.data, w.len);
		/* A details block may point at nothing: no slots, no list. */
		if (w.nslots)
			cfa_buf_add(file, (const char *)w.slots, w.nslots * sizeof(*w.slots));
	}
	cfa_free(w.data);
	cfa_free(w.slots);
	cfa_free(w.strings.v);
	cfa_free(w.ranges.v);
	return ok;
}

/* Entry i's region: its block, the table of its details blocks (which
 * its sum covers too), then those blocks. */
static bool add_region(struct cfa_buf *file, struct entry *t, const struct image_kind *kind,
                       size_t i, const void *arg)
{
	size_t start = file->len, table = 0, k, n = kind->ndetails ? kind->ndetails(i, arg) : 0;
	struct entry *details = cfa_calloc(n + 1, sizeof(*details));
	bool ok = details && add_block(file, start, t, kind->head, i, 0, arg);

	/* A region without details ends at its slots. */
	if (ok && n) {
		pad_from(file, start);
		table = file->len;
		cfa_buf_add(file, (const char *)details, n * sizeof(*details));
	}
	for (k = 0; ok && k < n; k++)
		ok = add_block(file, start, &details[k], kind->details, i, k, arg);
	if (ok && !file->failed) {
		memcpy(file->data + table, details, n * sizeof(*details));
		t->sum = cfa_image_checksum((const unsigned char *)details, n * sizeof(*details), t->sum);
		t->ndetails = n;
		t->span = file->len - start;
	}
	cfa_free(details);
	return ok;
}

static enum cfapkg_err write_image(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                   size_t n, const struct image_kind *kind, const void *arg)
{
	struct cfa_buf file;
	struct entry *toc = cfa_calloc(n + 1, sizeof(*toc));
	char head[256] = "";
	uint64_t mark = BYTE_ORDER_MARK;
	size_t i, at;
	bool ok = toc && cfa_image_header(head, sizeof(head), key, n);
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
		ok = add_region(&file, &toc[i], kind, i, arg);
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

static void recipe_head(struct writer *w, size_t i, size_t k, const void *arg)
{
	(void)k;
	put_recipe(w, ((struct cfapkg_recipe *const *)arg)[i]);
}

static void version_details(struct writer *w, size_t i, size_t k, const void *arg)
{
	put_details(w, &((struct cfapkg_recipe *const *)arg)[i]->versions[k]);
}

static size_t recipe_versions(size_t i, const void *arg)
{
	return ((struct cfapkg_recipe *const *)arg)[i]->nversions;
}

enum cfapkg_err cfa_recipe_image_write(struct cfapkg_ctx *ctx, const char *path,
                                       const char key[65], struct cfapkg_recipe *const *recipes,
                                       size_t n)
{
	static const struct image_kind recipes_kind = {recipe_head, version_details,
	                                               recipe_versions};

	return write_image(ctx, path, key, n, &recipes_kind, recipes);
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

static void gpus_block(struct writer *w, size_t i, size_t k, const void *arg)
{
	struct cfa_gpus g = *(const struct cfa_gpus *)arg;

	(void)i;
	(void)k;
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
	static const struct image_kind gpus_kind = {gpus_block, NULL, NULL};

	return write_image(ctx, path, key, 1, &gpus_kind, g);
}

/* An APT source whole, head and lists, as a lock's part carries it. */
static void put_apt_whole(struct writer *w, size_t at, const void *elem)
{
	put_apt_head(w, at, elem);
	put_apt_lists(w, at, elem);
}

#define P(field) FIELD(at, struct cfapkg_lockfile_part, field)

/* Every pointer of a part is rewritten here: one left out would be read
 * back as this process's address. */
static void put_part(struct writer *w, size_t at, const void *elem)
{
	const struct cfapkg_lockfile_part *p = elem;

	put_str(w, P(name), p->name);
	put_str(w, P(version), p->version);
	put_str(w, P(url), p->url);
	put_strv(w, P(mirrors), p->mirrors, p->nmirrors);
	put_str(w, P(sha256), p->sha256);
	put_str(w, P(format), p->format);
	put_str(w, P(store), p->store);
	put_array(w, P(artifacts), p->artifacts, p->nartifacts, sizeof(*p->artifacts), put_artifact);
	put_array(w, P(apt), p->apt, 1, sizeof(*p->apt), put_apt_whole);
	put_strv(w, P(gfx), p->gfx, p->ngfx);
	put_array(w, P(layout), p->layout, p->nlayout, sizeof(*p->layout), put_rule);
	put_str(w, P(launcher), p->launcher);
	put_strv(w, P(path), p->path, p->npath);
	put_array(w, P(env), p->env, p->nenv, sizeof(*p->env), put_env);
	put_strv(w, P(stage), p->stage, p->nstage);
	put_array(w, P(user_files), p->user_files, p->nuser_files, sizeof(*p->user_files),
	          put_user_file);
	put_strv(w, P(requires), p->requires, p->nrequires);
	put_strv(w, P(provides), p->provides, p->nprovides);
}

#undef P

/* A generation's lock: one block, the lock's struct with its facts, its
 * requests and its parts, the arena and file name left out. */
static void lock_block(struct writer *w, size_t i, size_t k, const void *arg)
{
	const struct cfapkg_lockfile *l = arg;
	const struct cfapkg_facts *f = &l->facts;
	size_t at = place(w, l, sizeof(*l), STRUCT_ALIGN), list;

	(void)i;
	(void)k;
	put_str(w, FIELD(at, struct cfapkg_lockfile, facts.arch), f->arch);
	put_str(w, FIELD(at, struct cfapkg_lockfile, facts.driver), f->driver);
	put_str(w, FIELD(at, struct cfapkg_lockfile, facts.glibc), f->glibc);
	put_strv(w, FIELD(at, struct cfapkg_lockfile, facts.hip_sdks),
	         (const char *const *)f->hip_sdks, f->nhip_sdks);
	list = f->hip_runtimes ? place(w, f->hip_runtimes, f->nhip_runtimes * sizeof(unsigned),
	                               alignof(unsigned))
	                       : 0;
	link_to(w, FIELD(at, struct cfapkg_lockfile, facts.hip_runtimes), list,
	        f->hip_runtimes != NULL);
	put_strv(w, FIELD(at, struct cfapkg_lockfile, requests), l->requests, l->nrequests);
	put_array(w, FIELD(at, struct cfapkg_lockfile, parts), l->parts, l->nparts,
	          sizeof(*l->parts), put_part);
	link_to(w, FIELD(at, struct cfapkg_lockfile, file), 0, false);
	link_to(w, FIELD(at, struct cfapkg_lockfile, arena), 0, false);
}

void cfa_lock_image_key(const void *json, size_t len, char key[65])
{
	uint64_t sum = cfa_image_checksum(json, len, FNV_START);

	if (!cfa_snprintf(key, 65, "lock.%016llx.%llu", (unsigned long long)sum,
	                  (unsigned long long)len))
		key[0] = '\0';
}

enum cfapkg_err cfa_lock_image_write(struct cfapkg_ctx *ctx, const char *path, const char key[65],
                                     const struct cfapkg_lockfile *l)
{
	static const struct image_kind lock_kind = {lock_block, NULL, NULL};

	return write_image(ctx, path, key, 1, &lock_kind, l);
}
