/* fold.c - the folded view of a profile; see fold.h. */
#include "model/fold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

int fold_init(struct fold *f)
{
	memset(f, 0, sizeof(*f));
	return strtab_init(&f->strs);
}

void fold_release(struct fold *f)
{
	free(f->lines);
	strtab_release(&f->strs);
	memset(f, 0, sizeof(*f));
}

static int line_cmp(const void *a, const void *b);

/* Sorted input (stackfold's own folded output) arrives in order: a line
 * that sorts after the last one is new, one equal to it is the same, and
 * neither needs the hash index, which is built only when a line comes out
 * of order. */
static int64_t fold_intern(struct fold *f, const char *stack, size_t len)
{
	if (f->in_order && f->last_id > 0) {
		const struct fold_line prev = { .stack = strtab_get(&f->strs, f->last_id),
						.len = strtab_len(&f->strs, f->last_id) };
		const struct fold_line cur = { .stack = stack, .len = (uint32_t)len };
		int c = line_cmp(&prev, &cur);
		if (c == 0)
			return f->last_id;
		if (c < 0) {
			int64_t id = strtab_append(&f->strs, stack, len);
			if (id > 0)
				f->last_id = (uint32_t)id;
			return id;
		}
		f->in_order = false;
	}
	int64_t id = strtab_intern(&f->strs, stack, len);
	if (id > 0 && f->n == 0 && !f->in_order && f->strs.n == 2) {
		f->in_order = true;	/* the first line starts the sorted run */
		f->last_id = (uint32_t)id;
	}
	return id;
}

int fold_add(struct fold *f, const char *stack, size_t len, uint64_t count,
	     uint64_t count2)
{
	/* totals stay within pprof's int64 values: refuse, never wrap */
	if (count > (uint64_t)INT64_MAX || f->total > (uint64_t)INT64_MAX - count ||
	    count2 > (uint64_t)INT64_MAX || f->total2 > (uint64_t)INT64_MAX - count2)
		return -EOVERFLOW;
	/* nothing to add: also the never-filled slots of an unfinished fold
	 * (stack NULL) that a caller may walk */
	if (!count && !count2)
		return 0;
	int64_t id = fold_intern(f, stack, len);
	if (id < 0)
		return -ENOMEM;
	/* string id 0 is "", so line i holds string id i+1 ... except for the
	 * empty stack itself, which maps to line 0 via a lookup below. */
	size_t idx = (size_t)id;
	if (idx >= f->n) {
		if (sf_grow((void **)&f->lines, &f->cap, idx + 1, sizeof(*f->lines)))
			return -ENOMEM;
		for (size_t i = f->n; i <= idx; i++)
			memset(&f->lines[i], 0, sizeof(f->lines[i]));
		f->n = idx + 1;
		f->lines[idx].seq = idx;
	}
	struct fold_line *l = &f->lines[idx];
	l->stack = strtab_get(&f->strs, (uint32_t)id);
	l->len = (uint32_t)len;
	l->count += count;
	l->count2 += count2;
	f->total += count;
	f->total2 += count2;
	if (count2)
		f->has_second = true;
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	const struct fold_line *x = a, *y = b;
	return fold_cmp(x->stack, x->len, y->stack, y->len);
}

/*
 * Multikey quicksort (Bentley and Sedgewick) of the lines by their bytes:
 * folded stacks share long prefixes (comm;main;...), which a comparison
 * sort compares again at every step; this one looks at each distinguishing
 * byte about once.  Same order as line_cmp (fold_cmp: bytes ranked by
 * fold_rank).
 * Written here because libc has no string sort; recursion is on the
 * smaller sides and on the next byte only, so the depth stays bounded by
 * log n plus the longest shared prefix, handled iteratively on the equal
 * side.
 */
/* What the sort moves: 16 bytes, not a whole fold_line. */
struct sort_key {
	const char *s;
	uint32_t len, idx;
};

static inline int byte_at(const struct sort_key *k, size_t d)
{
	return fold_rank(k->s, k->len, (uint32_t)d);
}

static inline void swap_keys(struct sort_key *a, struct sort_key *b)
{
	struct sort_key t = *a;
	*a = *b;
	*b = t;
}

/* Both keys share their first d bytes (so both are at least d long). */
static int key_cmp_from(const struct sort_key *a, const struct sort_key *b,
			size_t d)
{
	return fold_cmp(a->s + d, a->len - (uint32_t)d, b->s + d,
			b->len - (uint32_t)d);
}

