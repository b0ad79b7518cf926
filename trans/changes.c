/*
 * changes.c - what a transaction asks for and what it changes.  The new
 * request set is the old one changed by the command (install adds or
 * replaces a spec of the same name, remove drops names, update keeps
 * them); envplan.c keeps the installed versions where they still fit, so
 * an install never moves what it was not asked to move.  The changes compare
 * the old set with the new one, and list as restored a package whose
 * version stays but whose store folder is gone.
 */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "env/env.h"
#include "platform/platform.h"
#include "trans/trans.h"

/* Two specs about the same name ("zluda>=7", "zluda"). */
static bool same_name(const char *spec, const char *other)
{
	size_t n = cfapkg_spec_name_len(spec);

	return n == cfapkg_spec_name_len(other) && strncmp(spec, other, n) == 0;
}

static bool named(const struct cfapkg_trans *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->o.nargs; i++)
		if (same_name(t->o.args[i], name))
			return true;
	return false;
}

static bool was_requested(const struct cfapkg_lockfile *old, const char *name)
{
	size_t k;

	for (k = 0; old && k < old->nrequests; k++)
		if (same_name(old->requests[k], name))
			return true;
	return false;
}

/* remove and update name what is in the environment: a name that is not
 * gets the recipe names it may be a misspelling of. */
static enum cfapkg_err not_there(struct cfapkg_trans *t, const char *name)
{
	char *like = cfapkg_recipe_suggest(t->ctx, name);
	enum cfapkg_err e;

	e = cfa_fail(t->ctx, CFAPKG_E_NOTFOUND, "%s %s in environment \"%s\"%s%s ('cfapkg list "
	             "--env %s' shows what is)", name,
	             t->o.kind == CFAPKG_TRANS_REMOVE ? "was not installed by request"
	                                              : "is not installed",
	             t->env, like ? "; did you mean: " : "", like ? like : "", t->env);
	cfa_free(like);
	return e;
}

enum cfapkg_err cfa_trans_requests(struct cfapkg_trans *t)
{
	const struct cfapkg_lockfile *old = t->old;
	bool ok = true;
	size_t i;

	for (i = 0; i < t->o.nargs; i++)
		if ((t->o.kind == CFAPKG_TRANS_REMOVE && !was_requested(old, t->o.args[i])) ||
		    (t->o.kind == CFAPKG_TRANS_UPDATE && !(old && cfapkg_lockfile_find(old, t->o.args[i]))))
			return not_there(t, t->o.args[i]);
	/* An update keeps every request as it was (what moves is the versions:
	 * envplan.c).  Install and remove drop the requests they name, and
	 * install adds its own after the rest, so that a new spec replaces the
	 * old one of the same name. */
	for (i = 0; old && i < old->nrequests && ok; i++)
		if (t->o.kind != CFAPKG_TRANS_INSTALL && t->o.kind != CFAPKG_TRANS_REMOVE)
			ok = cfa_strv_push(&t->requests, &t->nrequests, &t->requests_cap,
			                   old->requests[i]);
		else if (!named(t, old->requests[i]))
			ok = cfa_strv_push(&t->requests, &t->nrequests, &t->requests_cap,
			                   old->requests[i]);
	for (i = 0; t->o.kind == CFAPKG_TRANS_INSTALL && i < t->o.nargs && ok; i++)
		ok = cfa_strv_push(&t->requests, &t->nrequests, &t->requests_cap, t->o.args[i]);
	if (!ok)
		return cfa_nomem(t->ctx);
	/* A remove of the last request empties the environment (trans.c); an
	 * update of an empty one has nothing to move. */
	if (t->nrequests == 0 && t->o.kind != CFAPKG_TRANS_REMOVE)
		return cfa_fail(t->ctx, CFAPKG_E_NOTFOUND, "environment \"%s\" has nothing installed "
		                "('cfapkg install --env %s NAME' adds to it)", t->env, t->env);
	return CFAPKG_E_OK;
}

static enum cfapkg_err add_change(struct cfapkg_trans *t, enum cfapkg_change_kind kind,
                                  const char *name, const char *from, const char *to)
{
	struct cfapkg_change *c;
	char *text;

	if (kind == CFAPKG_CHANGE_ADD)
		text = cfa_aprintf("+%s %s", name, to);
	else if (kind == CFAPKG_CHANGE_REMOVE)
		text = cfa_aprintf("-%s %s", name, from);
	else if (kind == CFAPKG_CHANGE_RESTORE)
		text = cfa_aprintf("%s %s (store folder restored)", name, to);
	else if (kind == CFAPKG_CHANGE_RELINK)
		text = cfa_aprintf("%s %s (view linked again)", name, to);
	else if (kind == CFAPKG_CHANGE_RECORDS)
		text = cfa_aprintf("%s written again (it could not be read)", name);
	else
		text = cfa_aprintf("%s %s -> %s", name, from, to);
	if (!text || cfa_grow((void **)&t->changes, &t->changes_cap, t->nchanges + 1,
	                      sizeof(*c)) != 0) {
		cfa_free(text);
		return cfa_nomem(t->ctx);
	}
	c = &t->changes[t->nchanges++];
	c->kind = kind;
	/* The name and versions are borrowed from the two sets, which live as
	 * long as the transaction; only the text is the change's own. */
	c->name = name;
	c->from = from;
	c->to = to;
	c->text = text;
	return CFAPKG_E_OK;
}

