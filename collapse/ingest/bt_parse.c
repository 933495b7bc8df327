/* bt_parse.c - bpftrace text parser; see bt_parse.h. */
#include "ingest/bt_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum bt_state { ST_IDLE, ST_RECORD, ST_MAPS };

/* A frame as collected: its text lives in bp->buf (which moves as it
 * grows), so it is kept as offsets until the record is emitted. */
struct bt_rawframe {
	uint8_t kind;		/* enum bt_frame_kind */
	bool has_addr;
	bool has_name;		/* name_off/name_len are set */
	bool has_module;	/* module_off/module_len are set (len > 0) */
	bool at_start;		/* named "SYM+0" */
	bool has_offset;	/* named "SYM+OFF" */
	uint64_t offset;
	uint64_t addr;
	size_t name_off, name_len;
	size_t module_off, module_len;
};

/* A stack part being collected: frames [first, first+n) of bp->frames. */
struct bt_part {
	size_t first, n;
};

struct bt_parser {
	struct bt_callbacks cb;
	struct bt_counters c;
	enum bt_state st;
	size_t lineno;
	/* current record */
	size_t rec_line;
	char *buf;		/* record text: map name, comm, frame lines */
	size_t blen, bcap;
	size_t map_off, map_len, comm_off, comm_len;
	bool has_comm, has_pid, has_tid;
	uint32_t pid, tid, image;
	uint64_t ints[BT_INTS_MAX];	/* integers after pid and tid */
	size_t nints;
	struct bt_rawframe *frames;
	size_t nframes, fcap;
	struct bt_part parts[8];
	size_t nparts;
	bool in_stack;
	bool empty_part;	/* key ended in ", ]": an empty stack part */
	bool no_count;		/* a stack key's "]:" came without a count:
				 * its count, or a histogram, follows */
	uint64_t hist_sum;	/* ... the histogram's rows so far */
	bool in_hist;
	/* maps block */
	uint32_t maps_pid, maps_image;
	size_t maps_line;	/* its "#maps" line */
	size_t maps_nlines;	/* lines held after it */
	/* output frames (root first) */
	struct bt_frame *out;
	size_t ocap;
	/* samples of stackfold's own maps since their last total line */
	uint64_t since_total[3];
};

struct bt_parser *bt_parser_new(const struct bt_callbacks *cb)
{
	struct bt_parser *bp = calloc(1, sizeof(*bp));
	if (bp)
		bp->cb = *cb;
	return bp;
}

void bt_parser_free(struct bt_parser *bp)
{
	if (!bp)
		return;
	free(bp->buf);
	free(bp->frames);
	free(bp->out);
	free(bp);
}

void bt_parser_add_own(struct bt_parser *bp, int own, uint64_t count)
{
	if (own < 0 || own > 2)
		return;
	bp->since_total[own] = bp->since_total[own] > UINT64_MAX - count
				       ? UINT64_MAX
				       : bp->since_total[own] + count;
}

void bt_parser_add_stackid_errors(struct bt_parser *bp, uint64_t n)
{
	sf_sat_addto(&bp->c.stackid_errors, n);
}

const struct bt_counters *bt_parser_counters(const struct bt_parser *bp)
{
	return &bp->c;
}

static void bad_line(struct bt_parser *bp)
{
	bp->c.unparsable_lines++;
	if (!bp->c.first_bad_line)
		bp->c.first_bad_line = bp->lineno;
}

static int buf_append(struct bt_parser *bp, const char *s, size_t len,
		      size_t *off)
{
	if (sf_grow((void **)&bp->buf, &bp->bcap, bp->blen + len + 1, 1))
		return -ENOMEM;
	memcpy(bp->buf + bp->blen, s, len);
	*off = bp->blen;
	bp->blen += len;
	bp->buf[bp->blen++] = 0;
	return 0;
}

/* buf_append() of a buf()-printed comm, made bytes again up to its first
 * NUL (protocol_comm_decode()): a thread named "é" is printed "\xc3\xa9".
 * (Outputs make control bytes safe themselves: the fold writes them as
 * '?'.)  *outlen gets the decoded length. */
