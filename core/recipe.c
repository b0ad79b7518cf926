/*
 * recipe.c - one recipe file into the read-only model of cfapkg.h.
 *
 * The parser refuses anything it does not understand: unknown keys, bad
 * versions or ranges, bad hashes, sources without a reason when they
 * cannot be installed.  Each refusal names the file, the JSON path and the
 * problem, so a recipe author can fix it without reading this code.
 */
#include "core/recipe.h"

#include <stdlib.h>
#include <string.h>

#include "core/debindex.h"
#include "core/dep.h"
#include "core/mem.h"
#include "core/version.h"

const char *const cfa_recipe_keys[] = {"format", "name", "summary", "license", "homepage",
                                       "kind", "fact", "install_hint", "notes", "versions",
                                       "upstream", NULL};
const char *const cfa_upstream_keys[] = {"releases", "tag", NULL};
const char *const cfa_version_keys[] = {"version", "requires", "conflicts", "provides", "os",
                                        "arch", "gfx", "status", "sources", "user_files",
                                        "layout", "launcher", "runtime", "note", NULL};
static const char *const note_keys[] = {"name", "os", "text", NULL};
static const char *const facts_kinds[] = {"driver", "hip_runtime", "hip_sdk", "glibc", NULL};

static bool kind_parse(const char *s, enum cfapkg_kind *k)
{
	/* By enum value, so a kind added or moved cannot shift a name. */
	static const char *const names[] = {[CFAPKG_KIND_PACKAGE] = "package",
	                                    [CFAPKG_KIND_SYSTEM] = "system",
	                                    [CFAPKG_KIND_META] = "meta",
	                                    [CFAPKG_KIND_USER] = "user"};
	int i;

	for (i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*k = (enum cfapkg_kind)i;
			return true;
		}
	return false;
}

/* What each kind must and must not carry. */
static enum cfapkg_err check_kind_shape(struct cfa_jr *jr, const struct cfapkg_recipe *r,
                                        const struct cfapkg_version *v)
{
	switch (r->kind) {
	case CFAPKG_KIND_PACKAGE:
		if (v->nsources == 0)
			return cfa_jr_fail(jr, "a package version needs \"sources\"");
		if (v->nuser_files)
			return cfa_jr_fail(jr, "\"user_files\" belongs to kind \"user\"");
		break;
	case CFAPKG_KIND_USER:
		if (v->nuser_files == 0)
			return cfa_jr_fail(jr, "a user version needs \"user_files\"");
		/* fall through */
	case CFAPKG_KIND_SYSTEM:
	case CFAPKG_KIND_META:
		if (v->nsources)
			return cfa_jr_fail(jr, "only kind \"package\" has \"sources\"");
		if (r->kind != CFAPKG_KIND_USER && v->nuser_files)
			return cfa_jr_fail(jr, "\"user_files\" belongs to kind \"user\"");
		break;
	}
	return CFAPKG_E_OK;
}

static enum cfapkg_err check_lists(struct cfa_jr *jr, struct cfapkg_version *v)
{
	size_t i;

	/* Architectures must be spelled as hosts name them (valid.c); OS names
	 * and targets are checked where they are parsed. */
	for (i = 0; i < v->narch; i++)
		if (!cfa_valid_arch(v->arch[i]))
			return cfa_jr_fail(jr, "arch \"%s\" is not x86_64, aarch64 or x86",
			                   v->arch[i]);
	return CFAPKG_E_OK;
}

/* Whether v requires of the machine's C library at least floor. */
static bool asks_glibc(const struct cfapkg_version *v, const struct cfa_ver *floor)
{
	size_t i;
	unsigned k;

	for (i = 0; i < v->nrequires; i++) {
		const struct cfa_range *r = v->requires[i].range;
		if (strcmp(v->requires[i].name, "glibc") != 0)
			continue;
		/* Only a bound at the floor or above counts: "glibc >= 2.35"
		 * would not check a need of 2.38. */
		for (k = 0; k < r->nclauses; k++)
			if ((r->clauses[k].op == CFA_OP_GE || r->clauses[k].op == CFA_OP_GT ||
			     r->clauses[k].op == CFA_OP_EQ) &&
			    cfa_ver_cmp(&r->clauses[k].ver, floor) >= 0)
				return true;
	}
	return false;
}

