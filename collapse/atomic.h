/*
 * atomic.h - write an output file so that its final name only ever holds
 * a complete file: a temporary file in the same directory, fsync, rename,
 * fsync of the directory.  A failure leaves the previous file intact and
 * no temporary file behind.
 */
#ifndef SF_ATOMIC_H
#define SF_ATOMIC_H

#include <stdio.h>

#include "util.h"

struct atomic_file {
	FILE *fp;		/* write here */
	char *path;		/* final name (owned) */
	char *tmp;		/* temporary name (owned); NULL when writing
				 * straight to a device or FIFO */
};

/* Open a temporary file next to path.  When path exists and is not a
 * regular file (/dev/null, /dev/stdout, a FIFO) it is written directly:
 * renaming over it would replace the device with a file.  0, or -errno with err filled
 * ("cannot create '<dir>/...': <reason>"). */
int atomic_open(struct atomic_file *af, const char *path, struct sf_err *err);
/* Flush, fsync, rename over path, fsync the directory.  Always releases
 * af.  0, or -errno with err filled ("write '<path>': <reason>"); on error
 * the temporary file is removed and path is untouched. */
int atomic_commit(struct atomic_file *af, struct sf_err *err);
/* Abandon: remove the temporary file, release af.  NULL-safe. */
void atomic_abort(struct atomic_file *af);

#endif
