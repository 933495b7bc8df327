/* lists.c - `stackfold --list WHAT`: the tool's tables for scripts
 * (cli.h). */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmds.h"
#include "model/losses.h"

static void list_losses(FILE *out, bool stored)
{
	if (stored)
		for (unsigned i = 0; i < LOSS_NSTORED; i++)
			fprintf(out, "%s\n", loss_table[loss_stored(i)].key);
	else
		for (int i = 0; i < LOSS_N; i++)
			fprintf(out, "%s\n", loss_table[i].key);
}

int cli_list(FILE *out, const char *what)
{
	if (!strcmp(what, "losses") || !strcmp(what, "stored-losses")) {
		list_losses(out, what[0] == 's');
		return EXIT_OK;
	}
	fprintf(stderr, "stackfold: --list takes losses or stored-losses, "
		"not '%s'\n", what);
	return EXIT_USAGE;
}
