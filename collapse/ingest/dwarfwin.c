/* dwarfwin.c - one flush of bt/profile-dwarf.bt's maps into samples; see
 * dwarfwin.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "capture/protocol.h"
#include "ingest/dwarfwin.h"

/* header tuple: KEY TID MODE NCHUNKS FLAGS LEN COMM0 COMM1, then regs */
#define HDR_FIXED 8
#define HDR_VALUES (HDR_FIXED + DWREC_NREGS)

struct dw_hdr {
	uint64_t cpu, seq, nchunks, len;
	struct dw_sample s;	/* its pointers unset until emitted */
};

struct dw_chunk {
	uint64_t cpu, seq, idx;
	uint8_t b[DWREC_CHUNK_BYTES];
};

struct dw_kst {
	uint64_t cpu, seq;
	size_t off, n;		/* frames in kf[] */
};

struct dwwin {
	int (*sample)(void *ctx, const struct dw_sample *s);
	void *ctx;
	struct dwrec_counters *c;
	struct dw_hdr *h;
	size_t nh, hcap;
	struct dw_chunk *ch;
	size_t nch, chcap;
	struct dw_kst *k;
	size_t nk, kcap;
	uint64_t *kf;
	size_t nkf, kfcap;
	bool in_k;		/* the last kernel stack's frames are due */
	bool counted;		/* a @stackfold_dn_X came in this flush */
	/* partial samples: with the capture's counts, those taken less
	 * those emitted (a sample split across flushes counts once);
	 * without them (a hand-made input), the ones seen incomplete */
	bool has_taken;
	uint64_t taken, emitted, incomplete;
	uint8_t *stack;		/* one sample's copy, assembled */
	size_t scap;
};

struct dwwin *dwwin_new(int (*sample)(void *ctx, const struct dw_sample *s),
			void *ctx, struct dwrec_counters *counters)
{
	struct dwwin *w = calloc(1, sizeof(*w));
	if (w) {
		w->sample = sample;
		w->ctx = ctx;
		w->c = counters;
	}
	return w;
}

void dwwin_free(struct dwwin *w)
{
	if (!w)
		return;
	free(w->h);
	free(w->ch);
	free(w->k);
	free(w->kf);
	free(w->stack);
	free(w);
}

static bool held(const struct dwwin *w)
{
	return w->nh || w->nch || w->nk || w->counted;
}

uint64_t dwwin_partial(const struct dwwin *w)
{
	if (!w)
		return 0;
	if (!w->has_taken)
		return w->incomplete;
	return w->taken > w->emitted ? w->taken - w->emitted : 0;
}

/* Past DWWIN_MAX_RECORDS held, what is held is assembled now: memory
 * stays bounded on any input (a sample split by it is partial). */
static int bound(struct dwwin *w)
{
	return w->nh + w->nch + w->nk >= DWWIN_MAX_RECORDS ? dwwin_flush(w) : 0;
}

static bool is_map(const char *s, size_t len)
{
	size_t n = sizeof(DWWIN_PREFIX) - 1;
	return len > n + 3 && !memcmp(s, DWWIN_PREFIX, n) &&
	       strchr("ukwn", s[n]) && s[n + 1] == '_' &&
	       s[n + 2] >= 'a' && s[n + 2] <= 'c' &&
	       (s[n + 3] == '[' || s[n + 3] == ':');
}

static bool is_flushed(const char *s, size_t len)
{
	return protocol_line(s, len) == PROTOCOL_FLUSHED;
}

bool dwwin_wants(const struct dwwin *w, const char *s, size_t len)
{
	if (w && w->in_k)
		return true;
	return is_map(s, len) || (w && held(w) && is_flushed(s, len));
}

static void bad(struct dwwin *w, size_t line)
{
	w->c->bad_lines++;
	if (!w->c->first_bad_line)
		w->c->first_bad_line = line;
}

/* A decimal at p (bpftrace prints a u64 unsigned; a leading '-' is read
 * as two's complement, as a signed print of it would be): past it, or
 * NULL. */
static const char *num(const char *p, const char *e, uint64_t *v)
{
	bool neg = p < e && *p == '-';
	const char *b = p += neg;
	uint64_t x = 0;
	for (; p < e; p++) {	/* one pass: a capture is millions of words */
		uint64_t d = (uint64_t)((unsigned char)*p - '0');
		if (d > 9)
			break;
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, d, &x))
			return NULL;
	}
	if (p == b)
		return NULL;
	*v = neg ? 0 - x : x;
	return p;
}

