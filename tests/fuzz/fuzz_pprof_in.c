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
 * Memory: tests/fuzz/run gives this target -rss_limit_mb=512 and inputs
 * up to 64 KiB (a gzip of them unzips to 64 MiB), so an input that costs
 * many times its unzipped size (protobuf-c's ~64 bytes for an empty
 * 2-byte sample) is a finding.  The reader's own bound is set to 128 MiB
 * here (STACKFOLD_PPROF_MAX), well inside it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/pprof_in.h"
#include "model/fold.h"
#include "output/out.h"
#include "output/profile.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("STACKFOLD_PPROF_MAX", "134217728", 0);
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
	if (report_init(&r, NULL, false))
		abort();
	report_begin_input(&r, NULL);
	int ret = pprof_read(&r, data, size, devnull, &err);
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
