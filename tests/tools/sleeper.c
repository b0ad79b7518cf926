/*
 * sleeper.c - a program that does not end by itself (it spins for up to a
 * minute), for the timeout test.
 */
#include <time.h>

int main(void)
{
	time_t end = time(NULL) + 60;
	volatile unsigned long spin = 0;

	while (time(NULL) < end)
		spin++;
	return 0;
}
