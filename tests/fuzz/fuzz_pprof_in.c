/*
 * fuzz_pprof_in.c - libFuzzer target: a pprof file (plain protobuf, or
 * gzip) read by pprof_read() into a report, folded, and written as
 * folded text and pprof again.
 *
 * Checked on every input that decodes: conservation, the samples the
 * report holds == the fold's total == the sum of the counted value (the
 * "samples" type, else the last) over the samples, decoded here again
 * with protobuf-c; the folded text sums to the same.
 *
 * Memory, checked two ways.  The reader's bound is 256 KiB here
 * (STACKFOLD_PPROF_MAX), and what pprof_read() holds at its peak (ASan's
 * malloc hooks) may not pass twice that plus 512 KiB: an input that costs
 * more (protobuf-c's ~64 bytes for each empty 2-byte sample: 16 KiB of
 * them held 1.26 MB before the bound) is a finding at once, at fuzzing
 * speed.  And tests/fuzz/run gives this target -rss_limit_mb=512, inputs
 * up to 64 KiB (a gzip of them unzips to 64 MiB), and runs
 * tests/fuzz/regress/pprof_in/ (16 MiB of empty samples in a 16 KB gzip:
 * 1 GB before the bound) under that limit.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/pprof_in.h"
#include "ingest/report_priv.h"	/* white-box: a report in place */
#include "model/fold.h"
#include "output/out.h"
#include "model/profile.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* ASan's (sanitizer/allocator_interface.h), weak: UBSan alone
 * (FUZZ_SANITIZE=undefined) has no allocator, nor these. */
int __sanitizer_install_malloc_and_free_hooks(
	void (*m)(const volatile void *, size_t),
	void (*f)(const volatile void *)) __attribute__((weak));
size_t __sanitizer_get_allocated_size(const volatile void *p)
	__attribute__((weak));

/* Bytes allocated now and at the most since reset (ASan's hooks; none
 * under UBSan alone: then 0). */
static size_t held_now, held_peak;

static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	held_now += n;
	if (held_now > held_peak)
		held_peak = held_now;
}

static void on_free(const volatile void *p)
{
	size_t n = p ? __sanitizer_get_allocated_size(p) : 0;
	held_now = n < held_now ? held_now - n : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("STACKFOLD_PPROF_MAX", "262144", 0);
	if (__sanitizer_install_malloc_and_free_hooks &&
	    __sanitizer_get_allocated_size)
		__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
	return 0;
}

static char *render(const char *fmt, const struct out_input *in, size_t *len)
{
	char *buf = NULL;
	struct out_opts oo = { 0 };
	struct sf_err err;
	FILE *f = open_memstream(&buf, len);
	if (!f || out_format_find(fmt)->write(f, in, &oo, &err) || fclose(f))
		abort();
	return buf;
}

/* The sum pprof_in.h says is read, or UINT64_MAX past 2^63. */
static uint64_t expected(const uint8_t *data, size_t size)
{
	Perftools__Profiles__Profile *pp =
		perftools__profiles__profile__unpack(NULL, size, data);
	if (!pp)
		abort();	/* pprof_read() decoded it */
	size_t vi = pp->n_sample_type ? pp->n_sample_type - 1 : 0;
	for (size_t i = 0; i < pp->n_sample_type; i++) {
		int64_t t = pp->sample_type[i]->type;
		if (t >= 0 && (size_t)t < pp->n_string_table &&
		    !strcmp(pp->string_table[t], "samples")) {
			vi = i;
			break;
		}
	}
	uint64_t sum = 0;
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		if (vi < s->n_value && s->value[vi] > 0)
			sum += (uint64_t)s->value[vi];
	}
	perftools__profiles__profile__free_unpacked(pp, NULL);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int devnull = -1;
	if (devnull < 0 && (devnull = open("/dev/null", O_RDONLY)) < 0)
		abort();
	struct report r;
	struct sf_err err;
	if (report_init(&r, NULL))
		abort();
	report_begin_input(&r, NULL);
	size_t before = held_peak = held_now;
	int ret = pprof_read(&r, data, size, devnull, &err);
	if (held_peak - before > 2 * pprof_mem_max() + (512u << 10)) {
		fprintf(stderr, "pprof_read held %zu bytes for %zu of input, past "
			"twice its bound (%zu) + 512 KiB\n", held_peak - before, size,
			pprof_mem_max());
		abort();
	}
	bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
	if (!ret && !gz && report_samples(&r) != expected(data, size))
		abort();
	struct fold f;
	if (!ret && !report_fold(&r, 0, &f)) {
		if (f.total != report_samples(&r))
			abort();
		struct out_input oi = { .prof = &r.prof, .fold = &f };
		size_t len;
		free(render("folded", &oi, &len));
		free(render("pprof", &oi, &len));
		fold_release(&f);
	}
	report_release(&r);
	return 0;
}
