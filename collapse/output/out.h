/*
 * out.h - output writers.  One file per format, each exporting one
 * function listed in the table in out.c.
 *
 * A writer writes the whole output to `out` and returns 0, or a negative
 * errno with err filled (-EIO for a write error, which the caller also sees
 * through ferror()).  Writers never print to stderr and never exit.
 */
#ifndef SF_OUT_H
#define SF_OUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/fold.h"
#include "model/profile.h"
#include "output/svg_tree.h"
#include "base/util.h"

#define OUT_TOP_ALL UINT_MAX	/* out_opts.top_n: no row limit */

struct out_opts {
	unsigned fold_flags;	/* enum fold_flags used to build the fold */
	/* top */
	unsigned top_n;		/* rows, 0 = default (25), OUT_TOP_ALL =
				 * every function (--top 0) */
	/* top and svg */
	const char *countname;	/* what a count is, NULL = "samples" */
	/* svg */
	const char *title, *subtitle, *colors;
	unsigned width;		/* pixels, 0 = 1200 */
	double minwidth;	/* percent of total (0.1 default), or pixels
				 * when minwidth_px */
	bool minwidth_px;
	bool inverted, flamechart, no_hash;
	/* flamegraph.pl's options, with its meaning and defaults */
	unsigned frame_height;	/* --height: px per frame, 0 = 16 */
	double fontsize;	/* --fontsize, 0 = 12 */
	double fontwidth;	/* --fontwidth: average glyph width / size,
				 * 0 = 0.59 */
	const char *fonttype;	/* --fonttype, NULL = Verdana */
	const char *bgcolors;	/* --bgcolors yellow|blue|green|grey|#rrggbb,
				 * NULL = the palette's */
	const char *nametype;	/* --nametype, NULL = "Function:" */
	const char *notes;	/* --notes: an XML comment in the SVG */
	const char *palette_map;	/* --cp: consistent colours kept in
					 * this file (palette.map) */
	bool random;		/* --random: colours not keyed by name */
	bool reverse;		/* --reverse: stacks leaf first */
	bool negate;		/* --negate: differential hues swapped */
	bool diff_counts;	/* differential: raw counts, not shares */
	/* folded */
	bool provenance;	/* a first "# stackfold: " line (report.h) */
	/* top */
	const char *sort;	/* --sort comm,dso,sym (NULL: sym) */
	/* pprof */
	bool pprof_no_gzip;
	/* svg: what it drew shortened, for the caller's summary (NULL: not
	 * asked; the writer adds to it) */
	struct out_svg_stats *svg_stats;
};

/* Stacks of mostly [unknown] frames (svg_squash.h), drawn shortened. */
struct out_svg_stats {
	uint64_t mostly_unknown;	/* their samples */
};

/*
 * A flame graph laid out while folded text is read (svg is then the only
 * output): lines that come in the fold's order (fold_cmp), as stackfold's
 * folded output does (and FlameGraph's sorted output, unless a name is a
 * prefix of its sibling's: "f", "f.cold"), go straight into the layout, so
 * no line and no fold is kept: memory follows the frames drawn and the
 * frames open at once, not the input.  The frames kept so far are
 * those at least as wide as the minimum width would be with the samples
 * read so far (never wider than the final one); the final width trims the
 * rest when written.  The SVG is byte for byte the one the fold gives.
 *
 * With --flamechart the lines are taken in any order, as they come (time
 * order), and only adjacent frames merge, as in flamegraph.pl --flamechart.
 *
 * svg_stream_new(): NULL on ENOMEM.  svg_stream_line(): 0, -ENOMEM, or
 * -EDOM when the line is out of frame-wise order, never with --flamechart
 * (the layout is then unusable: read the input again into a fold).  The stream is written by
 * out_svg_write() through out_input.svg, once.
 */
struct svg_stream;
struct svg_stream *svg_stream_new(const struct out_opts *o);
int svg_stream_line(struct svg_stream *s, const char *stack, size_t len,
		    uint64_t count);
