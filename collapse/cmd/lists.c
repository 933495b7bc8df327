/* lists.c - `stackfold --list WHAT`: the tool's tables for scripts
 * (cli.h). */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmds.h"
#include "model/losses.h"
#include "output/out.h"

static void list_losses(FILE *out, bool stored)
{
	if (stored)
		for (unsigned i = 0; i < LOSS_NSTORED; i++)
			fprintf(out, "%s\n", loss_table[loss_stored(i)].key);
	else
		for (int i = 0; i < LOSS_N; i++)
			fprintf(out, "%s\n", loss_table[i].key);
}

/* "NAME SUFFIX FLAGS" a line, in the table's order (the usage's); FLAGS
 * the row's enum out_flags as words, comma-separated, "-" when none */
static void list_formats(FILE *out)
{
	static const char *const words[] = { "binary", "pages", "lines",
					     "profile", "diff", "shown",
					     "stream" };
	for (unsigned i = 0; i < out_nformats; i++) {
		const struct out_format *f = &out_formats[i];
		fprintf(out, "%s %s ", f->name, f->suffix);
		const char *sep = "";
		for (unsigned b = 0; b < sizeof(words) / sizeof(words[0]); b++)
			if (f->flags & (1u << b)) {
				fprintf(out, "%s%s", sep, words[b]);
				sep = ",";
			}
		fprintf(out, "%s\n", *sep ? "" : "-");
	}
}

int cli_list(FILE *out, const char *what)
{
	if (!strcmp(what, "formats")) {
		list_formats(out);
		return EXIT_OK;
	}
	if (!strcmp(what, "losses") || !strcmp(what, "stored-losses")) {
		list_losses(out, what[0] == 's');
		return EXIT_OK;
	}
	fprintf(stderr, "stackfold: --list takes losses, stored-losses or "
		"formats, not '%s'\n", what);
	return EXIT_USAGE;
}
