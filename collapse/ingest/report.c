/* report.c - see report.h. */
#include "ingest/report_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/pyframes.h"
#include "model/losses.h"

/*
 * Entries of maps without stacks (@[comm] = count()) are samples only when
 * the input has no stack map at all; otherwise they count something else
 * (e.g. a per-comm total beside the stacks) and adding them would count
 * samples twice.  So they wait for the end of the input, merged by key so
 * that memory grows with the keys, not the lines; once the input has a
 * stack map they are counted as ignored at once.  An entry with only empty
 * parts ("@m[]: N") is an empty stack when map m has stacks with frames
 * (bpftrace prints an empty stack as nothing), else a string key that is
 * empty: it waits too, for the end of the input, which tells.
 */
static int64_t intern_len(struct report *r, const char *s, size_t len)
{
	return s ? strtab_intern(&r->prof.strs, s, len) : 0;
}

static bool same_key(const struct report_deferred *a,
		     const struct report_deferred *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->image == b->image &&
	       a->has_pid == b->has_pid && a->has_tid == b->has_tid &&
	       a->empty_only == b->empty_only && a->comm == b->comm &&
	       a->map == b->map;
}

static uint64_t key_hash(const struct report_deferred *d)
{
	uint32_t k[8] = { d->pid, d->tid, d->image, d->comm, d->map,
			  d->has_pid, d->has_tid, d->empty_only };
	return sf_hash_bytes(k, sizeof(k), 0x5f) | 1;
}

/* Add count to *sum: -EOVERFLOW past INT64_MAX, as sample counts are. */
static int add_count(uint64_t *sum, uint64_t count)
{
	if (count > (uint64_t)INT64_MAX - *sum)
		return -EOVERFLOW;
	*sum += count;
	return 0;
}

static int defer_record(struct report *r, const struct bt_record *rec)
{
	if (!rec->empty_only && r->in.stack_records)
		return add_count(&r->in.nonstack_ignored, rec->count);
	int64_t comm = intern_len(r, rec->comm, rec->comm_len);
	int64_t map = rec->empty_only ? intern_len(r, rec->map, rec->map_len) : 0;
	if (comm < 0 || map < 0)
		return -ENOMEM;
	struct report_deferred d = {
		.pid = rec->pid, .tid = rec->tid, .image = rec->image,
		.has_pid = rec->has_pid, .has_tid = rec->has_tid,
		.empty_only = rec->empty_only, .comm = (uint32_t)comm,
		.map = (uint32_t)map, .count = rec->count };
	bool found;
	/* room first: a key must not enter the index without its record */
	if (sf_grow((void **)&r->deferred, &r->deferred_cap, r->ndeferred + 1,
		    sizeof(*r->deferred)))
		return -ENOMEM;
	r->deferred_idx.valsz = sizeof(uint32_t);
	uint32_t *ix = u64map_slot(&r->deferred_idx, key_hash(&d), &found);
	if (!ix)
		return -ENOMEM;
	if (found && same_key(&r->deferred[*ix - 1], &d))
		return add_count(&r->deferred[*ix - 1].count, d.count);
	r->deferred[r->ndeferred++] = d;
	if (!found)	/* (a hash shared with another key: not merged) */
		*ix = (uint32_t)r->ndeferred;
	return 0;
}

/* Is map (a string id) a stack map: one of stackfold's own programs'
 * (bt/ programs: @stackfold, @stackfold_a, @stackfold_b, which take turns, so
 * one may hold only entries whose stacks are both empty), or one that had
 * a stack with frames? */
static bool stack_map(struct report *r, uint32_t map)
{
	const char *name = map ? profile_str(&r->prof, map) : NULL;
	return name && (protocol_own_stem(name) ||
			u64map_find(&r->stack_maps, map));
}

static int note_stack_map(struct report *r, const struct bt_record *rec)
{
	int64_t map = intern_len(r, rec->map, rec->map_len);
	bool found;
	r->stack_maps.valsz = 1;	/* a set: the value is not used */
	if (map <= 0)
		return 0;
	if (!u64map_slot(&r->stack_maps, (uint64_t)map, &found))
		return -ENOMEM;
	/* a one-liner's maps (stackfold's own take turns: one capture) */
	if (!found && !protocol_own_stem(profile_str(&r->prof, (uint32_t)map)))
		r->in.stack_maps++;
	return 0;
}

