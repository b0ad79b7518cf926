/*
 * cmd_query.c - 'cfapkg search' and 'cfapkg info': what the recipes offer.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* Case-insensitive substring test. */
static bool contains(const char *hay, const char *needle)
{
	size_t n = strlen(needle), i, j;

	if (!hay)
		return false;
	for (i = 0; hay[i]; i++) {
		for (j = 0; j < n && hay[i + j] &&
		            tolower((unsigned char)hay[i + j]) == tolower((unsigned char)needle[j]);
		     j++)
			;
		if (j == n)
			return true;
	}
	return n == 0;
}

/* search [PATTERN]: recipes whose name or summary hold the pattern, in any
 * case; no pattern lists them all.  Nothing found is EXIT_NOTFOUND, so a
 * script can tell "no such package" from an error. */
int cmd_search(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *pattern = cli->nargs ? cli->args[0] : "";
	cJSON *arr = cJSON_CreateArray();
	struct table t;
	size_t i, n, found = 0;
	const struct cfapkg_recipe *const *all = cfapkg_recipes(ctx, &n);

	/* The table and the JSON array are both built as recipes are read; the
	 * one not wanted is freed at the end. */
	table_init(&t, 4);
	table_row(&t, (const char *const[]){"NAME", "LATEST", "KIND", "SUMMARY"});
	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *r = all[i];
		cJSON *o;
		if (!contains(r->name, pattern) && !contains(r->summary, pattern))
			continue;
		found++;
		if (cli->quiet && !cli->json)
			printf("%s\n", r->name); /* names only, for completion scripts */
		/* A recipe's versions are sorted newest first: versions[0] is
		 * its latest. */
		table_row(&t, (const char *const[]){r->name, r->versions[0].version,
		                                    cfapkg_kind_name(r->kind), r->summary});
		o = cJSON_CreateObject();
		json_str(o, "name", r->name);
		json_str(o, "latest", r->versions[0].version);
		json_str(o, "kind", cfapkg_kind_name(r->kind));
		json_str(o, "summary", r->summary);
		cJSON_AddItemToArray(arr, o);
	}
	if (cli->json) {
		json_print_list("recipes", arr);
		table_free(&t);
	} else {
		cJSON_Delete(arr);
		if (found && !cli->quiet)
			table_print(&t);
		else
			table_free(&t);
	}
	if (!found) {
		cli_error("no recipe matches \"%s\"\n", pattern);
		return EXIT_NOTFOUND;
	}
	return EXIT_OK;
}

/* The requirements as written in the recipe, not as the solver reads them:
 * what a person would type. */
static cJSON *deps_json(const struct cfapkg_dep *d, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(d[i].text));
	return a;
}

/* Where an APT source's trust comes from: its pinned index, or its key. */
static cJSON *apt_json(const struct cfapkg_apt_source *a)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "repository", a->repository);
	json_str(o, "suite", a->suite);
	json_str(o, "component", a->component);
	json_str(o, "index_sha256", a->index_sha256);
	json_str(o, "key_fingerprint", a->key_fingerprint);
	json_str(o, "key_url", a->key_url);
	json_str(o, "keyring", a->keyring);
	return o;
}

/* The key that signs an APT source is what a user must trust; without one, the
 * recipe's pinned index hash is the trust. */
static void print_apt(const struct cfapkg_apt_source *a)
{
	printf(" - APT %s %s/%s, ", a->repository, a->suite, a->component);
	if (a->key_fingerprint)
		printf("signed by key %s", a->key_fingerprint);
	else if (a->keyring)
		printf("signed by a key of %s", a->keyring);
	else
		printf("index pinned");
	if (a->keyring && a->key_fingerprint)
		printf(" of %s", a->keyring);
}

/* One version in info --json; "status" only when --gpu named a target to judge
 * it against. */
