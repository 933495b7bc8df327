/*
 * main.c - bin/stackfold: dispatch to a subcommand front-end (cmds.h).
 * With no subcommand name, the arguments are the report command's.
 * Sets up the process's heap (sf_heap_hugepages) for all but continuous.
 */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

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
	return cmd_report(argc, argv);
}
