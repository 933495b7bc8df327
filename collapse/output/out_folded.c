/* out_folded.c - FlameGraph folded stacks: `frame;...;frame COUNT`. */
#include "output/out.h"

#include <errno.h>
#include <inttypes.h>

int out_folded_write(FILE *out, const struct out_input *in,
		     const struct out_opts *opts, struct sf_err *err)
{
	const struct fold *f = in->fold;
	(void)opts;
	for (size_t i = 0; i < f->n; i++) {
		const struct fold_line *l = &f->lines[i];
		if (f->has_second)
			fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", l->stack,
				l->count2, l->count);
		else
			fprintf(out, "%s %" PRIu64 "\n", l->stack, l->count);
	}
	if (ferror(out))
		return sf_err_set(err, EIO, "write error");
	return 0;
}
