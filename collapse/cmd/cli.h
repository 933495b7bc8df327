/*
 * cli.h - command-line options shared by `stackfold [report]` and
 * `stackfold record`: one option table, one defaults initializer, one
 * usage text (printed by --help).
 */
#ifndef SF_CLI_H
#define SF_CLI_H

#include <stdbool.h>

#include "output/out.h"
#include "output/write.h"
#include "ingest/report.h"
#include "symbolizer.h"

#define CLI_MAX_OUTPUTS 8
#define CLI_MAX_WATCH 1024
/* -o's longest (bytes): with a suffix and a temporary name's within
 * PATH_MAX; a longer one is refused (it was cut short, silently). */
#define CLI_OUTPUT_MAX 3900

struct cli {
	bool record;		/* parsing for `stackfold record` */
	const struct out_format *formats[CLI_MAX_OUTPUTS];
	unsigned nformats;
	const char *output;	/* -o */
	struct out_opts oo;
	struct sym_opts so;
	bool quiet;
	unsigned max_stacks;	/* --max-stacks, 0: no bound */
	bool verbose;		/* -v: the read: summary and own CPU/RSS */
	int pids[CLI_MAX_WATCH];	/* -p, --pid: only these processes' */
	unsigned npids;			/* samples (0: every process) */
	const char *sort;	/* --sort KEYS of the top table (comm,dso,sym) */
	bool diff_counts;	/* --diff --no-normalize: raw counts */
	const char *diff_before, *diff_after;
	char **inputs;		/* remaining arguments */
	int ninputs;
	/* record only */
	unsigned hz, seconds;
	bool countdown;
	const char *save_raw;	/* also write the raw capture here */
	int watch_pids[CLI_MAX_WATCH];	/* --watch-pid: stop once every one of */
	unsigned nwatch;		/* these pids (or tids) has exited */
	int start_pid;		/* SIGCONT this pid once attached */
	int side_pids[CLI_MAX_WATCH];	/* --side-pid: the side band follows */
	unsigned nside;			/* these and their descendants (0: all) */
	unsigned flush;		/* the program's flush period (s), 0: none */
};

/* Append the ids of "PID[,PID...]" (each 1 .. 2^31-1) to ids[*n], at most
 * max in all.  -1 when it parsed; else one line naming OPT is printed and
 * EXIT_USAGE returned. */
int cli_parse_pids(const char *opt, const char *arg, int *ids, unsigned *n,
		   unsigned max);

/* An output path (-o, --output) of at most CLI_OUTPUT_MAX bytes: -1 when
 * it is; else one line "stackfold: CMDOPT is too long ..." is printed and
 * EXIT_USAGE returned. */
int cli_output_len(const char *cmd, const char *opt, const char *arg);

/* getopt_long()'s '?' (unknown option) or ':' (missing argument, with
 * opterr 0 and ':' leading the short options) said in one line, "stackfold:
 * CMDunknown option '-x' (see --help)".  Returns EXIT_USAGE. */
int cli_getopt_error(int opt, char **argv, const char *cmd);

/* Parse argv (argv[0] is the command name).  Returns -1 to continue,
 * or an exit status to return at once (0 after --help, EXIT_USAGE after
 * an error, which has been printed). */
int cli_parse(struct cli *c, bool record, int argc, char **argv);
/* Resolve -o and the formats into concrete output paths (PATH_MAX
 * buffers in paths).  cli_parse() has refused what cannot be resolved
 * (several formats without -o PREFIX). */
void cli_outputs(const struct cli *c, struct out_dest *outs,
		 char paths[][4096]);
void cli_usage(FILE *out, bool record);
/* --version, -V: one line with the project's version and the bpftrace
 * found on PATH (asked with a timeout), to out. */
void cli_version(FILE *out);
/* --list WHAT (hidden; for scripts, so that they keep no list of their
 * own): the names of one of the tool's tables, one per line, to out:
 * "losses", every loss counter's key (model/losses.h); "stored-losses",
 * those a window store keeps, in its columns' order; "formats", each
 * output format's "NAME SUFFIX FLAGS" (output/out.h; FLAGS: its enum
 * out_flags as words, "binary,lines,profile", or "-").  Returns EXIT_OK,
 * or EXIT_USAGE (said on stderr) for an unknown WHAT. */
int cli_list(FILE *out, const char *what);

#endif
