/*
 * demo.c - the bundled workload `make flame` profiles when no PID is given.
 *
 * A call tree with known shares of CPU time, kept by the clock rather than
 * by iteration counts so the shares hold on any machine:
 *   main -> run -> matrix_multiply          70%
 *               -> read_data -> parse_record   10%
 *                            -> checksum        5%
 *               -> prepare                      5%
 *               -> load_zeros (read(2) of /dev/zero: kernel time) 10%
 * Built with frame pointers and no inlining (see Makefile) so every frame
 * shows.  Usage: demo [SECONDS]  (default 10; 0 runs until killed)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static int zero_fd = -1;

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Burn CPU in the caller's frame until `us` microseconds have passed. */
#define SPIN_FOR(us, body)                                              \
	do {                                                            \
		uint64_t end_ = now_us() + (us);                        \
		while (now_us() < end_)                                 \
			for (int i_ = 0; i_ < 2000; i_++) { body; }     \
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

__attribute__((noinline)) void load_zeros(unsigned us)
{
	static char buf[1 << 20];
	uint64_t end = now_us() + us;
	while (now_us() < end)
		if (read(zero_fd, buf, sizeof(buf)) < 0)
			break;
}

/* One 20 ms round, split by the design shares. */
__attribute__((noinline)) void run(void)
{
	matrix_multiply(14000);
	read_data(3000);
	prepare(1000);
	load_zeros(2000);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	zero_fd = open("/dev/zero", O_RDONLY);
	uint64_t end = now_us() + (uint64_t)(secs * 1e6);
	while (secs <= 0 || now_us() < end)
		run();
	return 0;
}