/* "a, b, ...": n numbers ended by close; past close, or NULL. */
static const char *nums(const char *p, const char *e, uint64_t *v, size_t n,
			char close)
{
	for (size_t i = 0; i < n; i++) {
		if (i) {
			if (e - p < 2 || p[0] != ',' || p[1] != ' ')
				return NULL;
			p += 2;
		}
		if (!(p = num(p, e, &v[i])))
			return NULL;
	}
	return p < e && *p == close ? p + 1 : NULL;
}

static const char *after(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);
	return p && (size_t)(e - p) >= n && !memcmp(p, lit, n) ? p + n : NULL;
}

static bool blank(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p == e;
}

static int header(struct dwwin *w, const char *p, const char *e, size_t line)
{
	uint64_t key[2], v[HDR_VALUES];
	p = nums(p, e, key, 2, ']');
	p = after(p, e, ": (");
	if (!p || !(p = nums(p, e, v, HDR_VALUES, ')')) || !blank(p, e) ||
	    key[0] >= DWREC_MAX_CPUS || v[3] > DWREC_MAX_CHUNKS ||
	    v[5] > v[3] * DWREC_CHUNK_BYTES || (uint32_t)v[0] == 0 ||
	    (uint32_t)v[0] > INT32_MAX || v[1] > INT32_MAX) {
		bad(w, line);
		return 0;
	}
	int ret = bound(w);
	if (ret)
		return ret;
	if (sf_grow((void **)&w->h, &w->hcap, w->nh + 1, sizeof(*w->h)))
		return -ENOMEM;
	struct dw_hdr *h = &w->h[w->nh++];
	memset(h, 0, sizeof(*h));
	h->cpu = key[0];
	h->seq = key[1];
	h->nchunks = v[3];
	h->len = v[5];
	struct dw_sample *s = &h->s;
	s->cpu = (uint32_t)key[0];
	s->seq = key[1];
	s->pid = (uint32_t)v[0];
	s->image = (uint32_t)(v[0] >> 32);
	s->tid = (uint32_t)v[1];
	s->mode = (int)(v[2] & 3);
	s->flags = (unsigned)v[4];
	memcpy(s->comm, &v[6], 8);	/* x86-64: the name's bytes in order */
	memcpy(s->comm + 8, &v[7], 8);
	s->comm[16] = 0;
	s->comm_len = strnlen(s->comm, 16);
	memcpy(s->regs, &v[HDR_FIXED], sizeof(s->regs));
	s->line = line;
	return 0;
}

static int chunk(struct dwwin *w, const char *p, const char *e, size_t line)
{
	uint64_t key[3], v[DWREC_CHUNK_WORDS];
	p = nums(p, e, key, 3, ']');
	p = after(p, e, ": (");
	if (!p || !(p = nums(p, e, v, DWREC_CHUNK_WORDS, ')')) || !blank(p, e) ||
	    key[0] >= DWREC_MAX_CPUS || key[2] >= DWREC_MAX_CHUNKS) {
		bad(w, line);
		return 0;
	}
	int ret = bound(w);
	if (ret)
		return ret;
	if (sf_grow((void **)&w->ch, &w->chcap, w->nch + 1, sizeof(*w->ch)))
		return -ENOMEM;
	struct dw_chunk *c = &w->ch[w->nch++];
	c->cpu = key[0];
	c->seq = key[1];
	c->idx = key[2];
	memcpy(c->b, v, sizeof(c->b));	/* little-endian, as the stack was */
	return 0;
}

static int kstack_open(struct dwwin *w, const char *p, const char *e,
		       size_t line)
{
	uint64_t key[2];
	p = nums(p, e, key, 2, ']');
	p = after(p, e, ":");
	if (!p || !blank(p, e) || key[0] >= DWREC_MAX_CPUS) {
		bad(w, line);
		return 0;
	}
	int ret = bound(w);
	if (ret)
		return ret;
	if (sf_grow((void **)&w->k, &w->kcap, w->nk + 1, sizeof(*w->k)))
		return -ENOMEM;
	w->k[w->nk++] = (struct dw_kst){ key[0], key[1], w->nkf, 0 };
	w->in_k = true;
	return 0;
}