/* Debian packages pinned with their Depends say what they need of the C
 * library (libc6 (>= 2.38)); the machine's glibc must be asked for as
 * much, or the plan would not check it. */
static enum cfapkg_err check_glibc_floor(struct cfa_jr *jr, const struct cfapkg_version *v)
{
	char floor[128], why[512];
	struct cfa_ver need;
	size_t i, n;

	for (i = 0; i < v->nsources; i++) {
		const struct cfapkg_apt_source *a = v->sources[i].apt;
		if (!a || !a->pins ||
		    !cfa_deb_pins_closed(a->pins, a->npackages, "libc6", floor, sizeof(floor), why,
		                         sizeof(why)) || !floor[0])
			continue;
		/* A Debian version may carry a revision ("2.38-1"); the
		 * upstream part is what a glibc version is compared with. */
		n = strspn(floor, "0123456789.");
		if (cfa_ver_parse(floor, n, &need, NULL) && !asks_glibc(v, &need))
			return cfa_jr_fail(jr, "its Debian packages need libc6 (>= %s): add \"glibc >= "
			                   "%.*s\" to requires (the C library is the machine's, and "
			                   "the plan checks it)", floor, (int)n, floor);
	}
	return CFAPKG_E_OK;
}

static enum cfapkg_err parse_version(struct cfa_jr *jr, const cJSON *o,
                                     struct cfapkg_recipe *r, struct cfapkg_version *v)
{
	struct cfa_ver *pv;
	const char *why = NULL;
	enum cfapkg_err e;

	v->recipe = r;
	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, cfa_version_keys)) ||
	    (e = cfa_jr_string(jr, o, "version", true, &v->version)))
		return e;
	pv = cfa_arena_alloc(jr->arena, sizeof(*pv));
	if (!pv)
		return cfa_nomem(jr->ctx);
	if (!cfa_ver_parse(v->version, strlen(v->version), pv, &why))
		return cfa_jr_fail(jr, "version \"%s\": %s", v->version, why);
	v->parsed = pv;
	if ((e = cfa_parse_deps(jr, o, "requires", false, &v->requires, &v->nrequires)) ||
	    (e = cfa_parse_deps(jr, o, "conflicts", false, &v->conflicts, &v->nconflicts)) ||
	    (e = cfa_parse_deps(jr, o, "provides", true, &v->provides, &v->nprovides)) ||
	    (e = cfa_parse_machine_lists(jr, o, &v->os, &v->nos, &v->gfx, &v->ngfx)) ||
	    (e = cfa_jr_strings(jr, o, "arch", &v->arch, &v->narch)) ||
	    (e = check_lists(jr, v)) || (e = cfa_parse_status(jr, o, v)) ||
	    (e = cfa_parse_sources(jr, o, v)) || (e = cfa_parse_user_files(jr, o, v)) ||
	    (e = cfa_parse_layout(jr, o, v)) || (e = cfa_parse_runtime(jr, o, v)) ||
	    (e = cfa_jr_string(jr, o, "launcher", false, &v->launcher)) ||
	    (e = cfa_jr_string(jr, o, "note", false, &v->note)))
		return e;
	/* The launcher runs every program of the environment: it must be a
	 * file of the package itself. */
	if (v->launcher && !cfa_safe_relative(v->launcher)) {
		size_t mark = cfa_jr_push_key(jr, "launcher");
		e = cfa_jr_fail(jr, "\"%s\" is not a path inside the package; name the launcher "
		                "relative to the package's folder (\"zluda.exe\")", v->launcher);
		cfa_jr_pop(jr, mark);
		return e;
	}
	if ((e = check_glibc_floor(jr, v)))
		return e;
	return check_kind_shape(jr, r, v);
}

static int version_newest_first(const void *a, const void *b)
{
	const struct cfapkg_version *va = a, *vb = b;
	return cfa_ver_cmp(vb->parsed, va->parsed);
}

