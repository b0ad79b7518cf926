/*
 * hipinfo.c - reading what hipInfo.exe prints: one block per device, each
 * "label: value" line right-aligned by the tool, so labels are matched
 * after trimming.  Only the device's name, gcnArchName and totalGlobalMem
 * are taken.
 */
#include <string.h>

#include "core/strbuf.h"
#include "detect/detect.h"

/* The tool pads its labels on the left to line them up, so a label is found
 * after the blanks. */
static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The end of the run of digits from i (i itself when there is none). */
static size_t digit_run(const char *v, size_t i, size_t n)
{
	while (i < n && v[i] >= '0' && v[i] <= '9')
		i++;
	return i;
}

/* "15.92 GB" -> bytes (hipInfo prints GB with two decimals).  GB and MB
 * are taken as GiB and MiB, the units GPU memory comes in; a value
 * without a unit is read as bytes. */
static uint64_t parse_memory(const char *v, size_t n)
{
	uint64_t whole = 0, frac = 0, scale = 1, unit = 1;
	size_t i = digit_run(v, 0, n), k;

	/* Past 2^60 is no GPU's memory: read as 0, unknown. */
	if (!cfa_parse_u64(v, i, UINT64_MAX / 16, &whole))
		whole = 0;
	if (i < n && v[i] == '.') {
		size_t start = ++i, kept;
		i = digit_run(v, start, n);
		/* Six decimals are more than hipInfo prints; the rest is noise. */
		kept = i - start < 6 ? i - start : 6;
		if (kept && cfa_parse_u64(v + start, kept, 999999, &frac)) {
			for (k = 0; k < kept; k++)
				scale *= 10;
		} else {
			frac = 0;
		}
	}
	while (i < n && v[i] == ' ')
		i++;
	if (i + 2 <= n && strncmp(v + i, "GB", 2) == 0)
		unit = 1024ull * 1024 * 1024;
	else if (i + 2 <= n && strncmp(v + i, "MB", 2) == 0)
		unit = 1024ull * 1024;
	/* A product past 64 bits would wrap to a small, wrong size: like a
	 * number past 2^60, it is no GPU's memory, and reads as unknown. */
	if (whole > (UINT64_MAX - unit) / unit)
		return 0;
	return whole * unit + frac * unit / scale;
}

/* With max 0 (out may be NULL) it only counts, so that a caller can size
 * out first and parse again. */
size_t cfa_hipinfo_parse(const char *text, struct cfa_hipinfo_device *out, size_t max)
{
	const char *p = text;
	size_t n = 0;
	struct cfa_hipinfo_device *cur = NULL;

	while (p && *p) {
		const char *line = skip_blanks(p), *eol = strchr(p, '\n'), *colon, *val;
		size_t len = eol ? (size_t)(eol - line) : strlen(line), vlen;
		p = eol ? eol + 1 : NULL;
		if (strncmp(line, "device#", 7) == 0) {
			/* "device#  0" starts a block (no colon on this line).
			 * Past max a block is still read through, only not
			 * kept, so that its lines are never taken for the last
			 * kept device's; every block is counted. */
			cur = n < max ? &out[n] : NULL;
			n++;
			if (cur)
				memset(cur, 0, sizeof(*cur));
			continue;
		}
		/* Headings and blank lines have no colon; only "label: value" lines
		 * carry facts.  Labels are matched with their colon, so a longer label
		 * that starts alike is not taken for one of these. */
		colon = memchr(line, ':', len);
		if (!colon)
			continue;
		val = skip_blanks(colon + 1);
		vlen = len - (size_t)(val - line);
		/* A Windows tool ends its lines in "\r\n"; the "\r" is no part
		 * of a value. */
		while (vlen && (val[vlen - 1] == '\r' || val[vlen - 1] == ' '))
			vlen--;
		/* Lines before the first block (the tool's own header) belong
		 * to no device. */
		if (!cur) {
			continue;
		} else if (strncmp(line, "Name:", 5) == 0) {
			cur->name = val;
			cur->name_len = vlen;
		} else if (strncmp(line, "gcnArchName:", 12) == 0) {
			/* "gfx1200" or a full target id "gfx90a:sramecc+:xnack-":
			 * the target is what comes before the features. */
			size_t g = strcspn(val, ":\r\n ");
			cur->gfx = val;
			cur->gfx_len = g < vlen ? g : vlen;
		} else if (strncmp(line, "totalGlobalMem:", 15) == 0) {
			cur->memory = parse_memory(val, vlen);
		}
	}
	return n;
}
