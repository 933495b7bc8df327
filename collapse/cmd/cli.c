/* cli.c - option parsing shared by report and record; see cli.h. */
#include "cmd/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "output/svg_color.h"

enum {
	OPT_TITLE = 256, OPT_SUBTITLE, OPT_WIDTH, OPT_MINWIDTH, OPT_INVERTED,
	OPT_COLORS, OPT_NOHASH, OPT_COUNTNAME, OPT_FLAMECHART, OPT_DIFF,
	OPT_TOP, OPT_TID, OPT_NOCOMM, OPT_LINES, OPT_NODEMANGLE, OPT_NOCACHE,
	OPT_CACHEDIR, OPT_NODWARF, OPT_SAVERAW, OPT_COUNTDOWN, OPT_WATCH,
	OPT_NOGZIP, OPT_START, OPT_FLUSH, OPT_OFFSETS, OPT_MAXSTACKS, OPT_SHOWPID,
	OPT_HEIGHT, OPT_FONTSIZE, OPT_FONTWIDTH, OPT_FONTTYPE, OPT_BGCOLORS,
	OPT_NAMETYPE, OPT_NOTES, OPT_CP, OPT_HASH, OPT_RANDOM, OPT_REVERSE,
	OPT_NEGATE, OPT_NORMALIZE, OPT_NONORMALIZE, OPT_SORT, OPT_DELIMIT,
	OPT_PROVENANCE, OPT_NOPROVENANCE, OPT_LIST, OPT_SIDEPID,
};

/* "usage: stackfold [report] ..." and a line for each other subcommand
 * (the table in commands.c). */
static void usage_synopses(FILE *out)
{
	fprintf(out, "usage: stackfold [report] %s\n", cmd_table[0].synopsis);
	for (size_t i = 1; i < cmd_count; i++)
		fprintf(out, "       stackfold %s %s\n", cmd_table[i].name,
			cmd_table[i].synopsis);
}

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "pid", required_argument, NULL, 'p' },
	{ "show-pid", no_argument, NULL, OPT_SHOWPID },
	{ "tid", no_argument, NULL, OPT_TID },
	{ "no-comm", no_argument, NULL, OPT_NOCOMM },
	{ "user-only", no_argument, NULL, 'U' },
	{ "kernel-only", no_argument, NULL, 'K' },
	{ "delimit", no_argument, NULL, OPT_DELIMIT },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "offsets", no_argument, NULL, OPT_OFFSETS },
	{ "no-demangle", no_argument, NULL, OPT_NODEMANGLE },
	{ "no-cache", no_argument, NULL, OPT_NOCACHE },
	{ "cache-dir", required_argument, NULL, OPT_CACHEDIR },
	{ "no-dwarf", no_argument, NULL, OPT_NODWARF },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "colors", required_argument, NULL, OPT_COLORS },
	{ "no-hash", no_argument, NULL, OPT_NOHASH },
	{ "countname", required_argument, NULL, OPT_COUNTNAME },
	{ "flamechart", no_argument, NULL, OPT_FLAMECHART },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "no-gzip", no_argument, NULL, OPT_NOGZIP },
	{ "max-stacks", required_argument, NULL, OPT_MAXSTACKS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "provenance", no_argument, NULL, OPT_PROVENANCE },
	{ "no-provenance", no_argument, NULL, OPT_NOPROVENANCE },
	{ "normalize", no_argument, NULL, OPT_NORMALIZE },
	{ "no-normalize", no_argument, NULL, OPT_NONORMALIZE },
	/* flamegraph.pl's */
	{ "height", required_argument, NULL, OPT_HEIGHT },
	{ "fontsize", required_argument, NULL, OPT_FONTSIZE },
	{ "fontwidth", required_argument, NULL, OPT_FONTWIDTH },
	{ "fonttype", required_argument, NULL, OPT_FONTTYPE },
	{ "bgcolors", required_argument, NULL, OPT_BGCOLORS },
	{ "nametype", required_argument, NULL, OPT_NAMETYPE },
	{ "notes", required_argument, NULL, OPT_NOTES },
	{ "cp", no_argument, NULL, OPT_CP },
	{ "hash", no_argument, NULL, OPT_HASH },
	{ "random", no_argument, NULL, OPT_RANDOM },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "negate", no_argument, NULL, OPT_NEGATE },
	/* record */
	{ "hz", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'D' },
	{ "save-raw", required_argument, NULL, OPT_SAVERAW },
	{ "countdown", no_argument, NULL, OPT_COUNTDOWN },
	{ "watch-pid", required_argument, NULL, OPT_WATCH },
	{ "start-pid", required_argument, NULL, OPT_START },
	{ "side-pid", required_argument, NULL, OPT_SIDEPID },
	{ "flush", required_argument, NULL, OPT_FLUSH },
	/* hidden: the scripts' way to the tool's tables (cli_list) */
	{ "list", required_argument, NULL, OPT_LIST },
	{ NULL, 0, NULL, 0 },
};

