/*
 * test_process.c - starting a program: arguments with spaces, quotes,
 * backslashes and non-ASCII text arrive byte for byte (CreateProcessW
 * quoting on Windows), the exit status comes back, output is captured, and
 * a program that does not end is killed at the timeout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "platform/platform.h"

static void hex(const char *s, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;

	*out++ = '[';
	for (; *p; p++) {
		*out++ = digits[*p >> 4];
		*out++ = digits[*p & 15];
	}
	*out++ = ']';
	*out++ = '\n';
	*out = '\0';
}

static void check_arguments(const char *echo)
{
	static const char *const args[] = {
		"plain", "with space", "", "quote\"inside", "trailing\\", "back\\\\\"slash",
		"\\\\server\\share\\dir\\", "tab\there", "日本語 ü", "--flag=a b", "*?<>|&^%",
	};
	const char *argv[16];
	static char out[8192], want[8192];
	size_t i, n = sizeof(args) / sizeof(args[0]);
	int status = -1, rc;

	argv[0] = echo;
	for (i = 0; i < n; i++)
		argv[i + 1] = args[i];
	argv[n + 1] = NULL;
	rc = cfa_plat_run_capture(argv, 60000, out, sizeof(out), &status);
	CHECK(rc == 0 && status == 0, "ran (rc %d, status %d)", rc, status);
	want[0] = '\0';
	for (i = 0; i < n; i++)
		hex(args[i], want + strlen(want));
	for (i = 0; out[i]; i++) /* a Windows console program writes CRLF */
		if (out[i] == '\r')
			memmove(out + i, out + i + 1, strlen(out + i));
	CHECK(strcmp(out, want) == 0, "arguments arrive byte for byte:\n%s\nwanted:\n%s", out, want);
}

/* An argument longer than a Windows command line holds (32767
 * characters) is refused, never cut; elsewhere it arrives whole. */
static void check_long_argument(const char *echo)
{
	static char arg[40001], out[80100], want[80100];
	const char *argv[] = {echo, arg, NULL};
	int status = -1, rc;

	memset(arg, 'a', sizeof(arg) - 1);
	rc = cfa_plat_run_capture(argv, 60000, out, sizeof(out), &status);
	hex(arg, want);
	for (size_t i = 0; out[i]; i++) /* a Windows console program writes CRLF */
		if (out[i] == '\r')
			memmove(out + i, out + i + 1, strlen(out + i));
	CHECK(rc == E2BIG || (rc == 0 && status == 0 && strcmp(out, want) == 0),
	      "a 40000-character argument arrives whole or is refused (rc %d, status %d, %zu bytes "
	      "back)", rc, status, strlen(out));
}

static void check_status(const char *echo)
{
	const char *argv[] = {echo, "exit=3", NULL};
	char out[64];
	int status = -1, rc = cfa_plat_run_capture(argv, 60000, out, sizeof(out), &status);

	CHECK(rc == 0 && status == 3, "exit status passes back (rc %d, status %d)", rc, status);
}

static void check_missing(void)
{
	const char *argv[] = {"/no/such/program/anywhere", NULL};
	char out[64];
	int status = -1, rc = cfa_plat_run_capture(argv, 5000, out, sizeof(out), &status);

	CHECK(rc != 0 || status == 127, "a missing program is an error (rc %d, status %d)", rc,
	      status);
}

static void check_timeout(const char *sleeper)
{
	const char *argv[] = {sleeper, NULL};
	char out[64];
	int status = -1, rc = cfa_plat_run_capture(argv, 1500, out, sizeof(out), &status);

	CHECK(rc == ETIMEDOUT, "a program that does not end is killed (rc %d)", rc);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_process ECHO_ARGS SLEEPER\n");
		return 2;
	}
	check_arguments(argv[1]);
	check_status(argv[1]);
	check_long_argument(argv[1]);
	check_missing();
	check_timeout(argv[2]);
	return check_report();
}
