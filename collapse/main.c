/*
 * main.c - bin/stackfold: dispatch to a subcommand front-end (cmds.h).
 * With no subcommand name, the arguments are the report command's.
 */
#include <string.h>

#include "cmds.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "record") == 0)
		return cmd_record(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "symbolize") == 0)
		return cmd_symbolize(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "continuous") == 0)
		return cmd_continuous(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	return cmd_report(argc, argv);
}
