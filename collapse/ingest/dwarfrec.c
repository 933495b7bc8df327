/* dwarfrec.c - bt/profile-dwarf.bt's records into samples; see
 * dwarfrec.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/protocol.h"
#include "ingest/dwarfrec.h"
#include "ingest/dwarfwin.h"
#include "base/util.h"

/* One CPU's open sample. */
struct dw_open {
	bool open;
	bool want_k;		/* taken in the kernel: a #K block is due */
	unsigned nchunks, got;	/* chunks announced, received */
	uint64_t len;		/* bytes copied (the #U's LEN) */
	struct dw_sample s;
	uint8_t *bytes;		/* nchunks * DWREC_CHUNK_BYTES */
	size_t bcap;
	uint64_t *kf;
	size_t nkf, kfcap;
	bool orphaned;		/* orphan_seq holds a sample counted partial */
	uint64_t orphan_seq;	/* ... whose header was lost */
};

struct dwrec {
	int (*sample)(void *ctx, const struct dw_sample *s);
	void *ctx;
	struct dw_open *cpus;
	size_t ncpus;
	struct dw_open *in_k;	/* the CPU whose #K block is being read */
	struct dwrec_counters c;
	struct dwwin *win;	/* the flushed maps' form (dwarfwin.h) */
	struct dwrec_counters out;	/* c with the window's partials */
};

struct dwrec *dwrec_new(int (*sample)(void *ctx, const struct dw_sample *s),
			void *ctx)
{
	struct dwrec *d = calloc(1, sizeof(*d));
	if (d) {
		d->sample = sample;
		d->ctx = ctx;
		d->win = dwwin_new(sample, ctx, &d->c);
		if (!d->win) {
			free(d);
			return NULL;
		}
	}
	return d;
}

void dwrec_free(struct dwrec *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ncpus; i++) {
		free(d->cpus[i].bytes);
		free(d->cpus[i].kf);
	}
	free(d->cpus);
	dwwin_free(d->win);
	free(d);
}

const struct dwrec_counters *dwrec_counters(struct dwrec *d)
{
	d->out = d->c;
	d->out.partial += dwwin_partial(d->win);
	return &d->out;
}

bool dwrec_wants(const struct dwrec *d, const char *s, size_t len)
{
	if (d && d->in_k)
		return true;
	if (dwwin_wants(d ? d->win : NULL, s, len))
		return true;
	return sf_starts(s, len, PROTOCOL_DWARF_HEADER) || sf_starts(s, len, PROTOCOL_DWARF_WORDS) ||
	       sf_starts(s, len, PROTOCOL_DWARF_KSTACK);
}

static void bad(struct dwrec *d, size_t line)
{
	d->c.bad_lines++;
	if (!d->c.first_bad_line)
		d->c.first_bad_line = line;
}

/* Space-separated fields of s after its 3-byte tag; up to max, *n set. */
struct field {
	const char *p;
	size_t len;
};
static size_t split(const char *s, size_t len, struct field *f, size_t max)
{
	size_t n = 0, i = 3;
	while (i < len && n < max + 1) {
		while (i < len && s[i] == ' ')
			i++;
		if (i >= len)
			break;
		size_t b = i;
		while (i < len && s[i] != ' ')
			i++;
		if (n < max)
			f[n] = (struct field){ s + b, i - b };
		n++;
	}
	return n;
}

static bool dec(const struct field *f, uint64_t *v)
{
	return sf_parse_u64(f->p, f->len, v);
}

static bool hex(const struct field *f, uint64_t *v)
{
	return f->len <= 16 && sf_parse_hex(f->p, f->len, v);
}

/* comm as %rx prints it: every byte \xNN, NUL padded */
static bool comm_rx(const struct field *f, struct dw_sample *s)
{
	if (f->len % 4 || f->len / 4 > 16)
		return false;
	s->comm_len = 0;
	bool ended = false;
	for (size_t i = 0; i < f->len; i += 4) {
		int hi = sf_hexval((unsigned char)f->p[i + 2]);
		int lo = sf_hexval((unsigned char)f->p[i + 3]);
		if (f->p[i] != '\\' || f->p[i + 1] != 'x' || hi < 0 || lo < 0)
			return false;
		if (!(hi | lo))
			ended = true;
		else if (!ended)
			s->comm[s->comm_len++] = (char)(hi << 4 | lo);
	}
	s->comm[s->comm_len] = 0;
	return true;
}

