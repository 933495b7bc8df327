/* forkstorm.c - N children forked one after another that burn
 * child_work() for a few ms and exit, no exec (tests/t73-continuous-hostile.sh):
 * gone before their memory map can be read. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* a few ms of CPU, all of it in this function */
__attribute__((noinline)) void child_work(void)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 3000000; i++)
		x++;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			child_work();
			_exit(0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return 0;
}
