/*
 * cmd_gpus.c - 'cfapkg gpus': the GPUs gpus.json knows, and --gpu's
 * value read as a person writes it (a target, a product name, a PCI id),
 * with the candidates or the nearest GPUs when it names none or several.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* "1002:744c:c8", or "1002:744c" for an entry of any revision: what --gpu takes. */
static const char *pci_text(const struct cfapkg_gpu_device *d, char *buf, size_t len)
{
	int n = d->revision >= 0
	                ? snprintf(buf, len, "%04x:%04x:%02x", (unsigned)d->vendor,
	                           (unsigned)d->device, (unsigned)d->revision)
	                : snprintf(buf, len, "%04x:%04x", (unsigned)d->vendor, (unsigned)d->device);
	return n > 0 && (size_t)n < len ? buf : "?";
}

/* A pick is a target (no device) or a product; candidates go to standard
 * error, as part of the usage error. */
static void print_pick(const struct cfapkg_gpu_pick *p)
{
	char pci[16];

	if (!p->device)
		fprintf(stderr, "  %-8s  %-8s  %s\n", p->target->gfx, p->target->generation,
		        cfapkg_status_name(p->target->status));
	else
		fprintf(stderr, "  %-36s  %-12s  %s\n", p->device->name,
		        pci_text(p->device, pci, sizeof(pci)), p->device->gfx);
}

/* On the error stream, as they explain an error: standard output stays for what
 * a command was asked to print. */
static void print_picks(const struct cfapkg_gpu_lookup *l)
{
	unsigned i;

	for (i = 0; i < l->npicks; i++)
		print_pick(&l->picks[i]);
}

/* The first candidate is the example of how to name one whole. */
static void print_ambiguous(const char *text, const struct cfapkg_gpu_lookup *l)
{
	const struct cfapkg_gpu_device *d = l->npicks ? l->picks[0].device : NULL;
	char pci[16];

	cli_error("GPU \"%s\" fits more than one target:\n", text);
	print_picks(l);
	if (l->more)
		fprintf(stderr, "  ... and %u more (cfapkg gpus \"%s\" lists them)\n", l->more, text);
	/* A pick may be a target alone, with no device to name. */
	if (!d) {
		fprintf(stderr, "Pick one by its target (--gpu %s).\n",
		        l->npicks ? l->picks[0].target->gfx : "gfxNNNN");
		return;
	}
	fprintf(stderr, "Pick one by its whole name (--gpu \"%s\"), its PCI id (--gpu %s) or its "
	                "target (--gpu %s).\n",
	        d->name, pci_text(d, pci, sizeof(pci)), d->gfx);
}

/* The error and its nearest names make one message: the line ends only after
 * the list, or at once when there is none. */
static void print_unknown(struct cfapkg_ctx *ctx, const char *text,
                          const struct cfapkg_gpu_lookup *l)
{
	const struct cfapkg_gpu_device *devs;
	size_t n = 0;

	if (l->match == CFAPKG_GPU_UNKNOWN_TARGET)
		cli_error("unknown GPU target %s: gpus.json does not list it",
		        text);
	else
		cli_error("unknown GPU \"%s\"", text);
	if (l->npicks) {
		fprintf(stderr, "; the nearest known:\n");
		print_picks(l);
	} else {
		fprintf(stderr, "\n");
	}
	/* Without a GPU table only targets can be looked up: saying so
	 * explains why a product name was not found. */
	if (l->match == CFAPKG_GPU_UNKNOWN && !cfapkg_gpu_devices(ctx, &devs, &n) && n == 0)
		fprintf(stderr, "No GPU table (gpus.json) is loaded: only a target such as gfx1200 "
		                "names a GPU.\n");
	else
		fprintf(stderr, "'cfapkg gpus' lists the names, PCI ids and targets --gpu takes.\n");
}

/* The GPU a flag names, as its one target; the candidates or the nearest names
 * are told here, where the flag is, rather than later by the solve. */
int gpu_from_cli(struct cfapkg_ctx *ctx, const char *text, char *gfx, size_t len)
{
	struct cfapkg_gpu_lookup l;
	enum cfapkg_err e = cfapkg_gpu_lookup(ctx, text, &l);
	int n;

	if (e)
		return report_error(ctx, e);
	if (l.match == CFAPKG_GPU_FOUND) {
		/* A target that does not fit gfx is an error, never a
		 * shortened one. */
		n = snprintf(gfx, len, "%s", l.gfx);
		return n > 0 && (size_t)n < len ? EXIT_OK : EXIT_ERROR;
	}
	/* Both ways out are usage errors: the user named the GPU, and only
	 * they can say which was meant. */
	if (l.match == CFAPKG_GPU_AMBIGUOUS)
		print_ambiguous(text, &l);
	else
		print_unknown(ctx, text, &l);
	return EXIT_USAGE;
}

/* Whether devs[i] adds a row: it fits and no earlier entry that fits has
 * its name and target (one row per product, its PCI ids together). */
static bool first_of_row(const struct cfapkg_gpu_device *devs, size_t i, const char *pattern)
{
	size_t j;

	if (!cfapkg_gpu_device_matches(&devs[i], pattern))
		return false;
	for (j = 0; j < i; j++)
		if (strcmp(devs[j].name, devs[i].name) == 0 && strcmp(devs[j].gfx, devs[i].gfx) == 0 &&
		    cfapkg_gpu_device_matches(&devs[j], pattern))
			return false;
	return true;
}

