/* version.c - `--version` of every subcommand, and the closest subcommand
 * to a mistyped one (cli.h, cmds.h). */
#include <stdio.h>
#include <string.h>

#include "capture/child.h"
#include "cmd/cli.h"
#include "cmds.h"

#ifndef SF_VERSION
#define SF_VERSION "unknown"
#endif

void cli_version(FILE *out)
{
	char bt[128] = "";
	char *const argv[] = { (char *)"bpftrace", NULL };
	/* bt_child_version() kills a bpftrace silent for 5 s */
	if (bt_child_version(argv, bt, sizeof(bt)))
		snprintf(bt, sizeof(bt), "bpftrace not found");
	fprintf(out, "stackfold %s (%s)\n", SF_VERSION, bt);
}

/* Edit distance of a and b (both short words: at most 31 bytes). */
static unsigned distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned row[32];
	if (n > 31 || m > 31)
		return 99;
	for (size_t j = 0; j <= m; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= m; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[m];
}

const char *cmd_closest(const char *word)
{
	if (!strcmp(word, "help") || !strcmp(word, "usage"))
		return "--help";
	if (!strcmp(word, "version"))
		return "--version";
	const char *best = cmd_table[0].name;
	unsigned bd = 99;
	for (size_t i = 0; i < cmd_count; i++) {
		unsigned d = distance(word, cmd_table[i].name);
		if (d < bd) {
			bd = d;
			best = cmd_table[i].name;
		}
	}
	/* closer than half the word: a typo; else a word of its own */
	return bd * 2 <= strlen(word) ? best : NULL;
}
