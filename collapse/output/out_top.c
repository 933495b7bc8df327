/*
 * out_top.c - the top table: share of samples per function, self (leaf)
 * and total (anywhere on the stack, counted once per stack), then the
 * hottest stacks, like `70.0%  main;compute;matrix_multiply`.
 *
 * With --sort KEYS (comm, pid, tid, dso, sym, as perf report --sort) a
 * row is one function in one process and object: "read" of bash and
 * "read" of python are two rows.  From the profile's samples: comm the
 * process frame's name, dso the mapping's file name ([kernel.kallsyms],
 * [unknown] when none); folded input has no objects: the root frame is
 * the comm (comm-PID gives the pid, a "/TID" after it the tid), the dso
 * [unknown].  The hottest stacks then follow the same keys: "COMM PID:
 * DSO SYM;DSO SYM", the sample's keys first, then each frame's, root
 * first (without sym, a run of one dso is one frame).
 *
 * Names are printed as the folded output has them: control bytes (a
 * comm's newline, tab or escape) as '?', so each row stays one line.
 */
#include "output/out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct top_fn {
	uint64_t self, total;
	size_t stamp;		/* last line that counted total (+1) */
};

struct top {
	struct strtab names;
	struct top_fn *fn;
	size_t cap;
};

static int top_frame(struct top *t, const char *s, size_t len, uint64_t count,
		     bool leaf, size_t line)
{
	int64_t id = strtab_intern(&t->names, s, len);
	if (id < 0)
		return -ENOMEM;
	if ((size_t)id >= t->cap) {
		size_t old = t->cap;
		if (sf_grow((void **)&t->fn, &t->cap, (size_t)id + 1, sizeof(*t->fn)))
			return -ENOMEM;
		memset(t->fn + old, 0, (t->cap - old) * sizeof(*t->fn));
	}
	struct top_fn *f = &t->fn[id];
	if (leaf)
		f->self += count;
	if (f->stamp != line + 1) {
		f->total += count;
		f->stamp = line + 1;
	}
	return 0;
}

static int top_collect(struct top *t, const struct fold *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct fold_line *l = &f->lines[i];
		const char *p = l->stack, *end = l->stack + l->len;
		while (p <= end) {
			size_t len;
			const char *e = fold_next_frame(p, end, &len);
			if (top_frame(t, p, len, l->count, e == end, i))
				return -ENOMEM;
			p = e + 1;
		}
	}
	return 0;
}

/* ---- --sort KEYS ---- */

enum { K_COMM, K_PID, K_TID, K_DSO, K_SYM, NKEYS };
static const char *const key_names[NKEYS] = { "comm", "pid", "tid", "dso", "sym" };
static const char *const key_heads[NKEYS] = { "COMM", "PID", "TID", "DSO", "FUNCTION" };

/* A key of each frame (else of the sample: comm, pid, tid)? */
static bool frame_key(int key)
{
	return key == K_DSO || key == K_SYM;
}

struct keys {
	int order[NKEYS];	/* the keys asked for, in order */
	int n;
	bool has_sym;
	char *buf;		/* the row's key text, fields split by '\t' */
	size_t len, cap;
	/* the stack being read: its frames' keys, in the order they came */
	char *fbuf;
	size_t flen, fcap;
	size_t *foff;		/* each frame's start in fbuf; ends at the next */
	size_t nf, focap;
	char *sbuf;		/* the stack's key (keys_stack()) */
	size_t slen, scap;
	struct top stacks;	/* the hottest stacks by these keys: self */
};

/* n bytes of s at dst, control bytes as '?' (as the folded output has
 * them): a row or a stack is one line, its fields split by tabs. */
static void put_safe(char *dst, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
}

static int keys_parse(struct keys *k, const char *sort)
{
	k->n = 0;
	unsigned seen = 0;	/* a key named twice counts once: order[] holds each once */
	for (const char *p = sort; *p;) {
		size_t n = strcspn(p, ",");
		for (int i = 0; i < NKEYS; i++)
			if (strlen(key_names[i]) == n && !strncmp(key_names[i], p, n) &&
			    !(seen & 1u << i)) {
				seen |= 1u << i;
				k->order[k->n++] = i;
				k->has_sym |= i == K_SYM;
			}
		p += n + (p[n] == ',');
	}
	return k->n ? 0 : -EINVAL;
}

static int keys_add(struct keys *k, const char *s, size_t n)
{
	if (sf_grow((void **)&k->buf, &k->cap, k->len + n + 2, 1))
		return -ENOMEM;
	if (k->len)
		k->buf[k->len++] = '\t';
	put_safe(k->buf + k->len, s, n);
	k->len += n;
	k->buf[k->len] = 0;
	return 0;
}

