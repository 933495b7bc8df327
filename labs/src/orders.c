/*
 * orders.c - a workload with a USDT probe and a function to uprobe (lab
 * 13).  It prices QUOTES quotes, each through price() (a function a
 * uprobe can trace by name); one quote in three becomes an order,
 * announced by the USDT probe orders:order (arguments: the order's
 * number and its amount in cents).  The quantities and unit prices come
 * from SEED, so the counts and sums are not known before the run; the
 * program prints them when it is done, for labs/check to compare.
 *
 * It waits for SIGUSR1 before it starts (so a tracer can attach first).
 *
 * Usage: orders QUOTES SEED
 * Prints: quotes N quoted SUM orders N amount SUM
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

#include "startgate.h"

static volatile long sink;

/* The price of QTY items at UNIT cents each. */
__attribute__((noipa)) long price(long qty, long unit)
{
	sink += qty;
	return qty * unit;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: orders QUOTES SEED\n");
		return 2;
	}
	long quotes = atol(argv[1]);
	uint64_t x = strtoull(argv[2], NULL, 10) | 1;
	if (quotes < 0) {
		fprintf(stderr, "orders: QUOTES must be >= 0\n");
		return 2;
	}
	if (start_gate())
		return 1;

	long quoted = 0, orders = 0, amount = 0;
	for (long i = 0; i < quotes; i++) {
		x ^= x << 13;	/* xorshift64 */
		x ^= x >> 7;
		x ^= x << 17;
		long p = price(1 + (long)(x % 9), 100 + (long)(x / 9 % 900));
		quoted += p;
		if (x % 3 == 0) {
			orders++;
			amount += p;
			DTRACE_PROBE2(orders, order, orders, p);
		}
	}
	printf("quotes %ld quoted %ld orders %ld amount %ld\n", quotes, quoted, orders, amount);
	return 0;
}
