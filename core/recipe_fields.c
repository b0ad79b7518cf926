/*
 * recipe_fields.c - parsers for the parts of a recipe version: constraints,
 * the platforms of sources (recipe_source.c reads each), status, layout,
 * runtime and user-supplied files.
 */
#include <string.h>

#include "core/dep.h"
#include "core/recipe.h"
#include "core/strbuf.h"

/* Checks each entry of a list against a validator. */
static enum cfapkg_err check_list(struct cfa_jr *jr, const char *key, const char *const *v,
                                  size_t n, bool (*ok)(const char *), const char *what)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!ok(v[i])) {
			/* The entry is named by its index, so that the message
			 * points at it in the file. */
			size_t mark = cfa_jr_push_key(jr, key);
			enum cfapkg_err e;
			cfa_jr_push_index(jr, i);
			e = cfa_jr_fail(jr, "\"%s\" is not %s", v[i], what);
			cfa_jr_pop(jr, mark);
			return e;
		}
	}
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_parse_machine_lists(struct cfa_jr *jr, const cJSON *obj,
                                        const char *const **os, size_t *nos,
                                        const char *const **gfx, size_t *ngfx)
{
	enum cfapkg_err e;

	if ((e = cfa_jr_strings(jr, obj, "os", os, nos)) ||
	    (e = check_list(jr, "os", *os, *nos, cfa_valid_os, "an OS (windows, linux)")) ||
	    (e = cfa_jr_strings(jr, obj, "gfx", gfx, ngfx)) ||
	    (e = check_list(jr, "gfx", *gfx, *ngfx, cfa_valid_gfx, "a GPU target (gfx1200)")))
		return e;
	return CFAPKG_E_OK;
}

static enum cfapkg_err parse_dep_text(struct cfa_jr *jr, const char *text, bool provides,
                                      struct cfapkg_dep *d)
{
	struct cfa_range *r = cfa_arena_alloc(jr->arena, sizeof(*r));
	const char *why = NULL;
	unsigned i;

	if (!r)
		return cfa_nomem(jr->ctx);
	if (!cfa_range_parse(jr->arena, text, r, &why))
		return why ? cfa_jr_fail(jr, "\"%s\": %s", text, why) : cfa_nomem(jr->ctx);
	/* A provide names one version or none: the solver matches requests
	 * against it, so a range there would provide versions nobody built. */
	for (i = 0; provides && i < r->nclauses; i++)
		if (r->nclauses > 1 || r->clauses[i].op != CFA_OP_EQ)
			return cfa_jr_fail(jr, "\"%s\": a provide takes at most one '= version'",
			                   text);
	d->text = r->text;
	d->name = r->name;
	d->range = r;
	return CFAPKG_E_OK;
}

static const char *const dep_obj_keys[] = {"dep", "os", "gfx", NULL};

static enum cfapkg_err parse_one_dep(struct cfa_jr *jr, const cJSON *item, bool provides,
                                     struct cfapkg_dep *d)
{
	const char *text = NULL;
	enum cfapkg_err e;

	/* The short form "name>=1" applies everywhere; the object form adds
	 * the machines it applies on. */
	if (cJSON_IsString(item))
		return parse_dep_text(jr, item->valuestring, provides, d);
	if (!cJSON_IsObject(item))
		return cfa_jr_fail(jr, "expected a string or {\"dep\", \"os\", \"gfx\"}");
	if ((e = cfa_jr_keys(jr, item, dep_obj_keys)) ||
	    (e = cfa_jr_string(jr, item, "dep", true, &text)) ||
	    (e = cfa_parse_machine_lists(jr, item, &d->os, &d->nos, &d->gfx, &d->ngfx)))
		return e;
	return parse_dep_text(jr, text, provides, d);
}

static enum cfapkg_err dep_item(struct cfa_jr *jr, const cJSON *item, void *elem, void *arg)
{
	return parse_one_dep(jr, item, *(const bool *)arg, elem);
}