static int flush_deferred(struct report *r)
{
	int ret = 0;
	for (size_t i = 0; !ret && i < r->ndeferred; i++) {
		const struct report_deferred *d = &r->deferred[i];
		bool empty_stack = d->empty_only && stack_map(r, d->map);
		if (!empty_stack && r->in.stack_records) {
			ret = add_count(&r->in.nonstack_ignored, d->count);
			continue;
		}
		const char *comm = d->comm ? profile_str(&r->prof, d->comm) : NULL;
		struct bt_record rec = { .has_pid = d->has_pid, .has_tid = d->has_tid,
					 .pid = d->pid, .tid = d->tid,
					 .image = d->image, .comm = comm,
					 .comm_len = comm ? strlen(comm) : 0,
					 .had_stack = empty_stack,
					 .count = d->count };
		r->in.stack_records += empty_stack;
		if (empty_stack)
			sf_sat_addto(&r->prof.counters.empty_stacks, d->count);
		ret = resolver_record(r->res, &rec);
	}
	r->ndeferred = 0;
	u64map_release(&r->deferred_idx);
	return ret;
}

static int on_record(void *ctx, const struct bt_record *rec)
{
	struct report *r = ctx;
	r->last_sample = 0;
	r->last_truncated = rec->maybe_truncated;
	r->last_python = r->python && rec->nints > 0;
	r->last_own = protocol_own_map(rec->map, rec->map_len);
	if (!rec->had_stack || rec->empty_only)
		return defer_record(r, rec);
	if (note_stack_map(r, rec))
		return -ENOMEM;
	r->in.stack_records++;
	if (!rec->nframes)	/* "@[, , demo]": stack parts, all empty */
		sf_sat_addto(&r->prof.counters.empty_stacks, rec->count);
	int64_t id = resolver_record_id(r->res, rec);
	if (id < 0)
		return (int)id;
	r->last_sample = (uint32_t)id;
	return 0;
}

static int on_maps(void *ctx, uint32_t pid, uint32_t image, const char *text,
		   size_t len, size_t line)
{
	struct report *r = ctx;
	struct sym_session *s = report_session(r, &r->err);
	struct sym_origin at = { .src = r->in_name, .line = line };
	if (!s || protocol_image_capped(image))
		return 0;	/* symbolization degrades; frames stay honest */
	return sym_process_load_maps(s, (int)pid, image, text, len, &at,
				     &r->err) == -ENOMEM
		       ? -ENOMEM : 0;
}

void report_map_unsaved(struct report *r, uint32_t pid, uint32_t image)
{
	bool found = false;
	if (!pid || (r->sym && sym_process_known(r->sym, (int)pid, image)))
		return;	/* not a process, or its image has a map after all */
	r->unsaved.valsz = 1;	/* a set: the value is not used */
	if (u64map_slot(&r->unsaved, protocol_pid_field(pid, image), &found) && found)
		return;
	if (protocol_image_capped(image))	/* never snapshotted: several programs */
		r->prof.counters.exec_capped++;
	else
		r->prof.counters.maps_unsaved++;	/* out of memory: may count twice */
}


/* "#pid PID COMM" in a raw capture: its map, if saved, came before. */
static int on_first_sample(void *ctx, uint32_t pid, uint32_t image,
			   const char *comm, size_t comm_len)
{
	struct report *r = ctx;
	(void)comm;
	(void)comm_len;
	if (!r->capture || r->live_snapshots || !pid)
		return 0;
	if (report_session(r, NULL))
		report_map_unsaved(r, pid, image);
	return 0;
}

/* A capture has a handful of "#meta" text values; each new one is
 * interned for good, so an input of ever new values (2 million "#meta
 * host" lines) stops taking them after 64 new ones.  A value seen before costs nothing and is not counted: over
 * concatenated captures the last one wins, as before. */
#define REPORT_META_MAX 64

/* *field = v, interned; unchanged once 64 new values were taken. */
static void meta_str(struct report *r, uint32_t *field, const char *v,
		     size_t len)
{
	size_t before = r->prof.strs.n;
	if (r->in.meta_strs >= REPORT_META_MAX)
		return;
	int64_t id = strtab_intern(&r->prof.strs, v, len);
	*field = id < 0 ? 0 : (uint32_t)id;
	r->in.meta_strs += r->prof.strs.n != before;
}

