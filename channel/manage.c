/*
 * manage.c - the channels of a root as a list: their order, listing,
 * updating every one, and removing one.
 */
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "core/layout.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

static void free_names(char **names, size_t n)
{
	size_t i;

	/* An allocation that failed leaves names NULL with its count set. */
	for (i = 0; names && i < n; i++)
		cfa_free(names[i]);
	cfa_free(names);
}

static enum cfapkg_err describe(struct cfapkg_ctx *ctx, const char *name,
                                struct cfapkg_channel *c)
{
	struct cfa_channel_state st;
	char id[CFA_KEYID_LEN + 1];
	enum cfapkg_err e = cfa_channel_state_read(ctx, name, &st);
	char **ids;
	size_t i;

	if (e)
		return e;
	/* One more for a NULL at the end, and so that no keys still
	 * allocates. */
	if (!(ids = cfa_calloc(st.keys.n + 1, sizeof(*ids)))) {
		cfa_channel_state_free(&st);
		return cfa_nomem(ctx);
	}
	for (i = 0; i < st.keys.n; i++) {
		cfa_key_id(st.keys.pub[i], id);
		/* Out of memory is noted but the loop goes on: c gets every
		 * string made so far, which cfapkg_channel_list_free
		 * releases. */
		if (!(ids[i] = cfa_strdup(id)))
			e = cfa_nomem(ctx);
	}
	/* The state's strings move into c; only the keys, not handed on, are
	 * freed here. */
	c->name = st.name;
	c->url = st.url;
	c->upstream = st.upstream;
	c->priority = st.priority;
	c->version = st.version;
	c->expires = st.expires;
	c->key_ids = (const char *const *)ids;
	c->nkey_ids = st.keys.n;
	cfa_keys_free(&st.keys);
	return e;
}

enum cfapkg_err cfapkg_channel_list(struct cfapkg_ctx *ctx, struct cfapkg_channel **out,
                                    size_t *n)
{
	char **names = NULL;
	size_t count = 0, i;
	enum cfapkg_err e = cfa_channel_names(ctx, &names, &count);
	struct cfapkg_channel *list = NULL;

	*out = NULL;
	*n = 0;
	/* Zeroed, so cfapkg_channel_list_free can free a list filled only in
	 * part. */
	if (!e && !(list = cfa_calloc(count + 1, sizeof(*list))))
		e = cfa_nomem(ctx);
	for (i = 0; i < count && !e; i++)
		e = describe(ctx, names[i], &list[i]);
	free_names(names, count);
	if (e) {
		cfapkg_channel_list_free(list, count);
		return e;
	}
	*out = list;
	*n = count;
	return CFAPKG_E_OK;
}

void cfapkg_channel_list_free(struct cfapkg_channel *list, size_t n)
{
	size_t i, k;

	/* Entries never filled are all NULL, and cfa_free(NULL) does
	 * nothing. */
	for (i = 0; list && i < n; i++) {
		cfa_free((void *)list[i].name);
		cfa_free((void *)list[i].url);
		cfa_free((void *)list[i].upstream);
		for (k = 0; list[i].key_ids && k < list[i].nkey_ids; k++)
			cfa_free((void *)list[i].key_ids[k]);
		cfa_free((void *)list[i].key_ids);
	}
	cfa_free(list);
}

/* One channel's outcome; a refusal is recorded, not returned, so the
 * other channels are still updated. */
static void update_named(struct cfapkg_ctx *ctx, const char *name,
                         const struct cfapkg_fetch_opts *fo, struct cfapkg_channel_update *u)
{
	struct cfa_channel_state st;
	bool current = false;
	enum cfapkg_err e = cfa_channel_state_read(ctx, name, &st);

	u->name = cfa_strdup(name);
	/* A channel whose state cannot be read goes from version 0 to 0,
	 * refused. */
	u->from = e ? 0 : st.version;
	if (!e)
		e = cfa_channel_update_one(ctx, &st, fo, &current);
	u->to = e ? u->from : st.version;
	u->err = e;
	u->outcome = e ? CFAPKG_CHANNEL_REFUSED
	               : current ? CFAPKG_CHANNEL_CURRENT : CFAPKG_CHANNEL_UPDATED;
	if (e)
		/* The message is copied before the error is cleared for the
		 * next channel. */
		u->why = cfa_strdup(cfapkg_ctx_error(ctx));
	cfapkg_ctx_clear_error(ctx);
	cfa_channel_state_free(&st);
}

enum cfapkg_err cfapkg_channel_update(struct cfapkg_ctx *ctx, const char *name,
                                      const struct cfapkg_fetch_opts *fo,
                                      struct cfapkg_channel_update **out, size_t *n)
{
	char **names = NULL;
	size_t count = 0, i;
	enum cfapkg_err e = CFAPKG_E_OK;
	struct cfapkg_channel_update *u = NULL;

	*out = NULL;
	*n = 0;
	/* One named channel is updated like a list of one. */
	if (name)
		names = cfa_calloc(1, sizeof(*names)), count = 1;
	else
		e = cfa_channel_names(ctx, &names, &count);
	if (!e && name && (!names || !(names[0] = cfa_strdup(name))))
		e = cfa_nomem(ctx);
	if (!e && !(u = cfa_calloc(count + 1, sizeof(*u))))
		e = cfa_nomem(ctx);
	for (i = 0; i < count && !e; i++)
		update_named(ctx, names[i], fo, &u[i]);
	free_names(names, count);
	if (e)
		return e;
	*out = u;
	*n = count;
	/* The first refusal is the call's answer, with its reason. */
	for (i = 0; i < count; i++)
		if (u[i].err)
			return cfa_fail(ctx, u[i].err, "%s", u[i].why ? u[i].why : "refused");
	return CFAPKG_E_OK;
}

void cfapkg_channel_updates_free(struct cfapkg_channel_update *u, size_t n)
{
	size_t i;

	for (i = 0; u && i < n; i++) {
		cfa_free((void *)u[i].name);
		cfa_free((void *)u[i].why);
	}
	cfa_free(u);
}

enum cfapkg_err cfapkg_channel_remove(struct cfapkg_ctx *ctx, const char *name)
{
	struct cfa_channel_state st;
	char *dir;
	enum cfapkg_err e = cfa_channel_name_ok(name) ? cfa_channel_state_read(ctx, name, &st)
	                                              : cfa_fail(ctx, CFAPKG_E_NOTFOUND,
	                                                         "no channel named %s", name);
	int rc;

	if (e)
		return e;
	cfa_channel_state_free(&st);
	if (!(dir = cfa_channel_file(ctx, name, "")))
		return ctx->err_code;
	/* The whole folder: state, accepted index and signatures go together.
	 * A bad name is refused before any path is built from it. */
	rc = cfa_plat_remove_tree(dir);
	e = rc ? cfa_fail(ctx, CFAPKG_E_IO, "%s: cannot remove: %s", dir, cfa_plat_strerror(rc))
	       : CFAPKG_E_OK;
	cfa_free(dir);
	return e;
}
