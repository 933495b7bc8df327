/* commands.c - the subcommands of bin/stackfold, in one table (cmds.h):
 * main.c dispatches on it, the usage lists it, and a mistyped name is
 * matched against it. */
#include "cmds.h"

#include <string.h>

/* long_running: runs for days under an RSS budget (continuous), so its
 * heap stays on normal pages; every other command runs once, and faster
 * on huge pages. */
const struct command cmd_table[] = {
	{ "report", cmd_report, false, "[OPTIONS] [FILE...]" },
	{ "record", cmd_record, false, "[OPTIONS] -- bpftrace ARGS..." },
	{ "continuous", cmd_continuous, true, "-o DIR [OPTIONS] -- bpftrace ARGS..." },
	{ "symbolize", cmd_symbolize, false, "[OPTIONS] < 'MODULE ADDRESS' lines" },
	{ "comments", cmd_comments, false, "FILE.pb.gz..." },
	{ "query", cmd_query, false, "URL --from SECONDS --to SECONDS [OPTIONS]" },
};
const size_t cmd_count = sizeof(cmd_table) / sizeof(cmd_table[0]);

/* Helpers the scripts run, not listed in the usage (docs/python.md). */
static const struct command cmd_plumbing[] = {
	{ "pyoffsets", cmd_pyoffsets, false, "[--bt-args] PID|BINARY" },
};

const struct command *cmd_find(const char *name)
{
	for (size_t i = 0; i < cmd_count; i++)
		if (strcmp(name, cmd_table[i].name) == 0)
			return &cmd_table[i];
	for (size_t i = 0; i < sizeof(cmd_plumbing) / sizeof(cmd_plumbing[0]); i++)
		if (strcmp(name, cmd_plumbing[i].name) == 0)
			return &cmd_plumbing[i];
	return NULL;
}