static int on_meta(void *ctx, const char *k, size_t klen, const char *v,
		   size_t vlen)
{
	struct report *r = ctx;
	struct pf_meta *m = &r->prof.meta;
	uint64_t n = 0;
	bool num = sf_parse_u64(v, vlen, &n);
	/* values pprof cannot carry (int64 nanoseconds, a period of at
	 * least 1 ns) are left out, as if absent */
	bool ns = num && n <= INT64_MAX;
	switch (protocol_meta_key(k, klen)) {
	case PROTOCOL_META_HZ:
		if (num && n >= 1 && n <= 1000000000)
			r->in.hz = n;
		break;
	case PROTOCOL_META_START_NS:
		if (ns)
			r->in.start_ns = n;
		break;
	case PROTOCOL_META_DURATION_NS:
		if (ns)
			r->in.duration_ns = n;
		break;
	case PROTOCOL_META_BPFTRACE:
		meta_str(r, &m->bpftrace_version, v, vlen);
		break;
	case PROTOCOL_META_KERNEL:
		meta_str(r, &m->kernel_release, v, vlen);
		break;
	case PROTOCOL_META_HOST:
		meta_str(r, &m->hostname, v, vlen);
		break;
	case PROTOCOL_META_CMDLINE:
		meta_str(r, &m->cmdline, v, vlen);
		break;
	case PROTOCOL_META_LOST:	/* a loss counter's: the table's */
	case PROTOCOL_META_STACKID_ERRORS:
	case PROTOCOL_META_SIDEBAND_LOST:
		if (num && loss_by_meta(k, klen) < LOSS_N)
			sf_sat_addto(loss_ptr(&r->prof.counters,
					      loss_by_meta(k, klen)), n);
		break;
	case PROTOCOL_META_ENDED:	/* "signal 9": stackfold record's */
		r->prof.counters.captures_cut++;
		break;
	case PROTOCOL_META_UNKNOWN:
		break;
	}
	return 0;
}

/* report_init() and report_init_session(): s, when given, is the caller's
 * session (o->so then unused), and the snapshots are refreshed on the
 * caller's schedule. */
static int report_setup(struct report *r, const struct report_opts *o,
			struct sym_session *s)
{
	static const struct report_opts none;
	if (!o)
		o = &none;
	memset(r, 0, sizeof(*r));
	if (o->so && !s)
		r->sym_opts = *o->so;
	r->lazy_snapshot = o->lazy_snapshot;
	r->fold_direct = o->fold_direct;
	r->offsets = o->offsets;
	r->keep_refreshed = o->keep_refreshed;
	r->live_snapshots = o->live_snapshots;
	r->python_live = o->python_live;
	r->perfscript_flags = o->perfscript_flags;
	r->max_stacks = o->max_stacks;
	r->sym = s;
	r->sym_borrowed = s != NULL;
	r->refresh_maps = o->lazy_snapshot && !s;
	if (profile_init(&r->prof) || reccache_init(&r->rc) ||
	    fold_init(&r->direct))
		return -ENOMEM;
	r->res = resolver_new(&r->prof, s, o->lazy_snapshot);
	if (!r->res)
		return -ENOMEM;
	resolver_keep_refreshed(r->res, r->keep_refreshed);
	resolver_set_offsets(r->res, r->offsets);
	return 0;
}

int report_init(struct report *r, const struct report_opts *o)
{
	return report_setup(r, o, NULL);
}

int report_init_session(struct report *r, struct sym_session *s,
			const struct report_opts *o)
{
	return report_setup(r, o, s);
}

void report_release(struct report *r)
{
	dwarfin_release(&r->dw);
	bt_parser_free(r->bt);
	resolver_free(r->res);
	if (!r->sym_borrowed)
		sym_session_free(r->sym);
	profile_release(&r->prof);
	reccache_release(&r->rc);
	fold_release(&r->direct);
	free(r->deferred);
	free(r->held);
	u64map_release(&r->unsaved);
	u64map_release(&r->deferred_idx);
	u64map_release(&r->stack_maps);
	memset(r, 0, sizeof(*r));
}

static struct report *report_alloc(const struct report_opts *o,
				   struct sym_session *s)
{
	struct report *r = malloc(sizeof(*r));
	if (r && report_setup(r, o, s)) {
		report_free(r);
		return NULL;
	}
	return r;
}

struct report *report_new(const struct report_opts *o)
{
	return report_alloc(o, NULL);
}

struct report *report_new_session(struct sym_session *s,
				  const struct report_opts *o)
{
	return report_alloc(o, s);
}

void report_free(struct report *r)
{
	if (!r)
		return;
	report_release(r);
	free(r);
}

