/*
 * utc.c - UTC times as the files spell them ("YYYY-MM-DDTHH:MM:SSZ"):
 * parsed, formatted and read from the clock, without time zones or the C
 * library's locale in the way.
 */
#include <string.h>
#include <time.h>

#include "cfapkg.h"
#include "core/strbuf.h"
#include "core/utc.h"

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's
 * algorithm), so no time zone or C library quirk is involved. */
int64_t cfa_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* n digits at s, or -1 (a sign or a blank is no digit). */
static int digits_at(const char *s, int n)
{
	uint64_t v;

	return cfa_parse_u64(s, (size_t)n, 9999, &v) ? (int)v : -1;
}

bool cfa_utc_parse(const char *s, int64_t *t)
{
	int y, mo, d, h, mi, sec;

	if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
	    s[16] != ':' || s[19] != 'Z')
		return false;
	y = digits_at(s, 4), mo = digits_at(s + 5, 2), d = digits_at(s + 8, 2);
	h = digits_at(s + 11, 2), mi = digits_at(s + 14, 2), sec = digits_at(s + 17, 2);
	/* Nothing cfapkg keeps is older than 1970, and the formatting below
	 * counts only from there; 60 seconds is a leap second, which a clock
	 * may print. */
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
	    mi > 59 || sec < 0 || sec > 60)
		return false;
	*t = cfa_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec;
	return true;
}

/* The inverse of cfa_days_from_civil, for times from 1970 on: every time cfapkg
 * keeps is one, and the remainders below would go negative before. */
void cfa_utc_format(int64_t t, char buf[32])
{
	int64_t z = t / 86400 + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097), secs = (unsigned)(t % 86400);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
	long long y = (long long)yoe + era * 400 + (m <= 2);

	if (!cfa_snprintf(buf, 32, "%04lld-%02u-%02uT%02u:%02u:%02uZ", y, m, d, secs / 3600,
	                 secs / 60 % 60, secs % 60))
		buf[0] = '\0';
}

void cfapkg_format_utc(int64_t t, char buf[32])
{
	cfa_utc_format(t, buf);
}

void cfa_utc_now(char buf[32])
{
	static const char epoch[] = "1970-01-01T00:00:00Z";
	time_t t = time(NULL);

	/* Formatted here, not by gmtime: glibc's gmtime reads the time zone
	 * files first (tzset), work a switch has no use for.  A clock that
	 * cannot be read, or reads before 1970, gives the epoch, which reads
	 * as long ago, never as a time still to come. */
	if (t < 0)
		memcpy(buf, epoch, sizeof(epoch));
	else
		cfa_utc_format((int64_t)t, buf);
}
