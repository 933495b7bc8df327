/*
 * pprof_bench.c - in-process cost of the pprof writer (bench/pprof.sh).
 *
 * usage: pprof_bench INPUT OUT.pb.gz OUT.folded [RUNS]
 *
 * Reads INPUT once through the report pipeline (parse + symbolize), then
 * times, RUNS times each (default 20), with CLOCK_PROCESS_CPUTIME_ID:
 *   folded  fold_build + out_folded_write (what -f folded costs after
 *           reading)
 *   pprof   out_pprof_write (what adding -f pprof costs)
 * and prints the minimum of each in ms, plus "pprof_raw_bytes" (no gzip).
 * Writes the last outputs to OUT.pb.gz and OUT.folded for size figures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/fold.h"
#include "output/out.h"
#include "ingest/report.h"

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int load(struct report *r, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	struct report_input_stats st;

	if (!f)
		return -errno;
	report_begin_input(r, NULL);
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			n--;
		if (report_line(r, line, (size_t)n))
			break;
	}
	free(line);
	fclose(f);
	return report_end_input(r, &st);
}

static double time_folded(const struct profile *p, const char *path)
{
	struct fold fd;
	struct sf_err err;
	struct out_opts oo = { 0 };
	FILE *out = fopen(path, "w");
	double t0 = cpu_ms(), t;

	if (!out || fold_build(&fd, p, 0))
		return -1;
	struct out_input in = { .prof = p, .fold = &fd };
	out_folded_write(out, &in, &oo, &err);
	fclose(out);
	t = cpu_ms() - t0;
	fold_release(&fd);
	return t;
}

static double time_pprof(const struct profile *p, const char *path,
			 bool gzip)
{
	struct sf_err err;
	struct out_opts oo = { .pprof_no_gzip = !gzip };
	struct out_input in = { .prof = p, .fold = NULL };
	FILE *out = fopen(path, "w");
	double t0 = cpu_ms(), t;
	int rc;

	if (!out)
		return -1;
	rc = out_pprof_write(out, &in, &oo, &err);
	fclose(out);
	t = cpu_ms() - t0;
	if (rc) {
		fprintf(stderr, "pprof_bench: %s\n", err.msg);
		return -1;
	}
	return t;
}

int main(int argc, char **argv)
{
	struct report *r = NULL;
	int runs = argc > 4 ? atoi(argv[4]) : 20;
	double bf = 1e9, bp = 1e9, bn = 1e9, t;
	char rawpath[4096];

	if (argc < 4) {
		fprintf(stderr, "usage: pprof_bench INPUT OUT.pb.gz OUT.folded [RUNS]\n");
		return 1;
	}
	snprintf(rawpath, sizeof(rawpath), "%s.raw", argv[2]);
	if (!(r = report_new(NULL)) || load(r, argv[1])) {
		fprintf(stderr, "pprof_bench: cannot read '%s'\n", argv[1]);
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		if ((t = time_folded(report_profile(r), argv[3])) < 0)
			return 1;
		bf = t < bf ? t : bf;
		if ((t = time_pprof(report_profile(r), argv[2], true)) < 0)
			return 1;
		bp = t < bp ? t : bp;
		if ((t = time_pprof(report_profile(r), rawpath, false)) < 0)
			return 1;
		bn = t < bn ? t : bn;
	}
	printf("samples %llu\n", (unsigned long long)report_counters(r)->samples);
	printf("profile_samples %zu\nprofile_locations %zu\n",
	       report_profile(r)->nsamples - 1, report_profile(r)->nlocations - 1);
	printf("cpu_ms_fold_and_folded %.2f\n", bf);
	printf("cpu_ms_pprof %.2f\n", bp);
	printf("cpu_ms_pprof_no_gzip %.2f\n", bn);
	report_free(r);
	return 0;
}
