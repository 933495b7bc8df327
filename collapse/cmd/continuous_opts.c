/* continuous_opts.c - see continuous_opts.h. */
#include "cmd/continuous_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmds.h"

static void usage(FILE *out)
{
	fputs("usage: stackfold continuous -o DIR [OPTIONS] -- bpftrace ARGS...\n"
	      "Consume a running bt/continuous.bt capture: one profile per window,\n"
	      "DIR/YYYYMMDDTHHMMSSZ.pb.gz (window start, UTC), written atomically.\n"
	      "Normally started by scripts/continuous.\n\n"
	      "  -o, --dir DIR          where the windows go (created if missing)\n"
	      "  -w, --window SECONDS   the capture's window length (metadata; 10)\n"
	      "  -F, --hz HZ            the capture's sampling rate (metadata; 99)\n"
	      "      --folded           also write DIR/STEM.folded (comm-PID frames)\n"
	      "      --max-size SIZE    keep at most SIZE bytes of windows (K, M, G;\n"
	      "                         default 1G; 0 = no cap), oldest removed first\n"
	      "      --max-memory SIZE  memory budget (default 256M; 0 = none): once a\n"
	      "                         window's stacks take a third of what is free\n"
	      "                         of it, its further stacks are counted in one\n"
	      "                         [overflow] stack\n"
	      "      --max-age DURATION remove windows older than this (s, m, h, d;\n"
	      "                         default: no cap); local files only\n"
	      "      --inline           inline frames and source lines from DWARF\n"
	      "                         (default: symbol tables only; more memory)\n"
	      "      --no-cache, --cache-dir DIR  (as for record)\n"
	      "      --watch-pid PID[,PID...]  stop (the window in progress\n"
	      "                         written) once every one has exited\n"
	      "      --host NAME        the host name the windows carry (default:\n"
	      "                         the machine's)\n"
	      "      --push URL         also send each window to a store:\n"
	      "                         clickhouse[s]://[USER@]HOST:PORT/DATABASE or\n"
	      "                         pyroscope://HOST:PORT[/APP] (repeatable;\n"
	      "                         implies --folded: the files are the spool)\n"
	      "      --push-auth FILE   the stores' USER:PASSWORD (or PASSWORD)\n"
	      "      --push-cacert FILE verify HTTPS stores against the CA\n"
	      "                         certificates of this PEM file only\n"
	      "      --label KEY=VALUE  a label on every window this run writes,\n"
	      "                         sent with it (repeatable; VALUE: letters,\n"
	      "                         digits, _ . -)\n"
	      "      --push-max-age DURATION  delete this host's windows older\n"
	      "                         than this from ClickHouse stores (whole\n"
	      "                         days; other hosts' rows are never touched)\n"
	      "      --source auto|maps|text  how windows are read: bpftrace's maps\n"
	      "                         straight from the kernel (bpftrace 0.17),\n"
	      "                         its printed text, or auto (default): the\n"
	      "                         maps when their layout is known and they\n"
	      "                         can be taken, else the text (one line why)\n"
	      "  -q, --quiet            log only problems (default: one line a window)\n"
	      "  -v, --verbose          also say which source reads the windows\n"
	      "      --check            check the options and exit (0, or 1 with\n"
	      "                         the usage error): nothing is run or written\n\n"
	      "Exit status: 0 stopped by SIGINT/SIGTERM (the current window is\n"
	      "written); 1 usage; 3 bpftrace could not start; 4 DIR unusable, or\n"
	      "out of memory; 130 a second SIGINT (the current window is lost).\n",
	      out);
}

/* "512", "64K", "10M", "1G" (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* "90", "90s", "15m", "6h", "7d". */
static bool parse_duration(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno)
		return false;
	uint64_t mul = 1;
	switch (*end) {
	case 's': end++; break;
	case 'm': mul = 60; end++; break;
	case 'h': mul = 3600; end++; break;
	case 'd': mul = 86400; end++; break;
	}
	if (*end || v > UINT64_MAX / mul)
		return false;
	*out = v * mul;
	return true;
}

static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return false;
	*out = (unsigned)v;
	return true;
}

enum { OPT_FOLDED = 256, OPT_MAXSIZE, OPT_MAXMEM, OPT_MAXAGE, OPT_NOCACHE,
       OPT_CACHEDIR, OPT_NODWARF, OPT_INLINE, OPT_WATCH, OPT_CHECK, OPT_HOST,
       OPT_PUSH, OPT_PUSHAUTH, OPT_PUSHCA, OPT_LABEL, OPT_PUSHAGE, OPT_SOURCE };