/* Append SEP and S to *b, S made safe (put_safe()). */
static int buf_add(char **b, size_t *len, size_t *cap, const char *sep,
		   const char *s, size_t n)
{
	size_t sl = strlen(sep);
	if (sf_grow((void **)b, cap, *len + sl + n + 1, 1))
		return -ENOMEM;
	memcpy(*b + *len, sep, sl);
	put_safe(*b + *len + sl, s, n);
	*len += sl + n;
	(*b)[*len] = 0;
	return 0;
}

/* The row key of one frame; its frame keys noted for keys_stack(). */
static int keys_row(struct top *t, struct keys *k, const char *f[NKEYS],
		    const size_t fl[NKEYS], uint64_t count, bool leaf, size_t line)
{
	k->len = 0;
	for (int i = 0; i < k->n; i++)
		if (keys_add(k, f[k->order[i]], fl[k->order[i]]))
			return -ENOMEM;
	if (sf_grow((void **)&k->foff, &k->focap, k->nf + 1, sizeof(*k->foff)))
		return -ENOMEM;
	k->foff[k->nf++] = k->flen;
	size_t start = k->flen;
	for (int i = 0; i < k->n; i++) {
		int key = k->order[i];
		if (frame_key(key) &&
		    buf_add(&k->fbuf, &k->flen, &k->fcap,
			    k->flen > start ? " " : "", f[key], fl[key]))
			return -ENOMEM;
	}
	return top_frame(t, k->buf, k->len, count, leaf, line);
}

/* The stack read (its frames noted by keys_row(), leaf first unless
 * root_first) counted in k->stacks under its key: the sample's keys (f),
 * then ": " and the frames' keys, root first, split by ';' (a run of one
 * frame key is one frame when sym is not a key). */