static struct dw_open *cpu_slot(struct dwrec *d, uint64_t cpu)
{
	if (cpu >= DWREC_MAX_CPUS)
		return NULL;
	if (cpu >= d->ncpus) {
		size_t n = (size_t)cpu + 1;
		struct dw_open *v = realloc(d->cpus, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + d->ncpus, 0, (n - d->ncpus) * sizeof(*v));
		d->cpus = v;
		d->ncpus = n;
	}
	return &d->cpus[cpu];
}

/* An open sample that will not complete: counted once, its later
 * records then orphans of the same seq (not counted again). */
static void drop(struct dwrec *d, struct dw_open *o)
{
	if (o->open) {
		d->c.partial++;
		o->orphaned = true;
		o->orphan_seq = o->s.seq;
	}
	o->open = false;
}

/* A record of sample seq, which is not the one open on its CPU (o, NULL
 * for a CPU never seen): that one will not complete, and seq's header
 * was lost; each is counted once. */
static void orphan(struct dwrec *d, struct dw_open *o, uint64_t seq)
{
	d->c.orphans++;
	if (!o) {
		d->c.partial++;
		return;
	}
	drop(d, o);
	if (!o->orphaned || o->orphan_seq != seq)
		d->c.partial++;
	o->orphaned = true;
	o->orphan_seq = seq;
}

static int emit(struct dwrec *d, struct dw_open *o)
{
	o->open = false;
	o->orphaned = true;	/* a stray record of it later is no lost sample */
	o->orphan_seq = o->s.seq;
	o->s.stack = o->bytes;
	o->s.stack_len = o->len < (uint64_t)o->got * DWREC_CHUNK_BYTES
				 ? (size_t)o->len
				 : (size_t)o->got * DWREC_CHUNK_BYTES;
	o->s.kframes = o->kf;
	o->s.nkframes = o->nkf;
	d->c.samples++;
	d->c.badregs += !!(o->s.flags & DWREC_BADREGS);
	d->c.kthreads += !!(o->s.flags & DWREC_KTHREAD);
	d->c.cut += !!(o->s.flags & DWREC_CUT);
	return d->sample(d->ctx, &o->s);
}

static int maybe_emit(struct dwrec *d, struct dw_open *o)
{
	if (o->open && !o->want_k && o->got == o->nchunks)
		return emit(d, o);
	return 0;
}

/* #U CPU SEQ KEY TID MODE NCHUNKS FLAGS COMM LEN REG0..REG16 */
static int header(struct dwrec *d, const char *s, size_t len, size_t line)
{
	struct field f[9 + DWREC_NREGS];
	uint64_t cpu, seq, key, tid, mode, n, flags, blen;
	if (split(s, len, f, 9 + DWREC_NREGS) != 9 + DWREC_NREGS ||
	    !dec(&f[0], &cpu) || !dec(&f[1], &seq) || !dec(&f[2], &key) ||
	    !dec(&f[3], &tid) || !dec(&f[4], &mode) || !dec(&f[5], &n) ||
	    !dec(&f[6], &flags) || !dec(&f[8], &blen) ||
	    n > DWREC_MAX_CHUNKS || blen > n * DWREC_CHUNK_BYTES ||
	    (uint32_t)key == 0 || (uint32_t)key > INT32_MAX || tid > INT32_MAX) {
		bad(d, line);
		return 0;
	}
	struct dw_open *o = cpu_slot(d, cpu);
	if (!o) {
		bad(d, line);
		return cpu >= DWREC_MAX_CPUS ? 0 : -ENOMEM;
	}
	drop(d, o);
	struct dw_sample *sm = &o->s;
	memset(sm, 0, sizeof(*sm));
	if (!comm_rx(&f[7], sm)) {
		bad(d, line);
		return 0;
	}
	for (int i = 0; i < DWREC_NREGS; i++)
		if (!hex(&f[9 + i], &sm->regs[i])) {
			bad(d, line);
			return 0;
		}
	size_t need = (size_t)n * DWREC_CHUNK_BYTES;
	if (sf_grow((void **)&o->bytes, &o->bcap, need ? need : 1, 1))
		return -ENOMEM;
	sm->cpu = (uint32_t)cpu;
	sm->seq = seq;
	sm->pid = (uint32_t)key;
	sm->image = (uint32_t)(key >> 32);
	sm->tid = (uint32_t)tid;
	sm->mode = (int)mode;
	sm->flags = (unsigned)flags;
	sm->line = line;
	o->open = true;
	o->want_k = mode != 3;
	o->nchunks = (unsigned)n;
	o->got = 0;
	o->len = blen;
	o->nkf = 0;
	return maybe_emit(d, o);
}