static cJSON *version_json(struct cfapkg_ctx *ctx, const struct cfapkg_version *v,
                           const char *gfx, bool installed)
{
	cJSON *o = cJSON_CreateObject(), *src = cJSON_AddArrayToObject(o, "sources");
	size_t i;

	json_str(o, "version", v->version);
	cJSON_AddBoolToObject(o, "installed", installed);
	if (gfx)
		json_str(o, "status", cfapkg_status_name(cfapkg_version_status(ctx, v, gfx)));
	cJSON_AddItemToObject(o, "requires", deps_json(v->requires, v->nrequires));
	cJSON_AddItemToObject(o, "provides", deps_json(v->provides, v->nprovides));
	cJSON_AddItemToObject(o, "conflicts", deps_json(v->conflicts, v->nconflicts));
	cJSON_AddItemToObject(o, "gfx", cJSON_CreateStringArray(v->gfx, (int)v->ngfx));
	cJSON_AddItemToObject(o, "os", cJSON_CreateStringArray(v->os, (int)v->nos));
	for (i = 0; i < v->nsources; i++) {
		const struct cfapkg_source *s = &v->sources[i];
		cJSON *j = cJSON_CreateObject();
		json_str(j, "platform", s->platform);
		json_str(j, "url", s->url);
		json_str(j, "sha256", s->sha256);
		if (s->size >= 0)
			cJSON_AddNumberToObject(j, "size", (double)s->size);
		else
			cJSON_AddNullToObject(j, "size");
		json_str(j, "format", s->format);
		json_str(j, "unavailable", s->unavailable);
		if (s->apt)
			cJSON_AddItemToObject(j, "apt", apt_json(s->apt));
		if (s->max_size > 0)
			cJSON_AddNumberToObject(j, "max_size", (double)s->max_size);
		json_str(j, "provenance", s->provenance);
		/* Where the hash came from: pinned in the recipe, or
		 * recorded here on first use. */
		json_str(j, "trust", s->first_use ? "first-use" : s->sha256 ? "recipe" : NULL);
		json_str(j, "first_use", s->first_use);
		if (s->apt && s->apt->pins) {
			cJSON_AddNumberToObject(j, "debs", (double)s->apt->npackages);
			json_str(j, "seen", s->apt->seen);
		}
		cJSON_AddItemToArray(src, j);
	}
	json_str(o, "note", v->note);
	return o;
}

static void print_deps(const char *label, const struct cfapkg_dep *d, size_t n)
{
	size_t i;

	if (!n)
		return;
	printf("    %s:", label);
	for (i = 0; i < n; i++)
		printf("%s %s", i ? "," : "", d[i].text);
	printf("\n");
}

/* A version in info's text: a line of its own, then its note, dependencies,
 * targets and each platform's source. */
static void print_version(struct cfapkg_ctx *ctx, const struct cfapkg_version *v,
                          const char *gfx, const char *installed_in)
{
	char size[32];
	size_t i;

	printf("  %s", v->version);
	if (gfx)
		printf("  [%s on %s]", cfapkg_status_name(cfapkg_version_status(ctx, v, gfx)), gfx);
	if (installed_in)
		printf("  (installed in %s)", installed_in);
	printf("\n");
	if (v->note)
		printf("    %s\n", v->note);
	print_deps("requires", v->requires, v->nrequires);
	print_deps("provides", v->provides, v->nprovides);
	print_deps("conflicts", v->conflicts, v->nconflicts);
	if (v->ngfx) {
		printf("    GPU targets:");
		for (i = 0; i < v->ngfx; i++)
			printf(" %s", v->gfx[i]);
		printf("\n");
	}
	for (i = 0; i < v->nsources; i++) {
		const struct cfapkg_source *s = &v->sources[i];
		printf("    %s: %s, %s", s->platform, s->format, human_size(s->size, size, sizeof(size)));
		if (s->apt)
			print_apt(s->apt);
		if (s->unavailable)
			printf(" - not installable: %s", s->unavailable);
		/* Debian's packages one by one: how many, and where they were seen. */
		if (s->apt && s->apt->pins)
			printf(", %zu .debs from %s%s%s", s->apt->npackages, s->apt->repository,
			       s->apt->seen ? "\n      pins seen in: " : "",
			       s->apt->seen ? s->apt->seen : "");
		printf("\n");
		/* A hash trusted on first use was never compared with a
		 * published one: saying so keeps it from reading like a
		 * recipe's pin. */
		if (s->first_use)
			printf("      trusted on first use here (%s): not checked against anyone else's "
			       "pin\n", s->first_use);
		else if (s->provenance)
			printf("      pin seen in: %s\n", s->provenance);
	}
	if (v->nuser_files)
		printf("    %zu user-supplied file%s, known by SHA-256\n", v->nuser_files,
		       v->nuser_files == 1 ? "" : "s");
}

/* The current set of the environment info marks versions for; NULL when
 * nothing is installed or it cannot be read: info only reads recipes, so
 * an unreadable root must not make it fail. */
static struct cfapkg_lockfile *env_set(struct cfapkg_ctx *ctx, const char *env)
{
	struct cfapkg_lockfile *lock = NULL;
	unsigned gen = 0;