void cli_usage(FILE *out, bool record)
{
	if (record)
		fputs("usage: stackfold record [OPTIONS] -- bpftrace ARGS...\n"
		      "Run a bpftrace capture (bt/profile.bt), snapshot the memory maps of\n"
		      "each sampled process at its first sample, then write the outputs.\n"
		      "Normally started by scripts/profile.\n\n"
		      "Record options:\n"
		      "  -F, --hz HZ            sampling rate the capture uses (metadata)\n"
		      "  -D, --duration SEC     stop bpftrace after SEC seconds (SIGINT)\n"
		      "      --countdown        show a countdown on stderr\n"
		      "      --watch-pid PID[,PID...]\n"
		      "                         stop once every PID (a process, or a thread\n"
		      "                         id) has exited; may be given more than once\n"
		      "      --start-pid PID    send SIGCONT to PID once bpftrace attached\n"
		      "      --side-pid PID[,PID...]\n"
		      "                         read the kernel's map records of these\n"
		      "                         processes and their descendants only (default:\n"
		      "                         every process's)\n"
		      "      --flush SEC        the program prints and clears its map every\n"
		      "                         SEC s and says \"#flushed\": stop between flushes\n"
		      "      --save-raw FILE    also keep the raw capture (re-readable)\n\n",
		      out);
	else
		usage_synopses(out);
	if (!record)
		fputs("(each subcommand has its own --help)\n\n"
		      "Read bpftrace output (any @[...stack...]: N map text, symbolized or raw\n"
		      "addresses, or stackfold's raw capture), perf script output, folded\n"
		      "stacks, or pprof (.pb.gz or .pb, Go's too) from FILEs or stdin\n"
		      "(a perf.data file: perf script -i perf.data | stackfold), and write folded\n"
		      "stacks, a top table, an SVG flame graph or pprof.\n\n",
		      out);
	fputs("Output:\n"
	      "  -f, --format LIST      folded (default), top, svg, pprof; comma list\n", out);
	if (record)	/* always a prefix: scripts/profile's -o */
		fputs("  -o, --output PREFIX    PREFIX.folded .svg .pb.gz (the top table is\n"
		      "                         shown on stdout); default stdout, one format\n",
		      out);
	else
		fputs("  -o, --output PATH      one format: the file; several: PREFIX for\n"
		      "                         PREFIX.folded .top .svg .pb.gz (default stdout)\n",
		      out);
	fputs(
	      "  -p, --pid PID[,PID...] only these processes' samples (perf report\n"
	      "                         --pid); folded input: its comm-PID frames\n"
	      "      --show-pid         process frame is comm-PID\n"
	      "      --tid              add /TID to the process frame\n"
	      "      --no-comm          no process frame\n"
	      "  -U, --user-only        user frames only\n"
	      "  -K, --kernel-only      kernel frames only\n"
	      "      --delimit          '-' frame between user and kernel frames\n"
	      "      --lines            add :file:line to frames (needs DWARF)\n"
	      "      --offsets          keep symbol offsets: func+0x1f, the address's\n"
	      "                         offset in its function (perf's +symoff)\n"
	      "      --top N            rows in the top table (25; 0: every function);\n"
	      "                         the hottest stacks: N, at most 10\n"
	      "      --sort KEYS        top table rows by KEYS, a comma list of\n"
	      "                         comm, pid, tid, dso, sym (perf report --sort;\n"
	      "                         default sym); the hottest stacks too\n"
	      "      --provenance       folded output starts with a '# stackfold: hz=...'\n"
	      "                         line (rate, duration, losses) that FlameGraph's\n"
	      "                         tools ignore and stackfold reads back\n"
	      "      --countname NAME   what a count is (samples): top table, SVG,\n"
	      "                         summary; pprof's one value (ns: nanoseconds)\n"
	      "      --max-stacks N     stop with exit status 5, writing nothing, past\n"
	      "                         N unique stacks (each takes 1-2 KB of memory)\n"
	      "  -q, --quiet            nothing on stderr unless samples were or may\n"
	      "                         have been lost (the default, as flamegraph.pl)\n"
	      "  -v, --verbose          the summary of what was read, and the\n"
	      "                         profiler's own CPU time and memory\n"
	      "  -h, --help             this help\n"
	      "  -V, --version          versions of stackfold and of the bpftrace found\n",
	      out);
	if (!record)
		fputs("  -F, --hz HZ            the rate of input that does not say it\n"
		      "                         (profile:hz:HZ of a one-liner; 99): pprof's\n"
		      "                         period, the SVG's subtitle\n", out);
	fputs("Symbols:\n"
	      "      --no-demangle      keep mangled C++/Rust names\n"
	      "      --no-cache         do not read or write the symbol index cache\n"
	      "      --cache-dir DIR    cache directory ($XDG_CACHE_HOME/stackfold)\n"
	      "      --no-dwarf         symbol tables only (no inline frames, lines)\n"
	      "SVG (flamegraph.pl's options, with its meaning):\n"
	      "      --title TEXT --subtitle TEXT --countname TEXT --nametype TEXT\n"
	      "      --width PX (1200)  --height PX (16, each frame)\n"
	      "      --minwidth N       leave out frames narrower than N pixels, or\n"
	      "                         N% of the samples (default 0.1%, folded input\n"
	      "                         0.1 px as flamegraph.pl; 0 keeps all)\n"
	      "      --fonttype FONT (Verdana) --fontsize N (12) --fontwidth N (0.59)\n"
	      "      --colors PALETTE   hot (default), mem, io, wakeup, chain, java,\n"
	      "                         js, perl, red, green, blue, aqua, yellow,\n"
	      "                         purple, orange; lang (by frame kind)\n"
	      "      --bgcolors COLOR   yellow, blue, green, grey, or flat #rrggbb\n"
	      "      --hash             colours keyed by name (the default)\n"
	      "      --random           random colours;  --no-hash: by position\n"
	      "      --cp               consistent colours kept in ./palette.map\n"
	      "      --reverse          stacks reversed (leaf at the bottom)\n"
	      "      --inverted         icicle graph;  --flamechart: time order\n"
	      "      --notes TEXT       a comment in the SVG\n",
	      out);
	if (!record)
		fputs("      --diff BEFORE AFTER  differential flame graph of two inputs:\n"
		      "                         shares compared (difffolded.pl -n), red grew\n"
		      "      --no-normalize     ... counts compared instead\n"
		      "      --negate           ... blue grew, red shrank\n",
		      out);
	fputs("pprof:\n"
	      "      --no-gzip          raw protobuf instead of gzip (PREFIX.pb)\n"
	      "(pprof and SVG are not written to a terminal: -o FILE, -o - or a pipe)\n\n"
	      "Exit status: 0 ok (unparsable lines are counted, not an error); 1 usage;\n"
	      "2 unreadable input, not a profile, no samples, counts past 2^63, mixed\n"
	      "rates;\n"
	      "3 environment (bpftrace missing or not allowed to run, pid not found),\n"
	      "or bpftrace ended early (what it printed is written); 4 an output\n"
	      "could not be written; 130 aborted by a second Ctrl-C.\n\n", out);
	if (record) {
		fputs("Example (what scripts/profile runs, less its checks):\n"
		      "  BPFTRACE_NO_USER_SYMBOLS=1 stackfold record -F 99 -D 5 --flush 10 \\\n"
		      "    -f folded,svg -o profile -- bpftrace bt/profile.bt 99 0 10\n", out);
		return;
	}
	fputs("Examples:\n"
	      "  bpftrace -e 'profile:hz:99 { @[kstack] = count(); }' > trace.txt\n"
	      "  stackfold trace.txt > trace.folded\n"
	      "  stackfold -f svg trace.folded > flame.svg\n"
	      "  stackfold -f folded,svg,pprof,top -o out trace.txt\n"
	      "  stackfold -f svg --diff before.folded after.folded > diff.svg\n",
	      out);
}

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "stackfold: %s '%s' (see --help)\n", msg, arg);
	return EXIT_USAGE;
}

