/*
 * fuzz_bt_parse.c - libFuzzer target: bpftrace text through the parser,
 * then (for one input in eight, chosen by its bytes: the profile's set-up
 * costs ten parses) the records through the resolver (no symbolizer) into
 * a profile and its fold.
 *
 * Checked on every input:
 *   - every record is well formed: nframes == nuser + nkernel, user frames
 *     first, kernel flags consistent, name/module bytes readable, count > 0;
 *   - conservation: the counts of the records the profile took equal its
 *     sample total, which equals the fold's total; a record that would
 *     take the total past INT64_MAX is refused (-EOVERFLOW), never
 *     wrapped.
 * Any violation aborts (a crash for libFuzzer).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/bt_parse.h"
#include "model/fold.h"
#include "model/profile.h"
#include "ingest/resolver.h"

struct ctx {
	struct profile prof;
	struct resolver *res;
	uint64_t total;
	volatile unsigned sink;
};

static void touch(struct ctx *c, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		c->sink += (unsigned char)s[i];
}

static void check_record(struct ctx *c, const struct bt_record *r)
{
	if (r->nframes != r->nuser + r->nkernel || !r->count)
		abort();
	if (r->nframes && !r->frames)
		abort();
	for (size_t i = 0; i < r->nframes; i++) {
		const struct bt_frame *f = &r->frames[i];
		if (f->kernel != (i >= r->nuser))
			abort();
		if (f->kind == BT_FRAME_NAME && !f->name)
			abort();
		if (f->kind != BT_FRAME_NAME && f->kind != BT_FRAME_ADDR)
			abort();
		if (f->kind == BT_FRAME_ADDR && !f->has_addr)
			abort();
		if (f->name)
			touch(c, f->name, f->name_len);
		if (f->module)
			touch(c, f->module, f->module_len);
	}
	touch(c, r->map, r->map_len);
	if (r->comm)
		touch(c, r->comm, r->comm_len);
}

static int on_record(void *ctx, const struct bt_record *r)
{
	struct ctx *c = ctx;
	check_record(c, r);
	if (!c->res) {
		c->total += r->count;
		return 0;
	}
	int ret = resolver_record(c->res, r);
	if (!ret)
		c->total += r->count;
	else if (ret != -EOVERFLOW)	/* a total past INT64_MAX is refused */
		abort();
	return ret;
}

static int on_maps(void *ctx, uint32_t pid, uint32_t image, const char *text,
		   size_t len, size_t line)
{
	struct ctx *c = ctx;
	(void)pid;
	(void)image;
	(void)line;
	touch(c, text, len);
	return 0;
}

static int on_first(void *ctx, uint32_t pid, uint32_t image, const char *comm,
		    size_t len)
{
	struct ctx *c = ctx;
	(void)pid;
	(void)image;
	touch(c, comm, len);
	return 0;
}

static int on_meta(void *ctx, const char *k, size_t kl, const char *v,
		   size_t vl)
{
	struct ctx *c = ctx;
	touch(c, k, kl);
	touch(c, v, vl);
	return 0;
}

/* A folded line holds no control byte and no NUL. */
static void check_line(const struct fold_line *l)
{
	if (strlen(l->stack) != l->len || !l->len)
		abort();
	for (size_t i = 0; i < l->len; i++) {
		unsigned char ch = (unsigned char)l->stack[i];
		if (ch < 0x20 || ch == 0x7f)
			abort();
	}
}

static volatile unsigned g_detect;	/* format detection, per line */

/* Feed data line by line, like the line reader does (no '\n', the last
 * line may lack it). */
static int feed(struct bt_parser *bp, const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		g_detect += bt_line_is_bpftrace(p, (size_t)(e - p));
		int ret = bt_parser_line(bp, p, (size_t)(e - p));
		if (ret)
			return ret;
		p = nl ? nl + 1 : end;
	}
	return bt_parser_finish(bp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx c = { 0 };
	struct bt_callbacks cb = { .ctx = &c, .record = on_record,
				   .maps = on_maps, .first_sample = on_first,
				   .meta = on_meta };
	bool deep = size && (data[size / 2] & 7) == 0;
	if (deep) {
		if (profile_init(&c.prof))
			abort();
		c.res = resolver_new(&c.prof, NULL, false);
		if (!c.res)
			abort();
	}
	struct bt_parser *bp = bt_parser_new(&cb);
	if (!bp)
		abort();
	int ret = feed(bp, data, size);
	if (ret && ret != -EOVERFLOW)
		abort();
	const struct bt_counters *k = bt_parser_counters(bp);
	if (k->first_bad_line && !k->unparsable_lines)
		abort();
	if (deep) {
		struct fold f;
		if (c.prof.counters.samples != c.total)
			abort();
		if (fold_build(&f, &c.prof, 0))
			abort();
		if (f.total != c.total)
			abort();
		for (size_t i = 0; i < f.n; i++)
			check_line(&f.lines[i]);
		fold_release(&f);
	}
	bt_parser_free(bp);
	if (deep) {
		resolver_free(c.res);
		profile_release(&c.prof);
	}
	return 0;
}
