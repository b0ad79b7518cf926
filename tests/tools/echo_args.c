/*
 * echo_args.c - prints its arguments (after the program name) as hex
 * bytes of their UTF-8, one per line; a single argument "exit=N" makes it
 * exit with status N instead.  The process tests check that arguments
 * cross a process start byte for byte.
 */
#include <stdio.h>
#include <string.h>

#include "cfapkg_frontend.h"

int main(int argc, char **argv)
{
	int i;

	cfapkg_utf8_args(&argc, &argv);
	if (argc == 2 && strncmp(argv[1], "exit=", 5) == 0)
		return argv[1][5] - '0';
	for (i = 1; i < argc; i++) {
		const unsigned char *p = (const unsigned char *)argv[i];
		printf("[");
		for (; *p; p++)
			printf("%02x", *p);
		printf("]\n");
	}
	return 0;
}
