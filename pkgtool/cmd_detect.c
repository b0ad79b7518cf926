/*
 * cmd_detect.c - 'cfapkg detect' (what this machine is, and which GPU
 * cfapkg plans for) and 'cfapkg report' (the same as a JSON file for a
 * compatibility report, with user names and home folders taken out).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* A GPU the table does not know has no status (-1): "unknown", not a status it
 * does not have. */
static const char *status_text(int status)
{
	return status < 0 ? "unknown" : cfapkg_status_name((enum cfapkg_status)status);
}

/* What detect found, as it found it: empty fields become null rather than "",
 * so a script can tell "not found" from a value. */
static cJSON *machine_json(const struct cfapkg_machine *m)
{
	cJSON *o = cJSON_CreateObject(), *gpus, *drv, *rts, *sdks, *warn;
	size_t i;

	gpus = cJSON_AddArrayToObject(o, "gpus");
	for (i = 0; i < m->ngpus; i++) {
		const struct cfapkg_gpu *g = &m->gpus[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "index", g->index);
		json_str(j, "name", g->name);
		json_str(j, "gfx", g->gfx[0] ? g->gfx : NULL);
		json_str(j, "generation", g->generation);
		cJSON_AddNumberToObject(j, "vram_bytes", (double)g->vram_bytes);
		json_str(j, "pci_id", g->pci_id);
		json_str(j, "source", g->source);
		json_str(j, "status", status_text(g->status));
		cJSON_AddBoolToObject(j, "integrated", g->integrated);
		cJSON_AddBoolToObject(j, "known", g->known);
		json_str(j, "problem", g->problem);
		cJSON_AddItemToArray(gpus, j);
	}
	json_index(o, "selected", m->selected);
	/* passed_over: a discrete GPU that could not be read while an
	 * integrated one was chosen, probably the one the user meant. */
	json_index(o, "passed_over", m->passed_over);
	json_str(o, "gfx_override", m->gfx_override[0] ? m->gfx_override : NULL);
	drv = cJSON_AddObjectToObject(o, "driver");
	json_str(drv, "version", m->driver);
	json_str(drv, "source", m->driver_source);
	json_str(drv, "detail", m->driver_detail);
	if (strcmp(m->os, "linux") == 0) {
		cJSON *libc = cJSON_AddObjectToObject(o, "glibc");
		json_str(libc, "version", m->glibc);
		json_str(libc, "source", m->glibc_source);
	}
	rts = cJSON_AddArrayToObject(o, "hip_runtimes");
	for (i = 0; i < m->nhip_runtimes; i++) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "major", m->hip_runtimes[i].major);
		json_str(j, "file", m->hip_runtimes[i].file);
		cJSON_AddItemToArray(rts, j);
	}
	sdks = cJSON_AddArrayToObject(o, "hip_sdks");
	for (i = 0; i < m->nhip_sdks; i++) {
		cJSON *j = cJSON_CreateObject();
		json_str(j, "version", m->hip_sdks[i].version);
		json_str(j, "path", m->hip_sdks[i].path);
		json_str(j, "source", m->hip_sdks[i].source);
		cJSON_AddItemToArray(sdks, j);
	}
	warn = cJSON_AddArrayToObject(o, "warnings");
	for (i = 0; i < m->nwarnings; i++)
		cJSON_AddItemToArray(warn, cJSON_CreateString(m->warnings[i]));
	return o;
}

/* Each GPU, "*" marking the one plans are made for; a GPU detection could
 * not fully read is shown with what went wrong. */
static void print_gpus(const struct cfapkg_machine *m)
{
	char size[32];
	size_t i;

	if (m->ngpus == 0)
		printf("No AMD GPU found%s\n", m->nwarnings ? ", but detection could not read "
		       "everything (the warnings below say what and why)." : ".");
	for (i = 0; i < m->ngpus; i++) {
		const struct cfapkg_gpu *g = &m->gpus[i];
		printf("%s GPU %u: %s  %s  %s  %s  %s  [%s, by %s]%s\n",
		       (int)i == m->selected ? "*" : " ", g->index, or_else(g->name, "?"),
		       g->gfx[0] ? g->gfx : "gfx?", or_else(g->generation, "?"),
		       g->vram_bytes ? human_size((int64_t)g->vram_bytes, size, sizeof(size))
		                     : "VRAM ?", g->pci_id,
		       status_text(g->status), g->source, g->integrated ? " integrated" : "");
		if (g->problem)
			printf("        could not be read: %s\n", g->problem);
	}
}

static void print_machine(const struct cfapkg_machine *m)
{
	size_t i;

	print_gpus(m);
	/* HSA_OVERRIDE_GFX_VERSION makes ROCm treat the GPU as another target:
	 * plans follow it, so detect says so. */
	if (m->gfx_override[0])
		printf("HSA_OVERRIDE_GFX_VERSION: planning uses %s\n", m->gfx_override);
	printf("driver: %s%s%s%s\n", or_else(m->driver, "unknown"), m->driver_source ? " (" : "",
	       or_else(m->driver_source, ""), m->driver_source ? ")" : "");
	if (m->driver_detail)
		printf("        %s\n", m->driver_detail);
	if (strcmp(m->os, "linux") == 0)
		printf("glibc: %s%s%s%s\n", or_else(m->glibc, "unknown"), m->glibc_source ? " (" : "",
		       or_else(m->glibc_source, ""), m->glibc_source ? ")" : "");
	printf("HIP runtimes:%s\n", m->nhip_runtimes ? "" : " none");
	for (i = 0; i < m->nhip_runtimes; i++)
		printf("  %u: %s\n", m->hip_runtimes[i].major, m->hip_runtimes[i].file);
	printf("HIP SDKs / ROCm:%s\n", m->nhip_sdks ? "" : " none");
	for (i = 0; i < m->nhip_sdks; i++)
		printf("  %s: %s (%s)\n", m->hip_sdks[i].version, m->hip_sdks[i].path,
		       m->hip_sdks[i].source);
	for (i = 0; i < m->nwarnings; i++)
		printf("warning: %s\n", m->warnings[i]);
	if (m->selected >= 0)
		printf("cfapkg plans for GPU %d (marked *).\n", m->selected);
	print_choice_hint(stdout, m);
}

