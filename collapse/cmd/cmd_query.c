/*
 * cmd_query.c - `stackfold query URL --from T0 --to T1 [FILTERS] [-o FILE]`:
 * the folded stacks of the windows a store holds (scripts/flame --from
 * clickhouse://...).
 *
 * ClickHouse sums the counts per stack (its comm and frames), and per pid
 * too with --by-pid (store/clickhouse.h); the rows become a profile of
 * named frames, folded by the code that writes a window's .folded (comm
 * first, or comm-PID; the fold's ordering and escaping), so the same
 * windows give the same bytes from the store as from their files.
 * --meta FILE gets one line "windows=N samples=N KEY=N..." (the windows'
 * loss counters summed), for the flame graph's subtitle.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "cmd/cli.h"
#include "cmds.h"
#include "model/fold.h"
#include "output/out.h"
#include "model/profile.h"
#include "store/clickhouse.h"
#include "store/labels.h"

/* A query's whole answer: a day of ten hosts takes some 20 s. */
#define QUERY_TIMEOUT_S 60

struct qopts {
	struct store_url url;
	struct ch_query q;
	const char *out, *meta, *auth, *cacert;
	uint32_t pids[CLI_MAX_WATCH];
	unsigned timeout_s;	/* --timeout */
	struct labels labels;	/* --label: checked as the pusher's */
};

static void usage(FILE *f)
{
	fputs("usage: stackfold query clickhouse://[USER@]HOST:PORT/DATABASE\n"
	      "                       --from SECONDS --to SECONDS [--host NAME]\n"
	      "                       [--comm NAME] [--pid PID[,PID...]]\n"
	      "                       [--label KEY=VALUE]...\n"
	      "                       [--by-pid] [--push-auth FILE] [-o FILE]\n"
	      "                       [--cacert FILE] [--meta FILE]\n"
	      "                       [--timeout SECONDS]\n"
	      "Folded stacks (comm first) of the windows that start in [--from,\n"
	      "--to) (UTC seconds since the epoch), summed by ClickHouse.\n"
	      "  --by-pid      a stack per process: comm-PID first\n"
	      "  --label K=V   windows pushed with this label (repeatable: each\n"
	      "                key must match; one key given again: any of its\n"
	      "                values, --label team=a --label team=b)\n"
	      "  --timeout S   give up when the store has not answered in S\n"
	      "                seconds (default 60)\n"
	      "  --cacert FILE verify a clickhouses:// store against the CA\n"
	      "                certificates of this PEM file only\n"
	      "  --meta FILE   write \"windows=N samples=N KEY=N...\" (losses) there\n"
	      "Exit status: 0 ok; 1 usage; 2 no window in the range; 4 the store\n"
	      "failed or an output could not be written.\n", f);
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return *s && !*end && !errno;
}

/* --cacert: for an HTTPS store only (with clickhouse:// the rows would
 * come in clear, whatever the CA).  -1 or EXIT_USAGE (said). */
static int parse_cacert(struct qopts *o)
{
	struct sf_err e = { "" };
	if (!o->url.tls) {
		fprintf(stderr, "stackfold: query: --cacert needs a clickhouses:// "
			"store, not %s\n", o->url.text);
		return EXIT_USAGE;
	}
	if (store_url_cacert(&o->url, o->cacert, &e)) {
		fprintf(stderr, "stackfold: query: --cacert: %s\n", e.msg);
		return EXIT_USAGE;
	}
	return -1;
}