struct sym_session *report_session(struct report *r, struct sf_err *err)
{
	if (r->sym)
		return r->sym;
	r->sym = sym_session_new(&r->sym_opts, err);
	if (!r->sym)
		return NULL;
	/* rebuild the resolver so it uses the session; caches restart */
	struct resolver *nr = resolver_new(&r->prof, r->sym, r->lazy_snapshot);
	if (nr) {
		resolver_set_refresh(nr, r->refresh_maps);
		resolver_keep_refreshed(nr, r->keep_refreshed);
		resolver_set_offsets(nr, r->offsets);
		if (r->py_shared)
			resolver_use_python(nr, r->py_shared);
		else if (r->python &&
			 resolver_set_python(nr, r->py_off, r->python_live)) {
			resolver_free(nr);
			return r->sym;	/* (the old resolver stays) */
		}
		resolver_free(r->res);
		r->res = nr;
	}
	return r->sym;
}

bool report_next_refreshed(struct report *r, int *pid, uint32_t *image)
{
	return resolver_next_refreshed(r->res, pid, image);
}

void report_begin_input(struct report *r, const char *name)
{
	r->in_name = name;
	memset(&r->in, 0, sizeof(r->in));
	u64map_release(&r->stack_maps);	/* which maps have stacks: per input */
	r->capture = false;
	r->samples_before = r->prof.counters.samples;
	r->nheld = r->held_lines = r->first_held = 0;
	bt_parser_free(r->bt);
	r->bt = NULL;
	/* the same text in another input may come from other binaries */
	reccache_release(&r->rc);
	reccache_init(&r->rc);
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* "#python ...": the keys that follow end in Python frames, named with
 * these offsets (a malformed line: counted, and the frames unnamed). */
static int on_python(void *ctx, const char *line, size_t len)
{
	struct report *r = ctx;
	if (!pyframes_parse_line(line, len, r->py_off)) {
		r->prof.counters.unparsable_lines++;
		return 0;
	}
	r->python = true;
	if (r->py_shared)	/* the caller's namer, for these offsets */
		return 0;
	return resolver_set_python(r->res, r->py_off, r->python_live);
}

void report_use_python(struct report *r, struct pyframes *py)
{
	r->python = true;
	r->py_shared = py;
	resolver_use_python(r->res, py);
}

void report_python_flushed(struct report *r)
{
	if (r->python && r->res)
		resolver_python_forget_code(r->res);
}

static int start_bpftrace(struct report *r)
{
	struct bt_callbacks cb = { .ctx = r, .record = on_record,
				   .maps = on_maps, .first_sample = on_first_sample,
				   .meta = on_meta, .python = on_python };
	r->bt = bt_parser_new(&cb);
	if (!r->bt)
		return -ENOMEM;
	r->in.fmt = REPORT_BPFTRACE;
	/* raw addresses need a symbolizer: create the session up front */
	report_session(r, &r->err);
	return 0;
}

/* Does the stack end in " DIGITS"?  Differential folded text ("a;b 10 12":
 * difffolded.pl's, or `-f folded --diff`) has two counts on every line.
 * It is not read as such: a frame name may end in a number too (flamegraph.pl
 * takes it for a count), and stackfold's own folded text must read back the
 * same; an input of such lines only is reported instead. */
static bool ends_in_number(const char *s, size_t slen)
{
	const char *e = s + slen, *q = e;
	while (q > s && q[-1] >= '0' && q[-1] <= '9')
		q--;
	return q < e && q - s >= 2 && (q[-1] == ' ' || q[-1] == '\t');
}

/* "a;b;c 12" (a trailing \r and spaces are tolerated). */
static int folded_line(struct report *r, const char *s, size_t len)
{
	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len)
		return 0;
	const char *sp = s + len;
	while (sp > s && sp[-1] != ' ' && sp[-1] != '\t')
		sp--;
	uint64_t count;
	if (sp == s || !sf_parse_u64(sp, (size_t)(s + len - sp), &count)) {
		r->in.unparsable++;
		if (!r->in.first_bad_line)
			r->in.first_bad_line = r->in.lines;
		return 0;
	}
	/* exactly one blank separates the count, as in flamegraph.pl's
	 * `^(.*)\s+?(\d+)$`: a frame name may end in blanks */
	size_t slen = (size_t)(sp - 1 - s);
	r->in.folded_lines++;
	r->in.two_counts += ends_in_number(s, slen);
	if (!count)
		return 0;
	if (!r->fold_direct) {
		int ret = resolver_folded(r->res, s, slen, count);
		if (!ret)
			r->in.samples += count;
		return ret;
	}
	const struct out_sink *k = &r->sink;
	uint64_t total = k->line ? k->total(k->ctx) : r->direct.total;
	if (count > INT64_MAX || total > INT64_MAX - count)
		return -EOVERFLOW;	/* totals stay within pprof's int64 */
	int ret = k->line ? k->line(k->ctx, s, slen, count) :
		  fold_add_frames(&r->direct, s, slen, count);
	if (!ret)
		r->in.samples += count;
	return ret == -EDOM ? -EAGAIN : ret;
}

