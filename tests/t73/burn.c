/* burn.c - burns burn_work() for argv[1] ms (tests/t73-continuous-hostile.sh:
 * run as a file really named "... (deleted)", and as one deleted while it
 * runs). */
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn_work(void)
{
	volatile unsigned long x = 0;
	for (int i = 0; i < 100000; i++)
		x++;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atoi(argv[1]) : 1000) / 1e3;
	while (now() < end)
		burn_work();
	return 0;
}