static void mkqsort(struct sort_key *v, size_t n, size_t d)
{
	while (n > 1) {
		if (n < 16) {	/* insertion sort on the rest of the bytes */
			for (size_t i = 1; i < n; i++)
				for (size_t j = i; j > 0 && key_cmp_from(&v[j - 1], &v[j], d) > 0; j--)
					swap_keys(&v[j - 1], &v[j]);
			return;
		}
		swap_keys(&v[0], &v[n / 2]);
		int pivot = byte_at(&v[0], d);
		size_t lt = 0, i = 1, gt = n;	/* [0,lt) < , [lt,i) == , [gt,n) > */
		while (i < gt) {
			int c = byte_at(&v[i], d);
			if (c < pivot)
				swap_keys(&v[lt++], &v[i++]);
			else if (c > pivot)
				swap_keys(&v[i], &v[--gt]);
			else
				i++;
		}
		mkqsort(v, lt, d);
		mkqsort(v + gt, n - gt, d);
		if (pivot < 0)
			return;	/* the equal run ended here: all the same line */
		v += lt;	/* the equal run, on the next byte */
		n = gt - lt;
		d++;
	}
}

/* Sort f->lines through 16-byte keys, then put the lines in that order. */
static int fold_sort(struct fold *f)
{
	struct sort_key *k = malloc(f->n * sizeof(*k));
	struct fold_line *out = malloc(f->n * sizeof(*out));
	if (!k || !out) {
		free(k);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n; i++)
		k[i] = (struct sort_key){ f->lines[i].stack, f->lines[i].len,
					  (uint32_t)i };
	mkqsort(k, f->n, 0);
	for (size_t i = 0; i < f->n; i++)
		out[i] = f->lines[k[i].idx];
	free(k);
	free(f->lines);
	f->lines = out;
	f->cap = f->n;
	return 0;
}

static bool fold_sorted(const struct fold *f)
{
	for (size_t i = 1; i < f->n; i++)
		if (line_cmp(&f->lines[i - 1], &f->lines[i]) > 0)
			return false;
	return true;
}

/* Did fold_add() give this slot a stack (id 0, "", only when used)? */
static bool line_used(const struct fold_line *l)
{
	return l->stack && (l->count || l->count2);
}

size_t fold_stacks(const struct fold *f)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += line_used(&f->lines[i]);
	return n;
}

int fold_finish(struct fold *f)
{
	/* drop slots that never received a stack (id 0, "", unless used) */
	size_t w = 0;
	for (size_t i = 0; i < f->n; i++)
		if (line_used(&f->lines[i]))
			f->lines[w++] = f->lines[i];
	f->n = w;
	/* Input that is already sorted (stackfold's own folded output) needs
	 * no sort: one linear check saves most of the time on big inputs. */
	if (f->n && !fold_sorted(f))
		return fold_sort(f);
	return 0;
}

/* A growable byte buffer for one stack line. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static int sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (sf_grow((void **)&b->s, &b->cap, b->len + n + 1, 1))
		return -ENOMEM;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	return 0;
}

/* Append a frame, making it safe for the folded format: ';' -> ':',
 * control bytes -> '?'.  Adds the ';' separator first unless empty. */
static int sb_frame(struct sbuf *b, const char *s, size_t n, const char *sfx)
{
	if (b->len && sb_put(b, ";", 1))
		return -ENOMEM;
	size_t start = b->len;
	if (sb_put(b, s, n))
		return -ENOMEM;
	for (size_t i = start; i < b->len; i++) {
		unsigned char c = (unsigned char)b->s[i];
		if (c == ';')
			b->s[i] = ':';
		else if (c < 0x20 || c == 0x7f)
			b->s[i] = '?';
	}
	if (n == 0 && sb_put(b, "[empty]", 7))
		return -ENOMEM;
	return sfx ? sb_put(b, sfx, strlen(sfx)) : 0;
}

/* A profile string and its real length (names may hold NUL bytes, which
 * sb_frame() turns into '?' like other control bytes). */
static const char *pstr(const struct profile *p, uint32_t id, size_t *len)
{
	*len = strtab_len(&p->strs, id);
	return profile_str(p, id);
}

/* High bit of each byte of x that is zero (exact: no false positives). */
static inline uint64_t zero_bytes(uint64_t x)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
	return ~(((x & lo7) + lo7) | x | lo7);
}

/* Does the stack need fold_safe_stack()'s rewrite: a control byte, an
 * empty frame (";;", or ';' first or last), or no bytes at all?  16 or 8
 * bytes at a time: this runs on every byte of folded input. */
