/* write.c - the outputs written (see write.h): each to stdout or through
 * an atomic file, every one tried even after one failed. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/atomic.h"
#include "output/write.h"

static int write_one(const struct out_dest *o, const struct out_input *in,
		     const struct out_opts *oo, struct sf_err *err)
{
	if (strcmp(o->path, "-") == 0) {
		int ret = o->fmt->write(stdout, in, oo, err);
		if ((!ret && fflush(stdout) != 0) || (ret && ferror(stdout))) {
			int e = errno ? errno : EIO;	/* from the failed write */
			ret = sf_err_set(err, e, "write '<stdout>': %s", strerror(e));
		}
		return ret;
	}
	struct atomic_file af;
	int ret = atomic_open(&af, o->path, err);
	if (ret)
		return ret;
	ret = o->fmt->write(af.fp, in, oo, err);
	if (!ret)
		return atomic_commit(&af, err);
	if (!ferror(af.fp)) {
		atomic_abort(&af);
		return ret;
	}
	/* a write error: atomic_commit() names the path and the reason
	 * (ENOSPC...) from its final flush, and removes the temporary file */
	int cret = atomic_commit(&af, err);
	return cret ? cret : sf_err_set(err, EIO, "write '%s': write error",
					o->path);
}

/* Every output, also after one failed (a closed stdout must not cost the
 * files): the first failure is returned, with its message in err. */
int out_write(const struct out_dest *outs, unsigned nouts,
	      const struct out_input *in, const struct out_opts *oo,
	      struct sf_err *err)
{
	int first = 0;
	unsigned more = 0;
	for (unsigned i = 0; i < nouts; i++) {
		struct sf_err later = { "" };
		int ret = write_one(&outs[i], in, oo, first ? &later : err);
		more += ret && first;
		if (ret && !first)
			first = ret;
	}
	if (more) {	/* one message: the first failure, and how many more */
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof(err->msg) - n, " (and %u more "
			 "output%s not written)", more, more == 1 ? "" : "s");
	}
	return first;
}