static int parse(struct qopts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "host", required_argument, NULL, 'H' },
		{ "comm", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "push-auth", required_argument, NULL, 'a' },
		{ "cacert", required_argument, NULL, 'C' },
		{ "meta", required_argument, NULL, 'm' },
		{ "by-pid", no_argument, NULL, 'P' },
		{ "label", required_argument, NULL, 'l' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, pids[CLI_MAX_WATCH], st;
	struct sf_err e = { "" };
	bool from = false, to = false;
	uint64_t tmo;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'f': from = parse_u64(optarg, &o->q.from); if (!from) goto bad; break;
		case 't': to = parse_u64(optarg, &o->q.to); if (!to) goto bad; break;
		case 'H': o->q.host = optarg; break;
		case 'c': o->q.comm = optarg; break;
		case 'p':
			if ((st = cli_parse_pids("--pid", optarg, pids, &o->q.npids,
						 CLI_MAX_WATCH)) >= 0)
				return st;
			break;
		case 'a': o->auth = optarg; break;
		case 'C': o->cacert = optarg; break;
		case 'm': o->meta = optarg; break;
		case 'P': o->q.by_pid = true; break;
		case 'l':
			if (labels_add_any(&o->labels, optarg, &e)) {
				fprintf(stderr, "stackfold: query: --label: %s\n", e.msg);
				return EXIT_USAGE;
			}
			break;
		case 'o': o->out = optarg; break;
		case 'T':
			if (!parse_u64(optarg, &tmo) || !tmo || tmo > 86400) {
				fprintf(stderr, "stackfold: query: bad --timeout "
					"'%s' (1 to 86400 seconds)\n", optarg);
				return EXIT_USAGE;
			}
			o->timeout_s = (unsigned)tmo;
			break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return cli_getopt_error(opt, argv, "query: ");
		}
	}
	for (unsigned i = 0; i < o->q.npids; i++)
		o->pids[i] = (uint32_t)pids[i];
	o->q.pids = o->pids;
	o->q.labels = &o->labels;
	if (optind != argc - 1 || !from || !to || o->q.from >= o->q.to) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (store_url_parse(argv[optind], &o->url, &e) ||
	    o->url.kind != STORE_CLICKHOUSE ||
	    (o->auth && store_url_auth_file(&o->url, o->auth, &e))) {
		fprintf(stderr, "stackfold: query: %s\n", e.msg[0] ? e.msg :
			"only clickhouse:// and clickhouses:// stores can be queried");
		return EXIT_USAGE;
	}
	if (!o->url.tls && o->url.password[0])
		fprintf(stderr, "stackfold: query: warning: %s: the password goes "
			"over plain HTTP, to whatever listens on that port (use "
			"clickhouses:// with --cacert, or a port only root can "
			"bind; docs/security.md)\n", o->url.text);
	return o->cacert ? parse_cacert(o) : -1;
bad:
	fprintf(stderr, "stackfold: query: bad time '%s' (seconds since the epoch)\n",
		optarg);
	return EXIT_USAGE;
}

/* One row: a sample of named frames (leaf first in the profile). */
static int add_row(void *ctx, const char *comm, size_t comm_len, uint32_t pid,
		   const struct win_frame *fr, uint32_t n, uint64_t count)
{
	struct profile *p = ctx;
	uint32_t *locs = malloc((n + 1) * sizeof(*locs));
	if (!locs)
		return -ENOMEM;
	int64_t id = strtab_intern(&p->strs, comm, comm_len);
	for (uint32_t i = 0; id >= 0 && i < n; i++) {
		int64_t l = profile_named_location(p, fr[i].s, fr[i].len, PF_LOC_USER);
		if (l < 0)
			id = l;
		locs[n - 1 - i] = (uint32_t)l;
	}
	struct pf_sample key = { .pid = pid, .comm = (uint32_t)id };
	if (id >= 0)
		id = profile_add_sample_id(p, &key, locs, n, count);
	free(locs);
	return id < 0 ? (int)id : 0;
}