/* "\tADDR sym+off": the address */
static int kframe(struct dwwin *w, const char *s, size_t len, size_t line)
{
	uint64_t a;
	struct dw_kst *k = &w->k[w->nk - 1];
	if (!dwsample_kframe_addr(s, len, &a)) {
		bad(w, line);
		k->n = SIZE_MAX;	/* spoilt: the sample is partial */
		return 0;
	}
	if (k->n >= DWREC_MAX_KFRAMES)
		return 0;
	if (sf_grow((void **)&w->kf, &w->kfcap, w->nkf + 1, sizeof(*w->kf)))
		return -ENOMEM;
	w->kf[w->nkf++] = a;
	k->n++;
	return 0;
}

int dwwin_line(struct dwwin *w, const char *s, size_t len, size_t line)
{
	const char *e = s + len;
	if (w->in_k) {
		if (len && (s[0] == '\t' || s[0] == ' '))
			return kframe(w, s, len, line);
		/* a line from elsewhere amid the frames (bpftrace's stderr
		 * warnings reach the same report) is handed on; a blank line,
		 * a map's line or "#flushed" ends the block */
		if (len && s[0] != '@' && !is_flushed(s, len))
			return 1;
		w->in_k = false;
		if (!dwwin_wants(w, s, len))
			return 1;
	}
	if (is_flushed(s, len))
		return dwwin_flush(w);
	if (len && s[len - 1] == '\r')
		e--;
	const char *p = s + sizeof(DWWIN_PREFIX) - 1 + 3;
	if (!is_map(s, len)) {
		bad(w, line);
		return 0;
	}
	switch (s[sizeof(DWWIN_PREFIX) - 1]) {
	case 'u':
		return *p == '[' ? header(w, p + 1, e, line) : (bad(w, line), 0);
	case 'w':
		return *p == '[' ? chunk(w, p + 1, e, line) : (bad(w, line), 0);
	case 'k':
		return *p == '[' ? kstack_open(w, p + 1, e, line) : (bad(w, line), 0);
	default: {	/* n: "@stackfold_dn_X: N" */
		uint64_t n;
		p = after(p, e, ": ");
		if (!p || !(p = num(p, e, &n)) || !blank(p, e) ||
		    n > DWWIN_TAKEN_MAX) {
			bad(w, line);
		} else {
			sf_sat_addto(&w->taken, n);
			w->has_taken = w->counted = true;
		}
		return 0;
	}
	}
}

static int key_cmp(uint64_t ac, uint64_t as, uint64_t bc, uint64_t bs)
{
	if (ac != bc)
		return ac < bc ? -1 : 1;
	return as < bs ? -1 : as > bs;
}

static int hdr_cmp(const void *a, const void *b)
{
	const struct dw_hdr *x = a, *y = b;
	return key_cmp(x->cpu, x->seq, y->cpu, y->seq);
}

static int chunk_cmp(const void *a, const void *b)
{
	const struct dw_chunk *x = a, *y = b;
	int r = key_cmp(x->cpu, x->seq, y->cpu, y->seq);
	return r ? r : (x->idx > y->idx) - (x->idx < y->idx);
}

static int kst_cmp(const void *a, const void *b)
{
	const struct dw_kst *x = a, *y = b;
	return key_cmp(x->cpu, x->seq, y->cpu, y->seq);
}

/* bpftrace prints each map sorted by key: sort only when it is not */
static void sort_if(void *v, size_t n, size_t size,
		    int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp((char *)v + (i - 1) * size, (char *)v + i * size) > 0) {
			qsort(v, n, size, cmp);
			return;
		}
}

/* Records of samples before (cpu, seq) that have no header: each such
 * sample partial once. */
static uint64_t orphans_chunks(struct dwwin *w, size_t *ci, uint64_t cpu,
			       uint64_t seq)
{
	uint64_t n = 0;
	while (*ci < w->nch && key_cmp(w->ch[*ci].cpu, w->ch[*ci].seq, cpu, seq) < 0) {
		size_t i = (*ci)++;
		w->c->orphans++;
		n += i == 0 || key_cmp(w->ch[i - 1].cpu, w->ch[i - 1].seq,
				       w->ch[i].cpu, w->ch[i].seq) != 0;
	}
	return n;
}

