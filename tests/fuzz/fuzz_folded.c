/*
 * fuzz_folded.c - libFuzzer target: folded text ("a;b;c N") through the
 * report pipeline (line parser, then the resolver and profile, or straight
 * into the fold as when no pprof is wanted: both, one per pass), the fold,
 * and every writer (folded; top, svg and pprof on one input in four).
 *
 * Checked on every input:
 *   - conservation: samples read == fold total == the sum of the counts
 *     in the written folded text;
 *   - round trip: the written folded text read back gives the same
 *     profile total, the same number of lines and byte-identical output
 *     (the writer escapes ';', newlines and control bytes so every line
 *     re-parses to the same frames);
 *   - the SVG four ways is the same bytes (one input in four): from the
 *     fold, from a frame tree fed the input as it comes, laid out while
 *     reading the written folded text (in the fold's order, so the stream
 *     must take every line unless a run of [unknown] frames drawn as one
 *     sorts elsewhere: then read into a tree, as the front-end does), and
 *     from a frame tree fed that text in sort(1)'s order (FlameGraph's, which splits "f" around "f.cold");
 *   - format detection (report.c's decide(), hold(), to_folded()): read
 *     with the format left to be found, an input found to be folded text
 *     gives what it gives read as folded text from its first line (the
 *     same samples, output bytes, unparsable lines and first bad line
 *     number); one found to be bpftrace text took no sample before.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fold.h"
#include "output/out.h"
#include "ingest/report_priv.h"	/* white-box: sets the format, reads the sink */
#include "output/svg_sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feed p to r as folded text (find: as text of a format to be found).
 * Returns 1 when a total past INT64_MAX was refused, 2 when the format
 * found was bpftrace's (not read on: that needs a symbolizer), 3 when a
 * line came out of an svg stream's order (read again into a tree, as the
 * front-end does: a squashed stack may sort elsewhere), else 0;
 * *st (may be NULL) gets the input's stats. */
static int feed_as(struct report *r, const char *p, size_t size, bool direct,
		   bool find, struct report_input_stats *st)
{
	const char *end = p + size;
	struct report_input_stats st0;
	int over = 0;
	r->fold_direct = direct;	/* the fold only, no profile */
	uint64_t before = report_samples(r);
	report_begin_input(r, NULL);
	if (!find)
		r->in.fmt = REPORT_FOLDED;	/* never bpftrace: no symbolizer */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		uint64_t pre = report_samples(r);
		int ret = report_line(r, p, (size_t)(e - p));
		if (r->in.fmt == REPORT_BPFTRACE) {
			if (pre != before)	/* held lines took samples */
				abort();
			return 2;
		}
		if (ret == -EOVERFLOW) {
			over = 1;	/* past INT64_MAX: refused, not wrapped */
			break;
		}
		if (ret == -EAGAIN && r->sink.line && r->sink.ctx &&
		    ((struct svg_sink *)r->sink.ctx)->stream)
			return 3;	/* out of the stream's order */
		if (ret)
			abort();
		p = nl ? nl + 1 : end;
	}
	int ret = report_end_input(r, st ? st : &st0);
	if (ret == -EOVERFLOW && find)
		return 1;	/* held lines added at the end */
	if (ret)
		abort();
	if ((st ? st : &st0)->samples != report_samples(r) - before)
		abort();
	return over;
}

static void feed(struct report *r, const char *p, size_t size, bool direct)
{
	feed_as(r, p, size, direct, false, NULL);
}

/* Write fmt into a memory buffer; returns it (caller frees). */
static char *render(const char *fmt, const struct out_input *in,
		    size_t *len)
{
	char *buf = NULL;
	struct out_opts oo = { 0 };
	struct sf_err err;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		abort();
	if (out_format_find(fmt)->write(f, in, &oo, &err))
		abort();
	if (fclose(f))
		abort();
	return buf;
}

static uint64_t folded_sum(const char *s, size_t len, size_t *lines)
{
	uint64_t sum = 0;
	const char *p = s, *end = s + len;
	*lines = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			abort();	/* every line ends in '\n' */
		const char *sp = nl;
		while (sp > p && sp[-1] != ' ')
			sp--;
		uint64_t v;
		if (sp == p || !sf_parse_u64(sp, (size_t)(nl - sp), &v))
			abort();
		sum += v;
		(*lines)++;
		p = nl + 1;
	}
	return sum;
}

static void one_pass(const char *in, size_t size, char **out, size_t *olen,
		     uint64_t *total, size_t *nlines, int writers, bool direct)
{
	struct report r;
	struct fold f;
	if (report_init(&r, NULL))
		abort();
	feed(&r, in, size, direct);
	*total = report_samples(&r);
	if (report_fold(&r, 0, &f))
		abort();
	if (f.total != *total)
		abort();
	struct out_input oi = { .prof = &r.prof, .fold = &f };
	*out = render("folded", &oi, olen);
	if (folded_sum(*out, *olen, nlines) != *total || *nlines != f.n)
		abort();
	if (writers) {
		static const char *const fmts[] = { "top", "svg", "pprof" };
		for (size_t i = 0; i < (direct ? 2u : 3u); i++) {
			size_t l;
			free(render(fmts[i], &oi, &l));
		}
	}
	fold_release(&f);
	report_release(&r);
}

