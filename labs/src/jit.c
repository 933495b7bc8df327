/*
 * jit.c - a tiny JIT (lab 8): it writes two functions of x86-64 machine
 * code into anonymous memory and runs them, as a JavaScript or Java VM
 * runs the code it compiled.  No file holds that code, so no symbol table
 * names it; with -m the JIT also writes /tmp/perf-PID.map, the text file
 * perf, bpftrace and stackfold read to name such code:
 *
 *   START SIZE NAME        (hex, hex, the rest of the line)
 *
 *   main -> run_jitted -> jit_hot    3 parts of 4 of the time
 *                      -> jit_cold   1 part of 4
 *
 * Each generated function keeps a frame pointer (push %rbp; mov %rsp,%rbp),
 * as V8 and the JVM do, so a frame-pointer walk goes through it to main.
 *
 * Usage: jit [-m] [SECONDS]   (default 10; 0 runs until killed)
 * The process names itself jit-map (with -m) or jit-nomap.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* rdi iterations of an empty loop, with a frame:
 *   push %rbp; mov %rsp,%rbp; mov %rdi,%rcx; 1: dec %rcx; jnz 1b; pop %rbp; ret */
static const unsigned char loop_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf9,
	0x48, 0xff, 0xc9, 0x75, 0xfb,
	0x5d, 0xc3,
};

typedef void (*jitted)(uint64_t iterations);

__attribute__((noinline)) void run_jitted(jitted hot, jitted cold)
{
	hot(3000000);
	cold(1000000);
}

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

int main(int argc, char **argv)
{
	int map = argc > 1 && !strcmp(argv[1], "-m");
	double secs = argc > 1 + map ? atof(argv[1 + map]) : 10;

	if (secs < 0) {
		fprintf(stderr, "usage: jit [-m] [SECONDS]\n");
		return 1;
	}
	prctl(PR_SET_NAME, map ? "jit-map" : "jit-nomap");
	/* Write the code, then make it executable (never both at once). */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *code = mmap(NULL, page, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jit: mmap");
		return 1;
	}
	memcpy(code, loop_code, sizeof(loop_code));		/* jit_hot */
	memcpy(code + 64, loop_code, sizeof(loop_code));	/* jit_cold */
	if (mprotect(code, page, PROT_READ | PROT_EXEC) != 0) {
		perror("jit: mprotect");
		return 1;
	}
	if (map) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		FILE *f = fopen(path, "w");
		if (!f) {
			perror(path);
			return 1;
		}
		fprintf(f, "%lx %zx jit_hot\n", (unsigned long)(uintptr_t)code, sizeof(loop_code));
		fprintf(f, "%lx %zx jit_cold\n", (unsigned long)(uintptr_t)(code + 64), sizeof(loop_code));
		fclose(f);
	}
	jitted hot = (jitted)(uintptr_t)code, cold = (jitted)(uintptr_t)(code + 64);
	uint64_t end = now_s() + (uint64_t)secs;
	while (secs == 0 || now_s() < end)
		run_jitted(hot, cold);
	return 0;
}
