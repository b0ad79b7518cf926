/*
 * trust.c - trust on first use, chosen by the user: 'cfapkg recipe trust'
 * downloads a source nobody has pinned, over HTTPS only, and records its
 * SHA-256 and size in ROOT/first-use.json (core/firstuse.c lays them over
 * the recipes from then on); 'untrust' forgets one; 'export-trusted'
 * gives them to a channel maintainer as recipe fragments.
 *
 * Never silent: a source the recipe pins, or one trusted before, is
 * refused (a new first download must not replace a pin without the user
 * forgetting the old one first), and so is any URL a network could alter
 * on the way (plain http:// other than to this machine itself).
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "cache/cache.h"
#include "core/firstuse.h"
#include "core/json_build.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"

#define FILE_WARNING "pins recorded on this machine by trusting a first download ('cfapkg " \
                     "recipe trust'): not checked against anyone else's pin"
#define PIN_WARNING "trusted on first use: not checked against anyone else's pin"

/* The pins the root holds now, read into a's care. */
static enum cfapkg_err read_pins(struct cfapkg_ctx *ctx, struct cfa_arena *a, char **file,
                                 struct cfapkg_first_use_pin **pins, size_t *n)
{
	if (!(*file = cfa_root_path(ctx, CFA_FIRST_USE, NULL)))
		return ctx->err_code;
	return cfa_first_use_read(ctx, a, *file, pins, n);
}

/* Each pin carries its own warning, so a pin copied out of the file alone
 * still says what it is. */
static void pin_json(struct cfa_json_build *jb, cJSON *arr, const struct cfapkg_first_use_pin *p)
{
	cJSON *o = cfa_json_new_object(jb);

	cfa_json_add_string(jb, o, "recipe", p->recipe);
	cfa_json_add_string(jb, o, "version", p->version);
	cfa_json_add_string(jb, o, "platform", p->platform);
	cfa_json_add_string(jb, o, "url", p->url);
	cfa_json_add_string(jb, o, "sha256", p->sha256);
	cfa_json_add_number(jb, o, "size", (double)p->size);
	cfa_json_add_string(jb, o, "format", p->format);
	cfa_json_add_string(jb, o, "recorded", p->recorded);
	cfa_json_add_string(jb, o, "warning", PIN_WARNING);
	cfa_json_append(jb, arr, o);
}

/* A pin is one recipe version's source for one platform: the three together
 * name it. */
static bool same_source(const struct cfapkg_first_use_pin *p, const char *name,
                        const char *version, const char *platform)
{
	return strcmp(p->recipe, name) == 0 && strcmp(p->version, version) == 0 &&
	       strcmp(p->platform, platform) == 0;
}

/* The file again: every pin but the one named by skip (NULL: none), then
 * add when not NULL; written whole, then renamed over the old one. */
static enum cfapkg_err write_pins(struct cfapkg_ctx *ctx, const char *file,
                                  const struct cfapkg_first_use_pin *pins, size_t n,
                                  const struct cfapkg_first_use_pin *skip,
                                  const struct cfapkg_first_use_pin *add)
{
	struct cfa_json_build jb = {false};
	cJSON *doc = cfa_json_new_object(&jb), *arr;
	size_t i;

	cfa_json_add_number(&jb, doc, "format", 1);
	cfa_json_add_string(&jb, doc, "warning", FILE_WARNING);
	arr = cfa_json_add_array(&jb, doc, "pins");
	for (i = 0; i < n; i++)
		if (!skip || !same_source(&pins[i], skip->recipe, skip->version, skip->platform))
			pin_json(&jb, arr, &pins[i]);
	if (add)
		pin_json(&jb, arr, add);
	return cfa_write_json(ctx, file, cfa_json_finish(&jb, doc));
}

/* The loaded source of a recipe's version (as spelt) for a platform.
 * The version as the recipe spells it: "6.2" and "6.2.0" are different entries
 * here, as in the file that records them. */
