/*
 * windir.h - the directory where `stackfold continuous` stores its
 * windows: their names (YYYYMMDDTHHMMSSZ, then _NNN when that second has
 * one already, so that names sort in the order the windows were taken),
 * the index of the windows stored, and their removal past the size and age
 * limits.  A window is DIR/STEM.pb.gz and maybe DIR/STEM.folded; the
 * .pb.gz, written last, is its commit mark.
 *
 * Nothing here prints or exits: errors are negative errno values.
 */
#ifndef SF_WINDIR_H
#define SF_WINDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define WINDIR_STEM_MAX 40

struct windir_file {
	char stem[WINDIR_STEM_MAX];
	uint64_t bytes;		/* .pb.gz and .folded */
	time_t t;		/* window start */
};

struct windir {
	const char *dir;		/* not owned; set before use */
	struct windir_file *files;	/* sorted by time, then suffix */
	size_t nfiles, cap;
	uint64_t total_bytes;
	/* the last name given, written or not: second and suffix */
	time_t last_t;
	unsigned last_n;
	bool named;
};

/* Index dir's windows (an empty index first).  Temporaries a crash left
 * mid-write and .folded files whose .pb.gz is missing are removed and
 * counted in *stale.  Only regular files of this user with exactly the
 * names written here are indexed or removed (never another user's file,
 * nor a link).  0, or -errno of opendir(), or -ENOMEM. */
int windir_scan(struct windir *w, uint64_t *stale);
/* buf = DIR/STEM SUFFIX.  false when it does not fit in n bytes (DIR is
 * checked against PATH_MAX by the caller's option parsing). */
bool windir_path(const struct windir *w, char *buf, size_t n,
		 const char *stem, const char *suffix);
/* The name for a new window of second t into stem[WINDIR_STEM_MAX]: past
 * every window of t in the index, past the last name given, and not on
 * disk.  false when every suffix is taken (stem then says so, STAMP_1000,
 * a name never given). */
bool windir_name(struct windir *w, time_t t, char *stem);
/* Index a window just written, its size read from disk (*bytes).  0 or
 * -ENOMEM. */
int windir_add(struct windir *w, const char *stem, time_t t, uint64_t *bytes);
/* Remove windows, oldest first, while over max_size bytes or older than
 * max_age seconds (0: no limit).  keep_newest: the last one stays even
 * when it alone is over max_size.  A window dated in the future (the
 * clock stepped back) is not too old.  Returns how many this call removed
 * (a window whose .pb.gz someone else removed or replaced is dropped from
 * the index, not counted). */
uint64_t windir_retain(struct windir *w, uint64_t max_size, uint64_t max_age,
		       bool keep_newest);
void windir_release(struct windir *w);

#endif