static int write_folded(const char *path, const struct profile *p,
			unsigned flags)
{
	struct sf_err e = { "" };
	struct fold f = { 0 };
	int ret = fold_build(&f, p, flags);
	if (ret) {
		fold_release(&f);
		fprintf(stderr, "stackfold: query: out of memory\n");
		return EXIT_IO;
	}
	struct out_input in = { .prof = p, .fold = &f, .counters = &p->counters };
	struct out_opts oo = { .fold_flags = flags };
	struct atomic_file af;
	if (!path || !strcmp(path, "-")) {
		ret = out_folded_write(stdout, &in, &oo, &e);
		if (!ret && fflush(stdout))
			ret = sf_err_set(&e, errno, "write '<stdout>': %s", strerror(errno));
	} else if (!(ret = atomic_open(&af, path, &e))) {
		ret = out_folded_write(af.fp, &in, &oo, &e);
		if (ret)
			atomic_abort(&af);
		else
			ret = atomic_commit(&af, &e);
	}
	fold_release(&f);
	if (ret)
		fprintf(stderr, "stackfold: query: %s\n", e.msg);
	return ret ? EXIT_IO : EXIT_OK;
}

static int write_meta(const char *path, uint64_t nwin, uint64_t samples,
		      const uint64_t loss[WIN_NLOSS], uint64_t missing)
{
	struct sf_err e = { "" };
	struct atomic_file af;
	if (atomic_open(&af, path, &e)) {
		fprintf(stderr, "stackfold: query: %s\n", e.msg);
		return EXIT_IO;
	}
	fprintf(af.fp, "windows=%" PRIu64 " samples=%" PRIu64, nwin, samples);
	for (int i = 0; i < WIN_NLOSS; i++)
		fprintf(af.fp, " %s=%" PRIu64, win_loss_key(i), loss[i]);
	fprintf(af.fp, " missing_stacks=%" PRIu64 "\n", missing);
	if (atomic_commit(&af, &e)) {
		fprintf(stderr, "stackfold: query: %s\n", e.msg);
		return EXIT_IO;
	}
	return EXIT_OK;
}

int cmd_query(int argc, char **argv)
{
	struct qopts o = { .timeout_s = QUERY_TIMEOUT_S };
	int st = parse(&o, argc, argv);
	if (st >= 0)
		return st;
	struct ch_store s;
	struct profile p;
	struct sf_err e = { "" };
	uint64_t nwin = 0, samples = 0, loss[WIN_NLOSS] = { 0 }, missing = 0;
	if (http_global_init(&e)) {
		fprintf(stderr, "stackfold: query: %s\n", e.msg);
		return EXIT_ENV;
	}
	if (ch_store_init(&s, &o.url, 0) || profile_init(&p)) {
		fprintf(stderr, "stackfold: query: out of memory\n");
		return EXIT_IO;
	}
	s.query_timeout_s = (long)o.timeout_s;
	int ret = ch_query_windows(&s, &o.q, &nwin, &samples, loss, &e);
	if (!ret && nwin)
		ret = ch_query_stacks(&s, &o.q, add_row, &p, &missing, &e);
	if (ret) {
		fprintf(stderr, "stackfold: query: %s: %s%s%s\n", o.url.text,
			ret == -EACCES ? "authentication failed: " : "",
			ret == -ENOMEM && !e.msg[0] ? "out of memory" : e.msg,
			ret == -ETIMEDOUT ? " (--timeout)" : "");
		st = EXIT_IO;
	} else if (!nwin) {
		fprintf(stderr, "stackfold: query: no window in %s starts in the range\n",
			o.url.text);
		st = EXIT_BADINPUT;
	} else {
		st = write_folded(o.out, &p, o.q.by_pid ? FOLD_PID : 0);
		if (missing)	/* in the output, under that name: said */
			fprintf(stderr, "stackfold: query: %s: %" PRIu64 " sample%s "
				"of stacks missing from %s.stacks, shown as "
				"[missing stack]\n", o.url.text, missing,
				missing == 1 ? "" : "s", o.url.path);
		if (!st && o.meta)
			st = write_meta(o.meta, nwin, samples, loss, missing);
	}
	profile_release(&p);
	ch_store_release(&s);
	return st;
}
