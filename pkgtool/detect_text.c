/*
 * detect_text.c - what detection found, shown: its notes (the warnings a
 * backend left) as text, and the machine as JSON (null for a described
 * one), for detect, plan and install alike.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* A GPU index below 0 means none, which JSON says as null rather than as a
 * number a reader might take for a GPU. */
void json_index(cJSON *o, const char *key, int index)
{
	if (index >= 0)
		cJSON_AddNumberToObject(o, key, index);
	else
		cJSON_AddNullToObject(o, key);
}

/* How to plan for the GPU the chosen one was preferred to. */
void print_choice_hint(FILE *out, const struct cfapkg_machine *m)
{
	const struct cfapkg_gpu *g;

	if (m->passed_over < 0)
		return;
	g = &m->gpus[m->passed_over];
	fprintf(out, "hint: to plan for GPU %u, %s, pass --gpu-index %u", g->index, g->name,
	        g->index);
	if (g->gfx[0])
		fprintf(out, " (its target %s is from gpus.json) or --gpu %s", g->gfx, g->gfx);
	else
		fprintf(out, ", or name its target with --gpu gfxNNNN");
	fprintf(out, "; 'cfapkg detect' shows what was read\n");
}

/* Shown by every command that detects (detect, plan, install), so that a
 * warning about what was read is never only in 'cfapkg detect'. */
void print_detection_notes(FILE *out, const struct cfapkg_machine *m)
{
	size_t i;

	for (i = 0; m && i < m->nwarnings; i++)
		fprintf(out, "warning: %s\n", m->warnings[i]);
	if (m)
		print_choice_hint(out, m);
}

/* A described machine (NULL here) was never detected, so it is null rather than
 * an object with nothing found. */
cJSON *detection_json(const struct cfapkg_machine *m)
{
	cJSON *o, *warn;
	size_t i;

	if (!m)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	json_index(o, "selected", m->selected);
	if (m->selected >= 0) {
		const struct cfapkg_gpu *g = &m->gpus[m->selected];
		json_str(o, "name", g->name);
		cJSON_AddBoolToObject(o, "integrated", g->integrated);
		json_str(o, "problem", g->problem);
	}
	json_index(o, "passed_over", m->passed_over);
	warn = cJSON_AddArrayToObject(o, "warnings");
	for (i = 0; i < m->nwarnings; i++)
		cJSON_AddItemToArray(warn, cJSON_CreateString(m->warnings[i]));
	return o;
}
