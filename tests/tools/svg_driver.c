/*
 * svg_driver.c - runs the SVG writer on folded text without main.c, so the
 * t60 tests pin out_svg_write() alone: golden bytes do not move when the
 * front-end or the parsers change.
 *
 *   svg_driver [--title T] [--subtitle S] [--width N] [--minwidth N[px]]
 *              [--inverted] [--colors NAME] [--no-hash] [--countname C]
 *              [--flamechart] [FILE]
 *
 * Lines are "STACK COUNT", or "STACK BEFORE AFTER" (difffolded.pl's
 * columns) for a differential graph.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/fold.h"
#include "output/out.h"

static int parse_count(const char *s, size_t len, uint64_t *v)
{
	return sf_parse_u64(s, len, v) ? 0 : -1;
}

/* Split "stack N [M]"; returns the number of counts (1 or 2), 0 on junk. */
static int split_line(char *line, size_t len, size_t *slen, uint64_t *a,
		      uint64_t *b)
{
	char *sp = memrchr(line, ' ', len);
	if (!sp || parse_count(sp + 1, len - (size_t)(sp + 1 - line), a))
		return 0;
	*slen = (size_t)(sp - line);
	char *sp2 = memrchr(line, ' ', *slen);
	if (sp2 && !parse_count(sp2 + 1, (size_t)(sp - sp2 - 1), b)) {
		*slen = (size_t)(sp2 - line);
		return 2;
	}
	return 1;
}

static int read_fold(FILE *in, struct fold *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = fold_init(f);
	while (!ret && (n = getline(&line, &cap, in)) > 0) {
		size_t len = (size_t)n, slen;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		uint64_t a, b;
		int k = split_line(line, len, &slen, &a, &b);
		if (k == 1)
			ret = fold_add(f, line, slen, a, 0);
		else if (k == 2)	/* before after: width from after */
			ret = fold_add(f, line, slen, a, b);
		if (k == 2)
			f->has_second = true;
	}
	free(line);
	return ret ? ret : fold_finish(f);
}

int main(int argc, char **argv)
{
	struct out_opts o = { .minwidth = 0.1 };
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--inverted")) o.inverted = true;
		else if (!strcmp(a, "--no-hash")) o.no_hash = true;
		else if (!strcmp(a, "--flamechart")) o.flamechart = true;
		else if (v && !strcmp(a, "--title")) o.title = v, i++;
		else if (v && !strcmp(a, "--subtitle")) o.subtitle = v, i++;
		else if (v && !strcmp(a, "--colors")) o.colors = v, i++;
		else if (v && !strcmp(a, "--countname")) o.countname = v, i++;
		else if (v && !strcmp(a, "--width")) o.width = (unsigned)atoi(v), i++;
		else if (v && !strcmp(a, "--minwidth")) {
			char *end;
			o.minwidth = strtod(v, &end);
			o.minwidth_px = !strcmp(end, "px");
			i++;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "svg_driver: bad option '%s'\n", a);
			return 64;
		} else path = a;
	}
	FILE *in = path && strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!in) {
		fprintf(stderr, "svg_driver: cannot open '%s': %s\n", path,
			strerror(errno));
		return 2;
	}
	struct fold f;
	if (read_fold(in, &f)) {
		fprintf(stderr, "svg_driver: cannot read input\n");
		return 2;
	}
	struct out_input inp = { .prof = NULL, .fold = &f };
	struct sf_err err = { "" };
	struct timespec t0, t1, c0, c1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	int ret = out_svg_write(stdout, &inp, &o, &err);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("SVG_DRIVER_TIME"))	/* bench/svg.sh: the writer alone */
		fprintf(stderr, "out_svg_write: %.4f s wall, %.4f s cpu\n",
			(double)(t1.tv_sec - t0.tv_sec) +
				(double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
			(double)(c1.tv_sec - c0.tv_sec) +
				(double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
	if (ret || fflush(stdout)) {
		fprintf(stderr, "svg_driver: %s\n", err.msg);
		return 4;
	}
	fold_release(&f);
	if (in != stdin)
		fclose(in);
	return 0;
}