static bool needs_rewrite(const char *s, size_t len)
{
	const uint64_t ones = 0x0101010101010101ULL;
	uint64_t carry = 0;	/* the previous word ended in ';' */
	size_t i = 0;
	if (!len || s[0] == ';' || s[len - 1] == ';')
		return true;
#ifdef __SSE2__
	const __m128i semis = _mm_set1_epi8(';'), del = _mm_set1_epi8(0x7f);
	const __m128i ctl = _mm_set1_epi8(0x1f);
	unsigned prev = 0;	/* the previous block ended in ';' */
	for (; i + 16 <= len; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		unsigned semi = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, semis));
		__m128i low = _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x);	/* <= 0x1f */
		unsigned bad = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(low, _mm_cmpeq_epi8(x, del)));
		if (bad || (semi & (semi >> 1)) || (prev & semi))
			return true;
		prev = semi >> 15;
	}
	carry = prev ? 0x80 : 0;
#endif
	for (; i + 8 <= len; i += 8) {
		uint64_t x;
		memcpy(&x, s + i, 8);
		uint64_t semi = zero_bytes(x ^ (ones * ';'));
		uint64_t bad = zero_bytes(x & (ones * 0xe0)) |	/* < 0x20 */
			       zero_bytes(x ^ (ones * 0x7f)) |
			       (semi & (semi >> 8)) | (carry & semi & 0x80);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
		bad = 1;	/* byte order matters above: go bytewise */
#endif
		if (bad)
			break;
		carry = semi >> 63 ? 0x80 : 0;
	}
	for (; i < len; i++) {	/* the tail, or the word found bad */
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f || (c == ';' && s[i - 1] == ';'))
			return true;	/* (s[0] is not ';': i > 0 there) */
	}
	return false;
}

int fold_safe_stack(const char *stack, size_t len, char **buf, size_t *cap,
		    const char **out, size_t *outlen)
{
	const char *p = stack, *end = stack + len;
	if (!needs_rewrite(stack, len)) {	/* the common case */
		*out = stack;
		*outlen = len;
		return 0;
	}
	struct sbuf b = { *buf, 0, *cap };
	int ret = 0;
	while (!ret && len && p <= end) {
		size_t n;
		const char *e = fold_next_frame(p, end, &n);
		ret = sb_frame(&b, p, n, NULL);
		p = e + 1;
	}
	if (!ret && !b.len)
		ret = sb_frame(&b, "[no stack]", 10, NULL);
	*buf = b.s;
	*cap = b.cap;
	*out = b.s;
	*outlen = b.len;
	return ret;
}

int fold_add_frames(struct fold *f, const char *stack, size_t len,
		    uint64_t count)
{
	char *buf = NULL;
	size_t cap = 0, n;
	const char *safe;
	int ret = fold_safe_stack(stack, len, &buf, &cap, &safe, &n);
	if (!ret)
		ret = fold_add(f, safe, n, count, 0);
	free(buf);
	return ret;
}

static int sb_proc_frame(struct sbuf *b, const struct profile *p,
			 const struct pf_sample *s, unsigned flags)
{
	char num[32];
	size_t clen;
	const char *comm = pstr(p, s->comm, &clen);
	/* pid and tid 0 are unknown (not in the input): never printed */
	bool pid = (flags & FOLD_PID) && s->pid;
	if ((flags & FOLD_NO_COMM) || (!s->comm && !pid))
		return 0;
	if (!s->comm) {		/* -p without a comm: "pid-N" */
		snprintf(num, sizeof(num), "pid-%u", s->pid);
		if (sb_frame(b, num, strlen(num), NULL))
			return -ENOMEM;
	} else if (sb_frame(b, comm, clen, NULL)) {
		return -ENOMEM;
	} else if (pid) {
		snprintf(num, sizeof(num), "-%u", s->pid);
		if (sb_put(b, num, strlen(num)))
			return -ENOMEM;
	}
	if ((flags & FOLD_TID) && s->tid) {
		snprintf(num, sizeof(num), "/%u", s->tid);
		if (sb_put(b, num, strlen(num)))
			return -ENOMEM;
	}
	return 0;
}

static const char *kind_suffix(uint8_t kind)
{
	switch (kind) {
	case PF_LOC_KERNEL:
		return "_[k]";
	case PF_LOC_JIT:
		return "_[j]";
	default:
		return NULL;
	}
}

/* "+0x1f", as perf script -F +symoff writes an offset. */
static int sb_offset(struct sbuf *b, uint32_t off)
{
	char num[16];
	int n = snprintf(num, sizeof(num), "+0x%x", off);
	return sb_put(b, num, (size_t)n);
}

/* One location, outermost frame first: the function, then what was inlined
 * into it, each with _[i] (stackcollapse-perf.pl --inline's marks). */
