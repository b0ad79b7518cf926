/*
 * fuzz_debindex.c - Debian's index files as cfapkg reads them: a Packages
 * index (core/debindex.c), the closure walked over it (core/debclosure.c)
 * and an InRelease (core/debrelease.c).  The input is read two ways:
 * whole as a Packages index, whose first stanza's package is the root of a
 * closure walked over it, and whole as an InRelease.  Properties, beyond not crashing:
 *   - every package read has a name, a version, a Filename inside the
 *     repository, a 64-hex SHA256 and a size, and the index is sorted by
 *     name, newest version first;
 *   - a closure holds only packages of the index, one version per name,
 *     sorted by name, its roots included, and every Depends clause of every
 *     member is met inside it or by the floor package;
 *   - an InRelease read has a Date and only 64-hex SHA-256s.
 */
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"
#include "core/arena.h"
#include "core/debindex.h"
#include "core/recipe.h"
#include "core/version.h"
#include "tests/fuzz/fuzz.h"

static struct cfapkg_ctx *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ctx = cfapkg_ctx_new();
	return ctx ? 0 : 1;
}

static void check_index(const struct cfa_deb_index *idx)
{
	for (size_t i = 0; i < idx->n; i++) {
		const struct cfa_deb_pkg *p = &idx->pkgs[i];
		FUZZ_CHECK(p->name && *p->name && p->version && *p->version, "package %zu", i);
		FUZZ_CHECK(cfa_safe_relative(p->filename), "%s: Filename %s", p->name, p->filename);
		FUZZ_CHECK(cfa_valid_sha256(p->sha256) && p->size >= 0, "%s: pin", p->name);
		if (i)
			FUZZ_CHECK(strcmp(idx->pkgs[i - 1].name, p->name) < 0 ||
			           (strcmp(idx->pkgs[i - 1].name, p->name) == 0 &&
			            cfa_deb_ver_cmp(idx->pkgs[i - 1].version, p->version) >= 0),
			           "order at %zu", i);
	}
}

/* "Pre-Depends, Depends" in one string, as a recipe keeps them (malloc). */
static char *joined(const char *pre, const char *dep)
{
	size_t a = pre ? strlen(pre) : 0, b = dep ? strlen(dep) : 0;
	char *out = malloc(a + b + 3);

	FUZZ_CHECK(out != NULL, "out of memory");
	memcpy(out, pre ? pre : "", a);
	if (a && b)
		memcpy(out + a, ", ", 2), a += 2;
	memcpy(out + a, dep ? dep : "", b);
	out[a + b] = '\0';
	return out;
}

/* The closure as pins, so the recipe's own closedness check judges it. */
static void check_closure(const struct cfa_deb_index *idx, const struct cfa_deb_closure *c,
                          const char *root)
{
	struct cfapkg_deb_pin *pins = calloc(c->n + 1, sizeof(*pins));
	char floor[128], why[512];
	bool has_root = false;

	FUZZ_CHECK(pins != NULL, "out of memory");
	for (size_t i = 0; i < c->n; i++) {
		const struct cfa_deb_pkg *p = c->pkgs[i];
		FUZZ_CHECK(p >= idx->pkgs && p < idx->pkgs + idx->n, "member %zu not of the index", i);
		if (i)
			FUZZ_CHECK(strcmp(c->pkgs[i - 1]->name, p->name) < 0, "two %s", p->name);
		has_root |= strcmp(p->name, root) == 0;
		pins[i] = (struct cfapkg_deb_pin){p->name, p->version, p->filename, p->sha256, p->size,
		                                  NULL, NULL, p->provides};
		pins[i].depends = joined(p->pre_depends, p->depends);
	}
	FUZZ_CHECK(has_root, "the root %s is not in its closure", root);
	FUZZ_CHECK(cfa_deb_pins_closed(pins, c->n, "libc6", floor, sizeof(floor), why, sizeof(why)),
	           "not closed: %s", why);
	for (size_t i = 0; i < c->n; i++)
		free((char *)pins[i].depends);
	free(pins);
}

static void check_release(const struct cfa_deb_release *r)
{
	FUZZ_CHECK(r->date != NULL, "a Release without a Date accepted");
	FUZZ_CHECK(r->fields.sha256.s != NULL, "a Release without a SHA256 list accepted");
}

/* Whether name is the package of the text's first "Package:" line. */
static bool root_of(const char *text, const char *name)
{
	const char *at = strstr(text, "Package:");
	size_t n = strlen(name);

	if (!at || (at != text && at[-1] != '\n'))
		return false;
	at += 8;
	while (*at == ' ' || *at == '\t')
		at++;
	return strncmp(at, name, n) == 0 && (at[n] == '\n' || at[n] == '\r' || at[n] == ' ' ||
	                                     at[n] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct cfa_arena a;
	struct cfa_deb_index idx;
	struct cfa_deb_closure c;
	struct cfa_deb_release rel;

	cfa_arena_init(&a);
	if (cfa_deb_index_read(ctx, "fuzz", text, strlen(text), "amd64", &a, &idx) == CFAPKG_E_OK) {
		check_index(&idx);
		size_t k = 0;
		while (k < idx.n && !root_of(text, idx.pkgs[k].name))
			k++;
		if (k < idx.n) {
			const struct cfa_deb_index *order[1] = {&idx};
			const char *root = idx.pkgs[k].name;
			if (cfa_deb_closure(ctx, order, 1, &root, 1, "libc6", &a, &c) == CFAPKG_E_OK)
				check_closure(&idx, &c, root);
		}
	}
	cfapkg_ctx_clear_error(ctx);
	if (cfa_deb_release_read(ctx, "fuzz", text, strlen(text), &a, &rel) == CFAPKG_E_OK)
		check_release(&rel);
	cfapkg_ctx_clear_error(ctx);
	cfa_arena_fini(&a);
	free(text);
	return 0;
}