static const struct option long_opts[] = {
	{ "dir", required_argument, NULL, 'o' },
	{ "window", required_argument, NULL, 'w' },
	{ "hz", required_argument, NULL, 'F' },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "max-size", required_argument, NULL, OPT_MAXSIZE },
	{ "max-age", required_argument, NULL, OPT_MAXAGE },
	{ "max-memory", required_argument, NULL, OPT_MAXMEM },
	{ "no-cache", no_argument, NULL, OPT_NOCACHE },
	{ "cache-dir", required_argument, NULL, OPT_CACHEDIR },
	{ "no-dwarf", no_argument, NULL, OPT_NODWARF },
	{ "inline", no_argument, NULL, OPT_INLINE },
	/* the former name: "dwarf" now means --call-graph dwarf */
	{ "dwarf", no_argument, NULL, OPT_INLINE },
	{ "watch-pid", required_argument, NULL, OPT_WATCH },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-auth", required_argument, NULL, OPT_PUSHAUTH },
	{ "push-cacert", required_argument, NULL, OPT_PUSHCA },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "push-max-age", required_argument, NULL, OPT_PUSHAGE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int bad_arg(const char *what, const char *arg)
{
	fprintf(stderr, "stackfold: continuous: bad %s '%s' (see --help)\n",
		what, arg);
	return EXIT_USAGE;
}

static int parse_one(struct continuous_opts *o, int opt, char *arg)
{
	switch (opt) {
	case 'o':
		o->dir = arg;
		return cli_output_len("continuous: ", "--output", arg);
	case 'w': return parse_uint(arg, 1, 86400, &o->window) ? -1
			: bad_arg("--window", arg);
	case 'F': return parse_uint(arg, 1, 100000, &o->hz) ? -1
			: bad_arg("--hz", arg);
	case OPT_FOLDED: o->folded = true; return -1;
	case OPT_MAXSIZE: return parse_size(arg, &o->max_size) ? -1
			: bad_arg("--max-size", arg);
	case OPT_MAXMEM: return parse_size(arg, &o->max_mem) ? -1
			: bad_arg("--max-memory", arg);
	case OPT_MAXAGE: return parse_duration(arg, &o->max_age) ? -1
			: bad_arg("--max-age", arg);
	case OPT_NOCACHE: o->so.no_cache = true; return -1;
	case OPT_CACHEDIR: o->so.cache_dir = arg; return -1;
	case OPT_NODWARF: o->so.no_dwarf = true; return -1;
	case OPT_INLINE: o->so.no_dwarf = false; return -1;
	case OPT_WATCH:
		return cli_parse_pids("--watch-pid", arg, o->watch_pids,
				      &o->nwatch, CLI_MAX_WATCH);
	case 'q': o->quiet = true; return -1;
	case 'v': o->verbose = true; return -1;
	case OPT_SOURCE:
		if (!strcmp(arg, "auto"))
			o->source = SOURCE_AUTO;
		else if (!strcmp(arg, "maps"))
			o->source = SOURCE_MAPS;
		else if (!strcmp(arg, "text"))
			o->source = SOURCE_TEXT;
		else
			return bad_arg("--source", arg);
		return -1;
	case OPT_HOST: o->host = arg; return push_cli_host(arg);
	case OPT_PUSH: o->folded = true; return push_cli_add(&o->push, arg);
	case OPT_PUSHAUTH: o->push.auth_file = arg; return -1;
	case OPT_PUSHCA: o->push.cacert_file = arg; return -1;
	case OPT_LABEL: return push_cli_label(&o->push, arg);
	case OPT_PUSHAGE: return parse_duration(arg, &o->push.store_max_age) &&
			o->push.store_max_age ? -1 : bad_arg("--push-max-age", arg);
	case OPT_CHECK: o->check = true; return -1;
	case 'h': usage(stdout); return EXIT_OK;
	case 'V': cli_version(stdout); return EXIT_OK;
	default: usage(stderr); return EXIT_USAGE;
	}
}

int continuous_opts_parse(struct continuous_opts *o, int argc, char **argv)
{
	/* Symbol tables only by default: DWARF indexes (inline frames, lines)
	 * cost an always-on profiler most of its memory and index time on a
	 * machine that keeps running new binaries. */
	*o = (struct continuous_opts){ .window = 10, .hz = 99, .max_size = 1ULL << 30,
			     .max_mem = 256ULL << 20, .so.no_dwarf = true, .so.dwarf_whole = true };
	int opt;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:o:w:F:qvhV", long_opts, NULL)) != -1) {
		if (opt == '?' || opt == ':')
			return cli_getopt_error(opt, argv, "continuous: ");
		int st = parse_one(o, opt, optarg);
		if (st >= 0)
			return st;
	}
	if (!o->dir) {
		fprintf(stderr, "stackfold: continuous needs -o DIR\n");
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "stackfold: continuous needs a bpftrace command after --\n");
		return EXIT_USAGE;
	}
	o->argv = argv + optind;
	return push_cli_finish(&o->push);
}
