/*
 * fuzz_hipinfo.c - the Windows detection parsers (detect/hipinfo.c,
 * detect/windows.c, detect/detect.c): hipInfo.exe's output, and each line
 * as a PCI hardware id, a DriverVersion, an HSA_OVERRIDE_GFX_VERSION and a
 * KFD gfx_target_version.  Properties: no device written past the room
 * given (and the same count without room), every field a span of its own
 * line, a GPU target without the feature suffix of a full target id, and
 * decoded targets that are valid ones.
 */
#include <stdlib.h>
#include <string.h>

#include "core/recipe.h"
#include "core/strbuf.h"
#include "detect/detect.h"
#include "tests/fuzz/fuzz.h"

#define ROOM 4

/* A span of a device's text: within the text, on one line. */
static bool within(const char *text, size_t len, const char *span, size_t n)
{
	return !span ? n == 0
	             : span >= text && span + n <= text + len && !memchr(span, '\n', n);
}

static void check_devices(const char *text)
{
	struct cfa_hipinfo_device d[ROOM + 1];
	size_t n, i, len = strlen(text);

	memset(d, 0x5a, sizeof(d));
	n = cfa_hipinfo_parse(text, d, ROOM);
	FUZZ_CHECK(cfa_hipinfo_parse(text, NULL, 0) == n, "%zu devices, counted again differently",
	           n);
	for (i = 0; i < n && i < ROOM; i++) {
		FUZZ_CHECK(within(text, len, d[i].name, d[i].name_len) &&
		               within(text, len, d[i].gfx, d[i].gfx_len),
		           "device %zu: a field outside its line", i);
		FUZZ_CHECK(!d[i].gfx || !memchr(d[i].gfx, ':', d[i].gfx_len), "device %zu: gfx \"%.*s\"",
		           i, (int)d[i].gfx_len, d[i].gfx);
	}
	for (i = 0; i < sizeof(d[ROOM]); i++)
		FUZZ_CHECK(((unsigned char *)&d[ROOM])[i] == 0x5a, "wrote past the devices given");
}

static void check_line(const char *line)
{
	uint16_t vendor = 0, device = 0;
	uint64_t kfd = 0;
	int revision = 0;
	char gfx[16];

	if (cfa_parse_hwid(line, &vendor, &device, &revision))
		FUZZ_CHECK(revision >= -1 && revision <= 0xff, "%s: revision %d", line, revision);
	cfa_adrenalin_of(line);
	if (cfa_gfx_from_override(line, gfx))
		FUZZ_CHECK(cfa_valid_gfx(gfx), "override %s gave %s", line, gfx);
	if (cfa_parse_u64(line, strlen(line), UINT64_MAX, &kfd) && cfa_gfx_from_kfd((unsigned long)kfd, gfx))
		FUZZ_CHECK(strncmp(gfx, "gfx", 3) == 0 && strlen(gfx) < sizeof(gfx), "kfd %s gave %s",
		           line, gfx);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *line = text, *eol;

	check_devices(text);
	for (; line; line = eol ? eol + 1 : NULL) {
		eol = strchr(line, '\n');
		if (eol)
			*eol = '\0';
		check_line(line);
	}
	free(text);
	return 0;
}
