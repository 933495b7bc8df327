/*
 * mapsrc_driver.c - reads one window of a running bt/continuous.bt with
 * capture/mapsrc.h, or bpftrace's text of one, through the same report
 * pipeline, and writes it as folded text (built by tests/t47-mapsrc-live.sh).
 *
 *   mapsrc_driver maps PID peek|read OUT   the map reader
 *   mapsrc_driver text FILE OUT            bpftrace's own print, as text
 *
 * The version comes from $STACKFOLD_BPFTRACE_VERSION; $MAPSRC_KEY_SIZE
 * makes the layout expect another key size (a doctored layout).  One line
 * on stdout: "total T sum S entries E stackid_errors N slept 0|1 cleared C"
 * (C: ids deleted from the window's stack map), then "dropped D ...", or
 * "refused: REASON" (exit 3).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/mapsrc.h"
#include "ingest/report.h"
#include "output/write.h"

static int on_record(void *ctx, const struct bt_record *r)
{
	return report_record(ctx, r);
}

static int read_maps(struct report *r, int pid, bool peek)
{
	struct mapsrc_layout lay;
	struct mapsrc ms;
	struct mapsrc_window w;
	struct sf_err err = { "" };
	const char *ks = getenv("MAPSRC_KEY_SIZE");
	if (mapsrc_layout_for(getenv("STACKFOLD_BPFTRACE_VERSION"), &lay, &err)) {
		printf("refused: %s\n", err.msg);
		return 3;
	}
	if (ks)
		lay.key_size = (uint32_t)atoi(ks);
	if (mapsrc_open(&ms, pid, &lay, &err)) {
		printf("refused: %s\n", err.msg);
		return 3;
	}
	int ret = mapsrc_read(&ms, peek, on_record, r, &w, &err);
	if (ret) {
		fprintf(stderr, "mapsrc_driver: %s\n", err.msg);
		mapsrc_close(&ms);
		return 1;
	}
	report_stackid_errors(r, w.stackid_errors);
	char line[64];
	int n = snprintf(line, sizeof(line), "%s: %" PRIu64,
			 w.map == MAPSRC_MAIN ? "@stackfold_t" : "@stackfold_t_b",
			 w.total);
	ret = report_line(r, line, (size_t)n);
	printf("total %" PRIu64 " sum %" PRIu64 " entries %" PRIu64
	       " stackid_errors %" PRIu64 " slept %d cleared %" PRIu64 "\n",
	       w.total, w.sum, w.entries, w.stackid_errors, w.slept,
	       w.stacks_cleared);
	mapsrc_close(&ms);
	return ret ? 1 : 0;
}

static int read_text(struct report *r, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;
	while (!ret && (n = getline(&line, &cap, f)) >= 0) {
		if (n && line[n - 1] == '\n')
			n--;
		ret = report_line(r, line, (size_t)n);
	}
	free(line);
	fclose(f);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: mapsrc_driver maps PID peek|read OUT | text FILE OUT\n");
		return 2;
	}
	struct sym_opts so;
	memset(&so, 0, sizeof(so));
	struct report *r = NULL;
	struct report_opts ro = { .so = &so, .lazy_snapshot = true };
	if (!(r = report_new(&ro)))
		return 1;
	bool maps = !strcmp(argv[1], "maps");
	const char *out = argv[maps ? 4 : 3];
	int ret = maps ? read_maps(r, atoi(argv[2]), !strcmp(argv[3], "peek"))
		       : read_text(r, argv[2]);
	struct report_input_stats st;
	if (!ret && report_end_input(r, &st))
		ret = 1;
	if (!ret) {
		struct out_opts oo = { .fold_flags = FOLD_PID };
		struct out_dest o = { out_format_find("folded"), out };
		struct sf_err err = { "" };
		struct report_view v;
		int wr = report_view(r, oo.fold_flags, NULL, &v, &err);
		if (!wr)
			wr = out_write(&o, 1, &v.in, &oo, &err);
		report_view_release(&v);
		if (wr) {
			fprintf(stderr, "mapsrc_driver: %s\n", err.msg);
			ret = 1;
		}
		printf("dropped %" PRIu64 " stackid_errors %" PRIu64 "\n",
		       report_dropped(r), report_counters(r)->stackid_errors);
	}
	report_free(r);
	return ret;
}
