/*
 * pprof_in_test.c - the size bound of collapse/ingest/pprof_in.c's gunzip,
 * built with a small PPROF_IN_MAX so that the bound is reached cheaply;
 * run by tests/t11-units.sh.  Prints "ok NAME" or "FAIL NAME: why" per
 * check and exits 1 if any failed.
 */
#define PPROF_IN_MAX ((size_t)1 << 20)
#include "ingest/pprof_in.c"

#include <malloc.h>
#include <stdio.h>

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name, why);
	failed |= !ok;
}

/* gzip of len zero bytes into *gz; its length. */
static size_t gz_zeros(size_t len, unsigned char **gz)
{
	unsigned char *plain = calloc(1, len);
	z_stream z = { 0 };
	deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	size_t cap = deflateBound(&z, len);
	*gz = malloc(cap);
	z.next_in = plain;
	z.avail_in = (uInt)len;
	z.next_out = *gz;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	size_t n = cap - z.avail_out;
	deflateEnd(&z);
	free(plain);
	return n;
}

static void one(size_t len, int want, const char *name)
{
	unsigned char *gz, *out = NULL;
	size_t olen = 0, n = gz_zeros(len, &gz);
	int r = gunzip(gz, n, &out, &olen);
	char why[160];
	snprintf(why, sizeof(why), "%zu bytes: ret %d (want %d), out %zu, buffer %zu",
		 len, r, want, olen, out ? malloc_usable_size(out) : 0);
	check(r == want && (r || olen == len) &&
	      (!out || malloc_usable_size(out) < PPROF_IN_MAX + 4096), name, why);
	free(out);
	free(gz);
}

int main(void)
{
	one(1000, 0, "gunzip small");
	one(PPROF_IN_MAX, 0, "gunzip exactly PPROF_IN_MAX");
	one(PPROF_IN_MAX + 1, -EFBIG, "gunzip PPROF_IN_MAX+1 is -EFBIG");
	one(3 * PPROF_IN_MAX, -EFBIG, "gunzip 3x PPROF_IN_MAX is -EFBIG, buffer bounded");
	return failed;
}
