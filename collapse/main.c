/*
 * main.c - bin/stackfold: dispatch to a subcommand front-end (cmds.h).
 * With no subcommand name, the arguments are the report command's.
 * Sets up the process's heap (sf_heap_hugepages) for all but continuous.
 */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "base/util.h"

/* The subcommands, by name (as git's builtins).  long_running: runs for
 * days under an RSS budget (continuous), so its heap stays on normal
 * pages; every other command runs once, and faster on huge pages. */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	bool long_running;
} commands[] = {
	{ "record", cmd_record, false },
	{ "symbolize", cmd_symbolize, false },
	{ "continuous", cmd_continuous, true },
	{ "comments", cmd_comments, false },
	{ "query", cmd_query, false },
	{ "report", cmd_report, false },
};

/* The subcommand argv[1] names; NULL: none (the arguments are report's). */
static const struct command *find_command(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/* A lone word (letters, no '.' or '/') that is not an existing file: a
 * mistyped subcommand, not an input to read (`stackfold help`). */
static bool typo(const char *a)
{
	struct stat st;
	if (!*a || strlen(a) > 31)
		return false;
	for (const char *p = a; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      *p == '-' || *p == '_') || (p == a && *p == '-'))
			return false;
	return stat(a, &st) != 0;
}

int main(int argc, char **argv)
{
	const struct command *cmd = find_command(argc, argv);
	if (!cmd || !cmd->long_running)
		sf_heap_hugepages();
	/* SIGCHLD inherited as ignored (perl's $SIG{CHLD} = 'IGNORE', some
	 * daemons' children): the kernel reaps bpftrace itself, waitpid()
	 * fails, and a bpftrace killed by -9 read as one that exited 0 */
	signal(SIGCHLD, SIG_DFL);
	if (cmd)
		return cmd->run(argc - 1, argv + 1);
	if (argc > 1 && typo(argv[1])) {
		const char *near = cmd_closest(argv[1]);
		if (near)
			fprintf(stderr, "stackfold: '%s' is not a subcommand nor a "
				"file; did you mean 'stackfold %s'?\n", argv[1], near);
		else
			fprintf(stderr, "stackfold: '%s' is not a subcommand (report, "
				"record, continuous, symbolize, comments) nor a file "
				"(see --help)\n", argv[1]);
		return EXIT_USAGE;
	}
	return cmd_report(argc, argv);
}
