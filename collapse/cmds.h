/*
 * cmds.h - subcommand front-ends of bin/stackfold, one file each
 * (cmd_<name>.c), dispatched by main.c like git's builtins.  A front-end
 * parses its own arguments, may print to stdout/stderr, and returns the
 * process exit status (see EXIT_* below); it never calls exit().
 */
#ifndef SF_CMDS_H
#define SF_CMDS_H

#include <stdbool.h>
#include <stddef.h>

/* Documented exit codes, shared by every subcommand and the scripts. */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,		/* bad option or argument */
	EXIT_BADINPUT = 2,	/* input unreadable, malformed, or no samples */
	EXIT_ENV = 3,		/* environment: bpftrace missing/old/not allowed,
				 * pid not found */
	EXIT_IO = 4,		/* an output could not be written */
	EXIT_LIMIT = 5,		/* past --max-stacks: nothing written */
	EXIT_INTERRUPTED = 130,	/* aborted by a second SIGINT */
};

int cmd_report(int argc, char **argv);	  /* default: post-process input */
int cmd_record(int argc, char **argv);	  /* run bpftrace, then report */
int cmd_symbolize(int argc, char **argv); /* MODULE ADDRESS lines */
int cmd_continuous(int argc, char **argv); /* always-on: a profile per window */
int cmd_comments(int argc, char **argv);  /* a pprof profile's comments */
int cmd_query(int argc, char **argv);	  /* folded stacks from a store */
int cmd_pyoffsets(int argc, char **argv); /* CPython frame offsets */

/* A subcommand: its name, front-end, and the usage after its name. */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	bool long_running;	/* runs for days: its heap on normal pages */
	const char *synopsis;
};
/* Every subcommand, in the order the usage lists them (commands.c). */
extern const struct command cmd_table[];
extern const size_t cmd_count;
/* The subcommand named name, or NULL; also the plumbing ones the usage
 * does not list (pyoffsets: scripts/profile --python's). */
const struct command *cmd_find(const char *name);

/* The subcommand closest to word (a typo: `stackfold recrod`), "--help"
 * for help, or NULL when none is close. */
const char *cmd_closest(const char *word);

#endif
