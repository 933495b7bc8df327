/*
 * out_top.c - the top table: share of samples per function, self (leaf)
 * and total (anywhere on the stack, counted once per stack), then the
 * hottest stacks, like `70.0%  main;compute;matrix_multiply`.
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
			       unsigned rows)
{
	size_t n = t->names.n;
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n && i < t->cap; i++)
		if (t->fn[i].total)
			ids[k++] = (uint32_t)i;
	sort_ctx = t;
	qsort(ids, k, sizeof(*ids), by_self);
	fprintf(out, "%7s %10s %7s %10s  %s\n", "SELF%", "SELF", "TOTAL%",
		"TOTAL", "FUNCTION");
	for (size_t i = 0; i < k && i < rows; i++) {
		const struct top_fn *f = &t->fn[ids[i]];
		fprintf(out, "%6.1f%% %10" PRIu64 " %6.1f%% %10" PRIu64 "  %s\n",
			pct(f->self, total), f->self, pct(f->total, total),
			f->total, strtab_get(&t->names, ids[i]));
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
	int ret = top_collect(&t, in->fold);
	if (!ret) {
		fprintf(out, "%" PRIu64 " %s\n", in->fold->total, unit);
		ret = top_print_functions(out, &t, in->fold->total, rows);
	}
	if (!ret)	/* (a part missing is an error, not a shorter table) */
		ret = top_print_stacks(out, in->fold, rows < 10 ? rows : 10);
	strtab_release(&t.names);
	free(t.fn);
	if (ret)
		return sf_err_set(err, ENOMEM, "out of memory");
	if (ferror(out))
		return sf_err_set(err, EIO, "write error");
	return 0;
}