static bool same_artifact(const struct cfapkg_lockfile_part *a, const struct cfapkg_lockfile_part *b)
{
	/* A new part with no hash (a system, meta or user part: nothing of it
	 * is downloaded) is judged by its version alone. */
	return strcmp(a->version, b->version) == 0 &&
	       (!b->sha256 || (a->sha256 && strcmp(a->sha256, b->sha256) == 0));
}

/* Whether p's store folder is there at all (with a manifest or not). */
static bool folder_there(struct cfapkg_trans *t, const struct cfapkg_lockfile_part *p)
{
	char *dir = p->store ? cfa_root_path(t->ctx, CFA_STORE, p->store) : NULL;
	bool there = dir && cfa_plat_is_dir(dir);

	/* A path that cannot be made only means the folder is not found here;
	 * the restore then says the rest. */
	cfapkg_ctx_clear_error(t->ctx);
	cfa_free(dir);
	return there;
}

/* A kept package whose store folder is gone, or no longer as unpacked,
 * is restored: a new copy is unpacked at commit, which replaces a damaged
 * folder (one without its manifest too) only once whole, and the new
 * generation links it. */
static enum cfapkg_err check_store(struct cfapkg_trans *t, const struct cfapkg_lockfile_part *p)
{
	bool has = cfapkg_store_has(t->ctx, p);

	if (!has && !folder_there(t, p))
		return add_change(t, CFAPKG_CHANGE_RESTORE, p->name, p->version, p->version);
	if (has && cfa_store_intact(t->ctx, p))
		return CFAPKG_E_OK;
	/* A folder that is there but not whole is listed as damaged, so that
	 * the commit unpacks a new copy beside it and swaps it in rather than
	 * trusting it. */
	if (!cfa_strv_push(&t->damaged, &t->ndamaged, &t->damaged_cap, p->store))
		return cfa_nomem(t->ctx);
	return add_change(t, CFAPKG_CHANGE_RESTORE, p->name, p->version, p->version);
}

enum cfapkg_err cfa_trans_diff(struct cfapkg_trans *t)
{
	const struct cfapkg_lockfile *old = t->old, *new = t->new;
	enum cfapkg_err e = CFAPKG_E_OK;
	size_t i;

	for (i = 0; i < new->nparts && !e; i++) {
		const struct cfapkg_lockfile_part *p = &new->parts[i], *o = cfapkg_lockfile_find(old, p->name);
		if (!o)
			e = add_change(t, CFAPKG_CHANGE_ADD, p->name, NULL, p->version);
		else if (!same_artifact(o, p))
			e = add_change(t, CFAPKG_CHANGE_MOVE, p->name, o->version, p->version);
		else if (p->kind == CFAPKG_KIND_PACKAGE)
			e = check_store(t, p);
	}
	for (i = 0; old && i < old->nparts && !e; i++)
		if (!cfapkg_lockfile_find(new, old->parts[i].name))
			e = add_change(t, CFAPKG_CHANGE_REMOVE, old->parts[i].name,
			               old->parts[i].version, NULL);
	return e;
}

static bool listed(const struct cfapkg_trans *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nchanges; i++)
		if (strcmp(t->changes[i].name, name) == 0)
			return true;
	return false;
}

/* The current generation's runtime.json, which run reads: one that does
 * not read is written again with the new generation. */
static enum cfapkg_err records_damage(struct cfapkg_trans *t, unsigned gen)
{
	char *gendir = NULL, *why = NULL;
	enum cfapkg_err e;

	if (!gen || (e = cfa_gen_dir(t->ctx, t->env, gen, &gendir)))
		return gen ? e : CFAPKG_E_OK;
	if (!(e = cfa_gen_records_check(t->ctx, gendir, &why)) && why)
		e = add_change(t, CFAPKG_CHANGE_RECORDS, "runtime.json", NULL, NULL);
	cfa_free(why);
	cfa_free(gendir);
	return e;
}

/* A repair re-hashes the store (as verify does): a folder whose files
 * changed is unpacked again, a view that no longer holds the store's
 * files is linked again, and records that do not read are written again.
 * Missing folders are in the changes already. */
enum cfapkg_err cfa_trans_damage(struct cfapkg_trans *t)
{
	struct cfapkg_damage *d = NULL;
	enum cfapkg_err e;
	unsigned gen;
	size_t n = 0, i;

	if ((e = cfapkg_env_damage(t->ctx, t->env, NULL, NULL, &gen, &d, &n)) ||
	    (e = records_damage(t, gen)))
		return e;
	for (i = 0; i < n && !e; i++) {
		const struct cfapkg_lockfile_part *p = cfapkg_lockfile_find(t->new, d[i].part);
		/* A part already listed (added, moved or restored) is dealt
		 * with by that change; one the new set lacks is going
		 * anyway. */
		if (!p || listed(t, p->name))
			continue;
		if (d[i].store_damaged && !cfa_strv_push(&t->damaged, &t->ndamaged,
		                                         &t->damaged_cap, d[i].store))
			e = cfa_nomem(t->ctx);
		else if (d[i].store_damaged || d[i].store_missing)
			e = add_change(t, CFAPKG_CHANGE_RESTORE, p->name, p->version, p->version);
		else if (d[i].view_damaged)
			e = add_change(t, CFAPKG_CHANGE_RELINK, p->name, p->version, p->version);
	}
	cfapkg_free(d);
	return e;
}

void cfa_trans_changes_free(struct cfapkg_trans *t)
{
	size_t i;

	for (i = 0; i < t->nchanges; i++)
		cfa_free((void *)t->changes[i].text);
	cfa_free(t->changes);
	t->changes = NULL;
	t->nchanges = t->changes_cap = 0;
}