	if (cfapkg_env_check_name(ctx, env) || !cfapkg_env_exists(ctx, env) ||
	    cfapkg_env_current(ctx, env, &gen) || !gen || cfapkg_env_lockfile(ctx, env, gen, &lock))
		lock = NULL;
	cfapkg_ctx_clear_error(ctx);
	return lock;
}

/* Exact name and version: another version of the same recipe is not
 * "installed" here.  A NULL set holds nothing. */
static bool is_installed(const struct cfapkg_lockfile *set, const char *name, const char *version)
{
	size_t i;

	for (i = 0; set && i < set->nparts; i++)
		if (strcmp(set->parts[i].name, name) == 0 && strcmp(set->parts[i].version, version) == 0)
			return true;
	return false;
}

/* The first provide of v named name (a provide may also carry a version:
 * "cublas=11"). */
static const struct cfapkg_dep *provide_of(const struct cfapkg_version *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->nprovides; i++)
		if (strcmp(v->provides[i].name, name) == 0)
			return &v->provides[i];
	return NULL;
}

/* cJSON_CreateStringArray gives NULL, not [], for an empty list. */
static cJSON *strings(const char *const *v, size_t n)
{
	return n ? cJSON_CreateStringArray(v, (int)n) : cJSON_CreateArray();
}

/* One line of "who provides NAME": a recipe's versions that provide it
 * under the same conditions.  A provide without its own os or gfx holds
 * only where its version installs, so the version's lists stand in. */
static cJSON *provider_group(const struct cfapkg_version *v, const struct cfapkg_dep *d)
{
	cJSON *g = cJSON_CreateObject();

	json_str(g, "recipe", v->recipe->name);
	json_str(g, "kind", cfapkg_kind_name(v->recipe->kind));
	json_str(g, "provides", d->text);
	cJSON_AddArrayToObject(g, "versions");
	cJSON_AddArrayToObject(g, "installed");
	cJSON_AddItemToObject(g, "os", d->nos ? strings(d->os, d->nos) : strings(v->os, v->nos));
	cJSON_AddItemToObject(g, "gfx", d->ngfx ? strings(d->gfx, d->ngfx)
	                                        : strings(v->gfx, v->ngfx));
	return g;
}

/* Whether b can join a's line: the same recipe providing the same text under
 * the same os and gfx.  Only neighbours are compared, so a recipe's versions
 * merge while they run in a row. */
static bool same_group(const cJSON *a, const cJSON *b)
{
	static const char *const keys[] = {"recipe", "provides", "os", "gfx"};
	size_t i;

	for (i = 0; a && i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!cJSON_Compare(cJSON_GetObjectItem(a, keys[i]), cJSON_GetObjectItem(b, keys[i]),
		                   true))
			return false;
	return a != NULL;
}

/* Every recipe version that provides name, grouped; [] when none does. */
static cJSON *providers_json(struct cfapkg_ctx *ctx, const char *name,
                             const struct cfapkg_lockfile *set)
{
	cJSON *a = cJSON_CreateArray(), *last = NULL;
	size_t i, j, n;
	const struct cfapkg_recipe *const *all = cfapkg_recipes(ctx, &n);

	for (i = 0; i < n; i++) {
		const struct cfapkg_recipe *r = all[i];
		for (j = 0; j < r->nversions; j++) {
			const struct cfapkg_version *v = &r->versions[j];
			const struct cfapkg_dep *d = provide_of(v, name);
			cJSON *g;
			if (!d)
				continue;
			/* A version that joins the previous group frees its
			 * own and adds its version to that one. */
			g = provider_group(v, d);
			if (same_group(last, g))
				cJSON_Delete(g);
			else
				cJSON_AddItemToArray(a, last = g);
			cJSON_AddItemToArray(cJSON_GetObjectItem(last, "versions"),
			                     cJSON_CreateString(v->version));
			if (is_installed(set, r->name, v->version))
				cJSON_AddItemToArray(cJSON_GetObjectItem(last, "installed"),
				                     cJSON_CreateString(v->version));
		}
	}
	return a;
}

/* "[os: a; gfx: b, c]": where the provide holds; nothing when always.
 * The provide as written only when it says more than the name (a
 * version: "cublas=11"). */
