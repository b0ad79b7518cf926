/*
 * test_detect_parse.c - the parsers of the Windows detection backend on
 * recorded samples: hipInfo.exe output, PCI hardware ids from the display
 * driver's registry key, and DriverVersion to Adrenalin release; and the
 * gfx decoding shared with Linux.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "detect/detect.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Whether a span of hipInfo's text reads want. */
static int span_is(const char *span, size_t n, const char *want)
{
	return span && n == strlen(want) && strncmp(span, want, n) == 0;
}

static void check_hipinfo(const char *path)
{
	struct cfa_hipinfo_device d[4];
	char *text = slurp(path);
	size_t n;

	CHECK(text != NULL, "read %s", path);
	if (!text)
		return;
	n = cfa_hipinfo_parse(text, d, 4);
	CHECK(n == 2, "two devices, got %zu", n);
	CHECK(n > 0 && span_is(d[0].gfx, d[0].gfx_len, "gfx1200"), "device 0 is gfx1200 (%.*s)",
	      (int)d[0].gfx_len, d[0].gfx);
	CHECK(n > 0 && span_is(d[0].name, d[0].name_len, "AMD Radeon RX 9060 XT"),
	      "device 0 name (%.*s)", (int)d[0].name_len, d[0].name);
	CHECK(n > 0 && d[0].memory > 15ull * 1024 * 1024 * 1024 &&
	          d[0].memory < 16ull * 1024 * 1024 * 1024,
	      "15.92 GB (%llu)", (unsigned long long)d[0].memory);
	CHECK(n > 1 && span_is(d[1].gfx, d[1].gfx_len, "gfx1036"),
	      "a full target id keeps its gfx (%.*s)", (int)d[1].gfx_len, d[1].gfx);
	CHECK(n > 1 && d[1].memory == 512ull * 1024 * 1024, "512.00 MB");
	CHECK(cfa_hipinfo_parse(text, d, 1) == 2 && span_is(d[0].gfx, d[0].gfx_len, "gfx1200"),
	      "with room for one: both counted, the first written");
	CHECK(cfa_hipinfo_parse("hipErrorNoDevice\r\n", d, 4) == 0, "no device, no entry");
	/* 2^34 + 1 GB is past 64 bits of bytes: unknown, not wrapped to a small size. */
	CHECK(cfa_hipinfo_parse("device#  0\r\ntotalGlobalMem: 17179869185 GB\r\n", d, 4) == 1 &&
	          d[0].memory == 0,
	      "a memory size past 64 bits reads as unknown (%llu)", (unsigned long long)d[0].memory);
	free(text);
}

static void check_hwid(void)
{
	uint16_t v = 0, d = 0;
	int r = 0;

	CHECK(cfa_parse_hwid("PCI\\VEN_1002&DEV_744C&SUBSYS_0E3A1002&REV_C8", &v, &d, &r) &&
	          v == 0x1002 && d == 0x744c && r == 0xc8,
	      "full hardware id");
	CHECK(cfa_parse_hwid("pci\\ven_1002&dev_7590", &v, &d, &r) && d == 0x7590 && r == -1,
	      "lower case, no revision");
	CHECK(!cfa_parse_hwid("ROOT\\BasicDisplay", &v, &d, &r), "not a PCI id");
}

static void check_gfx(void)
{
	char g[16];

	CHECK(cfa_gfx_from_kfd(120001, g) && strcmp(g, "gfx1201") == 0, "120001");
	CHECK(cfa_gfx_from_kfd(110501, g) && strcmp(g, "gfx1151") == 0, "110501");
	CHECK(cfa_gfx_from_kfd(90010, g) && strcmp(g, "gfx90a") == 0, "90010");
	CHECK(cfa_gfx_from_kfd(90012, g) && strcmp(g, "gfx90c") == 0, "90012");
	CHECK(!cfa_gfx_from_kfd(0, g), "a CPU node has none");
	CHECK(cfa_gfx_from_override("10.3.0", g) && strcmp(g, "gfx1030") == 0, "override 10.3.0");
	CHECK(cfa_gfx_from_override("11.0.0", g) && strcmp(g, "gfx1100") == 0, "override 11.0.0");
	CHECK(cfa_gfx_from_override("9.0.10", g) && strcmp(g, "gfx90a") == 0, "override 9.0.10");
	CHECK(!cfa_gfx_from_override("9.0.110", g) && !cfa_gfx_from_override("9.16.0", g),
	      "a minor or stepping past one hex digit is refused, not spilled into the next");
	CHECK(!cfa_gfx_from_override("11.0", g) && !cfa_gfx_from_override("gfx1100", g),
	      "override needs major.minor.stepping");
	CHECK(cfa_adrenalin_of("32.0.21025.1024") && strcmp(cfa_adrenalin_of("32.0.21025.1024"),
	                                                    "25.8.1") == 0,
	      "DriverVersion to Adrenalin");
	CHECK(cfa_adrenalin_of("1.2.3.4") == NULL, "an unknown DriverVersion");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_detect_parse HIPINFO_SAMPLE\n");
		return 2;
	}
	check_hipinfo(argv[1]);
	check_hwid();
	check_gfx();
	return check_report();
}