/* reccache flags: the stack hit the depth limit; bits 1-2, the record's
 * own map (protocol_own_map() + 1, 0 for none) */
enum { HIT_TRUNCATED = 1, HIT_OWN_SHIFT = 1 };

static int bt_feed(void *ctx, const char *line, size_t len)
{
	struct report *r = ctx;
	return bt_parser_line(r->bt, line, len);
}

/* The parser's line numbers are the input's when n lines are about to be
 * fed and the last of them is the current one (the record cache answers
 * repeated entries without the parser, and replays new ones later). */
static void sync_line(struct report *r, size_t n)
{
	bt_parser_set_line(r->bt, r->in.lines - n);
}

static struct sym_session *dw_session(void *ctx)
{
	struct report *r = ctx;
	return report_session(r, &r->err);
}

/* --call-graph dwarf's records (flushed maps, or #U, #K, #W): unwound
 * (ingest/dwarfin.h), then named as any record. */
static int dwarf_line(struct report *r, const char *line, size_t len)
{
	if (!r->dw.rec && dwarfin_init(&r->dw, dw_session, on_record, r,
				       &r->prof.counters))
		return -ENOMEM;
	return dwarfin_line(&r->dw, line, len, (size_t)r->in.lines);
}

/* bpftrace text: repeated entries go through the record cache; new ones,
 * and everything that is not a plain entry, through the parser. */
static int bt_line(struct report *r, const char *line, size_t len)
{
	struct reccache_entry hit;
	/* (a '#' or '@' first, or a dwarf capture under way: the test costs
	 * the default capture's frame lines one compare) */
	if ((r->dw.rec || (len && (line[0] == '#' || line[0] == '@'))) &&
	    dwarfin_wants(&r->dw, line, len) && bt_parser_idle(r->bt) &&
	    !reccache_entry_open(&r->rc)) {
		int ret = dwarf_line(r, line, len);
		if (ret != 1)
			return ret;	/* else it ended a kernel stack: on */
	}
	uint64_t count = 0;
	sync_line(r, 1);
	if (bt_parser_side_line(r->bt, line, len))
		return 0;	/* counted; an open entry goes on */
	int ret, res = reccache_line(&r->rc, line, len, &hit, &count);
	switch (res) {
	case RC_CONSUMED:
		return 0;
	case RC_HIT:	/* what on_record would do, from what it did before */
		r->in.stack_records++;
		if (hit.flags & HIT_TRUNCATED)
			r->prof.counters.truncated_stacks += count;
		bt_parser_add_own(r->bt, (int)(hit.flags >> HIT_OWN_SHIFT) - 1, count);
		return profile_sample_add_count(&r->prof, hit.sample, count);
	case RC_MISS: {	/* the buffer ends with this line */
		r->last_sample = 0;
		r->last_truncated = false;
		r->last_python = false;
		r->last_own = -1;
		sync_line(r, reccache_lines(&r->rc));
		uint64_t bad = bt_parser_counters(r->bt)->unparsable_lines;
		ret = reccache_replay(&r->rc, bt_feed, r);
		/* a record with a line the parser refused is not learnt: each
		 * copy goes through the parser, and each counts its lines */
		bool clean = bt_parser_counters(r->bt)->unparsable_lines == bad;
		return ret ? ret : reccache_learn(&r->rc, clean && !r->last_python ? r->last_sample : 0,
						  (r->last_truncated ? HIT_TRUNCATED : 0) |
						  (uint32_t)(r->last_own + 1) << HIT_OWN_SHIFT);
	}
	case RC_REPLAY:	/* the buffer, then this line */
		sync_line(r, reccache_lines(&r->rc) + 1);
		ret = reccache_replay(&r->rc, bt_feed, r);
		reccache_discard(&r->rc);
		return ret ? ret : bt_parser_line(r->bt, line, len);
	case RC_PASS:	/* synced above */
		return bt_parser_line(r->bt, line, len);
	default:
		return res;	/* -ENOMEM */
	}
}

