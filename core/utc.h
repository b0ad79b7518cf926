/*
 * utc.h - UTC times as channel indexes, generations and marks spell them:
 * "YYYY-MM-DDTHH:MM:SSZ", seconds since 1970 and back.
 */
#ifndef CFA_UTC_H
#define CFA_UTC_H

#include <stdbool.h>
#include <stdint.h>

/* UTC "YYYY-MM-DDTHH:MM:SSZ" and back. */
bool cfa_utc_parse(const char *s, int64_t *t);
void cfa_utc_format(int64_t t, char buf[32]);
/* Days since 1970-01-01 of a proleptic Gregorian date (other date
 * spellings, such as an APT Release file's, are read with it too). */
int64_t cfa_days_from_civil(int64_t y, unsigned m, unsigned d);
/* The time now, UTC, ISO 8601. */
void cfa_utc_now(char buf[32]);

#endif
