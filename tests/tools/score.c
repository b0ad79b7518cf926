/*
 * score.c - a scripted benchmark program: prints "score: N", N taken in
 * turn from a sequence chosen by ZLUDA_TEST_TAG (the test environments'
 * ZLUDA version); the file named by COUNTER counts the runs.  The run
 * numbered SCORE_FAIL (from 0) prints nothing and exits 3: a failed run;
 * the run numbered SCORE_BIG prints 1000, far past the others.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	static const int six[] = {3, 5, 4}, seven[] = {8, 6, 7};
	const char *tag = getenv("ZLUDA_TEST_TAG"), *counter = getenv("COUNTER");
	const char *fail = getenv("SCORE_FAIL"), *big = getenv("SCORE_BIG");
	const int *seq = tag && strncmp(tag, "6", 1) == 0 ? six : seven;
	FILE *f = counter ? fopen(counter, "r") : NULL;
	int n = 0;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	if (counter && (f = fopen(counter, "w"))) {
		fprintf(f, "%d\n", n + 1);
		fclose(f);
	}
	if (fail && *fail && strtol(fail, NULL, 10) == n)
		return 3;
	printf("score: %d\n", big && *big && strtol(big, NULL, 10) == n ? 1000 : seq[(n / 2) % 3]);
	return 0;
}