static void print_conditions(const cJSON *g, const char *name)
{
	const char *as = cJSON_GetObjectItem(g, "provides")->valuestring;
	static const char *const keys[] = {"os", "gfx"};
	bool open = strcmp(as, name) != 0;
	const cJSON *it;
	size_t k;

	if (open)
		printf("  [as %s", as);
	for (k = 0; k < 2; k++) {
		const cJSON *arr = cJSON_GetObjectItem(g, keys[k]);
		bool first = true;
		if (!cJSON_GetArraySize(arr))
			continue;
		printf("%s%s:", open ? "; " : "  [", keys[k]);
		open = true;
		cJSON_ArrayForEach(it, arr)
		{
			printf("%s %s", first ? "" : ",", it->valuestring);
			first = false;
		}
	}
	if (open)
		printf("]");
}

/* Each group's versions on one line, marking those installed in env. */
static void print_providers(const cJSON *a, const char *name, const char *env)
{
	const cJSON *g, *v;

	printf("%s is not a recipe; these recipes provide it:\n", name);
	cJSON_ArrayForEach(g, a)
	{
		const cJSON *inst = cJSON_GetObjectItem(g, "installed");
		bool first = true;
		printf("  %s (%s)", cJSON_GetObjectItem(g, "recipe")->valuestring,
		       cJSON_GetObjectItem(g, "kind")->valuestring);
		cJSON_ArrayForEach(v, cJSON_GetObjectItem(g, "versions"))
		{
			const cJSON *k;
			bool here = false;
			cJSON_ArrayForEach(k, inst)
				here |= strcmp(k->valuestring, v->valuestring) == 0;
			printf("%s %s%s%s%s", first ? "" : ",", v->valuestring,
			       here ? " (installed in " : "", here ? env : "", here ? ")" : "");
			first = false;
		}
		print_conditions(g, name);
		printf("\n");
	}
}

/* info NAME for a name that is no recipe: who provides it (exit 0), else
 * "no recipe named", with the names plan would also suggest (exit 4). */
static int info_not_recipe(struct cfapkg_ctx *ctx, const struct cli *cli, const char *name,
                           const struct cfapkg_lockfile *set)
{
	const char *env = env_from_cli(cli);
	cJSON *a = providers_json(ctx, name, set), *o;
	char *like;

	if (cJSON_GetArraySize(a)) {
		if (cli->json) {
			o = cJSON_CreateObject();
			json_str(o, "name", name);
			json_str(o, "env", env);
			cJSON_AddItemToObject(o, "provided_by", a);
			json_print(o);
			return EXIT_OK;
		}
		if (!cli->quiet)
			print_providers(a, name, env);
		cJSON_Delete(a);
		return EXIT_OK;
	}
	cJSON_Delete(a);
	/* NULL when no name is near enough: the message then points to
	 * search instead. */
	like = cfapkg_recipe_suggest(ctx, name);
	cli_error("no recipe named \"%s\"%s%s\n", name,
	        like ? "; did you mean: " : " (cfapkg search lists them)", like ? like : "");
	cfapkg_free(like);
	return EXIT_NOTFOUND;
}

/* The whole recipe with every version, for scripts; "installed" is judged
 * against env's current generation. */
static void info_json(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r, const char *gfx,
                      const char *env, const struct cfapkg_lockfile *set)
{
	cJSON *o = cJSON_CreateObject(), *vs;
	size_t i;

	json_str(o, "name", r->name);
	json_str(o, "summary", r->summary);
	json_str(o, "kind", cfapkg_kind_name(r->kind));
	json_str(o, "license", r->license);
	json_str(o, "homepage", r->homepage);
	json_str(o, "from", r->origin);
	json_str(o, "install_hint", r->install_hint);
	json_str(o, "file", r->file);
	json_str(o, "env", env);
	vs = cJSON_AddArrayToObject(o, "versions");
	for (i = 0; i < r->nversions; i++)
		cJSON_AddItemToArray(vs, version_json(ctx, &r->versions[i], gfx,
		                                      is_installed(set, r->name,
		                                                   r->versions[i].version)));
	json_print(o);
}

static void info_text(struct cfapkg_ctx *ctx, const struct cfapkg_recipe *r, const char *gfx,
                      const char *env, const struct cfapkg_lockfile *set)
{
	size_t i;

	printf("%s - %s\n", r->name, r->summary);
	printf("kind: %s\n", cfapkg_kind_name(r->kind));
	if (r->license)
		printf("license: %s\n", r->license);
	if (r->homepage)
		printf("homepage: %s\n", r->homepage);
	if (r->origin)
		printf("from: %s\n", r->origin);
	if (r->install_hint)
		printf("how to get it: %s\n", r->install_hint);
	printf("versions:\n");
	for (i = 0; i < r->nversions; i++)
		print_version(ctx, &r->versions[i], gfx,
		              is_installed(set, r->name, r->versions[i].version) ? env : NULL);
}

