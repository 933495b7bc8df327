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

/* The subcommand argv[1] names; NULL: none (the arguments are report's). */
static const struct command *find_command(int argc, char **argv)
{
	return argc > 1 ? cmd_find(argv[1]) : NULL;
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
		else {
			fprintf(stderr, "stackfold: '%s' is not a subcommand (",
				argv[1]);
			for (size_t i = 0; i < cmd_count; i++)
				fprintf(stderr, "%s%s", i ? ", " : "",
					cmd_table[i].name);
			fprintf(stderr, ") nor a file (see --help)\n");
		}
		return EXIT_USAGE;
	}
	return cmd_report(argc, argv);
}
