/*
 * shares.c - a workload whose CPU time is split in known shares (labs 3, 5,
 * 4 and 7).
 *
 *   main -> run -> matrix_multiply               MATRIX_MS of each round
 *               -> read_data -> parse_record     2 ms
 *                            -> checksum         1 ms
 *               -> prepare                       1 ms
 *               -> compress                      2 ms
 *
 * With the default MATRIX_MS of 14 a round is 20 ms of CPU time on
 * average: matrix_multiply 70%, read_data 15% (parse_record 10%, checksum
 * 5%), prepare 5%, compress 10%.  Each round is scaled, every part alike,
 * by k/8 with k from 4 to 12 (a fixed sequence): rounds of 10 to 30 ms.
 * A round of one fixed length could run in step with the sampling clock
 * (20 ms and a little overshoot is two periods of 99 Hz, 20.2 ms): every
 * sample would land at the same point of the round, and the shares read
 * far off (the demo's fixed 20 ms round once read matrix_multiply 87%).
 * Time is measured on the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID),
 * not the wall clock, so the shares hold even when other programs compete
 * for the CPU.
 *
 * Usage: shares [SECONDS [MATRIX_MS]]   (SECONDS of wall time, default 10;
 *        0 runs until killed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef VARIANT
#define VARIANT "plain"
#endif

/* Makes each build variant's code, and so its build-id, different. */
const char shares_variant[] = VARIANT;

static volatile uint64_t sink;

/* Not inlined: a sample in the clock (glibc's clock_gettime and the vDSO
 * have no frame pointer, so a walk from there skips their caller) is then
 * still under the function that asked, through this frame's pointer; when
 * inlined, that function would be the frame skipped, and its share would
 * read 3-5% low. */
__attribute__((noinline)) static uint64_t cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t wall_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Burn `us` microseconds of this thread's CPU time in the caller's frame,
 * overshooting by one inner loop at most (tens of microseconds at -O2). */
#define SPIN_FOR(us, body)                                              \
	do {                                                            \
		uint64_t end_ = cpu_us() + (us);                        \
		while (cpu_us() < end_)                                 \
			for (int i_ = 0; i_ < 50000; i_++) { body; }    \
	} while (0)

__attribute__((noinline)) void matrix_multiply(unsigned us)
{
	SPIN_FOR(us, sink += (uint64_t)i_ * 2654435761u);
}

__attribute__((noinline)) void parse_record(unsigned us)
{
	SPIN_FOR(us, sink ^= (uint64_t)i_ << 3);
}

__attribute__((noinline)) void checksum(unsigned us)
{
	SPIN_FOR(us, sink += sink >> 7);
}

__attribute__((noinline)) void read_data(unsigned us)
{
	parse_record(us * 2 / 3);
	checksum(us / 3);
}

__attribute__((noinline)) void prepare(unsigned us)
{
	SPIN_FOR(us, sink -= (uint64_t)i_);
}

__attribute__((noinline)) void compress(unsigned us)
{
	SPIN_FOR(us, sink = (sink << 1) ^ (uint64_t)i_);
}

__attribute__((noinline)) void run(unsigned matrix_us, unsigned k)
{
	matrix_multiply(matrix_us * k / 8);
	read_data(3000 * k / 8);
	prepare(1000 * k / 8);
	compress(2000 * k / 8);
}

/* xorshift64: the rounds' scales, k/8 with k in 4..12, the same sequence
 * every run */
static unsigned next_k(void)
{
	static uint64_t x = 88172645463325252ULL;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return 4 + (unsigned)(x % 9);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	long matrix_ms = argc > 2 ? atol(argv[2]) : 14;

	if (secs < 0 || matrix_ms < 0 || matrix_ms > 1000) {
		fprintf(stderr, "usage: shares [SECONDS [MATRIX_MS]]\n");
		return 1;
	}
	uint64_t end = wall_us() + (uint64_t)(secs * 1e6);
	while (secs == 0 || wall_us() < end)
		run((unsigned)matrix_ms * 1000, next_k());
	return 0;
}