static const struct cfapkg_source *find_source(const struct cfapkg_recipe *r, const char *version,
                                               const char *platform)
{
	size_t i, k;

	for (i = 0; r && i < r->nversions; i++)
		for (k = 0; strcmp(r->versions[i].version, version) == 0 &&
		            k < r->versions[i].nsources; k++)
			if (strcmp(r->versions[i].sources[k].platform, platform) == 0)
				return &r->versions[i].sources[k];
	return NULL;
}

/* The source to trust, or why it cannot be (nothing downloaded yet). */
static enum cfapkg_err trust_source(struct cfapkg_ctx *ctx, const char *name, const char *version,
                                    const char *platform, const struct cfapkg_source **out)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(ctx, name);
	const struct cfapkg_source *s = find_source(r, version, platform);

	if (!r)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "no recipe named \"%s\" (cfapkg search lists "
		                "them)", name);
	if (!s)
		return cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s has no version \"%s\" with a %s source "
		                "(cfapkg info %s lists them, spelt as the recipe spells them)", name,
		                version, platform, name);
	/* Checked before the recipe's own pin: a source trusted before carries
	 * the recorded hash in sha256 too, and the message should say
	 * which. */
	if (s->first_use)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s %s %s was trusted on first use already (%s): "
		                "to trust a new first download, forget that one with 'cfapkg recipe "
		                "untrust %s %s %s'", name, version, platform, s->first_use, name,
		                version, platform);
	if (s->sha256)
		return cfa_fail(ctx, CFAPKG_E_USAGE, "%s %s %s is pinned by its recipe (%s): nothing "
		                "to trust", name, version, platform,
		                s->provenance ? s->provenance : "SHA-256 recorded");
	/* A set of archives or an APT source has more than one download, and
	 * one first download could not stand for the others. */
	if (s->nartifacts || s->apt || !s->url)
		return cfa_fail(ctx, CFAPKG_E_UNSUPPORTED, "%s %s %s is %s: only one download at a "
		                "known URL can be trusted on first use", name, version, platform,
		                s->apt ? "an APT source" : s->nartifacts ? "a set of archives"
		                                                        : "without a URL");
	if (!cfa_url_secure(s->url))
		return cfa_fail(ctx, CFAPKG_E_UNSUPPORTED, "%s: a first download is trusted only over "
		                "HTTPS (or http:// to this machine: 127.0.0.1, [::1], localhost), so that "
		                "no one on the way could have changed it", s->url);
	*out = s;
	return CFAPKG_E_OK;
}

/* Only this source's own URLs are tried, over HTTPS; the size is not known
 * yet, and the recipe's max_size, when it has one, caps it. */
static enum cfapkg_err fetch_first(struct cfapkg_ctx *ctx, const struct cfapkg_source *s,
                                   const char *label, const struct cfapkg_fetch_opts *opts,
                                   struct cfapkg_fetch_item *it)
{
	const char **urls = cfa_calloc(s->nmirrors + 1, sizeof(*urls));
	enum cfapkg_err e;
	size_t i;

	if (!urls)
		return cfa_nomem(ctx);
	urls[0] = s->url;
	for (i = 0; i < s->nmirrors; i++)
		urls[i + 1] = s->mirrors[i];
	memset(it, 0, sizeof(*it));
	it->label = label;
	it->urls = urls;
	it->nurls = s->nmirrors + 1;
	it->size = -1;
	it->max_size = s->max_size > 0 ? (uint64_t)s->max_size : 0;
	it->https_only = true;
	e = cfapkg_fetch(ctx, it, 1, opts);
	it->urls = NULL; /* the caller's item outlives the list */
	it->nurls = 0;
	cfa_free(urls);
	return e;
}

enum cfapkg_err cfapkg_recipe_trust(struct cfapkg_ctx *ctx, const char *name, const char *version,
                                    const char *platform, const struct cfapkg_fetch_opts *opts,
                                    struct cfapkg_fetch_item *item)
{
	struct cfapkg_first_use_pin *pins = NULL, pin;
	const struct cfapkg_source *s = NULL;
	struct cfa_arena a;
	char recorded[32], *label = NULL, *file = NULL;
	enum cfapkg_err e;
	size_t n = 0;