static int buf_append_unescaped(struct bt_parser *bp, const char *s,
				size_t len, size_t *off, size_t *outlen)
{
	if (buf_append(bp, s, len, off))
		return -ENOMEM;
	/* decoded in place: never longer than the text */
	char *d = bp->buf + *off;
	size_t n = protocol_comm_decode(s, len, d, len + 1);
	bp->blen = *off + n + 1;
	*outlen = n;
	return 0;
}

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static const char *trim_end(const char *s, const char *end)
{
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return end;
}

static bool all_hex(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

/* Strip a trailing "+123" or "+0x1f" symbol offset into f->offset
 * (f->has_offset; f->at_start: it was 0).  Returns the name's length. */
static size_t strip_offset(const char *s, size_t len, struct bt_rawframe *f)
{
	size_t i = len;
	f->at_start = f->has_offset = false;
	while (i > 0 && s[i - 1] != '+')
		i--;
	if (i < 2)
		return len;	/* no '+', or nothing before it */
	const char *o = s + i;
	size_t olen = len - i;
	uint64_t v;
	if (sf_parse_u64(o, olen, &v) ||
	    (olen > 2 && o[0] == '0' && o[1] == 'x' && sf_parse_hex(o, olen, &v))) {
		f->at_start = v == 0;
		f->has_offset = true;
		f->offset = v;
		return i - 1;
	}
	return len;
}

#define KERNEL_MIN 0xffff800000000000ULL

/* "ADDR SYM (MODULE)": ustack(perf)'s frame, whose first word is always
 * the address, however short ("1 0x1 ([unknown])").  A lone word needs 6
 * hex digits to be taken for an address, not a name ("add", "beef"). */
static bool perf_frame(const char *s, const char *end, const char *sp)
{
	if (!sp || end[-1] != ')')
		return false;
	const char *open = memchr(sp, '(', (size_t)(end - sp));
	return open && open > sp + 1 && open[-1] == ' ';
}

/* The '(' that opens the module at the end of a perf frame, s[..end)
 * ending in ')': the one matching that ')' ("(/x/app (deleted))"), else
 * (unbalanced) the last '('; NULL when there is none. */
static const char *module_open(const char *s, const char *end)
{
	const char *last = NULL;
	int depth = 0;
	for (const char *q = end; q > s;) {
		q--;
		if (*q == ')') {
			depth++;
		} else if (*q == '(') {
			last = last ? last : q;
			if (--depth == 0)
				return q;
		}
	}
	return last;
}

/* Parse one frame line (already stripped of indentation). */
static int frame_parse(struct bt_parser *bp, const char *s, size_t len)
{
	const char *end = trim_end(s, s + len);
	len = (size_t)(end - s);
	if (!len)
		return 0;
	struct bt_rawframe f = { .kind = BT_FRAME_NAME };
	const char *sp = memchr(s, ' ', len);
	size_t first = sp ? (size_t)(sp - s) : len;
	uint64_t a;
	if (first >= 2 && s[0] == '0' && s[1] == 'x' &&
	    !sf_parse_hex(s, first, &a)) {
		/* "0x", "0xZZ", more than 16 digits: the line is counted as
		 * unparsable, the sample keeps a frame saying so */
		bad_line(bp);
		s = "[bad address]";
		len = first = strlen(s);
		end = s + len;
		sp = NULL;
	}
	if (first > 2 && s[0] == '0' && s[1] == 'x' &&
	    sf_parse_hex(s, first, &a) && !sp) {
		f.kind = BT_FRAME_ADDR;		/* 0xADDR */
		f.has_addr = true;
		f.addr = a;
	} else if (all_hex(s, first) && (first >= 6 || perf_frame(s, end, sp)) &&
		   sf_parse_hex(s, first, &a)) {
		f.has_addr = true;	/* raw "ADDR" or perf "ADDR sym (mod)" */
		f.addr = a;
		f.kind = BT_FRAME_ADDR;
		if (sp) {
			const char *r = skip_ws(sp, end), *mod_end = end;
			const char *mod = NULL;
			const char *q = end[-1] == ')' ? module_open(r, end) : NULL;
			if (q) {
				mod = q + 1;
				mod_end = end - 1;
				end = trim_end(r, q);
			}
			if (mod && mod_end > mod) {
				f.module_len = (size_t)(mod_end - mod);
				if (buf_append(bp, mod, f.module_len, &f.module_off))
					return -ENOMEM;
				f.has_module = true;
			}
			size_t nlen = (size_t)(end - r);
			bool unknown = nlen == 0 || sf_starts(r, nlen, "0x") ||
				       sf_starts(r, nlen, "[unknown]");
			if (!unknown) {
				f.kind = BT_FRAME_NAME;
				s = r;
				len = strip_offset(r, nlen, &f);
			}
		}
	} else {
		len = strip_offset(s, len, &f);
	}
	if (f.kind == BT_FRAME_NAME) {
		if (buf_append(bp, s, len, &f.name_off))
			return -ENOMEM;
		f.has_name = true;
		f.name_len = len;
	}
	if (sf_grow((void **)&bp->frames, &bp->fcap, bp->nframes + 1,
		    sizeof(f)))
		return -ENOMEM;
	bp->frames[bp->nframes++] = f;
	bp->parts[bp->nparts - 1].n++;
	return 0;
}

static void record_reset(struct bt_parser *bp)
{
	bp->blen = 0;
	bp->nframes = 0;
	bp->nparts = 0;
	bp->has_comm = bp->has_pid = bp->has_tid = false;
	bp->image = 0;
	bp->nints = 0;
	bp->in_stack = false;
	bp->empty_part = false;
	bp->no_count = false;
	bp->hist_sum = 0;
	bp->in_hist = false;
	bp->st = ST_IDLE;
}

/* x86-64's legacy vsyscall page, mapped into user space above the kernel
 * half ([vsyscall] in maps): a user stack's leaf can be there. */
#define VSYSCALL_START 0xffffffffff600000ULL
#define VSYSCALL_END 0xffffffffff601000ULL

/* 1 kernel, 0 user, -1 unknown */
static int part_side(const struct bt_parser *bp, const struct bt_part *pt)
{
	int side = -1;
	for (size_t i = pt->first; i < pt->first + pt->n; i++) {
		const struct bt_rawframe *f = &bp->frames[i];
		if (f->has_addr)	/* the vsyscall page is user text */
			return f->addr >= KERNEL_MIN &&
			       (f->addr < VSYSCALL_START ||
				f->addr >= VSYSCALL_END);
		if (f->has_module)
			return 0;
		if (!f->has_name)
			continue;
		const char *name = bp->buf + f->name_off;
		if (bt_kernel_only_name(name, f->name_len) ||
		    (i + 1 == pt->first + pt->n &&	/* the root (leaf first) */
		     bt_kernel_root_name(name, f->name_len)))
			side = 1;
	}
	return side;
}

static int out_push(struct bt_parser *bp, const struct bt_rawframe *f,
		    bool kernel, size_t *n)
{
	if (sf_grow((void **)&bp->out, &bp->ocap, *n + 1, sizeof(*bp->out)))
		return -ENOMEM;
	bp->out[(*n)++] = (struct bt_frame){
		.kind = f->kind, .kernel = kernel,
		.has_addr = f->has_addr, .addr = f->addr,
		.at_start = f->at_start,
		.has_offset = f->has_offset, .offset = f->offset,
		.name = f->has_name ? bp->buf + f->name_off : NULL,
		.name_len = f->has_name ? f->name_len : 0,
		.module = f->has_module ? bp->buf + f->module_off : NULL,
		.module_len = f->has_module ? f->module_len : 0,
	};
	return 0;
}

/* Append part pt reversed (bpftrace prints leaf first). */
static int out_part(struct bt_parser *bp, const struct bt_part *pt, bool kernel,
		    size_t *n)
{
	for (size_t i = pt->n; i-- > 0;)
		if (out_push(bp, &bp->frames[pt->first + i], kernel, n))
			return -ENOMEM;
	return 0;
}

static int record_emit(struct bt_parser *bp, uint64_t count)
{
	int side[8];
	size_t n = 0, nuser = 0;
	int ret = 0;
	for (size_t i = 0; i < bp->nparts; i++)
		side[i] = part_side(bp, &bp->parts[i]);
	/* With two stack parts and one side unknown, it is the other side. */
	if (bp->nparts == 2 && side[0] != side[1]) {
		if (side[0] < 0)
			side[0] = !side[1];
		if (side[1] < 0)
			side[1] = !side[0];
	}
	bool at_limit = false;
	for (size_t i = 0; i < bp->nparts; i++)
		at_limit |= bp->parts[i].n == BT_STACK_LIMIT_DEFAULT ||
			    bp->parts[i].n == BT_STACK_LIMIT_MAX;
	for (int pass = 0; pass < 2; pass++)	/* user parts, then kernel */
		for (size_t i = 0; i < bp->nparts; i++)
			if ((side[i] == 1) == (pass == 1)) {
				if (out_part(bp, &bp->parts[i], pass == 1, &n))
					return -ENOMEM;
				if (pass == 0)
					nuser = n;
			}
	if (count == 0)
		goto done;
	struct bt_record r = {
		.map = bp->buf + bp->map_off, .map_len = bp->map_len,
		.has_pid = bp->has_pid, .has_tid = bp->has_tid,
		.pid = bp->pid, .tid = bp->tid, .image = bp->image,
		.comm = bp->has_comm ? bp->buf + bp->comm_off : NULL,
		.comm_len = bp->comm_len,
		.frames = bp->out, .nframes = n,
		.nuser = nuser, .nkernel = n - nuser,
		.had_stack = bp->nparts > 0 || bp->empty_part,
		.empty_only = bp->nparts == 0 && bp->empty_part, .count = count,
		.maybe_truncated = at_limit,
		.line = bp->rec_line,
		.ints = bp->ints, .nints = bp->nints,
	};
	bp->c.records++;
	bt_parser_add_own(bp, protocol_own_map(r.map, r.map_len), count);
	if (bp->cb.record)
		ret = bp->cb.record(bp->cb.ctx, &r);
done:
	record_reset(bp);
	return ret;
}

/* bpftrace prints buf(comm, 16) with its NUL padding as "\x00" escapes
 * (and every other unprintable byte as \xNN, so a comm cannot hold a line
 * break that would forge records): the padding is not part of the name. */
static const char NUL_ESC[] = "\\x00";
#define NUL_ESC_LEN (sizeof(NUL_ESC) - 1)

static size_t strip_nul_escapes(const char *s, size_t len)
{
	while (len >= NUL_ESC_LEN &&
	       memcmp(s + len - NUL_ESC_LEN, NUL_ESC, NUL_ESC_LEN) == 0)
		len -= NUL_ESC_LEN;
	return len;
}

/* The end of a buf-printed comm in [p, e): just past its last "\x00", so
 * a comm holding ", " stays one field; NULL when there is none. */
static const char *buf_comm_end(const char *p, const char *e)
{
	const char *last = NULL, *q = p;
	while ((q = memmem(q, (size_t)(e - q), NUL_ESC, NUL_ESC_LEN))) {
		q += NUL_ESC_LEN;
		last = q;
	}
	return last;
}

static bool is_number(const char *s, const char *e)
{
	uint64_t v;
	e = trim_end(s, e);
	s = skip_ws(s, e);
	s += s < e && *s == '-';
	return sf_parse_u64(s, (size_t)(e - s), &v);
}

static int scalar_part(struct bt_parser *bp, const char *s, size_t len)
{
	const char *e = trim_end(s, s + len);
	s = skip_ws(s, e);
	len = (size_t)(e - s);
	if (!len)
		return 0;
	size_t stripped = strip_nul_escapes(s, len);
	if (stripped < len) {	/* buf(comm): always a name, even "1234" */
		if (bp->has_comm)
			return 0;
		bp->has_comm = true;
		return buf_append_unescaped(bp, s, len, &bp->comm_off,
					    &bp->comm_len);
	}
	uint64_t v;
	bool neg = s[0] == '-';
	if (sf_parse_u64(s + neg, len - neg, &v)) {
		if (!bp->has_pid) {
			bp->has_pid = true;
			bp->pid = protocol_pid_of(v);
			bp->image = protocol_image_of(v);
		} else if (!bp->has_tid) {
			bp->has_tid = true;
			bp->tid = (uint32_t)v;
		} else if (bp->nints < BT_INTS_MAX && !neg) {
			bp->ints[bp->nints++] = v;
		}
		return 0;
	}
	if (bp->has_comm)
		return 0;	/* further strings are not used */
	bp->has_comm = true;
	bp->comm_len = len;
	return buf_append(bp, s, len, &bp->comm_off);
}

/* Largest count accepted: pprof values are int64, and bpftrace's counts
 * are far below; anything above is a corrupt line, never wrapped. */
#define BT_MAX_COUNT ((uint64_t)INT64_MAX)

/* Parse "]: N" at the end of s: 1 and the count, 0 when s does not end
 * the key, -1 for a count out of range. */
static int parse_end(const char *s, size_t len, size_t *body, uint64_t *count)
{
	const char *e = trim_end(s, s + len);
	const char *q = e;
	while (q > s && q[-1] >= '0' && q[-1] <= '9')
		q--;
	if (q == e || q - s < 3 || q[-1] != ' ' || q[-2] != ':' || q[-3] != ']')
		return 0;
	if (!sf_parse_u64(q, (size_t)(e - q), count) || *count > BT_MAX_COUNT)
		return -1;	/* overflow */
	*body = (size_t)(q - 3 - s);
	return 1;
}

/* The scalar fields of a key in [s, e): pid, tid, comm. */
static int scalars(struct bt_parser *bp, const char *s, const char *e)
{
	const char *p = s;
	while (p < e) {
		const char *c = memmem(p, (size_t)(e - p), ", ", 2);
		if (!c && e - p >= 1 && e[-1] == ',')
			c = e - 1;
		const char *pe = c ? c : e;
		if (!bp->has_comm && !is_number(p, pe)) {
			const char *z = buf_comm_end(p, e);
			if (z && z > pe) {	/* buf(comm) holding ", " */
				pe = z;
				c = pe < e && *pe == ',' ? pe : NULL;
			}
		}
		/* an empty part between commas ("@[, , comm]") is an empty
		 * stack: bpftrace prints a stack with no frames as nothing */
		if (skip_ws(p, pe) == pe && c)
			bp->empty_part = true;
		if (scalar_part(bp, p, (size_t)(pe - p)))
			return -ENOMEM;
		p = c ? c + (c + 1 < e ? 2 : 1) : e;
	}
	return 0;
}

/* Scalars segment: "a, b, " (a stack part follows), "a, b]: N" (end), or
 * "a, b]:" (its count, or a histogram, on the lines after). */
static int segment(struct bt_parser *bp, const char *s, size_t len)
{
	size_t body = len;
	uint64_t count = 0;
	int end = parse_end(s, len, &body, &count);
	const char *t = trim_end(s, s + len);
	bool open = !end && t - s >= 2 && t[-1] == ':' && t[-2] == ']';
	/* "@[k]:", "@[]:" then a histogram: an entry as "@[k]: SUM" */
	if (open)
		body = (size_t)(t - 2 - s);
	/* not the key's end: scalars before a stack part end in ',' */
	else if (end < 0 || (!end && t > s && t[-1] != ',')) {
		bad_line(bp);	/* "]: -3", "]: 1x", "]: 2^64"... */
		record_reset(bp);
		return 0;
	}
	const char *e = s + body;
	/* "@[]: N" and "..., ]: N": an empty stack part (a stack-keyed
	 * map's entry whose stack is empty, e.g. kstack in user mode) */
	if ((end || open) && (trim_end(s, e) == s || trim_end(s, e)[-1] == ','))
		bp->empty_part = true;
	if (scalars(bp, s, e))
		return -ENOMEM;
	if (open) {	/* stays open: a cut "]:" ends as an incomplete record */
		bp->no_count = true;
		return 0;
	}
	if (end)
		return record_emit(bp, count);
	if (bp->nparts == sizeof(bp->parts) / sizeof(bp->parts[0])) {
		bad_line(bp);
		record_reset(bp);
		return 0;
	}
	bp->parts[bp->nparts].first = bp->nframes;
	bp->parts[bp->nparts].n = 0;
	bp->nparts++;
	bp->in_stack = true;
	return 0;
}

/* "[4, 8)   12 |@@@@   |", "[0]  3 |@|", "(..., 0)  2 |@|": a row of
 * a hist() or lhist() map, whose count goes to *n.  Nothing looser: a
 * printed line such as "[12:01:02] cpu | busy" is text, and counted. */
static bool is_hist_row(const char *s, size_t len, uint64_t *n)
{
	const char *e = s + len, *c = s + 1;
	if (len < 4 || (s[0] != '[' && s[0] != '(') || e[-1] != '|')
		return false;
	while (c < e && *c != ')' && *c != ']')	/* "[0]", "[2, 4)" */
		c++;
	if (c == e)
		return false;
	const char *d = skip_ws(c + 1, e), *de = d;
	while (de < e && *de >= '0' && *de <= '9')
		de++;
	const char *bar = skip_ws(de, e);
	return de > d && bar < e && *bar == '|' &&
	       sf_parse_u64(d, (size_t)(de - d), n);
}

static int record_start(struct bt_parser *bp, const char *s, size_t len,
			const char *br)
{
	record_reset(bp);
	bp->st = ST_RECORD;
	bp->rec_line = bp->lineno;
	bp->map_len = (size_t)(br - s);
	if (buf_append(bp, s, bp->map_len, &bp->map_off))
		return -ENOMEM;
	return segment(bp, br + 1, (size_t)(s + len - br - 1));
}

static void count_incomplete(struct bt_parser *bp, size_t line)
{
	if (!bp->c.incomplete_records++)
		bp->c.first_incomplete_line = line;
}

static int record_line(struct bt_parser *bp, const char *s, size_t len)
{
	if (len && (s[0] == ' ' || s[0] == '\t') && bp->in_stack) {
		const char *b = skip_ws(s, s + len);
		return frame_parse(bp, b, (size_t)(s + len - b));
	}
	if (len && s[0] == ',') {
		bp->in_stack = false;
		size_t skip = len > 1 && s[1] == ' ' ? 2 : 1;
		return segment(bp, s + skip, len - skip);
	}
	if (len && s[0] == ']') {
		bp->in_stack = false;
		return segment(bp, s, len);
	}
	if (!len && bp->in_stack)
		return 0;
	uint64_t n;
	if (bp->no_count && is_hist_row(s, len, &n)) {
		/* "@h[stack]:" then a histogram (hist(), lhist()): its rows
		 * add up to the entry's count, as stackcollapse-bpftrace.pl
		 * adds them */
		if (n > BT_MAX_COUNT - bp->hist_sum)
			bad_line(bp);
		else
			bp->hist_sum += n;
		bp->in_hist = true;
		return 0;
	}
	if (bp->no_count && bp->in_hist) {	/* the histogram's end */
		int ret = record_emit(bp, bp->hist_sum);
		return ret ? ret : -EAGAIN;
	}
	/* "@m[k]:" with no stack in its key and no histogram after it: a
	 * map whose value is no count (a stack, a string), no sample; its
	 * lines are unparsable ones, not a record cut short */
	if (bp->no_count && !bp->nparts && !bp->empty_part) {
		record_reset(bp);
		return -EAGAIN;
	}
	/* Anything else breaks the record: count it, reparse the line. */
	count_incomplete(bp, bp->rec_line);
	record_reset(bp);
	return -EAGAIN;
}

static int directive(struct bt_parser *bp, const char *s, size_t len)
{
	const char *e = s + len;
	enum protocol_line kind = protocol_line(s, len);
	if (kind == PROTOCOL_MAPS) {
		uint64_t pid;
		const char *p = skip_ws(s + 6, e);
		if (!sf_parse_u64(p, (size_t)(trim_end(p, e) - p), &pid)) {
			bad_line(bp);
			return 0;
		}
		bp->maps_pid = protocol_pid_of(pid);
		bp->maps_image = protocol_image_of(pid);
		bp->maps_line = bp->lineno;
		bp->maps_nlines = 0;
		bp->blen = 0;
		bp->st = ST_MAPS;
		return 0;
	}
	if (kind == PROTOCOL_PID) {
		struct protocol_pid pl;
		if (!protocol_pid_line(s, len, &pl)) {
			bad_line(bp);
			return 0;
		}
		if (bp->cb.first_sample)
			return bp->cb.first_sample(bp->cb.ctx, pl.pid, pl.image,
						   pl.comm, pl.comm_len);
		return 0;
	}
	if (kind == PROTOCOL_META) {
		const char *k = skip_ws(s + 6, e), *ke = k;
		while (ke < e && *ke != ' ')
			ke++;
		const char *v = skip_ws(ke, e);
		if (bp->cb.meta)
			return bp->cb.meta(bp->cb.ctx, k, (size_t)(ke - k), v,
					   (size_t)(e - v));
	}
	if (kind == PROTOCOL_PYTHON && bp->cb.python)
		return bp->cb.python(bp->cb.ctx, s, len);
	return 0;	/* other # lines are comments */
}

static int idle_line(struct bt_parser *bp, const char *s, size_t len);

/* A #maps block holds every line up to "#endmaps" but a record's first
 * line: then it was no maps block (a "#maps N" printed by something else)
 * or one cut short, and its lines are unparsable, not the records after. */
static bool maps_block_ended(const char *s, size_t len)
{
	return len && s[0] == '@';
}

/* A real process's executable mappings are kilobytes (a JVM's: about a
 * megabyte).  A "#maps" line with no end (a one-liner's printf, a capture
 * cut short) must not hold every line after it: memory would grow with
 * the input. */
#define BT_MAPS_MAX (32u << 20)

static int maps_line(struct bt_parser *bp, const char *s, size_t len)
{
	size_t off;
	/* not a block after all: its lines are text, counted from "#maps" */
	if (maps_block_ended(s, len) || bp->blen + len + 1 > BT_MAPS_MAX) {
		bp->c.unparsable_lines += bp->maps_nlines + 1;
		if (!bp->c.first_bad_line)
			bp->c.first_bad_line = bp->maps_line;
		bp->blen = 0;
		bp->st = ST_IDLE;
		return idle_line(bp, s, len);
	}
	if (protocol_line(s, len) == PROTOCOL_ENDMAPS) {
		int ret = 0;
		if (bp->cb.maps)
			ret = bp->cb.maps(bp->cb.ctx, bp->maps_pid,
					  bp->maps_image, bp->buf,
					  bp->blen, bp->maps_line + 1);
		bp->blen = 0;
		bp->st = ST_IDLE;
		return ret;
	}
	if (buf_append(bp, s, len, &off))
		return -ENOMEM;
	bp->buf[bp->blen - 1] = '\n';
	bp->maps_nlines++;
	return 0;
}

static int scalar_line(struct bt_parser *bp, const char *s, size_t len,
		       const char *colon)
{
	const char *v = skip_ws(colon + 1, s + len);
	uint64_t n;
	size_t vlen = (size_t)(trim_end(v, s + len) - v);
	/* stackfold's own sample counters: @stackfold_total, or the
	 * double-buffered @stackfold_total_a / _b of bt/profile.bt, each
	 * against the samples its map printed since its last total (per
	 * flush: a flush's drops are not hidden by another's surplus) */
	int own = protocol_own_total(s, (size_t)(colon - s));
	if (own >= 0) {
		if (!sf_parse_u64(v, vlen, &n) ||
		    n > BT_MAX_COUNT - bp->c.total_reported) {
			bad_line(bp);
			return 0;
		}
		uint64_t got = bp->since_total[own];
		bp->since_total[own] = 0;
		if (n > got)
			sf_sat_addto(&bp->c.total_dropped, n - got);
		else
			sf_sat_addto(&bp->c.total_over, got - n);
		bp->c.total_reported += n;
		bp->c.has_total = true;
	}
	return 0;	/* other keyless maps are not samples */
}

static int idle_line(struct bt_parser *bp, const char *s, size_t len)
{
	if (!len)
		return 0;
	if (s[0] == '#')
		return directive(bp, s, len);
	if (s[0] == '@') {
		const char *br = memchr(s, '[', len), *co = memchr(s, ':', len);
		if (br && (!co || br < co))
			return record_start(bp, s, len, br);
		if (co)
			return scalar_line(bp, s, len, co);
		bad_line(bp);
		return 0;
	}
	uint64_t n;
	if (is_hist_row(s, len, &n))
		return 0;	/* a row of a keyless map's histogram */
	if (sf_starts(s, len, "Attaching ") || sf_starts(s, len, "WARNING") ||
	    sf_starts(s, len, "ERROR") || sf_starts(s, len, "warning:") ||
	    sf_starts(s, len, "HINT") || sf_starts(s, len, "Tracing "))
		return 0;
	bad_line(bp);
	return 0;
}

/* "START-END ...": a /proc/PID/maps line (hex, '-') */
static bool maps_like(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && isxdigit((unsigned char)s[i]))
		i++;
	return i && i < len && s[i] == '-';
}