bool report_between_records(const struct report *r)
{
	return !r->bt || (!reccache_entry_open(&r->rc) && bt_parser_idle(r->bt) &&
			  !dwarfin_wants(&r->dw, "", 0));
}


/* Lines neither format's (a bpftrace program's printf text, as `bpftrace
 * -q` puts first) wait for one that tells, up to this many: then folded
 * text, each of them an unparsable line. */
#define UNDECIDED_MAX 1000

/* Does the line end in a count, as folded text does? */
static bool folded_like(const char *s, size_t len)
{
	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	size_t d = len;
	while (d && s[d - 1] >= '0' && s[d - 1] <= '9')
		d--;
	return d < len && d > 0 && (s[d - 1] == ' ' || s[d - 1] == '\t');
}

/* The lines waited on count as unparsable ones of the format found. */
static void undecided_unparsable(struct report *r)
{
	r->in.unparsable += r->in.undecided;
	if (r->in.first_undecided && (!r->in.first_bad_line ||
				      r->in.first_undecided < r->in.first_bad_line))
		r->in.first_bad_line = r->in.first_undecided;
}

/*
 * A folded-looking line without ';' ("sampling pid 1234", a bpftrace
 * program's printf, or a one-frame stack, "[no stack] 5") does not tell
 * the format: it is held, up to HELD_MAX bytes, for a line that does, so
 * that a bpftrace capture after it is not read as folded text.
 */
#define HELD_MAX (64u << 10)

/* Each held line is its line number (a uint64_t), then "LINE\n". */
static int hold(struct report *r, const char *line, size_t len)
{
	uint64_t no = r->in.lines;
	size_t n = sizeof(no) + len + 1;
	if (sf_grow((void **)&r->held, &r->heldcap, r->nheld + n, 1))
		return -ENOMEM;
	memcpy(r->held + r->nheld, &no, sizeof(no));
	memcpy(r->held + r->nheld + sizeof(no), line, len);
	r->held[r->nheld + n - 1] = '\n';
	r->nheld += n;
	if (!r->held_lines++)
		r->first_held = r->in.lines;
	return 0;
}

/* Folded text: the held lines are its first, read at their own line
 * numbers (an unparsable one, or an error, is said where it is). */
static int to_folded(struct report *r)
{
	uint64_t now = r->in.lines, no;
	int ret = 0;
	r->in.fmt = REPORT_FOLDED;
	for (size_t at = 0; !ret && at < r->nheld;) {
		memcpy(&no, r->held + at, sizeof(no));
		const char *s = r->held + at + sizeof(no);
		const char *nl = memchr(s, '\n', r->nheld - at - sizeof(no));
		r->in.lines = no;
		ret = folded_line(r, s, (size_t)(nl - s));
		at = (size_t)(nl - r->held) + 1;
	}
	undecided_unparsable(r);	/* after: the first bad line is the
					 * least of both */
	if (!ret)	/* an error (a total past INT64_MAX) names its line */
		r->in.lines = now;
	r->nheld = r->held_lines = 0;
	return ret ? ret : 1;
}

/* Which format the input is: 1 decided, 0 not yet (the line is waited
 * on), or an error of folded_line() (-ENOMEM...). */
static int decide(struct report *r, const char *line, size_t len)
{
	if (blank(line, len))
		return 0;
	if (bt_line_is_bpftrace(line, len)) {	/* the held lines were text */
		if (r->held_lines && (!r->in.first_undecided ||
				      r->first_held < r->in.first_undecided))
			r->in.first_undecided = r->first_held;
		r->in.undecided += r->held_lines;
		r->nheld = r->held_lines = 0;
		if (start_bpftrace(r))
			return -ENOMEM;
		r->capture = len >= strlen(PROTOCOL_HEADER_STEM) &&
			memcmp(line, PROTOCOL_HEADER_STEM,
			       strlen(PROTOCOL_HEADER_STEM)) == 0;
		return 1;
	}
	bool fl = folded_like(line, len);
	bool full = r->in.undecided + r->held_lines >= UNDECIDED_MAX;
	/* HELD_MAX counts the lines' text, not their numbers */
	if (fl && !full && !memchr(line, ';', len) &&
	    r->nheld - r->held_lines * sizeof(uint64_t) + len < HELD_MAX)
		return hold(r, line, len);
	if (fl || full)
		return to_folded(r);
	if (!r->in.undecided++)
		r->in.first_undecided = r->in.lines;
	return 0;
}

