/*
 * firstuse.c - pins this machine recorded by trusting a first download
 * (`cfapkg recipe trust`), read from ROOT/first-use.json and laid over the
 * loaded recipes: the source they name gets their SHA-256 and size, loses
 * its "unavailable", and is marked first_use, so that plan and info say
 * so and every later download is verified against it.  Writing the file
 * is the transaction room's (trans/trust.c).
 *
 * A pin applies only to the source it was recorded for: the same recipe,
 * version and platform, still at the same URL, that the recipe itself
 * still leaves unpinned.  A recipe that pins the source itself wins (the
 * channel's pin is someone else's check); a recipe that moved the URL
 * leaves the pin unused, as its bytes may differ.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "core/firstuse.h"
#include "core/json.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "platform/platform.h"

static const char *const file_keys[] = {"format", "warning", "pins", NULL};
static const char *const pin_keys[] = {"recipe",   "version", "platform", "url", "sha256",
                                       "size",     "format",  "recorded", "warning", NULL};

static enum cfapkg_err read_pin(struct cfa_jr *jr, const cJSON *o, void *elem, void *arg)
{
	struct cfapkg_first_use_pin *p = elem;
	enum cfapkg_err e;

	(void)arg;
	p->size = -1;
	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, pin_keys)) ||
	    (e = cfa_jr_string(jr, o, "recipe", true, &p->recipe)) ||
	    (e = cfa_jr_string(jr, o, "version", true, &p->version)) ||
	    (e = cfa_jr_string(jr, o, "platform", true, &p->platform)) ||
	    (e = cfa_jr_string(jr, o, "url", true, &p->url)) ||
	    (e = cfa_jr_string(jr, o, "sha256", true, &p->sha256)) ||
	    (e = cfa_jr_int(jr, o, "size", 0, INT64_MAX, true, &p->size)) ||
	    (e = cfa_jr_string(jr, o, "format", false, &p->format)) ||
	    (e = cfa_jr_string(jr, o, "recorded", true, &p->recorded)))
		return e;
	/* Every later download of the source is checked against this digest, so
	 * it must be one: anything else would fail them all or compare as
	 * nothing. */
	if (!cfa_valid_sha256(p->sha256))
		return cfa_jr_fail(jr, "sha256 must be 64 hex digits");
	return CFAPKG_E_OK;
}

/* The parser's message names the file and the member; it also says what
 * the file is and how to get past it. */
static enum cfapkg_err with_way_out(struct cfapkg_ctx *ctx, enum cfapkg_err e)
{
	return cfa_fail_more(ctx, e, " (it holds the pins 'cfapkg recipe trust' recorded: mend it, "
	                     "or delete it to trust none of them)");
}

enum cfapkg_err cfa_first_use_read(struct cfapkg_ctx *ctx, struct cfa_arena *arena,
                                   const char *file, struct cfapkg_first_use_pin **pins,
                                   size_t *n)
{
	struct cfa_jr jr;
	cJSON *doc = NULL;
	int64_t format = 0;
	enum cfapkg_err e;

	*pins = NULL;
	*n = 0;
	if (!cfa_plat_is_file(file))
		return CFAPKG_E_OK; /* nothing trusted yet */
	/* A file that is not JSON at all gets the same way out. */
	if ((e = cfa_json_read_file(ctx, file, CFAPKG_E_RECIPE, &doc)))
		return e == CFAPKG_E_NOMEM ? e : with_way_out(ctx, e);
	cfa_jr_init(&jr, ctx, arena, file, CFAPKG_E_RECIPE);
	/* Only format 1 is known: a newer file is refused rather than
	 * half-read, since a pin misread is a download trusted wrongly. */
	if (!(e = cfa_jr_object(&jr, doc)) && !(e = cfa_jr_keys(&jr, doc, file_keys)) &&
	    !(e = cfa_jr_int(&jr, doc, "format", 1, 1, true, &format)))
		e = cfa_jr_array(&jr, doc, "pins", sizeof(**pins), false, read_pin, NULL,
		                 (void **)pins, n);
	cJSON_Delete(doc);
	return e ? with_way_out(ctx, e) : CFAPKG_E_OK;
}