static int keys_stack(struct keys *k, const char *f[NKEYS],
		      const size_t fl[NKEYS], uint64_t count, bool root_first,
		      size_t line)
{
	k->slen = 0;
	int ret = 0;
	for (int i = 0; !ret && i < k->n; i++)
		if (!frame_key(k->order[i]))
			ret = buf_add(&k->sbuf, &k->slen, &k->scap,
				      k->slen ? " " : "", f[k->order[i]],
				      fl[k->order[i]]);
	size_t head = k->slen, prev = 0, prevn = 0;
	bool any = false;
	for (size_t j = 0; !ret && j < k->nf; j++) {
		size_t i = root_first ? j : k->nf - 1 - j;
		size_t at = k->foff[i];
		size_t n = (i + 1 < k->nf ? k->foff[i + 1] : k->flen) - at;
		if (!n || (any && !k->has_sym && n == prevn &&
			   !memcmp(k->fbuf + prev, k->fbuf + at, n)))
			continue;
		ret = buf_add(&k->sbuf, &k->slen, &k->scap,
			      any ? ";" : head ? ": " : "", k->fbuf + at, n);
		any = true;
		prev = at, prevn = n;
	}
	k->nf = 0, k->flen = 0;
	if (ret)
		return ret;
	return top_frame(&k->stacks, k->sbuf ? k->sbuf : "", k->slen, count,
			 true, line);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/* The dso of a location. */
static const char *loc_dso(const struct profile *p, const struct pf_location *l)
{
	if (l->kind == PF_LOC_KERNEL)
		return "[kernel.kallsyms]";
	if (l->kind == PF_LOC_JIT)
		return "[jit]";
	if (!l->mapping || !p->mappings[l->mapping].filename)
		return "[unknown]";
	return base_name(profile_str(p, p->mappings[l->mapping].filename));
}

static int keys_sample(struct top *t, struct keys *k, const struct profile *p,
		       const struct pf_sample *s, unsigned flags, size_t line)
{
	const char *f[NKEYS];
	size_t fl[NKEYS];
	char pid[16], tid[16];
	snprintf(pid, sizeof(pid), "%u", s->pid);
	snprintf(tid, sizeof(tid), "%u", s->tid);
	f[K_COMM] = s->comm ? profile_str(p, s->comm) : "[unknown]";
	f[K_PID] = s->pid ? pid : "-";
	f[K_TID] = s->tid ? tid : "-";
	fl[K_COMM] = strlen(f[K_COMM]);
	fl[K_PID] = strlen(f[K_PID]);
	fl[K_TID] = strlen(f[K_TID]);
	const uint32_t *st = profile_stack(p, s);
	bool leaf = true;
	for (uint32_t i = 0; i < s->depth; i++) {
		const struct pf_location *l = &p->locations[st[i]];
		if (!fold_loc_wanted(l, flags))
			continue;
		f[K_DSO] = loc_dso(p, l);
		fl[K_DSO] = strlen(f[K_DSO]);
		const char *sfx = l->kind == PF_LOC_KERNEL ? "_[k]" :
				  l->kind == PF_LOC_JIT ? "_[j]" : "";
		for (uint32_t j = 0; j < (l->nlines ? l->nlines : 1); j++) {
			char name[1024];
			const char *n = l->nlines ? profile_str(p, p->functions[
				p->lines[l->line_start + j].function].name) :
				l->unknown_name ? profile_str(p, l->unknown_name) : "[unknown]";
			snprintf(name, sizeof(name), "%s%s", n, sfx);
			f[K_SYM] = name;
			fl[K_SYM] = strlen(name);
			if (keys_row(t, k, f, fl, s->count, leaf, line))
				return -ENOMEM;
			leaf = false;
		}
	}
	if (leaf) {	/* no frame: the process alone, as the fold has it */
		f[K_DSO] = "[unknown]";
		f[K_SYM] = f[K_COMM];
		fl[K_DSO] = strlen(f[K_DSO]);
		fl[K_SYM] = fl[K_COMM];
		if (keys_row(t, k, f, fl, s->count, true, line))
			return -ENOMEM;
	}
	return keys_stack(k, f, fl, s->count, false, line);
}

/* Folded lines: the root frame is the process ("comm" or "comm-PID"). */
static int keys_line(struct top *t, struct keys *k, const struct fold_line *l,
		     size_t line)
{
	const char *f[NKEYS];
	size_t fl[NKEYS];
	const char *p = l->stack, *end = l->stack + l->len;
	size_t rlen;
	const char *e = fold_next_frame(p, end, &rlen);
	size_t d = rlen;
	while (d && p[d - 1] >= '0' && p[d - 1] <= '9')
		d--;
	/* "comm-PID/TID" (--pid --tid), "comm/TID" (--tid) */
	size_t plen = rlen;	/* the root without "/TID" */
	bool hastid = d < rlen && d > 0 && p[d - 1] == '/';
	f[K_TID] = hastid ? p + d : "-";
	fl[K_TID] = hastid ? rlen - d : 1;
	if (hastid) {
		plen = d - 1;
		d = plen;
		while (d && p[d - 1] >= '0' && p[d - 1] <= '9')
			d--;
	}
	bool haspid = d < plen && d > 0 && p[d - 1] == '-';
	f[K_COMM] = p;
	fl[K_COMM] = haspid ? d - 1 : plen;
	f[K_PID] = haspid ? p + d : "-";
	fl[K_PID] = haspid ? plen - d : 1;
	f[K_DSO] = "[unknown]";
	fl[K_DSO] = 9;
	if (e == end) {	/* the process frame alone */
		f[K_SYM] = p;
		fl[K_SYM] = rlen;
		if (keys_row(t, k, f, fl, l->count, true, line))
			return -ENOMEM;
		return keys_stack(k, f, fl, l->count, true, line);
	}
	for (const char *q = e + 1; q <= end; q = e + 1) {
		size_t n;
		e = fold_next_frame(q, end, &n);
		f[K_SYM] = q;
		fl[K_SYM] = n;
		if (keys_row(t, k, f, fl, l->count, e == end, line))
			return -ENOMEM;
	}
	return keys_stack(k, f, fl, l->count, true, line);
}

static int keys_collect(struct top *t, struct keys *k, const struct out_input *in,
			unsigned flags)
{
	const struct profile *p = in->prof;
	if (p && p->counters.samples) {
		for (size_t i = 1; i < p->nsamples; i++)
			if (p->samples[i].count &&
			    keys_sample(t, k, p, &p->samples[i], flags, i))
				return -ENOMEM;
		return 0;
	}
	for (size_t i = 0; i < in->fold->n; i++)
		if (keys_line(t, k, &in->fold->lines[i], i))
			return -ENOMEM;
	return 0;
}

/* A keyed row: each field but the last padded to its column. */
static void keys_print(FILE *out, const struct keys *k, const char *row)
{
	static const int width[NKEYS] = { 16, 7, 7, 24, 0 };
	for (int i = 0; i < k->n; i++) {
		size_t n = strcspn(row, "\t");
		if (i == k->n - 1)
			fprintf(out, "%.*s", (int)n, row);
		else
			fprintf(out, "%-*.*s ", width[k->order[i]], (int)n, row);
		row += n + (row[n] == '\t');
	}
	fputc('\n', out);
}

static const struct top *sort_ctx;

static int by_self(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct top_fn *fx = &sort_ctx->fn[x], *fy = &sort_ctx->fn[y];
	if (fx->self != fy->self)
		return fx->self < fy->self ? 1 : -1;
	if (fx->total != fy->total)
		return fx->total < fy->total ? 1 : -1;
	return strcmp(strtab_get(&sort_ctx->names, x),
		      strtab_get(&sort_ctx->names, y));
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

static int top_print_functions(FILE *out, const struct top *t, uint64_t total,
			       unsigned rows, const struct keys *k)
{
	size_t n = t->names.n;
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	size_t nk = 0;
	for (size_t i = 0; i < n && i < t->cap; i++)
		if (t->fn[i].total)
			ids[nk++] = (uint32_t)i;
	sort_ctx = t;
	qsort(ids, nk, sizeof(*ids), by_self);
	fprintf(out, "%7s %10s %7s %10s  ", "SELF%", "SELF", "TOTAL%", "TOTAL");
	if (k) {
		char head[64] = "";
		for (int i = 0; i < k->n; i++)
			snprintf(head + strlen(head), sizeof(head) - strlen(head),
				 "%s%s", i ? "\t" : "", key_heads[k->order[i]]);
		keys_print(out, k, head);
	} else {
		fprintf(out, "FUNCTION\n");
	}
	for (size_t i = 0; i < nk && i < rows; i++) {
		const struct top_fn *f = &t->fn[ids[i]];
		fprintf(out, "%6.1f%% %10" PRIu64 " %6.1f%% %10" PRIu64 "  ",
			pct(f->self, total), f->self, pct(f->total, total),
			f->total);
		if (k)
			keys_print(out, k, strtab_get(&t->names, ids[i]));
		else
			fprintf(out, "%s\n", strtab_get(&t->names, ids[i]));
	}
	free(ids);
	return 0;
}

static const struct fold *stack_ctx;

static int by_count(const void *a, const void *b)
{
	const struct fold_line *x = &stack_ctx->lines[*(const size_t *)a];
	const struct fold_line *y = &stack_ctx->lines[*(const size_t *)b];
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* HOTTEST STACKS by --sort's keys (k->stacks, keys_stack()) */
static int top_print_keyed_stacks(FILE *out, const struct top *t,
				  uint64_t total, unsigned rows)
{
	size_t n = t->names.n, nk = 0;
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n && i < t->cap; i++)
		if (t->fn[i].self)
			ids[nk++] = (uint32_t)i;
	sort_ctx = t;
	qsort(ids, nk, sizeof(*ids), by_self);
	fprintf(out, "\nHOTTEST STACKS\n");
	for (size_t i = 0; i < nk && i < rows; i++)
		fprintf(out, "%6.1f%%  %s\n", pct(t->fn[ids[i]].self, total),
			strtab_get(&t->names, ids[i]));
	free(ids);
	return 0;
}

static int top_print_stacks(FILE *out, const struct fold *f, unsigned rows)
{
	size_t *idx = malloc((f->n ? f->n : 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		idx[i] = i;
	stack_ctx = f;
	qsort(idx, f->n, sizeof(*idx), by_count);
	fprintf(out, "\nHOTTEST STACKS\n");
	for (size_t i = 0; i < f->n && i < rows; i++)
		fprintf(out, "%6.1f%%  %s\n", pct(f->lines[idx[i]].count, f->total),
			f->lines[idx[i]].stack);
	free(idx);
	return 0;
}

int out_top_write(FILE *out, const struct out_input *in,
		  const struct out_opts *opts, struct sf_err *err)
{
	struct top t = { 0 };
	unsigned rows = opts->top_n ? opts->top_n : 25;	/* OUT_TOP_ALL: all */
	const char *unit = opts->countname ? opts->countname : "samples";
	if (strtab_init(&t.names))
		return sf_err_set(err, ENOMEM, "out of memory");
	struct keys k = { .n = 0 };
	bool keyed = opts->sort && !keys_parse(&k, opts->sort);
	int ret = keyed && strtab_init(&k.stacks.names) ? -ENOMEM : 0;
	if (!ret)
		ret = keyed ? keys_collect(&t, &k, in, opts->fold_flags)
			    : top_collect(&t, in->fold);
	if (!ret) {
		fprintf(out, "%" PRIu64 " %s\n", in->fold->total, unit);
		ret = top_print_functions(out, &t, in->fold->total, rows,
					  keyed ? &k : NULL);
	}
	/* (a part missing is an error, not a shorter table) */
	if (!ret && keyed)
		ret = top_print_keyed_stacks(out, &k.stacks, in->fold->total,
					     rows < 10 ? rows : 10);
	else if (!ret)
		ret = top_print_stacks(out, in->fold, rows < 10 ? rows : 10);
	if (keyed) {
		strtab_release(&k.stacks.names);
		free(k.stacks.fn);
	}
	free(k.buf);
	free(k.fbuf);
	free(k.foff);
	free(k.sbuf);
	strtab_release(&t.names);
	free(t.fn);
	if (ret)
		return sf_err_set(err, ENOMEM, "out of memory");
	if (ferror(out))
		return sf_err_set(err, EIO, "write error");
	return 0;
}
