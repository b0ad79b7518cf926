/*
 * integrity_tool.c - drives the library calls the integrity test needs and
 * the command line does not offer (yet):
 *   integrity_tool ROOT space DOWNLOAD_BYTES UNPACK_BYTES
 *       cfapkg_check_space: prints "ok", or the refusal; exit 0 or 1
 *   integrity_tool ROOT estimate FORMAT SIZE UNPACKED_SIZE
 *       cfapkg_unpacked_estimate: prints the number
 *   integrity_tool ROOT damage ENV
 *       cfapkg_env_damage: prints {"generation", "damage": [{"part",
 *       "version", "store", "store_missing", "store_damaged",
 *       "view_damaged"}], "problems": [...]}; exit 0, or 1 on an error
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfapkg.h"

static long long number(const char *s)
{
	long long v = 0, sign = 1;

	if (*s == '-')
		sign = -1, s++;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	return sign * v;
}

static void add_problem(void *arg, const char *line)
{
	cJSON_AddItemToArray(arg, cJSON_CreateString(line));
}

static int damage(struct cfapkg_ctx *ctx, const char *env)
{
	cJSON *o = cJSON_CreateObject(), *list = cJSON_CreateArray();
	cJSON *problems = cJSON_CreateArray();
	struct cfapkg_damage *d = NULL;
	size_t n = 0, i;
	unsigned gen = 0;
	char *text;
	enum cfapkg_err e = cfapkg_env_damage(ctx, env, add_problem, problems, &gen, &d, &n);

	if (e) {
		printf("error: %s\n", cfapkg_ctx_error(ctx));
		return 1;
	}
	for (i = 0; i < n; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "part", d[i].part);
		cJSON_AddStringToObject(x, "version", d[i].version);
		cJSON_AddStringToObject(x, "store", d[i].store);
		cJSON_AddBoolToObject(x, "store_missing", d[i].store_missing);
		cJSON_AddBoolToObject(x, "store_damaged", d[i].store_damaged);
		cJSON_AddBoolToObject(x, "view_damaged", d[i].view_damaged);
		cJSON_AddItemToArray(list, x);
	}
	cfapkg_free(d);
	cJSON_AddNumberToObject(o, "generation", gen);
	cJSON_AddItemToObject(o, "damage", list);
	cJSON_AddItemToObject(o, "problems", problems);
	text = cJSON_PrintUnformatted(o);
	printf("%s\n", text ? text : "{}");
	cJSON_free(text);
	cJSON_Delete(o);
	return 0;
}

int main(int argc, char **argv)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	int rc = 2;

	if (!ctx || argc < 3 || cfapkg_ctx_set_root(ctx, argv[1]) != CFAPKG_E_OK)
		return 2;
	if (strcmp(argv[2], "space") == 0 && argc == 5) {
		enum cfapkg_err e = cfapkg_check_space(ctx, (uint64_t)number(argv[3]),
		                                       (uint64_t)number(argv[4]));
		printf("%s\n", e ? cfapkg_ctx_error(ctx) : "ok");
		rc = e ? 1 : 0;
	} else if (strcmp(argv[2], "estimate") == 0 && argc == 6) {
		printf("%llu\n", (unsigned long long)cfapkg_unpacked_estimate(
		                     argv[3], number(argv[4]), number(argv[5])));
		rc = 0;
	} else if (strcmp(argv[2], "damage") == 0 && argc == 4) {
		rc = damage(ctx, argv[3]);
	}
	cfapkg_ctx_free(ctx);
	return rc;
}