/* The SVG of in: through a fold, or a tree (way 1), or a stream (way 2). */
static char *svg_way(const char *in, size_t size, int way, size_t *len)
{
	struct report r;
	struct fold f = { 0 };
	struct out_opts oo = { 0 };
	struct svg_sink d = { 0 };
	if (report_init(&r, NULL))
		abort();
	if (way && svg_sink_attach(&d, &r.sink, way == 2 ? &oo : NULL,
				   &r.sink_mostly_unknown))
		abort();
	if (feed_as(&r, in, size, true, false, NULL) == 3) {
		/* only a squashed run of [unknown] may sort elsewhere */
		if (!memmem(in, size, "[unknown];[unknown]", 19))
			abort();
		report_release(&r);
		svg_sink_release(&d);
		return svg_way(in, size, 1, len);
	}
	struct out_input oi = { .svg = d.stream, .tree = d.tree };
	if (!way && report_fold(&r, 0, &f))
		abort();
	if (!way)
		oi.fold = &f;
	char *out = render("svg", &oi, len);
	fold_release(&f);
	report_release(&r);
	svg_sink_release(&d);
	return out;
}

static int line_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t xl = strcspn(x, "\n"), yl = strcspn(y, "\n");
	int c = memcmp(x, y, xl < yl ? xl : yl);
	return c ? c : (xl > yl) - (xl < yl);
}

/* The lines of s (NUL-free, '\n'-terminated) in sort(1)'s order. */
static char *sort_lines(const char *s, size_t len)
{
	size_t n = 0, k = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	const char **v = malloc((n + 1) * sizeof(*v));
	char *out = malloc(len + 1);
	if (!v || !out)
		abort();
	for (const char *p = s; p < s + len; p = strchr(p, '\n') + 1)
		v[k++] = p;
	qsort(v, k, sizeof(*v), line_cmp);
	char *w = out;
	for (size_t i = 0; i < k; i++) {
		size_t l = strcspn(v[i], "\n") + 1;
		memcpy(w, v[i], l);
		w += l;
	}
	free(v);
	return out;
}

static void svg_four_ways(const char *in, size_t size, const char *folded,
			  size_t flen)
{
	size_t l0, l1, l2, l3;
	char *sorted = sort_lines(folded, flen);
	char *a = svg_way(in, size, 0, &l0);
	char *b = svg_way(in, size, 1, &l1);
	char *c = svg_way(folded, flen, 2, &l2);
	char *d = svg_way(sorted, flen, 1, &l3);
	if (l0 != l1 || l0 != l2 || l0 != l3 || memcmp(a, b, l0) ||
	    memcmp(a, c, l0) || memcmp(a, d, l0))
		abort();
	free(a);
	free(b);
	free(c);
	free(d);
	free(sorted);
}

/* Known issue F12: a frame that is only the suffix "_[k]" or "_[j]" is
 * an empty kernel/JIT frame on the profile path ("[empty]_[k]") and stays
 * as it is on the direct path; such outputs skip the byte comparison. */
static int has_bare_suffix(const char *s, size_t len)
{
	for (size_t i = 0; i + 4 <= len; i++)
		if ((i == 0 || s[i - 1] == ';' || s[i - 1] == '\n') &&
		    (!memcmp(s + i, "_[k]", 4) || !memcmp(s + i, "_[j]", 4)) &&
		    i + 4 < len && (s[i + 4] == ';' || s[i + 4] == ' '))
			return 1;
	return 0;
}

/* Read in as folded text, or with the format to be found: its folded
 * output (malloc'd) and stats; NULL when a total overflowed or the format
 * found was bpftrace's. */
static char *detect_pass(const char *in, size_t size, bool find,
			 struct report_input_stats *st, size_t *len)
{
	struct report r;
	struct fold f;
	char *out = NULL;
	if (report_init(&r, NULL))
		abort();
	if (!feed_as(&r, in, size, true, find, st)) {
		if (report_fold(&r, 0, &f))
			abort();
		struct out_input oi = { .prof = &r.prof, .fold = &f };
		out = render("folded", &oi, len);
		fold_release(&f);
	}
	report_release(&r);
	return out;
}

static void detection(const char *in, size_t size)
{
	struct report_input_stats a, b;
	size_t la, lb;
	char *found = detect_pass(in, size, true, &a, &la);
	if (!found)
		return;
	char *forced = detect_pass(in, size, false, &b, &lb);
	if (!forced)
		abort();	/* overflowed as folded only */
	if (a.samples != b.samples || a.unparsable != b.unparsable ||
	    a.first_bad_line != b.first_bad_line ||
	    a.folded_lines != b.folded_lines || la != lb ||
	    memcmp(found, forced, la))
		abort();
	free(found);
	free(forced);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *o1, *o2;
	size_t l1, l2, n1, n2;
	uint64_t t1, t2;
	/* the other writers on one input in 4 (they cost 10x the rest) */
	int writers = size && (data[size / 2] & 3) == 0;
	/* both paths: the profile (pprof wanted) and straight to the fold */
	bool direct = size && (data[0] & 1);
	one_pass((const char *)data, size, &o1, &l1, &t1, &n1, writers, direct);
	one_pass(o1, l1, &o2, &l2, &t2, &n2, 0, !direct);
	if (t1 != t2)
		abort();
	if (writers && direct && t1 && !has_bare_suffix(o1, l1))
		svg_four_ways((const char *)data, size, o1, l1);
	if (!has_bare_suffix(o1, l1) &&
	    (n1 != n2 || l1 != l2 || memcmp(o1, o2, l1)))
		abort();
	free(o1);
	free(o2);
	detection((const char *)data, size);
	return 0;
}
