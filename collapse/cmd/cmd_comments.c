/*
 * cmd_comments.c - `stackfold comments FILE.pb.gz...`: print the comment
 * lines of pprof profiles, one a line, as "FILE: COMMENT".  scripts/flame
 * adds up the windows' loss counters from them.
 *
 * The profile is read by the one pprof reader (ingest/pprof_in.h: zlib,
 * protobuf-c with collapse/model/profile.proto): a grep of the
 * decompressed bytes took the next string's protobuf tag ('2') for one
 * more digit of the last counter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmds.h"
#include "ingest/pprof_in.h"
#include "model/profile.pb-c.h"
#include "base/util.h"

/* Print path's comments.  0, EXIT_BADINPUT or EXIT_IO (memory; said). */
static int comments_of(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "stackfold: comments: cannot read '%s': %s\n", path,
			strerror(errno));
		return EXIT_BADINPUT;
	}
	Perftools__Profiles__Profile *p;
	struct sf_err err = { "" };
	int ret = pprof_load(NULL, 0, fd, &p, &err);
	close(fd);
	if (ret == -ENOMEM) {
		fprintf(stderr, "stackfold: comments: '%s': %s\n", path, err.msg);
		return EXIT_IO;
	}
	if (ret == -EINVAL) {
		fprintf(stderr, "stackfold: comments: '%s' is not a pprof profile\n",
			path);
		return EXIT_BADINPUT;
	}
	if (ret) {
		fprintf(stderr, "stackfold: comments: cannot read '%s': %s\n", path,
			err.msg);
		return EXIT_BADINPUT;
	}
	for (size_t i = 0; i < p->n_comment; i++)
		if (p->comment[i] >= 0 && (size_t)p->comment[i] < p->n_string_table)
			printf("%s: %s\n", path, p->string_table[p->comment[i]]);
	pprof_free(p);
	return EXIT_OK;
}

int cmd_comments(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))) {
		cli_version(stdout);
		return EXIT_OK;
	}
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs("usage: stackfold comments FILE.pb.gz...\n"
		      "Print each pprof profile's comment lines as \"FILE: COMMENT\"\n"
		      "(stackfold's: the sample counters, the capture's metadata).\n"
		      "Exit status: 0 ok; 1 usage; 2 a file unreadable or not pprof;\n"
		      "4 a file past the memory bound (STACKFOLD_PPROF_MAX), or a\n"
		      "write error.\n",
		      argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	int st = EXIT_OK;
	for (int i = 1; i < argc; i++) {
		int r = comments_of(argv[i]);
		if (r)
			st = r;
	}
	if (fflush(stdout)) {
		fprintf(stderr, "stackfold: comments: write '<stdout>': %s\n",
			strerror(errno));
		return EXIT_IO;
	}
	return st;
}