enum cfapkg_err cfa_parse_deps(struct cfa_jr *jr, const cJSON *ver, const char *key,
                               bool provides, const struct cfapkg_dep **out, size_t *n)
{
	return cfa_jr_array(jr, ver, key, sizeof(**out), false, dep_item, &provides, (void **)out,
	                    n);
}

static enum cfapkg_err check_platform_key(struct cfa_jr *jr, const char *key)
{
	const char *dash = strchr(key, '-');
	char os[16];

	/* The OS is the part before the first dash ("linux" of
	 * "linux-x86_64"): architectures may hold underscores, never dashes. */
	if (!dash || (size_t)(dash - key) >= sizeof(os))
		return cfa_jr_fail(jr, "a source key is OS-ARCH (windows-x86_64)");
	memcpy(os, key, (size_t)(dash - key));
	os[dash - key] = '\0';
	if (!cfa_valid_os(os) || !cfa_valid_arch(dash + 1))
		return cfa_jr_fail(jr, "a source key is OS-ARCH (windows-x86_64, linux-x86_64)");
	return CFAPKG_E_OK;
}

static enum cfapkg_err source_item(struct cfa_jr *jr, const cJSON *m, void *elem, void *arg)
{
	struct cfapkg_source *src = elem;
	enum cfapkg_err e;

	(void)arg;
	/* The member's key is the platform: copied, since cJSON's text goes
	 * with the document once the recipe is parsed. */
	src->platform = cfa_arena_strdup(jr->arena, m->string);
	if (!src->platform)
		return cfa_nomem(jr->ctx);
	if ((e = check_platform_key(jr, m->string)))
		return e;
	return cfa_parse_source(jr, m, src);
}

enum cfapkg_err cfa_parse_sources(struct cfa_jr *jr, const cJSON *ver, struct cfapkg_version *v)
{
	return cfa_jr_members(jr, ver, "sources", sizeof(*v->sources), source_item, NULL,
	                      (void **)&v->sources, &v->nsources);
}

static enum cfapkg_err status_item(struct cfa_jr *jr, const cJSON *m, void *elem, void *arg)
{
	struct cfapkg_gpu_status *st = elem;

	(void)arg;
	/* "*" stands for every target the version does not name. */
	if (strcmp(m->string, "*") != 0 && !cfa_valid_gfx(m->string))
		return cfa_jr_fail(jr, "a status key is a GPU target (gfx1200) or \"*\"");
	if (!cJSON_IsString(m) || !cfa_status_parse(m->valuestring, &st->status))
		return cfa_jr_fail(jr, "expected validated, candidate or experimental");
	st->gfx = cfa_arena_strdup(jr->arena, m->string);
	return st->gfx ? CFAPKG_E_OK : cfa_nomem(jr->ctx);
}

enum cfapkg_err cfa_parse_status(struct cfa_jr *jr, const cJSON *ver, struct cfapkg_version *v)
{
	return cfa_jr_members(jr, ver, "status", sizeof(*v->status), status_item, NULL,
	                      (void **)&v->status, &v->nstatus);
}

static const char *const layout_keys[] = {"path", "as", NULL};

static enum cfapkg_err layout_item(struct cfa_jr *jr, const cJSON *item, void *elem, void *arg)
{
	struct cfapkg_file_rule *rule = elem;
	enum cfapkg_err e;