/* In a #maps block, a loss line leaves an empty line in its place (the
 * maps reader skips it), so that the block's lines keep their numbers: a
 * malformed maps line after it is said where it is.  Out of memory, or
 * past BT_MAPS_MAX (where the block is not one), the numbers after it are
 * one short. */
static void maps_gap(struct bt_parser *bp)
{
	size_t off;
	if (bp->st == ST_MAPS && bp->blen + 1 <= BT_MAPS_MAX &&
	    !buf_append(bp, "", 0, &off))
		bp->buf[bp->blen - 1] = '\n';
}

/* bpftrace's messages about lost samples: counted wherever they come.  A
 * capture reads them from bpftrace's stderr, so they can land between two
 * lines of a record (and in a raw capture's file) without ending it. */
static bool side_line(struct bt_parser *bp, const char *s, size_t len)
{
	uint64_t n = 0;
	/* in a #maps block, a maps line whose path holds "map full" is
	 * one; a loss line is counted there too */
	if (bp->st == ST_MAPS && maps_like(s, len))
		return false;
	switch (bt_side_kind(s, len, &n)) {
	case BT_SIDE_LOST:
		sf_sat_addto(&bp->c.lost_events, n);
		break;
	case BT_SIDE_STACKID:
		bp->c.stackid_errors++;
		break;
	case BT_SIDE_MAP_FULL:
		bp->c.map_full_warnings++;
		break;
	case BT_SIDE_NONE:
		return false;
	}
	maps_gap(bp);
	return true;
}

