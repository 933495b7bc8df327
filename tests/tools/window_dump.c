/*
 * window_dump.c - DIR STEM: what a store reads of a continuous window
 * (collapse/store/window.h's store_window_read(), through the pprof
 * reader), one "key=value" line each: start_ns, duration_ns, hz, host,
 * kernel, samples, every stored loss counter by its key, losses_unknown,
 * stacks, total.  Exit 1 and the error on stderr when it cannot be read.
 * Built against libstackfold.a by tests/tools/pprof_build.sh.
 */
#include <inttypes.h>
#include <stdio.h>

#include "store/window.h"

int main(int argc, char **argv)
{
	struct store_window w;
	struct sf_err err = { "" };
	if (argc != 3) {
		fputs("usage: window_dump DIR STEM\n", stderr);
		return 2;
	}
	int ret = store_window_read(&w, argv[1], argv[2], NULL, &err);
	if (ret) {
		fprintf(stderr, "window_dump: %s\n", err.msg);
		store_window_release(&w);
		return 1;
	}
	printf("start_ns=%" PRIu64 "\nduration_ns=%" PRIu64 "\nhz=%u\nhost=%s\n"
	       "kernel=%s\nsamples=%" PRIu64 "\n", w.start_ns, w.duration_ns,
	       w.hz, w.host, w.kernel, w.samples);
	for (int i = 0; i < WIN_NLOSS; i++)
		printf("%s=%" PRIu64 "\n", win_loss_key(i), w.loss[i]);
	printf("losses_unknown=%u\nstacks=%zu\ntotal=%" PRIu64 "\n",
	       w.losses_unknown, w.nstacks, w.total);
	store_window_release(&w);
	return 0;
}
