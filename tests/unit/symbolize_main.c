/* symbolize_main.c - runs cmd_symbolize() as a program, so the symbolize
 * tests can run against libstackfold.a before/without bin/stackfold. */
#include "cmds.h"

int main(int argc, char **argv)
{
	return cmd_symbolize(argc, argv);
}
