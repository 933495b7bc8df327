/*
 * main.c - bin/stackfold: dispatch to a subcommand front-end (cmds.h).
 * With no subcommand name, the arguments are the report command's.
 * Sets up the process's heap (sf_heap_hugepages) for all but continuous.
 */
#include <signal.h>
#include <string.h>

#include "cmds.h"
#include "base/util.h"

int main(int argc, char **argv)
{
	/* the continuous mode runs for days under an RSS budget; every other
	 * command runs once, and faster on huge pages */
	if (argc < 2 || strcmp(argv[1], "continuous") != 0)
		sf_heap_hugepages();
	/* SIGCHLD inherited as ignored (perl's $SIG{CHLD} = 'IGNORE', some
	 * daemons' children): the kernel reaps bpftrace itself, waitpid()
	 * fails, and a bpftrace killed by -9 read as one that exited 0 */
	signal(SIGCHLD, SIG_DFL);
	if (argc > 1 && strcmp(argv[1], "record") == 0)
		return cmd_record(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "symbolize") == 0)
		return cmd_symbolize(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "continuous") == 0)
		return cmd_continuous(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "comments") == 0)
		return cmd_comments(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	return cmd_report(argc, argv);
}