static int parse_formats(struct cli *c, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return EXIT_USAGE;
	c->nformats = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct out_format *f = out_format_find(t);
		if (!f || c->nformats == CLI_MAX_OUTPUTS) {
			int r = bad("unknown format", t);
			free(copy);
			return r;
		}
		for (unsigned i = 0; i < c->nformats; i++)
			if (c->formats[i] == f) {
				int r = bad("format given twice", t);
				free(copy);
				return r;
			}
		c->formats[c->nformats++] = f;
	}
	free(copy);
	return c->nformats ? -1 : bad("no format in", list);
}

static bool parse_uint(const char *s, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v > 1000000000UL)
		return false;
	*out = (unsigned)v;
	return true;
}

static int parse_real(const char *arg, double lo, double hi, double *out,
		      const char *what)
{
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v >= lo && v <= hi))	/* also nan */
		return bad(what, arg);
	*out = v;
	return -1;
}

/* Text the SVG shows: no control characters (they are not XML). */
static int parse_text(const char *arg, const char **out, const char *what)
{
	for (const char *p = arg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return bad(what, arg);
	*out = arg;
	return -1;
}

/* --sort: a comma list of comm, pid, tid, dso, sym, each once */
static int parse_sort(struct cli *c, const char *arg)
{
	static const char *const keys[] = { "comm", "pid", "tid", "dso", "sym" };
	unsigned seen = 0;
	const char *p = arg;
	for (;;) {
		size_t n = strcspn(p, ","), k = 0;
		while (k < 5 && (strlen(keys[k]) != n || strncmp(keys[k], p, n)))
			k++;
		if (k == 5 || (seen & (1u << k)))
			return bad("bad --sort (a comma list of comm, pid, tid, "
				   "dso, sym, each once)", arg);
		seen |= 1u << k;
		if (!p[n])
			break;
		p += n + 1;
	}
	c->sort = c->oo.sort = arg;
	return -1;
}

/* flamegraph.pl's --minwidth: pixels ("1", "1px"), or a share of the
 * samples ("1%") */
static int parse_minwidth(struct cli *c, const char *arg)
{
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || !(v >= 0 && v <= 1e9))	/* also nan, inf */
		return bad("bad --minwidth", arg);
	if (!*end || strcmp(end, "px") == 0)
		c->oo.minwidth_px = true;
	else if (strcmp(end, "%") != 0)
		return bad("bad --minwidth", arg);
	else
		c->oo.minwidth_px = false;
	if (v == 0)	/* 0, 0% or 0px: every frame (opts' 0 is the default) */
		c->oo.minwidth_px = true;
	c->oo.minwidth = v;
	return -1;
}