/* Appends s to buf at *at; false (buf ending in "...") when it is full.
 * On the first piece that does not fit the text ends in "..." and *at stays at
 * its end, so later calls add nothing. */
static bool append(char *buf, size_t len, size_t *at, const char *s)
{
	int n = snprintf(buf + *at, len - *at, "%s", s);

	if (n < 0 || (size_t)n >= len - *at) {
		memcpy(buf + len - 4, "...", 4);
		*at = len - 1;
		return false;
	}
	*at += (size_t)n;
	return true;
}

/* The row of devs[i]: its PCI ids into ids (JSON) and text (revisions of
 * one id joined: 1002:1586:c1/c3). */
static void row_ids(const struct cfapkg_gpu_device *devs, size_t n, size_t i,
                    const char *pattern, cJSON *ids, char *text, size_t len)
{
	const struct cfapkg_gpu_device *prev = NULL;
	char pci[16], rev[8];
	size_t j, at = 0;
	bool room = true;

	text[0] = '\0';
	for (j = i; j < n; j++) {
		const struct cfapkg_gpu_device *d = &devs[j];
		if (strcmp(d->name, devs[i].name) != 0 || strcmp(d->gfx, devs[i].gfx) != 0 ||
		    !cfapkg_gpu_device_matches(d, pattern))
			continue;
		cJSON_AddItemToArray(ids, cJSON_CreateString(pci_text(d, pci, sizeof(pci))));
		/* A revision of the same vendor and device as the previous id
		 * is joined to it ("/c3"); anything else starts a new id after
		 * ", ". */
		if (room && prev && prev->vendor == d->vendor && prev->device == d->device &&
		    prev->revision >= 0 && d->revision >= 0 &&
		    snprintf(rev, sizeof(rev), "/%02x", (unsigned)d->revision) == 3)
			room = append(text, len, &at, rev);
		else if (room)
			room = (!prev || append(text, len, &at, ", ")) && append(text, len, &at, pci);
		prev = d;
	}
}

/* The target's fields are null for a device whose target the table lacks,
 * rather than left out. */
static cJSON *row_json(const struct cfapkg_gpu_device *d, const struct cfapkg_gpu_target *t,
                       cJSON *ids)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "name", d->name);
	cJSON_AddItemToObject(o, "pci", ids);
	json_str(o, "chip", d->chip);
	json_str(o, "gfx", d->gfx);
	json_str(o, "generation", t ? t->generation : NULL);
	json_str(o, "status", t ? cfapkg_status_name(t->status) : NULL);
	if (t)
		cJSON_AddBoolToObject(o, "apu", t->apu);
	else
		cJSON_AddNullToObject(o, "apu");
	return o;
}

/* Lists the rows that fit pattern into t and arr; how many. */
static size_t list_rows(struct cfapkg_ctx *ctx, const struct cfapkg_gpu_device *devs, size_t n,
                        const char *pattern, struct table *t, cJSON *arr)
{
	size_t i, found = 0;
	char ids[160];

	for (i = 0; i < n; i++) {
		const struct cfapkg_gpu_device *d = &devs[i];
		const struct cfapkg_gpu_target *target;
		cJSON *pci;
		if (!first_of_row(devs, i, pattern))
			continue;
		found++;
		target = cfapkg_gpu_target_find(ctx, d->gfx);
		pci = cJSON_CreateArray();
		row_ids(devs, n, i, pattern, pci, ids, sizeof(ids));
		table_row(t, (const char *const[]){d->name, d->gfx, target ? target->generation : "?",
		                                   target ? cfapkg_status_name(target->status) : "?",
		                                   ids});
		cJSON_AddItemToArray(arr, row_json(d, target, pci));
	}
	return found;
}

/* The arguments as one pattern: spaces do not matter to names, so
 * 'cfapkg gpus RX 7900' is 'cfapkg gpus "RX 7900"'. */
static bool join_args(const struct cli *cli, char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < cli->nargs; i++) {
		int n = snprintf(buf + at, len - at, "%s%s", i ? " " : "", cli->args[i]);
		if (n < 0 || (size_t)n >= len - at)
			return false;
		at += (size_t)n;
	}
	return true;
}

/* gpus [PATTERN]: the table's products, one row each; nothing matching is
 * EXIT_NOTFOUND. */
int cmd_gpus(struct cfapkg_ctx *ctx, const struct cli *cli)
{
	const struct cfapkg_gpu_device *devs;
	char pattern[256];
	struct table t;
	size_t n, found;
	enum cfapkg_err e;
	cJSON *arr;

	if (!join_args(cli, pattern, sizeof(pattern))) {
		cli_error("the pattern is longer than any GPU name\n");
		return EXIT_USAGE;
	}
	if ((e = cfapkg_gpu_devices(ctx, &devs, &n)))
		return report_error(ctx, e);
	arr = cJSON_CreateArray();
	table_init(&t, 5);
	table_row(&t, (const char *const[]){"NAME", "TARGET", "GENERATION", "STATUS", "PCI"});
	found = list_rows(ctx, devs, n, pattern, &t, arr);
	if (cli->json)
		json_print_list("gpus", arr);
	else
		cJSON_Delete(arr);
	if (found && !cli->json && !cli->quiet)
		table_print(&t);
	else
		table_free(&t);
	if (!found) {
		cli_error("no GPU in gpus.json matches \"%s\" (cfapkg gpus "
		                "lists them all)\n", pattern);
		return EXIT_NOTFOUND;
	}
	return EXIT_OK;
}
