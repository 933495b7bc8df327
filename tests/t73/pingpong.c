/* pingpong.c - built twice, as alpha_np and beta_np (non-PIE: both map
 * their code at the same addresses), by tests/t73-continuous-hostile.sh:
 * each burns its own function for a few ms, then execs the other with
 * N - 1, N times in all. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define WORK CAT(NAME, _work)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void WORK(double ms)
{
	volatile unsigned long x = 0;
	double end = now() + ms / 1e3;
	while (now() < end)	/* the time in this function, not the clock's */
		for (int i = 0; i < 20000; i++)
			x++;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	WORK(8);
	if (n <= 0)
		return 0;
	char next[16];
	snprintf(next, sizeof(next), "%d", n - 1);
	execl(argv[2], argv[2], next, argv[3], argv[2], (char *)NULL);
	return 1;
}
