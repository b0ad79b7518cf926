/*
 * cmd_why.c - saying why: 'cfapkg why NAME' (the request and the chain of
 * requirements that pull a part into an environment), and the reasons an
 * install or update that changes nothing gives for each package it kept
 * (a pin, a newer version that does not fit, a validated version
 * preferred over a newer candidate).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* Whether locked part p is what a requirement on name is met by: its own
 * name or one it provides. */
static bool meets(const struct cfapkg_lockfile_part *p, const char *name, size_t len)
{
	size_t i;

	if (strlen(p->name) == len && strncmp(p->name, name, len) == 0)
		return true;
	for (i = 0; i < p->nprovides; i++)
		if (cfapkg_spec_name_len(p->provides[i]) == len &&
		    strncmp(p->provides[i], name, len) == 0)
			return true;
	return false;
}

/* A breadth-first walk over the set from the requested parts: from[i] is
 * the part that pulled part i in and via[i] the requirement it did it by;
 * the first path found to a part is a shortest one. */
struct walk {
	const struct cfapkg_lockfile *lock;
	size_t *from;          /* SIZE_MAX: requested, or not reached */
	const char **via;
	bool *seen;
};

static void walk_all(struct walk *w)
{
	size_t *queue = calloc(w->lock->nparts + 1, sizeof(*queue));
	size_t head = 0, tail = 0, i, k, j;

	/* A part is marked as it is queued, so that each is queued once and the
	 * queue, one slot per part, cannot overflow.  Without memory for it the
	 * walk reaches nothing, which only makes the answer say less. */
	for (i = 0; queue && i < w->lock->nparts; i++)
		if (w->lock->parts[i].requested) {
			w->seen[i] = true;
			queue[tail++] = i;
		}
	while (queue && head < tail) {
		const struct cfapkg_lockfile_part *p = &w->lock->parts[queue[head]];
		for (k = 0; k < p->nrequires; k++)
			for (j = 0; j < w->lock->nparts; j++)
				if (!w->seen[j] && meets(&w->lock->parts[j], p->requires[k],
				                         cfapkg_spec_name_len(p->requires[k]))) {
					w->seen[j] = true;
					w->from[j] = queue[head];
					w->via[j] = p->requires[k];
					queue[tail++] = j;
				}
		head++;
	}
	free(queue);
}

/* "pytorch-cuda-stack 1 (requested) -> requires zluda -> zluda 6": built
 * from the end back to the request. */
static void print_chain(const struct walk *w, size_t target)
{
	size_t path[64], n = 0, i;

	/* Sixty-four links at most, far deeper than any set nests, so that the
	 * array is never overrun. */
	for (i = target; i != SIZE_MAX && n < 64; i = w->from[i])
		path[n++] = i;
	while (n--) {
		const struct cfapkg_lockfile_part *p = &w->lock->parts[path[n]];
		printf("%s %s%s", p->name, p->version, p->requested ? " (requested)" : "");
		if (n)
			printf(" -> requires \"%s\" -> ", w->via[path[n - 1]]);
	}
	printf("\n");
}

static cJSON *chain_json(const struct walk *w, size_t target)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = target; i != SIZE_MAX; i = w->from[i]) {
		cJSON *o = cJSON_CreateObject();
		json_str(o, "name", w->lock->parts[i].name);
		json_str(o, "version", w->lock->parts[i].version);
		cJSON_AddBoolToObject(o, "requested", w->lock->parts[i].requested);
		json_str(o, "required_as", w->from[i] == SIZE_MAX ? NULL : w->via[i]);
		/* Walked from the part back to its request, inserted at the
		 * front so that the document reads from the request down. */
		cJSON_InsertItemInArray(a, 0, o);
	}
	return a;
}

/* Prints each part the name is met by with its chain; the count. */
static size_t show_chains(const struct walk *w, const char *name, const struct cli *cli,
                          cJSON *chains)
{
	size_t i, found = 0;

	for (i = 0; i < w->lock->nparts; i++) {
		if (!meets(&w->lock->parts[i], name, strlen(name)))
			continue;
		found++;
		/* A part no request reaches is said to be so in text; in JSON
		 * its chain is the part alone, with no request at its head. */
		if (cli->json)
			cJSON_AddItemToArray(chains, chain_json(w, i));
		else if (!w->seen[i])
			printf("%s %s is in the set, but no request reaches it\n",
			       w->lock->parts[i].name, w->lock->parts[i].version);
		else
			print_chain(w, i);
	}
	return found;
}

static int why_in_lock(const struct cli *cli, const char *env, const struct cfapkg_lockfile *lock)
{
	const char *name = cli->args[0];
	struct walk w = {lock, calloc(lock->nparts + 1, sizeof(size_t)),
	                 calloc(lock->nparts + 1, sizeof(char *)),
	                 calloc(lock->nparts + 1, sizeof(bool))};
	cJSON *doc = NULL, *chains = NULL;
	size_t i, found;
	int rc = EXIT_OK;

	if (!w.from || !w.via || !w.seen) {
		cli_error("out of memory\n");
		rc = EXIT_ERROR;
		goto out;
	}
	/* Every part starts unreached; the walk fills in the ones a request
	 * leads to. */
	for (i = 0; i < lock->nparts; i++)
		w.from[i] = SIZE_MAX;
	walk_all(&w);
	if (cli->json) {
		doc = cJSON_CreateObject();
		json_str(doc, "env", env);
		json_str(doc, "name", name);
		chains = cJSON_AddArrayToObject(doc, "chains");
	}
	if (!(found = show_chains(&w, name, cli, chains))) {
		cli_error("nothing in environment \"%s\" is or provides \"%s\" ('cfapkg list --env "
		          "%s' shows what it holds; 'cfapkg info %s' what provides it)\n",
		          env, name, env, name);
		rc = EXIT_NOTFOUND;
	} else if (doc) {
		json_print(doc);
		doc = NULL;
	}
out:
	cJSON_Delete(doc);
	free(w.from);
	free((void *)w.via);
	free(w.seen);
	return rc;
}

int cmd_why(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const char *env = env_from_cli(cli);
	struct cfapkg_lockfile *lock = NULL;
	unsigned gen = 0;
	enum cfapkg_err e;
	int rc;

	if (cli->nargs != 1) {
		cli_error("usage: cfapkg why NAME [--env NAME]\n");
		return EXIT_USAGE;
	}
	if ((e = cfapkg_env_current(ctx, env, &gen)))
		return report_error(ctx, e);
	if (gen == 0) {
		cli_error("environment \"%s\" has nothing installed\n", env);
		return EXIT_NOTFOUND;
	}
	if ((e = cfapkg_env_lockfile(ctx, env, gen, &lock)))
		return report_error(ctx, e);
	rc = why_in_lock(cli, env, lock);
	cfapkg_lockfile_free(lock);
	return rc;
}