/* #W CPU SEQ*256+INDEX WORD0..WORD47 */
static int chunk(struct dwrec *d, const char *s, size_t len, size_t line)
{
	struct field f[2 + DWREC_CHUNK_WORDS];
	uint64_t cpu, tag;
	if (split(s, len, f, 2 + DWREC_CHUNK_WORDS) != 2 + DWREC_CHUNK_WORDS ||
	    !dec(&f[0], &cpu) || !hex(&f[1], &tag) || cpu >= DWREC_MAX_CPUS) {
		bad(d, line);
		return 0;
	}
	/* a CPU never seen gets its slot: the lost header's sample is then
	 * counted partial once, not once per chunk */
	struct dw_open *o = cpu_slot(d, cpu);
	if (!o)
		return -ENOMEM;
	uint64_t seq = tag >> 8, idx = tag & 0xff;
	if (!o || !o->open || o->s.seq != seq || o->want_k || idx != o->got) {
		orphan(d, o, seq);	/* a record before it was lost */
		return 0;
	}
	uint8_t *dst = o->bytes + (size_t)idx * DWREC_CHUNK_BYTES;
	for (int i = 0; i < DWREC_CHUNK_WORDS; i++) {
		uint64_t w;
		if (!hex(&f[2 + i], &w)) {
			bad(d, line);
			drop(d, o);
			return 0;
		}
		memcpy(dst + 8 * i, &w, 8);	/* x86-64: little-endian, as
						 * the stack was */
	}
	o->got++;
	return maybe_emit(d, o);
}

/* #K CPU SEQ opens the kernel stack; its frame lines follow, "#k" ends */
static int kstack_line(struct dwrec *d, const char *s, size_t len,
		       size_t line)
{
	struct dw_open *o = d->in_k;
	if (sf_starts(s, len, PROTOCOL_DWARF_KSTACK_END)) {
		d->in_k = NULL;
		if (!o->open)
			return 0;
		o->want_k = false;
		return maybe_emit(d, o);
	}
	uint64_t a;
	if (!dwsample_kframe_addr(s, len, &a)) {
		/* not a frame: the block was cut (its "#k" lost) */
		d->in_k = NULL;
		bad(d, line);
		drop(d, o);
		return 0;
	}
	if (!o->open)
		return 0;
	if (o->nkf == DWREC_MAX_KFRAMES)
		return 0;
	if (sf_grow((void **)&o->kf, &o->kfcap, o->nkf + 1, sizeof(*o->kf)))
		return -ENOMEM;
	o->kf[o->nkf++] = a;
	return 0;
}

static int kstack_open(struct dwrec *d, const char *s, size_t len,
		       size_t line)
{
	struct field f[2];
	uint64_t cpu, seq;
	if (split(s, len, f, 2) != 2 || !dec(&f[0], &cpu) ||
	    !dec(&f[1], &seq) || cpu >= DWREC_MAX_CPUS) {
		bad(d, line);
		return 0;
	}
	struct dw_open *o = cpu_slot(d, cpu);
	if (!o)
		return -ENOMEM;
	if (!o->open || o->s.seq != seq || !o->want_k || o->nkf)
		orphan(d, o, seq);
	d->in_k = o;	/* frame lines are read (and dropped) either way */
	return 0;
}

int dwrec_line(struct dwrec *d, const char *s, size_t len, size_t line)
{
	if (d->in_k)
		return kstack_line(d, s, len, line);
	if (dwwin_wants(d->win, s, len))
		return dwwin_line(d->win, s, len, line);
	if (sf_starts(s, len, PROTOCOL_DWARF_HEADER))
		return header(d, s, len, line);
	if (sf_starts(s, len, PROTOCOL_DWARF_WORDS))
		return chunk(d, s, len, line);
	if (sf_starts(s, len, PROTOCOL_DWARF_KSTACK))
		return kstack_open(d, s, len, line);
	bad(d, line);
	return 0;
}

int dwrec_finish(struct dwrec *d)
{
	d->in_k = NULL;
	for (size_t i = 0; i < d->ncpus; i++)
		drop(d, &d->cpus[i]);
	return dwwin_flush(d->win);
}
