/*
 * contract.c - what scripts may rely on: every error goes through
 * cli_error (text on standard error, and kept for the JSON error
 * document), every JSON document printed is an object that starts with
 * "format": 1, and a failed command under --json that printed no document
 * of its own prints {"format": 1, "error": {...}} instead, so standard
 * output always holds exactly one document.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* The version of the JSON shapes in docs/cli.md: raised when a member
 * changes meaning or goes away, not when one is added. */
#define JSON_FORMAT 1

static char *last_error;
static bool document_printed;

void cli_error(const char *fmt, ...)
{
	va_list ap;
	size_t len;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	free(last_error);
	/* Without memory the text still reaches standard error below; only
	 * the JSON error document loses its message. */
	if ((last_error = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		/* Sized by the first pass: the same text fits exactly. */
		if (vsnprintf(last_error, (size_t)n + 1, fmt, ap) != n)
			last_error[0] = '\0';
		va_end(ap);
		len = strlen(last_error);
		/* Kept without its line end: in the JSON error document the
		 * message is a string, which has no use for one. */
		while (len && last_error[len - 1] == '\n')
			last_error[--len] = '\0';
	}
	fputs("cfapkg: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* "format" first, so that a reader sees the version before anything it
 * might misread. */
void json_stamp(cJSON *doc)
{
	cJSON *f;

	document_printed = true;
	if (!cJSON_IsObject(doc) || cJSON_GetObjectItemCaseSensitive(doc, "format"))
		return;
	if (!(f = cJSON_CreateNumber(JSON_FORMAT)))
		return; /* counted as an allocation failure: nothing is printed */
	cJSON_AddItemToObject(doc, "format", f);
	/* cJSON adds at the end, so the member is moved to the front, where a
	 * reader looks first. */
	cJSON_DetachItemViaPointer(doc, f);
	cJSON_InsertItemInArray(doc, 0, f);
}

/* items is taken either way, even when the document cannot be made, so that a
 * caller never has to free it. */
void json_print_list(const char *key, cJSON *items)
{
	cJSON *doc = cJSON_CreateObject();

	if (!doc) {
		cJSON_Delete(items);
		json_print(NULL);
		return;
	}
	cJSON_AddItemToObject(doc, key, items);
	json_print(doc);
}

static const char *status_name(int status)
{
	/* By exit status: the document's "status" names the code returned. */
	static const char *const names[] = {
		[EXIT_OK] = "ok",           [EXIT_ERROR] = "error",
		[EXIT_USAGE] = "usage",     [EXIT_UNSOLVABLE] = "unsolvable",
		[EXIT_NOTFOUND] = "not-found", [EXIT_RECIPE] = "recipe",
		[EXIT_UNSUPPORTED] = "unsupported", [EXIT_NO_GPU] = "no-gpu",
		[EXIT_NETWORK] = "network", [EXIT_INTEGRITY] = "integrity",
		[EXIT_BUSY] = "busy"};

	if (status >= 0 && status < (int)(sizeof(names) / sizeof(names[0])))
		return names[status];
	if (status == EXIT_INTERRUPTED)
		return "interrupted";
	return status == EXIT_NO_PROGRAM ? "no-program" : "error";
}

void json_print_error(int status)
{
	cJSON *doc, *err;

	/* One document per run: a command that printed its own has said what
	 * went wrong there. */
	if (document_printed)
		return;
	doc = cJSON_CreateObject();
	err = cJSON_AddObjectToObject(doc, "error");
	cJSON_AddNumberToObject(err, "status", status);
	cJSON_AddStringToObject(err, "kind", status_name(status));
	json_str(err, "message", last_error);
	json_print(doc);
}

void cli_contract_end(void)
{
	free(last_error);
	last_error = NULL;
}

/* Every cJSON allocation of the process comes through here, so that one
 * check before output covers the commands' many builder calls: a document
 * that lost a member because memory ran out is never printed as whole. */
static unsigned long json_alloc_failures;

static void *json_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		json_alloc_failures++;
	return p;
}

void json_count_failures(void)
{
	cJSON_Hooks hooks = {json_malloc, free};

	cJSON_InitHooks(&hooks);
}

void output_alloc_failed(void)
{
	json_alloc_failures++;
}

bool json_output_failed(void)
{
	return json_alloc_failures > 0;
}

void json_print(cJSON *v)
{
	char *s;

	json_stamp(v);
	s = json_alloc_failures ? NULL : cJSON_Print(v);

	if (s && !json_alloc_failures) {
		fputs(s, stdout);
		fputc('\n', stdout);
	} else {
		cli_error("out of memory while building the JSON output\n");
		json_alloc_failures++;
	}
	cJSON_free(s);
	cJSON_Delete(v);
}

/* A missing text is null, not an absent member, so that every document of a
 * kind has the same members. */
void json_str(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* The library's own message when it left one, which names the file or part and
 * what to do; the code's general text only when it did not. */
int report_error(struct cfapkg_ctx *ctx, enum cfapkg_err err)
{
	const char *detail = cfapkg_ctx_error(ctx);

	cli_error("%s\n", *detail ? detail : cfapkg_strerror(err));
	return report_error_code(err);
}

int report_error_code(enum cfapkg_err err)
{
	switch (err) {
	/* Bad input of any kind (an option, a version, a facts file, a
	 * lockfile) is a usage error to a script: what was given must
	 * change. */
	case CFAPKG_E_USAGE:
	case CFAPKG_E_VERSION:
	case CFAPKG_E_FACTS:
	case CFAPKG_E_LOCKFILE:
		return EXIT_USAGE;
	case CFAPKG_E_NOTFOUND:
		return EXIT_NOTFOUND;
	case CFAPKG_E_RECIPE:
		return EXIT_RECIPE;
	case CFAPKG_E_UNSUPPORTED:
		return EXIT_UNSUPPORTED;
	case CFAPKG_E_NETWORK:
	case CFAPKG_E_OFFLINE:
		return EXIT_NETWORK;
	case CFAPKG_E_INTEGRITY:
		return EXIT_INTEGRITY;
	case CFAPKG_E_BUSY:
		return EXIT_BUSY;
	case CFAPKG_E_UNSOLVABLE:
		return EXIT_UNSOLVABLE;
	case CFAPKG_E_INTERRUPTED:
		return EXIT_INTERRUPTED;
	default:
		return EXIT_ERROR;
	}
}
