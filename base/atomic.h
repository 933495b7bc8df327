/*
 * atomic.h - write an output file so that its final name only ever holds
 * a complete file: a temporary file in the same directory, fsync, rename,
 * fsync of the directory.  A failure leaves the previous file intact and
 * no temporary file behind.
 */
#ifndef SF_ATOMIC_H
#define SF_ATOMIC_H

#include <stdio.h>
#include <sys/types.h>

#include "base/util.h"

struct atomic_file {
	FILE *fp;		/* write here */
	char *path;		/* final name (owned) */
	char *tmp;		/* temporary name (owned); NULL when writing
				 * straight to a device or FIFO */
	int dirfd;		/* private: the directory of both (O_PATH) */
	int slot;		/* private: atomic_unlink_open()'s */
};

/* Open a temporary file next to path (PATH.tmp.XXXXXX, or
 * DIR/.stackfold.tmp.XXXXXX for a name too long for that), created with
 * O_EXCL, never one that exists.  The directory is reached as
 * sf_dir_open() (base/safedir.h) walks it: no symbolic link of another
 * user's is followed on the way, and it must belong to a trusted user,
 * else -EPERM "refusing to write '<path>': ...".  Written directly instead: a descriptor
 * named as /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N
 * (through that descriptor); a path that exists and is not a regular file
 * (/dev/null, a FIFO): renaming over it would replace the device with a
 * file.  Such a file is opened without blocking (a FIFO of ours with no
 * reader yet is waited for in steps, as a redirection would).  A symbolic
 * link is followed (the file it names is the one replaced, or created)
 * only when its owner is this user or its directory's owner; so is a
 * non-regular file written in place (the kernel's protected_symlinks and
 * protected_regular rules, whatever their settings): else -EPERM,
 * "refusing to write '<path>': ...".  The new file takes the old one's
 * permissions only when it was this user's, never set-id bits.  0, or
 * -errno with err filled ("cannot write '<path>': <reason>"). */
int atomic_open(struct atomic_file *af, const char *path, struct sf_err *err);
/* atomic_open(), the new file's permissions at most most (0600: a file
 * of stack copies): the temporary has them from its creation on. */
int atomic_open_mode(struct atomic_file *af, const char *path, mode_t most,
		     struct sf_err *err);
/* Remove every temporary file open now (async-signal-safe: for a handler
 * of a signal that ends the process).  The files stay open and owned. */
void atomic_unlink_open(void);
/* Flush, fsync, rename over path, fsync the directory.  Always releases
 * af.  0, or -errno with err filled ("write '<path>': <reason>"); on error
 * the temporary file is removed and path is untouched. */
int atomic_commit(struct atomic_file *af, struct sf_err *err);
/* Abandon: remove the temporary file, release af.  NULL-safe. */
void atomic_abort(struct atomic_file *af);

#endif