	(void)arg;
	if ((e = cfa_jr_object(jr, item)) || (e = cfa_jr_keys(jr, item, layout_keys)) ||
	    (e = cfa_jr_string(jr, item, "path", true, &rule->path)) ||
	    (e = cfa_jr_string(jr, item, "as", true, &rule->as)))
		return e;
	/* Both ends are checked: path is read from the store folder and as is
	 * made in the view, and neither may reach outside its package. */
	if (!cfa_safe_relative(rule->path) || !cfa_safe_relative(rule->as))
		return cfa_jr_fail(jr, "paths must be relative and stay inside the package");
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_parse_layout(struct cfa_jr *jr, const cJSON *ver, struct cfapkg_version *v)
{
	return cfa_jr_array(jr, ver, "layout", sizeof(*v->layout), false, layout_item, NULL,
	                    (void **)&v->layout, &v->nlayout);
}

static bool valid_env_name(const char *s)
{
	size_t i;

	/* Upper case, digits and '_': a lower-case name is another variable on
	 * Linux and the same one on Windows, so one recipe would mean two
	 * things. */
	if (!((s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return false;
	for (i = 1; s[i]; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return i <= 128;
}

static enum cfapkg_err env_item(struct cfa_jr *jr, const cJSON *m, void *elem, void *arg)
{
	struct cfapkg_env_var *var = elem;

	(void)arg;
	if (!valid_env_name(m->string))
		return cfa_jr_fail(jr, "not an environment variable name (A-Z, 0-9, _)");
	if (!cJSON_IsString(m))
		return cfa_jr_fail(jr, "expected a string value");
	var->name = cfa_arena_strdup(jr->arena, m->string);
	var->value = cfa_arena_strdup(jr->arena, m->valuestring);
	return var->name && var->value ? CFAPKG_E_OK : cfa_nomem(jr->ctx);
}

static const char *const runtime_keys[] = {"path", "env", "stage", NULL};

enum cfapkg_err cfa_parse_runtime(struct cfa_jr *jr, const cJSON *ver, struct cfapkg_version *v)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(ver, "runtime");
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t mark, i;

	if (!o)
		return CFAPKG_E_OK;
	mark = cfa_jr_push_key(jr, "runtime");
	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, runtime_keys)) ||
	    (e = cfa_jr_strings(jr, o, "path", &v->path, &v->npath)))
		goto out;
	for (i = 0; i < v->npath; i++)
		if (strcmp(v->path[i], ".") != 0 && !cfa_safe_relative(v->path[i])) {
			e = cfa_jr_fail(jr, "path entries are relative to the package (\"bin\")");
			goto out;
		}
	if ((e = cfa_jr_strings(jr, o, "stage", &v->stage, &v->nstage)))
		goto out;
	/* Staging copies files beside a program, into one folder, so an entry
	 * is a file name of the package's top folder or a "*.ext" pattern for
	 * them. */
	for (i = 0; i < v->nstage; i++)
		if (!cfa_safe_relative(v->stage[i]) || strchr(v->stage[i], '/') ||
		    strchr(v->stage[i] + 1, '*') || (v->stage[i][0] == '*' && v->stage[i][1] != '.')) {
			e = cfa_jr_fail(jr, "stage entries are file names in the package's folder, "
			                "or \"*.ext\"");
			goto out;
		}
	e = cfa_jr_members(jr, o, "env", sizeof(*v->env), env_item, NULL, (void **)&v->env,
	                   &v->nenv);
out:
	cfa_jr_pop(jr, mark);
	return e;
}

static const char *const user_file_keys[] = {"name", "sha256", NULL};

static enum cfapkg_err user_file_item(struct cfa_jr *jr, const cJSON *item, void *elem,
                                      void *arg)
{
	struct cfapkg_user_file *uf = elem;
	enum cfapkg_err e;

	(void)arg;
	if ((e = cfa_jr_object(jr, item)) || (e = cfa_jr_keys(jr, item, user_file_keys)) ||
	    (e = cfa_jr_string(jr, item, "name", true, &uf->name)) ||
	    (e = cfa_jr_string(jr, item, "sha256", true, &uf->sha256)))
		return e;
	/* The name becomes view/PART/NAME, so it may not climb out, name a
	 * drive or stream, or hide. */
	if (strpbrk(uf->name, "/\\:") || uf->name[0] == '.')
		return cfa_jr_fail(jr, "name must be a plain file name");
	return cfa_valid_sha256(uf->sha256) ? CFAPKG_E_OK
	                                    : cfa_jr_fail(jr, "sha256 must be 64 hex digits");
}

enum cfapkg_err cfa_parse_user_files(struct cfa_jr *jr, const cJSON *ver,
                                     struct cfapkg_version *v)
{
	return cfa_jr_array(jr, ver, "user_files", sizeof(*v->user_files), true, user_file_item,
	                    NULL, (void **)&v->user_files, &v->nuser_files);
}