static uint64_t orphans_kst(struct dwwin *w, size_t *ki, uint64_t cpu,
			    uint64_t seq, size_t ci_from, size_t ci_to)
{
	uint64_t n = 0;
	size_t j = ci_from;	/* both sorted: one pass over the chunks */
	while (*ki < w->nk && key_cmp(w->k[*ki].cpu, w->k[*ki].seq, cpu, seq) < 0) {
		struct dw_kst *k = &w->k[(*ki)++];
		w->c->orphans++;
		while (j < ci_to && key_cmp(w->ch[j].cpu, w->ch[j].seq, k->cpu, k->seq) < 0)
			j++;
		/* a sample whose chunks were orphans too is counted once */
		n += !(j < ci_to && w->ch[j].cpu == k->cpu && w->ch[j].seq == k->seq);
	}
	return n;
}

/* The header's sample from chunks [*ci, ...) and kernel stack k (NULL:
 * none): emitted, or 1 when it is partial. */
static int assemble(struct dwwin *w, struct dw_hdr *h, size_t *ci,
		    const struct dw_kst *k)
{
	size_t need = (size_t)h->nchunks * DWREC_CHUNK_BYTES;
	uint64_t got = 0;
	if (sf_grow((void **)&w->stack, &w->scap, need ? need : 1, 1))
		return -ENOMEM;
	for (; *ci < w->nch && key_cmp(w->ch[*ci].cpu, w->ch[*ci].seq, h->cpu, h->seq) == 0;
	     (*ci)++) {
		const struct dw_chunk *c = &w->ch[*ci];
		if (c->idx == got && got < h->nchunks)	/* (a repeat is skipped) */
			memcpy(w->stack + got++ * DWREC_CHUNK_BYTES, c->b, DWREC_CHUNK_BYTES);
	}
	bool want_k = h->s.mode != 3;
	if (got != h->nchunks || (want_k && (!k || k->n == SIZE_MAX)))
		return 1;
	struct dw_sample *s = &h->s;
	s->stack = w->stack;
	s->stack_len = (size_t)h->len;
	s->kframes = k && want_k && k->n ? w->kf + k->off : NULL;
	s->nkframes = k && want_k ? k->n : 0;
	w->c->samples++;
	w->emitted++;
	w->c->badregs += !!(s->flags & DWREC_BADREGS);
	w->c->kthreads += !!(s->flags & DWREC_KTHREAD);
	w->c->cut += !!(s->flags & DWREC_CUT);
	return w->sample(w->ctx, s);
}

int dwwin_flush(struct dwwin *w)
{
	int ret = 0;
	uint64_t partial = 0;
	w->in_k = false;
	sort_if(w->h, w->nh, sizeof(*w->h), hdr_cmp);
	sort_if(w->ch, w->nch, sizeof(*w->ch), chunk_cmp);
	sort_if(w->k, w->nk, sizeof(*w->k), kst_cmp);
	size_t ci = 0, ki = 0;
	for (size_t i = 0; i < w->nh && !ret; i++) {
		struct dw_hdr *h = &w->h[i];
		if (i && !hdr_cmp(&w->h[i - 1], h))
			continue;	/* printed twice */
		size_t c0 = ci;
		partial += orphans_chunks(w, &ci, h->cpu, h->seq);
		partial += orphans_kst(w, &ki, h->cpu, h->seq, c0, ci);
		const struct dw_kst *k = NULL;
		if (ki < w->nk && !kst_cmp(&w->k[ki], h))
			k = &w->k[ki++];
		while (ki < w->nk && !kst_cmp(&w->k[ki], h))
			ki++;
		ret = assemble(w, h, &ci, k);
		if (ret == 1) {
			partial++;
			ret = 0;
		}
	}
	if (!ret) {
		size_t c0 = ci;
		partial += orphans_chunks(w, &ci, UINT64_MAX, UINT64_MAX);
		partial += orphans_kst(w, &ki, UINT64_MAX, UINT64_MAX, c0, ci);
	}
	w->incomplete += partial;
	w->nh = w->nch = w->nk = w->nkf = 0;
	w->counted = false;
	return ret;
}
