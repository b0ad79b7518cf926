/*
 * json_docs.c - the JSON documents of the commands that change an
 * environment: one change as an object, a transaction's outcome, a
 * generation switch.  Shapes are in docs/cli.md, "JSON".
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* The "action" member of a change, by enum cfapkg_change_kind (docs/cli.md). */
static const char *const change_actions[] = {[CFAPKG_CHANGE_ADD] = "add",
                                             [CFAPKG_CHANGE_REMOVE] = "remove",
                                             [CFAPKG_CHANGE_MOVE] = "change",
                                             [CFAPKG_CHANGE_RESTORE] = "restore",
                                             [CFAPKG_CHANGE_RELINK] = "relink",
                                             [CFAPKG_CHANGE_RECORDS] = "rewrite"};

static cJSON *change_object(const char *action, const char *name, const char *from,
                            const char *to, const char *text)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "action", action);
	json_str(o, "name", name);
	json_str(o, "from", from);
	json_str(o, "to", to);
	json_str(o, "text", text);
	return o;
}

static cJSON *change_json(const struct cfapkg_change *c)
{
	return change_object(change_actions[c->kind], c->name, c->from, c->to, c->text);
}

/* history keeps a generation's changes as the lines install printed:
 * "+zluda 7", "-foo 1", "zluda 6 -> 7", "zluda 7 (store folder restored)",
 * "zluda 7 (view linked again)", "runtime.json written again (...)".  Names
 * and versions hold no spaces. */
static cJSON *change_from_text(const char *text)
{
	char name[256] = "", a[256] = "", b[256] = "";
	const char *action = "change", *sp = strchr(text, ' ');
	size_t n;

	/* A line of another shape (one an older cfapkg wrote), or a name longer
	 * than any, is kept whole as "other", never dropped. */
	if (!sp || (size_t)(sp - text) >= sizeof(name))
		return change_object("other", NULL, NULL, NULL, text);
	n = (size_t)(sp - text);
	memcpy(name, text, n);
	n = strcspn(sp + 1, " ");
	if (n >= sizeof(a))
		return change_object("other", NULL, NULL, NULL, text);
	memcpy(a, sp + 1, n);
	sp += 1 + n;
	if (strcmp(a, "written") == 0 && strncmp(sp, " again", 6) == 0)
		return change_object("rewrite", name, NULL, NULL, text);
	if (name[0] == '+' || name[0] == '-')
		return change_object(name[0] == '+' ? "add" : "remove", name + 1,
		                     name[0] == '-' ? a : NULL, name[0] == '+' ? a : NULL, text);
	if (strncmp(sp, " -> ", 4) == 0 && strlen(sp + 4) < sizeof(b)) {
		memcpy(b, sp + 4, strlen(sp + 4) + 1);
		return change_object(action, name, a, b, text);
	}
	action = strstr(sp, "restored") ? "restore" : strstr(sp, "linked again") ? "relink" : "other";
	return change_object(action, name, a, a, text);
}

cJSON *changes_json(char *const *lines)
{
	cJSON *arr = cJSON_CreateArray();

	while (lines && *lines)
		cJSON_AddItemToArray(arr, change_from_text(*lines++));
	return arr;
}

cJSON *part_json(const struct cfapkg_lockfile_part *p)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "name", p->name);
	json_str(o, "version", p->version);
	json_str(o, "kind", cfapkg_kind_name(p->kind));
	cJSON_AddBoolToObject(o, "requested", p->requested);
	return o;
}

cJSON *trans_json(const char *env, struct cfapkg_trans *t, const struct cfapkg_trans_result *r,
                  const char *outcome)
{
	const struct cfapkg_lockfile *set = t ? cfapkg_trans_new(t) : NULL;
	const struct cfapkg_change *c = NULL;
	cJSON *o = cJSON_CreateObject(), *a;
	size_t i, n = 0;

	json_str(o, "env", env);
	json_str(o, "outcome", outcome);
	if (r && r->commit.generation) {
		cJSON_AddNumberToObject(o, "generation", r->commit.generation);
		cJSON_AddNumberToObject(o, "previous", r->commit.previous);
	}
	/* Changes and the download size come with a transaction; a switch or an
	 * error before one has none to give. */
	if (t)
		c = cfapkg_trans_changes(t, &n);
	a = cJSON_AddArrayToObject(o, "changes");
	for (i = 0; c && i < n; i++)
		cJSON_AddItemToArray(a, change_json(&c[i]));
	if (t)
		cJSON_AddNumberToObject(o, "download_bytes", (double)cfapkg_trans_download_bytes(t));
	a = cJSON_AddArrayToObject(o, "packages");
	for (i = 0; set && i < set->nparts; i++)
		cJSON_AddItemToArray(a, part_json(&set->parts[i]));
	return o;
}

cJSON *switch_json(const char *env, unsigned from, unsigned to, const char *why)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "env", env);
	cJSON_AddNumberToObject(o, "generation", to);
	cJSON_AddNumberToObject(o, "previous", from);
	/* No reason is null, as an absent value is everywhere in these
	 * documents. */
	json_str(o, "reason", why && *why ? why : NULL);
	return o;
}

void print_count_json(const char *dir, const char *key, size_t n)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "dir", dir);
	cJSON_AddNumberToObject(o, key, (double)n);
	json_print(o);
}