	memset(item, 0, sizeof(*item));
	cfa_arena_init(&a);
	if (!(e = trust_source(ctx, name, version, platform, &s)) &&
	    !(e = read_pins(ctx, &a, &file, &pins, &n)) &&
	    !(label = cfa_aprintf("%s %s %s", name, version, platform)))
		e = cfa_nomem(ctx);
	if (!e)
		e = fetch_first(ctx, s, label, opts, item);
	if (!e) {
		cfa_utc_now(recorded);
		pin = (struct cfapkg_first_use_pin){name, version, platform, s->url, item->sha256_out,
		                                    (int64_t)item->size_out, s->format, recorded, NULL};
		e = write_pins(ctx, file, pins, n, &pin, &pin);
	}
	item->label = NULL; /* freed here */
	cfa_free(label);
	cfa_free(file);
	cfa_arena_fini(&a);
	return e;
}

enum cfapkg_err cfapkg_recipe_untrust(struct cfapkg_ctx *ctx, const char *name,
                                      const char *version, const char *platform)
{
	struct cfapkg_first_use_pin *pins = NULL;
	struct cfa_arena a;
	char *file = NULL;
	enum cfapkg_err e;
	size_t i, n = 0;

	cfa_arena_init(&a);
	e = read_pins(ctx, &a, &file, &pins, &n);
	for (i = 0; !e && i < n && !same_source(&pins[i], name, version, platform); i++)
		;
	if (!e && i == n)
		e = cfa_fail(ctx, CFAPKG_E_NOTFOUND, "%s %s %s was not trusted on first use here "
		             "(cfapkg recipe trusted lists what was)", name, version, platform);
	else if (!e)
		/* The file is written again without the pin: the recipe's
		 * source is as unpinned as before, and may be trusted anew. */
		e = write_pins(ctx, file, pins, n, &pins[i], NULL);
	cfa_free(file);
	cfa_arena_fini(&a);
	return e;
}

/* Every pin with its status ("applied", or why the loaded recipes do not use
 * it).  Owned: cfapkg_first_use_free; all its strings are in its arena. */
enum cfapkg_err cfapkg_first_use_list(struct cfapkg_ctx *ctx, struct cfapkg_first_use **out)
{
	struct cfapkg_first_use *fu = cfa_calloc(1, sizeof(*fu));
	struct cfapkg_first_use_pin *pins = NULL;
	char *file = NULL;
	enum cfapkg_err e;
	size_t i, n = 0;

	if (!fu || !(fu->arena = cfa_calloc(1, sizeof(*fu->arena)))) {
		cfa_free(fu);
		return cfa_nomem(ctx);
	}
	cfa_arena_init(fu->arena);
	e = read_pins(ctx, fu->arena, &file, &pins, &n);
	if (!e && !(fu->file = cfa_arena_strdup(fu->arena, file)))
		e = cfa_nomem(ctx);
	cfa_free(file);
	if (e) {
		cfapkg_first_use_free(fu);
		return e;
	}
	for (i = 0; i < n; i++)
		pins[i].status = cfa_first_use_status(ctx, &pins[i]);
	fu->pins = pins;
	fu->npins = n;
	*out = fu;
	return CFAPKG_E_OK;
}

void cfapkg_first_use_free(struct cfapkg_first_use *fu)
{
	if (!fu)
		return;
	if (fu->arena)
		cfa_arena_fini(fu->arena);
	cfa_free(fu->arena);
	cfa_free(fu);
}

/* obj[key], an object or an array, made when it is not there yet.
 * Pins of one recipe share its entry: a member already made is reused. */
static cJSON *member(struct cfa_json_build *jb, cJSON *obj, const char *key, bool array)
{
	cJSON *m = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

	if (m)
		return m;
	return array ? cfa_json_add_array(jb, obj, key) : cfa_json_add_object(jb, obj, key);
}