/* info NAME: a recipe and its versions, each judged against --gpu when given
 * and marked when installed in --env.  A name that is no recipe may still be
 * provided by some: info then lists those. */
int cmd_info(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *gpu = cli_value(cli, OPT_GPU), *gfx = NULL, *env = env_from_cli(cli);
	const struct cfapkg_recipe *r;
	struct cfapkg_lockfile *set;
	char target[16];
	int rc = EXIT_OK;

	if (cli->nargs != 1) {
		cli_error("usage: cfapkg info NAME [--gpu GPU] [--env NAME] "
		        "[--json]\n");
		return EXIT_USAGE;
	}
	if (gpu && (rc = gpu_from_cli(ctx, gpu, target, sizeof(target))))
		return rc;
	if (gpu)
		gfx = target;
	/* default always exists; a named environment that does not is a typo. */
	if (cli_value(cli, OPT_ENV) && !cfapkg_env_exists(ctx, env)) {
		cfapkg_ctx_clear_error(ctx);
		cli_error("no environment \"%s\" ('cfapkg env list' shows "
		        "them)\n", env);
		return EXIT_NOTFOUND;
	}
	/* NULL when nothing is installed: then no version is marked. */
	set = env_set(ctx, env);
	r = cfapkg_recipe_find(ctx, cli->args[0]);
	if (!r)
		rc = info_not_recipe(ctx, cli, cli->args[0], set);
	else if (cli->json)
		info_json(ctx, r, gfx, env, set);
	else
		info_text(ctx, r, gfx, env, set);
	cfapkg_lockfile_free(set);
	return rc;
}

/* The mirror rule files and their rules, into o and, unless json, printed.
 * The root's rule file and the user's are listed, found or not, so that a
 * rule that is not applied can be traced to a file that was not read. */
static void config_mirrors(const struct cfapkg_mirrors *m, cJSON *o, bool json)
{
	cJSON *files = cJSON_AddArrayToObject(o, "mirror_files");
	cJSON *rules = cJSON_AddArrayToObject(o, "mirror_rules");
	size_t i;

	for (i = 0; i < 2; i++)
		if (m->files[i]) {
			cJSON *f = cJSON_CreateObject();
			json_str(f, "path", m->files[i]);
			cJSON_AddBoolToObject(f, "found", m->found[i]);
			cJSON_AddItemToArray(files, f);
			if (!json)
				printf("mirror rules:     %s%s\n", m->files[i], m->found[i] ? "" : " (none)");
		}
	for (i = 0; i < m->nrules; i++) {
		cJSON *r = cJSON_CreateObject();
		json_str(r, "prefix", m->rules[i].prefix);
		json_str(r, "replacement", m->rules[i].replacement);
		json_str(r, "file", m->rules[i].file);
		cJSON_AddNumberToObject(r, "line", m->rules[i].line);
		cJSON_AddItemToArray(rules, r);
		if (!json)
			printf("  %s -> %s\n", m->rules[i].prefix, m->rules[i].replacement);
	}
}

/* The settings files and each setting with where it came from (JSON
 * into o, or text). */
static void config_settings(cJSON *o, bool json)
{
	const struct cfapkg_settings *s = cli_settings();
	cJSON *files = json ? cJSON_AddArrayToObject(o, "settings_files") : NULL;
	cJSON *set = json ? cJSON_AddObjectToObject(o, "settings") : NULL;
	size_t i, n;
	const struct cfapkg_settings_file *fl = cfapkg_settings_files(s, &n);
	const struct cfapkg_setting *items;

	for (i = 0; i < n; i++) {
		cJSON *f = files ? cJSON_CreateObject() : NULL;
		if (!json) {
			printf("%-17s %s%s\n", i ? "" : "settings files:",
			       fl[i].path ? fl[i].path : "(none)",
			       fl[i].path ? (fl[i].found ? "" : " (not there)") : "");
			continue;
		}
		json_str(f, "role", fl[i].role);
		json_str(f, "path", fl[i].path);
		cJSON_AddBoolToObject(f, "found", fl[i].found);
		cJSON_AddItemToArray(files, f);
	}
	items = cfapkg_settings_items(s, &n);
	for (i = 0; i < n; i++) {
		const struct cfapkg_setting *it = &items[i];
		cJSON *v = set ? cJSON_AddObjectToObject(set, it->key) : NULL;
		if (json) {
			json_str(v, "value", it->value);
			json_str(v, "from", it->from);
		} else if (it->value || it->from) {
			printf("  %-15s %s  (%s)\n", it->key, it->value ? it->value : "(libcurl's own)",
			       it->from);
		}
	}
}