/* --gpu-index picks the GPU when there are several; -1 lets detection
 * choose. */
static int detect_machine(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_machine *m)
{
	enum cfapkg_err e;
	int index, rc;

	if ((rc = gpu_index_from_cli(cli, &index)))
		return rc;
	if ((e = cfapkg_detect(ctx, index, m)))
		return report_error(ctx, e);
	return EXIT_OK;
}

/* Shows the machine; EXIT_NO_GPU without an AMD GPU. */
static int show_machine(const struct cli *cli, const struct cfapkg_machine *m)
{
	if (cli->json)
		json_print(machine_json(m));
	else if (!cli->quiet)
		print_machine(m);
	/* No AMD GPU is EXIT_NO_GPU even after the machine was shown: a script
	 * can tell it from a failure to detect. */
	if (m->ngpus == 0) {
		/* With --json or --quiet the reasons have not been shown yet. */
		if (cli->json || cli->quiet)
			print_detection_notes(stderr, m);
		cli_error("no AMD GPU found on this machine%s; to plan for another "
		                "machine, pass --gpu gfxNNNN to cfapkg plan\n", m->nwarnings ?
		        " (detection could not read everything: see the warnings)" : "");
		return EXIT_NO_GPU;
	}
	return EXIT_OK;
}

int cmd_detect(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_machine m = {0};
	int rc = detect_machine(ctx, cli, &m);

	if (rc == EXIT_OK)
		rc = show_machine(cli, &m);
	cfapkg_machine_clear(&m);
	return rc;
}

/* Replaces every occurrence of what (when long enough to mean something)
 * in a string value by with. */
static void scrub_value(cJSON *v, const char *what, const char *with)
{
	size_t wl = what ? strlen(what) : 0, ww = strlen(with), n = 0;
	const char *p;
	char *out;

	if (!cJSON_IsString(v) || wl < 2 || !strstr(v->valuestring, what))
		return;
	out = malloc(strlen(v->valuestring) * (ww + 1) + 1);
	if (!out)
		return;
	for (p = v->valuestring; *p;) {
		if (strncmp(p, what, wl) == 0) {
			memcpy(out + n, with, ww);
			n += ww;
			p += wl;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	cJSON_SetValuestring(v, out);
	free(out);
}

/* Walks every value of the document: a home folder may be in any path
 * detection reports, nested or not. */
static void scrub(cJSON *node, const char *what, const char *with)
{
	cJSON *c;

	scrub_value(node, what, with);
	for (c = node->child; c; c = c->next)
		scrub(c, what, with);
}

/* No user names, home folders or tokens leave the machine in a report.
 * Home folders are replaced before user names, so a path reads "~/..." rather
 * than a home with its user name taken out. */
static void make_private(cJSON *o)
{
	static const char *const homes[] = {"HOME", "USERPROFILE", "LOCALAPPDATA", "APPDATA"};
	static const char *const users[] = {"USER", "USERNAME", "LOGNAME"};
	size_t i;

	for (i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		const char *h = getenv(homes[i]);
		if (h && strlen(h) > 1)
			scrub(o, h, "~");
	}
	for (i = 0; i < sizeof(users) / sizeof(users[0]); i++)
		scrub(o, getenv(users[i]), "<user>");
}

/* The report's document: what detect --json says, and the system and
 * cfapkg it was made with, scrubbed.  A report is a facts file for another
 * machine's plans (cfapkg_facts_load reads it back), so it carries its own
 * format number and cfapkg's version.  NULL when out of memory. */
static char *report_text(const struct cfapkg_machine *m)
{
	cJSON *o = machine_json(m);
	char *text;

	cJSON_AddStringToObject(o, "os", m->os);
	cJSON_AddStringToObject(o, "arch", m->arch ? m->arch : "");
	cJSON_AddStringToObject(o, "os_build", m->os_build ? m->os_build : "");
	cJSON_AddStringToObject(o, "cfapkg_version", cfapkg_version_string());
	cJSON_AddNumberToObject(o, "report_format", 1);
	/* The report leaves the machine, so it is scrubbed after everything
	 * else is in it, os_build included. */
	make_private(o);
	/* The document is printed whole, not with json_print: it may go to a
	 * file, and a document that lost a member is refused. */
	json_stamp(o);
	text = json_output_failed() ? NULL : cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}

int cmd_report(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	struct cfapkg_machine m = {0};
	const char *path = cli_value(cli, OPT_OUTPUT);
	char *text;
	FILE *f;
	int rc = detect_machine(ctx, cli, &m);

	text = rc ? NULL : report_text(&m);
	cfapkg_machine_clear(&m);
	if (rc)
		return rc;
	if (!text) {
		cli_error("out of memory while building the report\n");
		return EXIT_ERROR;
	}
	f = path ? fopen(path, "w") : stdout;
	if (!f) {
		cli_error("%s: cannot write the report\n", path);
		free(text);
		return EXIT_ERROR;
	}
	fprintf(f, "%s\n", text);
	free(text);
	if (path) {
		fclose(f);
		if (!cli->quiet)
			fprintf(stderr, "Wrote %s: attach it to your compatibility report.\n", path);
	}
	return EXIT_OK;
}