int cli_parse_pids(const char *opt, const char *arg, int *ids, unsigned *n,
		   unsigned max)
{
	char bad_list[64], too_many[80];
	snprintf(bad_list, sizeof(bad_list), "bad %s (PID[,PID...])", opt);
	snprintf(too_many, sizeof(too_many), "too many %s pids (%u at most)",
		 opt, max);
	const char *p = arg;
	do {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || *p < '0' || *p > '9' || (*end && *end != ',') ||
		    !v || v > 0x7fffffffUL)
			return bad(bad_list, arg);
		if (*n == max)
			return bad(too_many, arg);
		ids[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
	} while (*p);
	return p[-1] == ',' ? bad(bad_list, arg) : -1;
}

/* --watch-pid PID[,PID...]: appended to the list (repeatable) */
static int parse_watch(struct cli *c, const char *arg)
{
	if (!c->record)
		return bad("bad --watch-pid", arg);
	return cli_parse_pids("--watch-pid", arg, c->watch_pids, &c->nwatch,
			      CLI_MAX_WATCH);
}

/* --side-pid PID[,PID...]: appended to the list (repeatable) */
static int parse_side(struct cli *c, const char *arg)
{
	if (!c->record)
		return bad("bad --side-pid", arg);
	return cli_parse_pids("--side-pid", arg, c->side_pids, &c->nside,
			      CLI_MAX_WATCH);
}

/* With a suffix and a temporary name's (or a window's name), an output
 * must fit in PATH_MAX: a longer one was cut short, silently. */
