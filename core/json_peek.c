/*
 * json_peek.c - one whole number at the top of a JSON object, found by
 * stepping over the text rather than parsing it: a rollback needs only
 * the "seq" of two small records cfapkg wrote itself, and loading cJSON
 * for that cost a quarter of starting a process.  The walk keeps strings
 * and nesting apart, so a name inside a string or a nested object is
 * never taken for the member: for a text that parses, the member found is
 * the one cJSON finds, and a value that is not a whole number reads as
 * none.
 */
#include <string.h>

#include "core/json.h"
#include "core/strbuf.h"

/* p just past a string's opening quote: past its closing quote, or end. */
static const char *skip_string(const char *p, const char *end)
{
	for (; p < end && *p != '"'; p++)
		if (*p == '\\')
			p++; /* the escaped character, a quote or a backslash included */
	return p < end ? p + 1 : end;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* The digits at p as a whole number up to max; false for anything else (a
 * sign, a fraction, an exponent, a string). */
static bool read_number(const char *p, const char *end, uint64_t max, uint64_t *out)
{
	const char *start = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
		return false;
	return p > start && cfa_parse_u64(start, (size_t)(p - start), max, out);
}

bool cfa_json_peek_uint(const char *text, size_t len, const char *key, uint64_t max,
                        uint64_t *out)
{
	const char *p = text, *end = text + len, *name;
	size_t klen = strlen(key);
	int depth = 0;

	while (p < end) {
		char c = *p++;
		if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
		else if (c == '"') {
			name = p;
			p = skip_string(p, end);
			/* A string at the top object's level followed by a colon is
			 * a member's name; any other string is a value. */
			if (depth != 1 || (size_t)(p - 1 - name) != klen || memcmp(name, key, klen) != 0)
				continue;
			p = skip_blanks(p, end);
			if (p < end && *p == ':')
				return read_number(skip_blanks(p + 1, end), end, max, out);
		}
	}
	return false;
}
