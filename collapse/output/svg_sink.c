/* svg_sink.c - see svg_sink.h. */
#include "output/svg_sink.h"
#include "output/svg_squash.h"
#include "output/svg_tree.h"

#include <errno.h>
#include <stdlib.h>

static int svg_line(void *ctx, const char *stack, size_t len, uint64_t count)
{
	struct svg_sink *d = ctx;
	bool mostly;
	int ret = svg_squash(stack, len, &d->sq, &d->sqcap, &stack, &len, &mostly);
	if (ret < 0)
		return ret;
	if (mostly)
		sf_sat_addto(d->mostly_unknown, count);
	return d->stream ? svg_stream_line(d->stream, stack, len, count) :
			   svg_tree_add(d->tree, stack, len, count);
}

static uint64_t svg_total(const void *ctx)
{
	const struct svg_sink *d = ctx;
	return d->stream ? svg_stream_total(d->stream) : svg_tree_total(d->tree);
}

static size_t svg_stacks(const void *ctx)
{
	const struct svg_sink *d = ctx;
	return d->stream ? svg_stream_stacks(d->stream) :
			   svg_tree_stacks(d->tree);
}

static void svg_source(void *ctx, struct out_input *in)
{
	struct svg_sink *d = ctx;
	in->svg = d->stream;
	in->tree = d->tree;
}

int svg_sink_attach(struct svg_sink *d, struct out_sink *sink,
		    const struct out_opts *stream_opts,
		    uint64_t *mostly_unknown)
{
	*d = (struct svg_sink){ .mostly_unknown = mostly_unknown };
	if (stream_opts)
		d->stream = svg_stream_new(stream_opts);
	else
		d->tree = svg_tree_new();
	if (!d->stream && !d->tree)
		return -ENOMEM;
	*sink = (struct out_sink){ svg_line, svg_total, svg_stacks,
				   svg_source, d };
	return 0;
}

void svg_sink_release(struct svg_sink *d)
{
	svg_stream_free(d->stream);
	svg_tree_free(d->tree);
	free(d->sq);
	*d = (struct svg_sink){ 0 };
}