/* "%20" and the like of a provenance value, decoded in place */
static size_t pct_decode(char *v, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned x;
		if (v[i] == '%' && i + 2 < n + 0 && sscanf(v + i + 1, "%2x", &x) == 1) {
			v[o++] = (char)x;
			i += 2;
		} else {
			v[o++] = v[i];
		}
	}
	return o;
}

/* The provenance line of stackfold's folded output (out.h): KEY=VALUE
 * words, the capture's #meta keys and its loss counters. */
static int provenance(struct report *r, const char *line, size_t len)
{
	char *copy = strndup(line, len);
	if (!copy)
		return -ENOMEM;
	char *save = NULL;
	for (char *w = strtok_r(copy + PROVENANCE_LEN, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '=');
		if (!eq)
			continue;
		size_t klen = (size_t)(eq - w), vlen = pct_decode(eq + 1, strlen(eq + 1));
		uint64_t n;
		bool counter = false;
		for (size_t i = 0; i < LOSS_N; i++)	/* unsymbolized: counted */
			if (i != LOSS_UNSYMBOLIZED_FRAMES &&
			    klen == strlen(loss_table[i].key) &&
			    !memcmp(w, loss_table[i].key, klen) &&
			    sf_parse_u64(eq + 1, vlen, &n)) {
				sf_sat_addto((uint64_t *)((char *)&r->prof.counters +
							  loss_table[i].off), n);
				counter = true;
			}
		if (!counter)	/* hz, start_ns, duration_ns, cmdline... */
			on_meta(r, w, klen, eq + 1, vlen);
	}
	free(copy);
	return 0;
}

int report_line(struct report *r, const char *line, size_t len)
{
	r->in.lines++;
	if (r->in.fmt != REPORT_BPFTRACE && len >= PROVENANCE_LEN &&
	    !memcmp(line, PROVENANCE, PROVENANCE_LEN)) {
		/* only folded text has it: the lines held until the format
		 * was told are read first, as any telling line has them */
		if (r->in.fmt == REPORT_UNKNOWN) {
			int d = to_folded(r);
			if (d < 0)
				return d;
		}
		return provenance(r, line, len);
	}
	if (r->in.fmt == REPORT_UNKNOWN) {
		int d = decide(r, line, len);
		if (d <= 0)
			return d;
	}
	int ret = r->in.fmt == REPORT_FOLDED ? folded_line(r, line, len) :
					       bt_line(r, line, len);
	if (!ret && r->max_stacks && report_unique_stacks(r) > r->max_stacks)
		return -E2BIG;
	return ret;
}

void report_stackid_errors(struct report *r, uint64_t n)
{
	if (r->bt)
		bt_parser_add_stackid_errors(r->bt, n);
}

int report_record(struct report *r, const struct bt_record *rec)
{
	if (r->in.fmt == REPORT_FOLDED)
		return -EINVAL;
	if (r->in.fmt == REPORT_UNKNOWN && start_bpftrace(r))
		return -ENOMEM;
	int ret = on_record(r, rec);
	if (ret)
		return ret;
	bt_parser_add_own(r->bt, r->last_own, rec->count);
	return 0;
}

int report_overlong_line(struct report *r)
{
	/* a line no format takes: a control byte alone, which has no count
	 * (folded text), no '@' or '#' (bpftrace text), and no indentation
	 * that would make it a frame of an open record, which it breaks */
	return report_line(r, PROTOCOL_OVERLONG, 1);
}

/* Frames shown as module+0xOFF or [unknown], weighted by samples. */
static uint64_t count_unsymbolized(const struct profile *p)
{
	uint64_t n = 0;
	for (size_t i = 1; i < p->nsamples; i++) {
		const struct pf_sample *s = &p->samples[i];
		const uint32_t *st = profile_stack(p, s);
		for (uint32_t d = 0; d < s->depth; d++)
			if (!p->locations[st[d]].nlines)
				n += s->count;
	}
	return n;
}

/* The input's rate and times into the profile's: the first rate (a
 * differing one is the caller's to refuse: samples of two rates weigh
 * differently), from the earliest start to the latest end. */
static void join_meta(struct report *r)
{
	struct pf_meta *m = &r->prof.meta;
	const struct report_input_stats *in = &r->in;
	if (in->hz && m->hz && in->hz != m->hz)
		r->in.hz_differs = in->hz;
	else if (in->hz)
		m->hz = in->hz;
	uint64_t end = in->start_ns + in->duration_ns;
	if (!in->start_ns) {
		if (in->duration_ns > m->duration_nanos)
			m->duration_nanos = in->duration_ns;
	} else if (!m->time_nanos) {
		m->time_nanos = in->start_ns;
		m->duration_nanos = in->duration_ns;
	} else {
		uint64_t mend = m->time_nanos + m->duration_nanos;
		if (in->start_ns < m->time_nanos)
			m->time_nanos = in->start_ns;
		m->duration_nanos = (end > mend ? end : mend) - m->time_nanos;
	}
	if (m->duration_nanos > INT64_MAX)	/* pprof's int64 */
		m->duration_nanos = INT64_MAX;
}