/* The array element whose "key" is value, appended when there is none. */
static cJSON *element(struct cfa_json_build *jb, cJSON *arr, const char *key, const char *value)
{
	cJSON *e;

	cJSON_ArrayForEach(e, arr) {
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, key);
		if (cJSON_IsString(k) && strcmp(k->valuestring, value) == 0)
			return e;
	}
	e = cfa_json_new_object(jb);
	cfa_json_add_string(jb, e, key, value);
	cfa_json_append(jb, arr, e);
	return e;
}

/* The recipe's own source with the pin in it, as a recipe writes it: what
 * describes the download is kept, "unavailable" is not.
 * The provenance text goes with the pin into the channel's recipe, so whoever
 * publishes it sees that no one else checked it. */
static void source_json(struct cfa_json_build *jb, cJSON *o, const struct cfapkg_source *s,
                        const struct cfapkg_first_use_pin *p)
{
	char *why = cfa_aprintf("trusted on first use ('cfapkg recipe trust') on %s, from %s: not "
	                        "checked against anyone else's pin; check it before publishing",
	                        p->recorded, p->url);
	size_t i;

	jb->failed |= !why;
	cfa_json_add_string(jb, o, "url", p->url);
	if (s->nmirrors) {
		cJSON *m = cfa_json_add_array(jb, o, "mirrors");
		for (i = 0; i < s->nmirrors; i++)
			cfa_json_append_string(jb, m, s->mirrors[i]);
	}
	cfa_json_add_string(jb, o, "sha256", p->sha256);
	cfa_json_add_number(jb, o, "size", (double)p->size);
	cfa_json_add_string(jb, o, "format", s->format);
	if (s->strip)
		cfa_json_add_number(jb, o, "strip", s->strip);
	if (s->unpacked_size >= 0)
		cfa_json_add_number(jb, o, "unpacked_size", (double)s->unpacked_size);
	cfa_json_add_string(jb, o, "provenance", why);
	cfa_free(why);
}

/* No names given: every recipe is wanted. */
static bool wanted(const char *name, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return n > 0;
	return n == 0;
}

/* One pin into the fragments: recipes[name].versions[version].sources. */
static void export_pin(struct cfapkg_ctx *ctx, struct cfa_json_build *jb, cJSON *recipes,
                       const struct cfapkg_first_use_pin *p)
{
	const struct cfapkg_source *s =
		find_source(cfapkg_recipe_find(ctx, p->recipe), p->version, p->platform);
	cJSON *r = element(jb, recipes, "name", p->recipe);
	cJSON *v = element(jb, member(jb, r, "versions", true), "version", p->version);

	source_json(jb, cfa_json_add_object(jb, member(jb, v, "sources", false), p->platform), s, p);
}

enum cfapkg_err cfapkg_first_use_export(struct cfapkg_ctx *ctx, const char *const *names, size_t n,
                                        char **json)
{
	struct cfa_json_build jb = {false};
	struct cfapkg_first_use *fu = NULL;
	cJSON *doc, *recipes;
	enum cfapkg_err e;
	size_t i;
	char *text;

	if ((e = cfapkg_first_use_list(ctx, &fu)))
		return e;
	doc = cfa_json_new_object(&jb);
	cfa_json_add_number(&jb, doc, "format", 1);
	cfa_json_add_string(&jb, doc, "warning", "each SHA-256 below is what one machine received "
	                    "the first time and trusted; no one else checked it");
	recipes = cfa_json_add_array(&jb, doc, "recipes");
	/* Only pins the recipes use: one they no longer take is not news. */
	for (i = 0; i < fu->npins; i++)
		if (strcmp(fu->pins[i].status, "applied") == 0 && wanted(fu->pins[i].recipe, names, n))
			export_pin(ctx, &jb, recipes, &fu->pins[i]);
	cfapkg_first_use_free(fu);
	if (!(doc = cfa_json_finish(&jb, doc)))
		return cfa_nomem(ctx);
	/* Copied into cfa's allocator so the caller frees it with cfapkg_free
	 * like every other string the library returns. */
	text = cJSON_Print(doc);
	cJSON_Delete(doc);
	*json = text ? cfa_strdup(text) : NULL;
	cJSON_free(text);
	return *json ? CFAPKG_E_OK : cfa_nomem(ctx);
}