int cli_output_len(const char *cmd, const char *opt, const char *arg)
{
	if (strlen(arg) <= CLI_OUTPUT_MAX)
		return -1;
	fprintf(stderr, "stackfold: %s%s is too long for a path (%zu bytes; "
		"%d at most)\n", cmd, opt, strlen(arg), CLI_OUTPUT_MAX);
	return EXIT_USAGE;
}

static int parse_one(struct cli *c, int opt, const char *arg)
{
	unsigned u;
	switch (opt) {
	case 'f': return parse_formats(c, arg);
	case 'o':
		if (cli_output_len("", "-o", arg) != -1)
			return EXIT_USAGE;
		c->output = arg;
		break;
	case 'p':
		return cli_parse_pids("--pid", arg, c->pids, &c->npids,
				      CLI_MAX_WATCH);
	case OPT_SHOWPID: c->oo.fold_flags |= FOLD_PID; break;
	case OPT_TID: c->oo.fold_flags |= FOLD_TID; break;
	case OPT_NOCOMM: c->oo.fold_flags |= FOLD_NO_COMM; break;
	case 'U': c->oo.fold_flags |= FOLD_USER_ONLY; break;
	case 'K': c->oo.fold_flags |= FOLD_KERNEL_ONLY; break;
	case OPT_DELIMIT: c->oo.fold_flags |= FOLD_DELIMIT; break;
	case 'd':	/* a duration in scripts/profile, as in bcc's profile */
		fprintf(stderr, "stackfold: -d: unknown option; the '-' frame "
			"between user and kernel frames is --delimit\n");
		return EXIT_USAGE;
	case OPT_LINES: c->oo.fold_flags |= FOLD_LINES; break;
	case OPT_OFFSETS: c->oo.fold_flags |= FOLD_OFFSETS; break;
	case OPT_NODEMANGLE: c->so.no_demangle = true; break;
	case OPT_NOCACHE: c->so.no_cache = true; break;
	case OPT_CACHEDIR: c->so.cache_dir = arg; break;
	case OPT_NODWARF: c->so.no_dwarf = true; break;
	case OPT_TOP:
		if (!parse_uint(arg, &c->oo.top_n))
			return bad("bad --top", arg);
		if (!c->oo.top_n)	/* 0: every function */
			c->oo.top_n = OUT_TOP_ALL;
		break;
	case OPT_TITLE: c->oo.title = arg; break;
	case OPT_SUBTITLE: c->oo.subtitle = arg; break;
	case OPT_WIDTH:
		if (!parse_uint(arg, &c->oo.width) || c->oo.width < 200 ||
		    c->oo.width > 1000000)	/* out_svg.c's range */
			return bad("bad --width (200 to 1000000)", arg);
		break;
	case OPT_MINWIDTH: return parse_minwidth(c, arg);
	case OPT_INVERTED: c->oo.inverted = true; break;
	case OPT_COLORS:
		if (svg_palette_find(arg) < 0)
			return bad("unknown --colors (hot, mem, io, wakeup, chain, "
				   "java, js, perl, red, green, blue, yellow, "
				   "purple, aqua, orange, lang)", arg);
		c->oo.colors = arg;
		break;
	case OPT_NOHASH: c->oo.no_hash = true; break;
	case OPT_COUNTNAME:	/* in the SVG's titles and script alike */
		for (const char *p = arg; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return bad("bad --countname (a control character)", arg);
		c->oo.countname = arg;
		break;
	case OPT_FLAMECHART: c->oo.flamechart = true; break;
	case OPT_DIFF: c->diff_before = ""; break;
	case OPT_NOGZIP: c->oo.pprof_no_gzip = true; break;
	case OPT_MAXSTACKS:
		if (!parse_uint(arg, &c->max_stacks) || !c->max_stacks)
			return bad("bad --max-stacks (1 to 1000000000)", arg);
		break;
	case 'q': c->quiet = true; break;
	case 'v': c->verbose = true; break;
	case OPT_SORT: return parse_sort(c, arg);
	case OPT_NORMALIZE: c->oo.diff_counts = false; break;
	case OPT_NONORMALIZE: c->oo.diff_counts = true; break;
	case OPT_NEGATE: c->oo.negate = true; break;
	case OPT_PROVENANCE: c->oo.provenance = true; break;
	case OPT_NOPROVENANCE: c->oo.provenance = false; break;
	case OPT_HEIGHT:
		if (!parse_uint(arg, &u) || u < 1 || u > 1000)
			return bad("bad --height (1 to 1000 px)", arg);
		c->oo.frame_height = u;
		break;
	case OPT_FONTSIZE:
		return parse_real(arg, 1, 200, &c->oo.fontsize, "bad --fontsize");
	case OPT_FONTWIDTH:
		return parse_real(arg, 0.05, 5, &c->oo.fontwidth, "bad --fontwidth");
	case OPT_FONTTYPE: return parse_text(arg, &c->oo.fonttype, "bad --fonttype");
	case OPT_NAMETYPE: return parse_text(arg, &c->oo.nametype, "bad --nametype");
	case OPT_NOTES: return parse_text(arg, &c->oo.notes, "bad --notes");
	case OPT_BGCOLORS:
		if (!svg_bgcolors_ok(arg))
			return bad("bad --bgcolors (yellow, blue, green, grey or "
				   "#rrggbb)", arg);
		c->oo.bgcolors = arg;
		break;
	case OPT_CP: c->oo.palette_map = "palette.map"; break;
	case OPT_HASH: c->oo.no_hash = c->oo.random = false; break;
	case OPT_RANDOM: c->oo.random = true; break;
	case OPT_REVERSE: c->oo.reverse = true; break;
	case 'F':
		if (!parse_uint(arg, &c->hz) || !c->hz || c->hz > 1000000000)
			return bad("bad --hz", arg);
		break;
	case 'D':
		if (!c->record || !parse_uint(arg, &c->seconds))
			return bad("bad --duration", arg);
		break;
	case OPT_SAVERAW:	/* record's alone, as -D, --flush... */
		if (!c->record)
			return bad("only stackfold record takes", "--save-raw");
		c->save_raw = arg;
		break;
	case OPT_COUNTDOWN:
		if (!c->record)
			return bad("only stackfold record takes", "--countdown");
		c->countdown = true;
		break;
	case OPT_WATCH: return parse_watch(c, arg);
	case OPT_SIDEPID: return parse_side(c, arg);
	case OPT_FLUSH:
		if (!c->record || !parse_uint(arg, &c->flush))
			return bad("bad --flush", arg);
		break;
	case OPT_START:
		if (!c->record || !parse_uint(arg, &u) || !u)
			return bad("bad --start-pid", arg);
		c->start_pid = (int)u;
		break;
	default:
		return EXIT_USAGE;
	}
	return -1;
}

/* Options that cancel or make no sense with each other: refused, one line,
 * never one of them silently dropped.  -1 when none, else the exit status. */
static int check_combinations(const struct cli *c)
{
	unsigned f = c->oo.fold_flags;
	const char *why = NULL;
	if ((f & FOLD_USER_ONLY) && (f & FOLD_KERNEL_ONLY))
		why = "-U and -K exclude each other";
	else if ((f & FOLD_DELIMIT) && (f & (FOLD_USER_ONLY | FOLD_KERNEL_ONLY)))
		why = "--delimit marks where user frames end and kernel frames begin: not with -U or -K";
	else if ((f & FOLD_NO_COMM) && (f & (FOLD_PID | FOLD_TID)))
		why = "--no-comm leaves out the process frame that --show-pid and --tid add to";
	else if (c->sort && c->record)
		why = "record takes no --sort: report the raw capture (--save-raw) with it";
	else if ((f & FOLD_LINES) && c->so.no_dwarf)
		why = "--lines needs DWARF, which --no-dwarf leaves out";
	else if (c->diff_before && c->record)
		why = "record takes no --diff";
	else if (c->output && (!*c->output ||
			       c->output[strlen(c->output) - 1] == '/'))
		why = "-o takes a file name or a prefix, not a directory or nothing";
	if (!why)
		return -1;
	fprintf(stderr, "stackfold: %s\n", why);
	return EXIT_USAGE;
}

int cli_getopt_error(int opt, char **argv, const char *cmd)
{
	/* argv[optind - 1] is the option itself for ':' and for a long one;
	 * for a short one in the middle of a cluster ("-xq") it is the
	 * argument before: then optopt names it.  An unknown long option has
	 * optopt 0; a long one given "=ARG" it does not take, its value. */
	const char *arg = argv[optind - 1];
	bool dashdash = arg[0] == '-' && arg[1] == '-';
	if (dashdash && (opt == ':' || !optopt || strchr(arg, '=') ||
			 optopt > 127)) {	/* a long option, as typed */
		const char *eq = strchr(arg, '=');
		int n = eq ? (int)(eq - arg) : (int)strlen(arg);
		fprintf(stderr, "stackfold: %s%.*s: %s (see --help)\n", cmd, n,
			arg, opt == ':' ? "needs an argument" : eq ?
			"unknown, ambiguous, or takes no argument" :
			"unknown or ambiguous option");
	} else if (optopt > ' ' && optopt < 127) {
		fprintf(stderr, "stackfold: %s-%c: %s (see --help)\n", cmd, optopt,
			opt == ':' ? "needs an argument" : "unknown option");
	} else {
		fprintf(stderr, "stackfold: %sunknown option in '%s' (see --help)\n",
			cmd, arg);
	}
	return EXIT_USAGE;
}

int cli_parse(struct cli *c, bool record, int argc, char **argv)
{
	memset(c, 0, sizeof(*c));
	c->record = record;
	c->formats[0] = out_format_find("folded");
	c->nformats = 1;
	c->oo.provenance = false;	/* --provenance: asked for */
	optind = 1;
	opterr = 0;	/* cli_getopt_error() says it, getopt names argv[0] */
	const char *shorts = record ? "+:f:o:p:UKdqvhVF:D:" : ":f:o:p:UKdqvhVF:";
	int opt;
	while ((opt = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		if (opt == 'h') {
			cli_usage(stdout, record);
			return EXIT_OK;
		}
		if (opt == 'V') {
			cli_version(stdout);
			return EXIT_OK;
		}
		if (opt == OPT_LIST)
			return cli_list(stdout, optarg);
		if (opt == '?' || opt == ':')
			return cli_getopt_error(opt, argv, record ? "record: " : "");
		int r = parse_one(c, opt, optarg);
		if (r >= 0)
			return r;
	}
	c->inputs = argv + optind;
	c->ninputs = argc - optind;
	if (c->quiet)	/* -q wins over -v, wherever given */
		c->verbose = false;
	int st = check_combinations(c);
	if (st >= 0)
		return st;
	if (c->nformats > 1 && (!c->output || !strcmp(c->output, "-"))) {
		fprintf(stderr, "stackfold: several formats need -o PREFIX\n");
		return EXIT_USAGE;
	}
	if (c->diff_before) {
		if (c->ninputs != 2) {
			fprintf(stderr, "stackfold: --diff takes two inputs: BEFORE AFTER\n");
			return EXIT_USAGE;
		}
		c->diff_before = c->inputs[0];
		c->diff_after = c->inputs[1];
		/* the top table and pprof have no form for two profiles: they
		 * would show AFTER alone */
		for (unsigned i = 0; i < c->nformats; i++) {
			const struct out_format *f = c->formats[i];
			if (!(f->flags & OUT_DIFF)) {
				fprintf(stderr, "stackfold: --diff writes svg and "
					"folded only, not %s%s\n", f->name,
					f->no_diff ? f->no_diff : "");
				return EXIT_USAGE;
			}
		}
	}
	/* Names only (folded, top, SVG): no line tables to decode. */
	bool lines = c->oo.fold_flags & FOLD_LINES;
	for (unsigned i = 0; i < c->nformats; i++)
		lines = lines || (c->formats[i]->flags & OUT_LINES);
	c->so.no_lines = !lines;
	return -1;
}

void cli_outputs(const struct cli *c, struct out_dest *outs,
		 char paths[][4096])
{
	for (unsigned i = 0; i < c->nformats; i++) {
		outs[i].fmt = c->formats[i];
		if (!c->output || strcmp(c->output, "-") == 0) {
			snprintf(paths[i], 4096, "-");	/* one format: cli_parse() */
		} else if (c->record && (c->formats[i]->flags & OUT_SHOWN)) {
			snprintf(paths[i], 4096, "-");	/* the table is shown */
		} else if (c->nformats == 1 && !c->record) {
			snprintf(paths[i], 4096, "%s", c->output);
		} else {
			const char *sfx = c->formats[i]->suffix;
			if (c->oo.pprof_no_gzip && c->formats[i]->plain_suffix)
				sfx = c->formats[i]->plain_suffix; /* what it holds */
			snprintf(paths[i], 4096, "%s%s", c->output, sfx);
		}
		outs[i].path = paths[i];
	}
}