int report_end_input(struct report *r, struct report_input_stats *st)
{
	struct pf_counters *c = &r->prof.counters;
	if (r->in.fmt == REPORT_UNKNOWN && r->held_lines) {
		int ret = to_folded(r);	/* folded text of one-frame stacks */
		if (ret < 0)
			return ret;
	}
	if (r->bt) {
		int ret = 0;
		if (reccache_entry_open(&r->rc)) {	/* truncated entry */
			sync_line(r, reccache_lines(&r->rc));
			ret = reccache_replay(&r->rc, bt_feed, r);
			reccache_discard(&r->rc);
		}
		if (!ret)
			ret = bt_parser_finish(r->bt);
		if (!ret)
			ret = flush_deferred(r);
		if (ret)
			return ret;
		const struct bt_counters *bc = bt_parser_counters(r->bt);
		sf_sat_addto(&c->lost_events, bc->lost_events);
		sf_sat_addto(&c->map_full_warnings, bc->map_full_warnings);
		sf_sat_addto(&c->stackid_errors, bc->stackid_errors);
		r->in.unparsable = bc->unparsable_lines;
		r->in.first_bad_line = bc->first_bad_line;
		undecided_unparsable(r);
		r->in.incomplete = bc->incomplete_records;
		r->in.first_incomplete_line = bc->first_incomplete_line;
		r->bt_inputs++;
		if ((ret = dwarfin_finish(&r->dw)))
			return ret;
		/* a dwarf capture counts its own drops (@stackfold_dn_X: partial) */
		c->drops_unknown |= !bc->has_total && !c->dwarf_samples;
		sf_sat_addto(&c->map_dropped, bc->total_dropped);
		sf_sat_addto(&c->over_total, bc->total_over);
	} else if (r->in.fmt == REPORT_UNKNOWN) {	/* never told */
		undecided_unparsable(r);
	}
	join_meta(r);
	c->nonstack_ignored += r->in.nonstack_ignored;
	c->unsymbolized_frames = count_unsymbolized(&r->prof);
	c->unparsable_lines += r->in.unparsable;
	c->incomplete_records += r->in.incomplete;
	if (r->in.fmt != REPORT_FOLDED)
		r->in.samples = c->samples - r->samples_before;
	else
		r->folded_inputs++;
	r->inputs++;
	*st = r->in;
	return 0;
}

uint64_t report_samples(const struct report *r)
{
	return r->prof.counters.samples + r->direct.total + r->handed_total +
	       (r->sink.line ? r->sink.total(r->sink.ctx) : 0);
}

size_t report_unique_stacks(const struct report *r)
{
	return r->prof.nsamples - 1 + fold_stacks(&r->direct) + r->handed_n +
	       (r->sink.line ? r->sink.stacks(r->sink.ctx) : 0);
}

int report_fold(struct report *r, unsigned flags, struct fold *out)
{
	int ret;
	if (r->prof.counters.samples == 0 && r->direct.n) {
		ret = fold_init(out);	/* folded input only: hand it over */
		if (ret)
			return ret;
		struct fold tmp = *out;
		*out = r->direct;
		r->direct = tmp;
		ret = fold_finish(out);
		r->handed_total += out->total;
		r->handed_n += out->n;
		return ret;
	}
	/* the folded inputs' lines join the profile's before the one
	 * fold_finish() */
	ret = fold_init(out);
	if (!ret)
		ret = fold_add_profile(out, &r->prof, flags);
	for (size_t i = 0; !ret && i < r->direct.n; i++)
		ret = fold_add(out, r->direct.lines[i].stack,
			       r->direct.lines[i].len, r->direct.lines[i].count, 0);
	if (!ret)
		ret = fold_finish(out);
	if (ret)
		fold_release(out);	/* out holds nothing on failure */
	return ret;
}

uint64_t report_dropped(const struct report *r)
{
	const struct pf_counters *c = &r->prof.counters;
	return c->map_dropped;
}

bool report_losses(const struct report *r, char *buf, size_t size)
{
	return loss_summary(&r->prof.counters, buf, size);
}