static int sb_location(struct sbuf *b, const struct profile *p,
		       const struct pf_location *l, unsigned flags)
{
	const char *ksfx = kind_suffix(l->kind);
	if (!l->nlines) {
		size_t ulen = 9;
		const char *u = l->unknown_name ? pstr(p, l->unknown_name, &ulen)
						: "[unknown]";
		return sb_frame(b, u, ulen, ksfx);
	}
	for (uint32_t i = l->nlines; i-- > 0;) {
		const struct pf_line *ln = &p->lines[l->line_start + i];
		const struct pf_function *fn = &p->functions[ln->function];
		size_t nlen;
		bool off = (flags & FOLD_OFFSETS) && l->has_offset &&
			   i + 1 == l->nlines;
		const char *name = pstr(p, off && l->offset_name ? l->offset_name
								 : fn->name, &nlen);
		const char *sfx = i + 1 < l->nlines ? "_[i]" : ksfx;
		if (sb_frame(b, name, nlen, NULL))
			return -ENOMEM;
		if (off && sb_offset(b, l->offset))
			return -ENOMEM;
		if ((flags & FOLD_LINES) && ln->line && fn->filename) {
			char tail[64];
			const char *file = profile_str(p, fn->filename);
			const char *base = strrchr(file, '/');
			base = base ? base + 1 : file;
			snprintf(tail, sizeof(tail), ":%u", ln->line);
			if (sb_put(b, ":", 1) || sb_put(b, base, strlen(base)) ||
			    sb_put(b, tail, strlen(tail)))
				return -ENOMEM;
		}
		if (sfx && sb_put(b, sfx, strlen(sfx)))
			return -ENOMEM;
	}
	return 0;
}

bool fold_loc_wanted(const struct pf_location *l, unsigned flags)
{
	if ((flags & FOLD_USER_ONLY) && l->kind == PF_LOC_KERNEL)
		return false;
	if ((flags & FOLD_KERNEL_ONLY) && l->kind != PF_LOC_KERNEL &&
	    l->kind != PF_LOC_MARK)
		return false;
	return true;
}

static int sample_line(struct sbuf *b, const struct profile *p,
		       const struct pf_sample *s, unsigned flags)
{
	const uint32_t *st = profile_stack(p, s);
	bool in_kernel = false;
	b->len = 0;
	if (sb_proc_frame(b, p, s, flags))
		return -ENOMEM;
	for (uint32_t i = s->depth; i-- > 0;) {
		const struct pf_location *l = &p->locations[st[i]];
		if (!fold_loc_wanted(l, flags))
			continue;
		if ((flags & FOLD_DELIMIT) && !in_kernel &&
		    l->kind == PF_LOC_KERNEL) {
			in_kernel = true;
			if (sb_frame(b, "-", 1, NULL))
				return -ENOMEM;
		}
		if (sb_location(b, p, l, flags))
			return -ENOMEM;
	}
	if (!b->len && sb_frame(b, "[no stack]", 10, NULL))
		return -ENOMEM;
	return 0;
}

int fold_add_profile(struct fold *f, const struct profile *p, unsigned flags)
{
	struct sbuf b = { 0 };
	int ret = 0;
	for (size_t i = 1; !ret && i < p->nsamples; i++) {
		const struct pf_sample *s = &p->samples[i];
		ret = sample_line(&b, p, s, flags);
		if (!ret)
			ret = fold_add(f, b.s, b.len, s->count, 0);
	}
	free(b.s);
	return ret;
}

int fold_build(struct fold *f, const struct profile *p, unsigned flags)
{
	int ret = fold_init(f);
	if (!ret)
		ret = fold_add_profile(f, p, flags);
	if (!ret)
		ret = fold_finish(f);
	return ret;
}

int fold_diff(struct fold *out, const struct fold *before,
	      const struct fold *after)
{
	int ret = fold_init(out);
	for (size_t i = 0; !ret && i < after->n; i++)
		ret = fold_add(out, after->lines[i].stack, after->lines[i].len,
			       after->lines[i].count, 0);
	for (size_t i = 0; !ret && i < before->n; i++)
		ret = fold_add(out, before->lines[i].stack,
			       before->lines[i].len, 0, before->lines[i].count);
	if (!ret) {
		out->has_second = true;
		ret = fold_finish(out);
	}
	return ret;
}

void fold_diff_normalize(struct fold *d)
{
	if (!d->total2 || d->total2 == d->total)
		return;
	double k = (double)d->total / (double)d->total2;
	for (size_t i = 0; i < d->n; i++)
		d->lines[i].count2 = (uint64_t)((double)d->lines[i].count2 * k);
}
