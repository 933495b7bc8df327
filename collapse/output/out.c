/* out.c - the table of output formats; see out.h.  Adding a format means
 * one new out_<fmt>.c file and one row here. */
#include "output/out.h"

#include <string.h>

const struct out_format out_formats[] = {
	{ "folded", ".folded", out_folded_write, OUT_DIFF, NULL, NULL },
	{ "top", ".top", out_top_write, OUT_SHOWN, NULL, NULL },
	{ "svg", ".svg", out_svg_write, OUT_PAGES | OUT_DIFF | OUT_STREAM,
	  NULL, NULL },
	{ "pprof", ".pb.gz", out_pprof_write,
	  OUT_BINARY | OUT_LINES | OUT_PROFILE, ".pb",
	  " (compare two profiles with go tool pprof -diff_base=BEFORE AFTER)" },
};
const unsigned out_nformats = sizeof(out_formats) / sizeof(out_formats[0]);

const struct out_format *out_format_find(const char *name)
{
	for (unsigned i = 0; i < out_nformats; i++)
		if (strcmp(out_formats[i].name, name) == 0)
			return &out_formats[i];
	return NULL;
}
