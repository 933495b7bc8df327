/*
 * continuous_opts.h - `stackfold continuous`'s options: parsed from its
 * command line, checked, with their defaults.  The parser prints its usage
 * and usage errors (a command front-end's part).
 */
#ifndef STACKFOLD_CMD_CONTINUOUS_OPTS_H
#define STACKFOLD_CMD_CONTINUOUS_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd/cli.h"
#include "cmd/push_cli.h"
#include "symbolizer.h"

struct continuous_opts {
	const char *dir;
	unsigned window, hz;
	uint64_t max_size;	/* bytes, 0 = no cap */
	uint64_t max_age;	/* seconds, 0 = no cap */
	uint64_t max_mem;	/* bytes, 0 = no budget (--max-memory) */
	bool check;		/* --check: the options only, nothing run */
	bool folded, quiet;
	bool verbose;		/* -v: say which source reads the windows */
	/* --source: bpftrace's maps read directly (capture/mapsrc.h), its
	 * text, or the maps when their layout is known and their fds can
	 * be taken, else the text */
	enum { SOURCE_AUTO, SOURCE_MAPS, SOURCE_TEXT } source;
	const char *host;	/* --host: the windows' host name */
	struct push_cli push;	/* --push: stores to send windows to */
	struct sym_opts so;
	char **argv;		/* bpftrace command */
	int watch_pids[CLI_MAX_WATCH];	/* --watch-pid: stop once every one */
	unsigned nwatch;		/* of these has exited */
};

/* Parse argv into *o (which borrows from argv).  -1 when the command is to
 * run; else the exit status (EXIT_OK after --help, EXIT_USAGE). */
int continuous_opts_parse(struct continuous_opts *o, int argc, char **argv);

#endif