/* The source a pin names, or NULL (no such recipe, version or platform). */
static struct cfapkg_source *pin_source(struct cfapkg_ctx *ctx,
                                        const struct cfapkg_first_use_pin *p)
{
	const struct cfapkg_recipe *r = cfapkg_recipe_find(ctx, p->recipe);
	size_t i, k;

	for (i = 0; r && i < r->nversions; i++) {
		const struct cfapkg_version *v = &r->versions[i];
		if (strcmp(v->version, p->version) != 0)
			continue;
		for (k = 0; k < v->nsources; k++)
			if (strcmp(v->sources[k].platform, p->platform) == 0)
				/* The recipe set's own (ctx arena): read-only to callers only. */
				return (struct cfapkg_source *)&v->sources[k];
	}
	return NULL;
}

/* The questions are asked in apply_pin's order, so that the answer says why the
 * pin was or was not applied. */
const char *cfa_first_use_status(struct cfapkg_ctx *ctx, const struct cfapkg_first_use_pin *p)
{
	const struct cfapkg_source *s = pin_source(ctx, p);

	if (!s)
		return "not used: no recipe has this version and platform";
	if (s->first_use && s->sha256 && strcmp(s->sha256, p->sha256) == 0)
		return "applied";
	if (s->sha256 && strcmp(s->sha256, p->sha256) == 0)
		return "not needed: the recipe now pins the same SHA-256 itself";
	if (s->sha256)
		return "not used: the recipe now pins this download itself, with another SHA-256 "
		       "(check which one is right)";
	if (!s->url || strcmp(s->url, p->url) != 0)
		return "not used: the recipe's URL changed since it was recorded";
	return "not used: the source is a set or an APT source";
}

#define FIRST_USE_PROVENANCE "trusted on first use on this machine (%s, cfapkg recipe trust): " \
                             "not checked against anyone else's pin"

static enum cfapkg_err apply_pin(struct cfapkg_ctx *ctx, const struct cfapkg_first_use_pin *p)
{
	struct cfapkg_source *s = pin_source(ctx, p);
	char *text;

	if (!s || s->sha256 || !s->url || strcmp(s->url, p->url) != 0 || s->nartifacts || s->apt)
		return CFAPKG_E_OK; /* not this pin's source any more: list says why */
	if (!(text = cfa_aprintf(FIRST_USE_PROVENANCE, p->recorded)))
		return cfa_nomem(ctx);
	s->provenance = cfa_arena_strdup(&ctx->arena, text);
	cfa_free(text);
	if (!s->provenance)
		return cfa_nomem(ctx);
	/* The pin's strings live in ctx's arena, as the recipes' do, so the
	 * source may point at them for as long as the recipes are loaded. */
	s->sha256 = p->sha256;
	s->size = p->size;
	s->unavailable = NULL;
	s->first_use = p->recorded;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_first_use_apply(struct cfapkg_ctx *ctx)
{
	struct cfapkg_first_use_pin *pins;
	char *file = cfa_root_path(ctx, CFA_FIRST_USE, NULL);
	enum cfapkg_err e;
	size_t i, n;

	if (!file)
		return ctx->err_code;
	/* Stamped before it is read: a file replaced meanwhile leaves a stamp
	 * that no later look will see again. */
	if (!cfa_plat_file_stamp(file, ctx->first_use_stamp))
		ctx->first_use_stamp[0] = '\0';
	e = cfa_first_use_read(ctx, &ctx->arena, file, &pins, &n);
	for (i = 0; i < n && !e; i++)
		e = apply_pin(ctx, &pins[i]);
	cfa_free(file);
	return e;
}