static enum cfapkg_err version_item(struct cfa_jr *jr, const cJSON *item, void *elem, void *arg)
{
	return parse_version(jr, item, arg, elem);
}

static enum cfapkg_err parse_versions(struct cfa_jr *jr, const cJSON *root,
                                      struct cfapkg_recipe *r)
{
	struct cfapkg_version *vs = NULL;
	enum cfapkg_err e;
	size_t i, count = 0;

	if (!cJSON_GetObjectItemCaseSensitive(root, "versions"))
		return cfa_jr_fail(jr, "missing required key \"versions\"");
	e = cfa_jr_array(jr, root, "versions", sizeof(*vs), true, version_item, r, (void **)&vs,
	                 &count);
	if (e)
		return e;
	/* Sorted newest first, the order every caller expects; it also puts
	 * equal versions side by side, so one pass finds a version given
	 * twice. */
	qsort(vs, count, sizeof(*vs), version_newest_first);
	for (i = 1; i < count; i++)
		if (cfa_ver_cmp(vs[i - 1].parsed, vs[i].parsed) == 0)
			return cfa_jr_fail(jr, "versions: \"%s\" and \"%s\" are the same version",
			                   vs[i - 1].version, vs[i].version);
	r->versions = vs;
	r->nversions = count;
	return CFAPKG_E_OK;
}

static enum cfapkg_err note_item(struct cfa_jr *jr, const cJSON *item, void *elem, void *arg)
{
	struct cfapkg_note *note = elem;
	const char *const *gfx;
	size_t ngfx;
	enum cfapkg_err e;

	(void)arg;
	if ((e = cfa_jr_object(jr, item)) || (e = cfa_jr_keys(jr, item, note_keys)) ||
	    (e = cfa_jr_string(jr, item, "name", true, &note->name)) ||
	    (e = cfa_jr_string(jr, item, "text", true, &note->text)))
		return e;
	return cfa_parse_machine_lists(jr, item, &note->os, &note->nos, &gfx, &ngfx);
}

/* Where 'cfapkg recipe outdated' looks for new versions. */
static enum cfapkg_err parse_upstream(struct cfa_jr *jr, const cJSON *root,
                                      struct cfapkg_recipe *r)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "upstream");
	size_t mark;
	char why[256];
	enum cfapkg_err e;

	if (!o)
		return CFAPKG_E_OK;
	mark = cfa_jr_push_key(jr, "upstream");
	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, cfa_upstream_keys)) ||
	    (e = cfa_jr_string(jr, o, "releases", false, &r->upstream_releases)) ||
	    (e = cfa_jr_string(jr, o, "tag", false, &r->upstream_tag)))
		goto out;
	/* Only a web address: 'recipe outdated' fetches it, and any other
	 * scheme (file://) would read this machine's files on a recipe's
	 * say-so. */
	if (r->upstream_releases && strncmp(r->upstream_releases, "https://", 8) != 0 &&
	    strncmp(r->upstream_releases, "http://", 7) != 0)
		e = cfa_jr_fail(jr, "releases must start with https:// or http://");
	else if (r->upstream_tag && !cfa_tag_pattern_check(r->upstream_tag, why, sizeof(why)))
		e = cfa_jr_fail(jr, "tag \"%s\": %s", r->upstream_tag, why);
out:
	cfa_jr_pop(jr, mark);
	return e;
}

static enum cfapkg_err parse_notes(struct cfa_jr *jr, const cJSON *root, struct cfapkg_recipe *r)
{
	return cfa_jr_array(jr, root, "notes", sizeof(*r->notes), false, note_item, NULL,
	                    (void **)&r->notes, &r->nnotes);
}

/* "dir/zluda.json" must hold the recipe named "zluda", so that the file a
 * recipe is in can be told from its name and two files cannot both claim one
 * name. */