bool bt_parser_idle(const struct bt_parser *bp)
{
	return bp->st == ST_IDLE;
}

void bt_parser_set_line(struct bt_parser *bp, size_t line)
{
	bp->lineno = line;
}

bool bt_parser_side_line(struct bt_parser *bp, const char *line, size_t len)
{
	if (len && line[len - 1] == '\r')
		len--;
	if (!bt_may_be_side(line, len) || !side_line(bp, line, len))
		return false;
	bp->lineno++;
	return true;
}

int bt_parser_line(struct bt_parser *bp, const char *line, size_t len)
{
	if (len && line[len - 1] == '\r')
		len--;
	bp->lineno++;
	if (bt_may_be_side(line, len) && side_line(bp, line, len))
		return 0;
	int ret;
	switch (bp->st) {
	case ST_MAPS:
		return maps_line(bp, line, len);
	case ST_RECORD:
		ret = record_line(bp, line, len);
		if (ret != -EAGAIN)
			return ret;
		/* the line starts something new */
		return idle_line(bp, line, len);
	case ST_IDLE:
	default:
		return idle_line(bp, line, len);
	}
}

int bt_parser_finish(struct bt_parser *bp)
{
	if (bp->st == ST_RECORD && bp->no_count && bp->in_hist) {
		int ret = record_emit(bp, bp->hist_sum);	/* at the end */
		if (ret)
			return ret;
	} else if (bp->st == ST_RECORD) {
		count_incomplete(bp, bp->rec_line);
		record_reset(bp);
	} else if (bp->st == ST_MAPS) {
		count_incomplete(bp, bp->maps_line);
		bp->st = ST_IDLE;
	}
	/* samples printed after their map's last total (bpftrace 0.17 prints
	 * the maps again, without totals, on SIGTERM then SIGINT): past
	 * bpftrace's count, where it counted */
	for (int k = 0; k < 3 && bp->c.has_total; k++) {
		sf_sat_addto(&bp->c.total_over, bp->since_total[k]);
		bp->since_total[k] = 0;
	}
	return 0;
}
