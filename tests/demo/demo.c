/*
 * demo.c - the bundled workload `make flame` profiles when no PID is given.
 *
 * A call tree with known shares of CPU time:
 *   main -> run -> matrix_multiply               70%
 *               -> read_data -> parse_record     10%
 *                            -> checksum          5%
 *               -> prepare                        5%
 *               -> load_zeros -> raw_read (read(2) of /dev/zero:
 *                                           kernel time)         10%
 * The shares are kept by work, not by the clock: every user function runs
 * the same loop body a number of times proportional to its share, so the
 * split of CPU time holds even when the machine is busy and the demo is
 * descheduled.  The kernel part is sized once at start-up by timing a read
 * against the loop.  Rounds are 10-30 ms long, varied so that a sampling
 * clock cannot keep step with them (see run()).  Built with frame pointers and no inlining (see the
 * Makefile) so every frame shows.
 * Usage: demo [SECONDS]  (default 10; 0 runs until killed)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static int zero_fd = -1;
static char zbuf[1 << 16];
static uint64_t unit = 1;	/* loop iterations per 1% of a round */
static uint64_t reads = 1;	/* reads of zbuf per 10% of a round */

#define ROUND_NS 20000000ULL	/* one round of run() */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The same body everywhere, so equal counts cost equal CPU time.  The
 * volatile local gives each function a stack frame: GCC sets up no frame
 * pointer in a leaf that uses no stack, even with -fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer, and the frame-pointer walk would then skip
 * the caller (run) for every sample taken in the leaf. */
#define BURN(n)                                                         \
	do {                                                            \
		volatile uint64_t acc_ = 0;                             \
		for (uint64_t i_ = 0; i_ < (n); i_++)                   \
			acc_ = acc_ * 6364136223846793005ULL + i_;      \
		sink += acc_;                                           \
	} while (0)

__attribute__((noinline)) void matrix_multiply(uint64_t n) { BURN(n); }
__attribute__((noinline)) void parse_record(uint64_t n) { BURN(n); }
__attribute__((noinline)) void checksum(uint64_t n) { BURN(n); }
__attribute__((noinline)) void prepare(uint64_t n) { BURN(n); }

__attribute__((noinline)) void read_data(uint64_t n)
{
	parse_record(n * 2 / 3);
	checksum(n / 3);
}

/* read(2) without libc: libc's read() has no frame pointer, so a
 * frame-pointer walk from inside it skips its caller, and load_zeros
 * would never show (run;read).  The system call made here,
 * in a function with a frame pointer, keeps every frame. */
__attribute__((noinline)) long raw_read(void *buf, size_t n)
{
#if defined(__x86_64__)
	long ret;
	/* a frame of its own even as a leaf (gcc 12 leaves it out despite
	 * -mno-omit-leaf-frame-pointer): its caller is found through it */
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(0L /* SYS_read */), "D"((long)zero_fd), "S"(buf), "d"(n)
			 : "rcx", "r11", "memory");
	return ret;
#else
	return read(zero_fd, buf, n);
#endif
}

__attribute__((noinline)) void load_zeros(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (raw_read(zbuf, sizeof(zbuf)) < 0)
			break;
}

/* One round, its length scaled by k/8 (k in 4..12).  Rounds of one fixed
 * length near a multiple of the sampling period (20 ms, two periods at
 * 99 Hz) put every sample at the same point of the round, round after
 * round: a 4 s profile once read matrix_multiply 87% and read_data 4%.
 * Lengths that vary from round to round spread the samples over it. */
__attribute__((noinline)) void run(uint64_t k)
{
	matrix_multiply(70 * unit * k / 8);
	read_data(15 * unit * k / 8);
	prepare(5 * unit * k / 8);
	load_zeros((reads * k + 4) / 8);
}

/* xorshift64: the rounds' lengths, the same sequence every run */
static uint64_t next_k(void)
{
	static uint64_t x = 88172645463325252ULL;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return 4 + x % 9;
}

/* Size one round to ~20 ms: time the loop and the read, take the fastest
 * of a few tries (the least disturbed by other load). */
static void calibrate(void)
{
	uint64_t best_loop = UINT64_MAX, best_read = UINT64_MAX;
	for (int t = 0; t < 5; t++) {
		uint64_t t0 = now_ns();
		prepare(200000);
		uint64_t t1 = now_ns();
		load_zeros(20);
		uint64_t t2 = now_ns();
		if (t1 - t0 < best_loop)
			best_loop = t1 - t0;
		if (t2 - t1 < best_read)
			best_read = t2 - t1;
	}
	double ns_per_iter = (double)best_loop / 200000.0;
	double ns_per_read = (double)best_read / 20.0;
	unit = (uint64_t)((double)ROUND_NS / 100.0 / ns_per_iter) + 1;
	reads = (uint64_t)((double)ROUND_NS / 10.0 / ns_per_read) + 1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	zero_fd = open("/dev/zero", O_RDONLY);
	calibrate();
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	while (secs <= 0 || now_ns() < end)
		run(next_k());
	return 0;
}
