/*
 * util_test.c - checks of base/util.c's sf_arena, run by
 * tests/t12-util.sh.  Prints one "ok NAME" or "FAIL NAME: why" per check
 * and exits 1 if any failed.
 *
 * struct sf_arena: blocks are zeroed and 16-aligned, do not overlap, keep
 * their bytes while later blocks are taken (small, chunk-sized, huge-page
 * sized), and an overflowing n * size gives NULL.
 * sf_heap_hugepages(): a 4 MiB malloc afterwards lies in a mapping advised
 * for huge pages ("hg" in its /proc/self/smaps VmFlags).  Under
 * AddressSanitizer, whose allocator is not glibc's, that check is skipped
 * ("skip NAME: why").
 * sf_grow(): grows, and refuses sizes whose bytes would wrap.
 * sf_parse_u64(): every u64 and nothing past it, digits only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static int failed;

static void check(int ok, const char *name, const char *why)
{
	if (ok)
		printf("ok %s\n", name);
	else
		printf("FAIL %s: %s\n", name, why);
	failed |= !ok;
}

/* Is addr inside a mapping whose VmFlags include "hg"?  -1: not found. */
static int advised_huge(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, hg = -1;
	uintptr_t a = (uintptr_t)addr;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			hg = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return hg;
}

static void heap_check(void)
{
#if SF_ASAN
	printf("skip heap on huge pages: AddressSanitizer's allocator\n");
#else
	sf_heap_hugepages();
	unsigned char *q = malloc(4u << 20);
	if (!q) {
		check(0, "heap on huge pages", "malloc failed");
		return;
	}
	memset(q, 1, 4u << 20);
	int hg = advised_huge(q + (2u << 20));
	check(hg == 1, "heap on huge pages",
	      hg < 0 ? "mapping not found in smaps" : "no hg in VmFlags");
	free(q);
#endif
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int main(void)
{
	heap_check();

	/* sizes that fit the first chunk, fill it, need a bigger one, and
	 * need a huge-page chunk on their own */
	static const size_t sizes[] = { 1, 7, 16, 100, 4000, 60000, 70000,
					 300000, 1 << 20, 3 << 20, 5, 33 };
	enum { N = sizeof(sizes) / sizeof(*sizes) };
	struct sf_arena a = { 0 };
	unsigned char *p[N];
	int zero = 1, aligned = 1, kept = 1, apart = 1;

	for (size_t i = 0; i < N; i++) {
		p[i] = sf_arena_zalloc(&a, sizes[i], 1);
		if (!p[i]) {
			check(0, "arena alloc", "NULL");
			return 1;
		}
		zero &= all_zero(p[i], sizes[i]);
		aligned &= (uintptr_t)p[i] % 16 == 0;
		memset(p[i], (int)(i + 1), sizes[i]);
	}
	for (size_t i = 0; i < N; i++) {
		for (size_t k = 0; k < sizes[i]; k++)
			kept &= p[i][k] == (unsigned char)(i + 1);
		for (size_t j = 0; j < N; j++)
			if (j != i && p[j] < p[i] + sizes[i] && p[i] < p[j] + sizes[j])
				apart = 0;
	}
	check(zero, "arena blocks are zeroed", "a block had nonzero bytes");
	check(aligned, "arena blocks are 16-aligned", "misaligned block");
	check(kept, "arena blocks keep their bytes", "a later block overwrote one");
	check(apart, "arena blocks do not overlap", "overlap");
	check(sf_arena_zalloc(&a, SIZE_MAX / 2, 4) == NULL,
	      "arena n * size overflow is NULL", "got a block");
	check(sf_arena_zalloc(&a, 1, SIZE_MAX - 3) == NULL,
	      "arena rounding overflow is NULL", "got a block");
	sf_arena_release(&a);
	check(a.head == NULL, "arena release empties it", "head left");
	check(sf_arena_zalloc(&a, 10, 10) != NULL, "arena reusable after release",
	      "NULL");
	sf_arena_release(&a);

	/* sf_grow: a need whose doubling or byte size would wrap is -ENOMEM
	 * (until 2026-11-25 the size wrapped to a small realloc) */
	int *g = NULL;
	size_t cap = 0;
	check(sf_grow((void **)&g, &cap, 100, sizeof(*g)) == 0 && cap >= 100,
	      "sf_grow grows", "failed");
	check(sf_grow((void **)&g, &cap, SIZE_MAX / 4, sizeof(*g)) != 0 && cap >= 100 && cap < 1000,
	      "sf_grow: a byte size past SIZE_MAX is an error", "grew");
	check(sf_grow((void **)&g, &cap, SIZE_MAX / 2 + 1, 1) != 0,
	      "sf_grow: a doubling past SIZE_MAX is an error", "grew");
	free(g);

	/* sf_parse_u64: every u64, nothing past it, digits only */
	uint64_t v = 0;
	check(sf_parse_u64("18446744073709551615", 20, &v) && v == UINT64_MAX,
	      "parse_u64: UINT64_MAX", "refused or wrong");
	check(!sf_parse_u64("18446744073709551616", 20, &v),
	      "parse_u64: UINT64_MAX + 1 refused", "accepted");
	check(!sf_parse_u64("99999999999999999999", 20, &v),
	      "parse_u64: 20 nines refused", "accepted");
	check(sf_parse_u64("000000000000000000000042", 24, &v) && v == 42,
	      "parse_u64: leading zeros", "refused or wrong");
	check(sf_parse_u64("140727545469387", 15, &v) && v == 140727545469387ull,
	      "parse_u64: a stack address", "refused or wrong");
	check(!sf_parse_u64("12a", 3, &v) && !sf_parse_u64("-1", 2, &v) &&
	      !sf_parse_u64("", 0, &v) && !sf_parse_u64("1/", 2, &v),
	      "parse_u64: non-digits refused", "accepted");
	return failed;
}
