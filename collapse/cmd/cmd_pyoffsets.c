/*
 * cmd_pyoffsets.c - `stackfold pyoffsets PID|BINARY`: the addresses and
 * member offsets bt/profile-python.bt walks CPython 3.11's frames with,
 * from the interpreter's .dynsym and DWARF (pyoffsets.h).  Prints
 * "NAME VALUE" lines, or with --bt-args the values alone on one line in
 * the program's positional order.  No debug info: one line naming the
 * package to install, exit 3 (scripts/profile then samples native stacks
 * only).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "pyoffsets.h"

static const char usage[] =
	"usage: stackfold pyoffsets [--bt-args] PID|BINARY\n"
	"\n"
	"Prints what bt/profile-python.bt needs to walk a CPython 3.11\n"
	"process's frames: _PyRuntime's address and the member offsets, read\n"
	"from the interpreter's debug info (Debian: python3.11-dbg).\n"
	"  --bt-args   the values only, on one line, as the program's\n"
	"              positional parameters from $5 on, then the\n"
	"              interpreter's file on a line of its own\n"
	"A BINARY's addresses are as linked (a non-PIE python3.11's are the\n"
	"process's); a PID's are relocated.\n"
	"Exit status: 0 ok; 1 usage; 3 no debug info, or not CPython 3.11\n"
	"(another version is named: CPython 3.11 only).\n";

/* The -dbg package for a binary named .../python3.11 or libpython3.11.so */
static void say_package(const char *binary)
{
	const char *v = strstr(binary, "python3.");
	char pkg[32] = "python3.11-dbg";
	if (v) {
		size_t n = strspn(v + 8, "0123456789");
		if (n && n < 4)
			snprintf(pkg, sizeof(pkg), "python3.%.*s-dbg", (int)n, v + 8);
	}
	fprintf(stderr, "stackfold: install %s (apt-get install %s) for Python frames; native stacks only\n",
		pkg, pkg);
}

int cmd_pyoffsets(int argc, char **argv)
{
	bool bt_args = false;
	const char *target = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--bt-args") == 0) {
			bt_args = true;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return EXIT_OK;
		} else if (target || (argv[i][0] == '-' && argv[i][1])) {
			fputs(usage, stderr);
			return EXIT_USAGE;
		} else {
			target = argv[i];
		}
	}
	if (!target) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	char *end;
	long pid = strtol(target, &end, 10);
	bool is_pid = *target && !*end && pid > 0 && pid <= INT32_MAX;
	static struct py_offsets o;
	struct sf_err err = { "" };
	int ret = py_offsets_find(is_pid ? (int)pid : 0, is_pid ? NULL : target,
				  &o, &err);
	if (ret) {
		fprintf(stderr, "stackfold: %s\n", err.msg);
		if (ret == -PY_ENODEBUG)
			say_package(o.binary);
		return ret == -ESRCH || ret == -PY_ENODEBUG || ret == -PY_ENOPYTHON ||
			       ret == -PY_EVERSION
			       ? EXIT_ENV : EXIT_BADINPUT;
	}
	if (!bt_args) {
		printf("binary %s\ndebug %s\n", o.binary, o.debug);
		for (int k = 0; k < PY_OFF_COUNT; k++)
			printf("%s 0x%" PRIx64 "\n", py_off_name(k), o.v[k]);
	} else {
		for (int k = 0; k < PY_OFF_COUNT; k++)
			printf("%s%" PRIu64, k ? " " : "", o.v[k]);
		printf("\n%s\n", o.binary);
	}
	return fflush(stdout) || ferror(stdout) ? EXIT_IO : EXIT_OK;
}
