/* report_svg.c - see report_svg.h. */
#include "ingest/report_svg.h"
#include "output/svg_squash.h"
#include "output/svg_tree.h"

#include <errno.h>
#include <stdlib.h>

static int svg_line(void *ctx, const char *stack, size_t len, uint64_t count)
{
	struct report_svg *d = ctx;
	bool mostly;
	int ret = svg_squash(stack, len, &d->sq, &d->sqcap, &stack, &len, &mostly);
	if (ret < 0)
		return ret;
	if (mostly)
		sf_sat_addto(&d->r->sink_mostly_unknown, count);
	return d->stream ? svg_stream_line(d->stream, stack, len, count) :
			   svg_tree_add(d->tree, stack, len, count);
}

static uint64_t svg_total(const void *ctx)
{
	const struct report_svg *d = ctx;
	return d->stream ? svg_stream_total(d->stream) : svg_tree_total(d->tree);
}

static size_t svg_stacks(const void *ctx)
{
	const struct report_svg *d = ctx;
	return d->stream ? svg_stream_stacks(d->stream) :
			   svg_tree_stacks(d->tree);
}

static void svg_source(void *ctx, struct out_input *in)
{
	struct report_svg *d = ctx;
	in->svg = d->stream;
	in->tree = d->tree;
}

int report_svg_attach(struct report_svg *d, struct report *r,
		      const struct out_opts *stream_opts)
{
	*d = (struct report_svg){ .r = r };
	if (stream_opts)
		d->stream = svg_stream_new(stream_opts);
	else
		d->tree = svg_tree_new();
	if (!d->stream && !d->tree)
		return -ENOMEM;
	r->sink = (struct report_sink){ svg_line, svg_total, svg_stacks,
					svg_source, d };
	return 0;
}

void report_svg_release(struct report_svg *d)
{
	svg_stream_free(d->stream);
	svg_tree_free(d->tree);
	free(d->sq);
	*d = (struct report_svg){ 0 };
}