/* config: where this cfapkg reads its recipes, root, settings and mirror rules
 * from, without changing anything. */
int cmd_config(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *env = getenv("CFAPKG_RECIPES");
	struct cfapkg_mirrors *mirrors = NULL;
	struct cfapkg_facts host = {0};
	enum cfapkg_err e;
	cJSON *o, *dirs;
	size_t i, nrecipes;

	if ((e = cfapkg_mirrors_load(ctx, &mirrors)))
		return report_error(ctx, e);
	if ((e = cfapkg_facts_init_host(&host))) {
		cfapkg_mirrors_free(mirrors);
		return report_error(ctx, e);
	}
	o = cJSON_CreateObject();
	json_str(o, "version", cfapkg_version_string());
	json_str(o, "platform_os", host.os);
	json_str(o, "platform_arch", host.arch);
	json_str(o, "root", cfapkg_ctx_root(ctx));
	/* CFAPKG_NO_BUILTIN_RECIPES turns off the recipes that come with
	 * cfapkg: then only --recipes and CFAPKG_RECIPES count. */
	json_str(o, "builtin_recipes", getenv("CFAPKG_NO_BUILTIN_RECIPES") ? NULL
	                                                                  : cfapkg_builtin_recipe_dir());
	json_str(o, "CFAPKG_RECIPES", env && *env ? env : NULL);
	dirs = cJSON_AddArrayToObject(o, "recipe_folders");
	for (i = 0; i < cli->nopts; i++)
		if (cli->opts[i].id == OPT_RECIPES)
			cJSON_AddItemToArray(dirs, cJSON_CreateString(cli->opts[i].value));
	cfapkg_recipes(ctx, &nrecipes);
	cJSON_AddNumberToObject(o, "recipes", (double)nrecipes);
	if (cli->json) {
		config_mirrors(mirrors, o, true);
		config_settings(o, true);
		cfapkg_mirrors_free(mirrors);
		cfapkg_facts_clear(&host);
		json_print(o);
		return EXIT_OK;
	}
	printf("cfapkg %s on %s-%s\n", cfapkg_version_string(), host.os, host.arch);
	cfapkg_facts_clear(&host);
	printf("root:             %s\n", cfapkg_ctx_root(ctx));
	printf("built-in recipes: %s\n", getenv("CFAPKG_NO_BUILTIN_RECIPES")
	                                      ? "(off: CFAPKG_NO_BUILTIN_RECIPES)"
	                                      : cfapkg_builtin_recipe_dir());
	if (env && *env)
		printf("CFAPKG_RECIPES:   %s\n", env);
	for (i = 0; i < (size_t)cJSON_GetArraySize(dirs); i++)
		printf("--recipes:        %s\n", cJSON_GetArrayItem(dirs, (int)i)->valuestring);
	printf("recipes loaded:   %zu\n", nrecipes);
	config_settings(o, false);
	config_mirrors(mirrors, o, false);
	cfapkg_mirrors_free(mirrors);
	cJSON_Delete(o);
	return EXIT_OK;
}

/* cfapkg --version: the first line stays "cfapkg X.Y.Z" for scripts
 * that read it; the libraries follow, one a line. */
int print_versions(const struct cli *cli)
{
	struct cfapkg_component libs[16];
	size_t i, n = cfapkg_components(libs, sizeof(libs) / sizeof(libs[0]));
	cJSON *o, *l;

	/* cfapkg_components returns how many there are, which may be more than
	 * it wrote: only those written are shown. */
	if (n > sizeof(libs) / sizeof(libs[0]))
		n = sizeof(libs) / sizeof(libs[0]);
	if (!cli->json) {
		printf("cfapkg %s\n", cfapkg_version_string());
		for (i = 0; i < n; i++)
			printf("%-11s %s\n", libs[i].name, libs[i].version);
		return EXIT_OK;
	}
	o = cJSON_CreateObject();
	json_str(o, "version", cfapkg_version_string());
	l = cJSON_AddObjectToObject(o, "libraries");
	for (i = 0; i < n; i++)
		json_str(l, libs[i].name, libs[i].version);
	json_print(o);
	return EXIT_OK;
}