uint64_t svg_stream_total(const struct svg_stream *s);
size_t svg_stream_stacks(const struct svg_stream *s);	/* distinct lines */
void svg_stream_free(struct svg_stream *s);	/* NULL is fine */

/* Input the writers may read: the profile (may be NULL when the input was
 * a plain folded file and the writer needs only the fold) and its fold;
 * for the svg writer alone, a stream or a frame tree (svg_tree.h) instead
 * (fold NULL). */
struct out_input {
	const struct profile *prof;
	const struct fold *fold;
	struct svg_stream *svg;
	struct svg_tree *tree;
	/* what was lost reading the input, also when prof is NULL (folded
	 * text: unparsable lines); NULL when unknown */
	const struct pf_counters *counters;
	/* the capture's metadata and counters (profile.h's meta, counters,
	 * strings), also when prof is NULL; NULL when none */
	const struct profile *meta;
	/* --diff: the before input's losses (counters are the after's);
	 * NULL otherwise */
	const struct pf_counters *counters_before;
};

/* Where the lines of folded-text input go when a writer lays them out as
 * they come (an svg as the only output of one folded file: svg_sink.h),
 * instead of into the reader's fold.  The reader (ingest/report.h) calls
 * line, total and stacks; source points the writers' input at what was
 * taken.  ctx is the sink's owner's; line == NULL: no sink. */
struct out_sink {
	/* One line's stack (without its count): 0, -ENOMEM, or -EDOM when
	 * it comes out of the order the sink takes (report_line() returns
	 * -EAGAIN: read the input again without the sink). */
	int (*line)(void *ctx, const char *stack, size_t len, uint64_t count);
	uint64_t (*total)(const void *ctx);	/* the counts taken */
	size_t (*stacks)(const void *ctx);	/* the distinct stacks taken */
	void (*source)(void *ctx, struct out_input *in);
	void *ctx;
};

typedef int (*out_fn)(FILE *out, const struct out_input *in,
		      const struct out_opts *opts, struct sf_err *err);

int out_folded_write(FILE *out, const struct out_input *in,
		     const struct out_opts *opts, struct sf_err *err);
int out_top_write(FILE *out, const struct out_input *in,
		  const struct out_opts *opts, struct sf_err *err);
int out_svg_write(FILE *out, const struct out_input *in,
		  const struct out_opts *opts, struct sf_err *err);
int out_pprof_write(FILE *out, const struct out_input *in,
		    const struct out_opts *opts, struct sf_err *err);

/* What a format is, so that the front-ends ask its row, never its name:
 * a new format is its out_<fmt>.c and its row in out.c.  `stackfold
 * --list formats` names these bits in this order (cmd/lists.c). */
enum out_flags {
	OUT_BINARY = 1 << 0,	/* not text: never to a terminal unless -o - */
	OUT_PAGES = 1 << 1,	/* page-long text (svg): not to a terminal
				 * either */
	OUT_LINES = 1 << 2,	/* writes file names and line numbers */
	OUT_PROFILE = 1 << 3,	/* needs the profile, not the fold alone:
				 * folded input goes through one */
	OUT_DIFF = 1 << 4,	/* has a form for --diff BEFORE AFTER */
	OUT_SHOWN = 1 << 5,	/* record shows it on the terminal instead of
				 * writing PREFIX + suffix */
	OUT_STREAM = 1 << 6,	/* alone, from one folded file: written from a
				 * stream or a frame tree (out_input.svg,
				 * .tree), without a fold */
};

struct out_format {
	const char *name;	/* -f NAME */
	const char *suffix;	/* PREFIX + suffix with -o in record mode */
	out_fn write;
	unsigned flags;		/* enum out_flags */
	/* with --no-gzip (out_opts.pprof_no_gzip) the suffix instead;
	 * NULL: the format is not compressed */
	const char *plain_suffix;
	/* without OUT_DIFF: what to do instead, said after the refusal
	 * (" (...)"), or NULL */
	const char *no_diff;
};
/* Table lookup by name; NULL when unknown. */
const struct out_format *out_format_find(const char *name);
extern const struct out_format out_formats[];
extern const unsigned out_nformats;

#endif