static bool name_matches_file(const char *file, const char *name)
{
	const char *base = file, *p;
	size_t n;

	for (p = file; *p; p++)
		if (*p == '/' || *p == '\\')
			base = p + 1;
	n = strlen(base);
	return n > 5 && strcmp(base + n - 5, ".json") == 0 && strlen(name) == n - 5 &&
	       strncmp(base, name, n - 5) == 0;
}

static enum cfapkg_err parse_header(struct cfa_jr *jr, const cJSON *root, struct cfapkg_recipe *r)
{
	const char *kind = "package";
	int64_t format = 0;
	enum cfapkg_err e;
	const char *const *fk;

	if ((e = cfa_jr_object(jr, root)) || (e = cfa_jr_keys(jr, root, cfa_recipe_keys)) ||
	    (e = cfa_jr_int(jr, root, "format", 1, 1000, true, &format)))
		return e;
	/* Any plausible number is read first, so that a newer recipe is told
	 * which format this cfapkg reads rather than that its number is out of
	 * range. */
	if (format != CFA_RECIPE_FORMAT)
		return cfa_jr_fail(jr, "format %lld is not supported (this cfapkg reads format %d)",
		                   (long long)format, CFA_RECIPE_FORMAT);
	if ((e = cfa_jr_string(jr, root, "name", true, &r->name)) ||
	    (e = cfa_jr_string(jr, root, "summary", true, &r->summary)) ||
	    (e = cfa_jr_string(jr, root, "license", false, &r->license)) ||
	    (e = cfa_jr_string(jr, root, "homepage", false, &r->homepage)) ||
	    (e = cfa_jr_string(jr, root, "kind", false, &kind)) ||
	    (e = cfa_jr_string(jr, root, "fact", false, &r->fact)) ||
	    (e = cfa_jr_string(jr, root, "install_hint", false, &r->install_hint)))
		return e;
	if (!cfa_name_valid(r->name, strlen(r->name)))
		return cfa_jr_fail(jr, "name \"%s\" may hold only letters, digits, '.', '_', '-'",
		                   r->name);
	if (!name_matches_file(jr->file, r->name))
		return cfa_jr_fail(jr, "recipe \"%s\" must be in a file named %s.json", r->name,
		                   r->name);
	if (!kind_parse(kind, &r->kind))
		return cfa_jr_fail(jr, "kind \"%s\" is not package, system, meta or user", kind);
	/* A system part is found by what detection knows of the machine, so it
	 * must name that fact; no other kind is judged by one. */
	if ((r->kind == CFAPKG_KIND_SYSTEM) != (r->fact != NULL))
		return cfa_jr_fail(jr, "\"fact\" is required for kind \"system\" and only there");
	for (fk = facts_kinds; r->fact && *fk && strcmp(*fk, r->fact) != 0; fk++)
		;
	if (r->fact && !*fk)
		return cfa_jr_fail(jr, "fact \"%s\" is not driver, hip_runtime, hip_sdk or glibc", r->fact);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_recipe_parse_json(struct cfapkg_ctx *ctx, const char *file,
                                      const cJSON *root, struct cfapkg_recipe **out)
{
	struct cfapkg_recipe *r;
	struct cfa_jr jr;
	enum cfapkg_err e;

	cfa_jr_init(&jr, ctx, &ctx->arena, file, CFAPKG_E_RECIPE);
	r = cfa_arena_alloc(&ctx->arena, sizeof(*r));
	if (!r || !(r->file = cfa_arena_strdup(&ctx->arena, file)))
		return cfa_nomem(ctx);
	if ((e = parse_header(&jr, root, r)) || (e = parse_upstream(&jr, root, r)) ||
	    (e = parse_notes(&jr, root, r)) || (e = parse_versions(&jr, root, r)))
		return e;
	*out = r;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_recipe_parse(struct cfapkg_ctx *ctx, const char *file,
                                 struct cfapkg_recipe **out)
{
	cJSON *root = NULL;
	enum cfapkg_err e;

	e = cfa_json_read_file(ctx, file, CFAPKG_E_RECIPE, &root);
	if (e)
		return e; /* detail set by the reader */
	e = cfa_recipe_parse_json(ctx, file, root, out);
	cJSON_Delete(root);
	return e;
}
