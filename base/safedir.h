/*
 * safedir.h - the directory root writes an output into, reached without
 * following another user's symbolic links.
 *
 * A name root is given to write (`-o`, the continuous directory, a cache
 * entry to remove) may pass through names other users made: a link in a
 * sticky /tmp, `outd -> ~eve/d`, and in eve's directory
 * `cpu.folded -> /etc/VICTIM`.  sf_dir_open() walks the directory's name
 * one component at a time (openat with O_PATH | O_NOFOLLOW), follows a
 * symbolic link only when a trusted user owns it, and accepts the
 * directory it reaches only when a trusted user owns that.  Trusted:
 * root, this process's user, and, in a root process started by sudo, the
 * user who ran sudo ($SUDO_UID: `sudo make flame` in one's own checkout).
 * The caller then names files relative to the descriptor (openat,
 * renameat, unlinkat): a rename elsewhere in the path afterwards cannot
 * redirect it.  The owner rules for directories apply to root's writes
 * only; links are held to them whoever runs.
 */
#ifndef SF_BASE_SAFEDIR_H
#define SF_BASE_SAFEDIR_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/util.h"

/* Root, this user, or the user who ran sudo (when this user is root). */
bool sf_uid_trusted(uid_t uid);

/* sf_dir_open() flags */
enum {
	/* every directory on the way must be a trusted user's too: for a
	 * directory used by name afterwards (a cache), where anyone who may
	 * rename a component could swap the rest of the path */
	SF_DIR_STRICT = 1,
};

/* Open directory dir ("" or NULL: the current one) as above: *fd an
 * O_PATH | O_DIRECTORY descriptor (the caller closes it; usable as the
 * dirfd of the *at() calls), *st its fstat.  for_path names the output in
 * messages.  0, or -errno with err filled: -EPERM "refusing to write
 * '<for_path>': '<name>' is a symbolic link owned by uid N, not a
 * trusted user (root or uid U)" or "...: its directory '<dir>' is owned by
 * uid N, ..." (SF_DIR_STRICT: "...: '<name>' on the way is owned by uid
 * N, ..."); else "cannot write '<for_path>': <reason>". */
int sf_dir_open(const char *dir, const char *for_path, unsigned flags,
		int *fd, struct stat *st, struct sf_err *err);

/* May this process use dir as a cache, read and written by name for the
 * whole run?  Checked with SF_DIR_STRICT before anything is made (its
 * nearest existing ancestor while it does not exist), then made (0700)
 * when missing and checked again.  false with err filled ("refusing to
 * write '<dir>': ...") when it must not be used; true otherwise, even
 * when it cannot be made (its writes then say why). */
bool sf_cache_dir_usable(const char *dir, struct sf_err *err);

/* path's last component, and its directory into dir[dirsize] ("" for a
 * bare name, "/" for a name in the root).  false when it does not fit. */
bool sf_path_split(const char *path, char *dir, size_t dirsize,
		   const char **base);

#endif
