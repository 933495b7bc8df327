/*
 * untrusted.h - open files that other users control, for reading, and
 * the bounds on the work such files may cost.
 *
 * stackfold runs as root and reads files the profiled programs name: the
 * programs and libraries, their debug files, split-DWARF units, perf
 * maps, `symbolize` modules, paths in saved captures.  A local user can
 * put a FIFO, a socket or a device at any of those names: a FIFO's open
 * blocks until a writer comes (SIGTERM not honoured meanwhile), a
 * device's open runs its driver.  sf_open_untrusted() opens nothing but a
 * regular file: the name is opened with O_PATH (no driver is called, no
 * FIFO waits), the inode checked with fstat, and that same inode opened
 * for reading through /proc/self/fd (O_RDONLY|O_NONBLOCK|O_NOCTTY|
 * O_CLOEXEC), so no rename in between can swap it.  Symlinks are
 * followed: only reading is done.
 *
 * struct sf_limits holds a session's bounds and what they refused; it is
 * shared by the session's indexes (elfidx_opts.limits), updated with
 * atomics.
 */
#ifndef SF_BASE_UNTRUSTED_H
#define SF_BASE_UNTRUSTED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* sf_open_untrusted()'s -SF_ENOTREG: the name is not a regular file. */
#define SF_ENOTREG 4096

/* An fd open for reading on the regular file path names, its fstat in
 * *st (may be NULL); or -errno from the system, or -SF_ENOTREG (with *st
 * filled) when the name is a FIFO, socket, device or directory. */
int sf_open_untrusted(const char *path, struct stat *st);

/* "a FIFO", "a socket", "a character device", ... for messages. */
const char *sf_file_kind(mode_t mode);

struct sf_limits {
	/* bounds (0 in a field: its default, set by sf_limits_init) */
	uint64_t crc_max;		/* biggest debuglink candidate CRC'd */
	uint64_t inflate_ratio;		/* decompressed : compressed, a file */
	uint64_t inflate_file_max;	/* decompressed bytes of one file */
	uint64_t inflate_held_max;	/* decompressed bytes held at once */
	/* state and counts (atomic) */
	uint64_t inflate_held;		/* decompressed bytes held now */
	uint64_t refused_type;		/* names not regular files */
	uint64_t refused_bound;		/* files/sections past a bound */
	uint64_t refused_place;		/* .dwo names outside the allowed
					 * places (docs/security.md) */
};

/* Defaults into every bound left 0 (and $STACKFOLD_INFLATE_MAX, bytes,
 * for inflate_held_max, when set). */
void sf_limits_init(struct sf_limits *l);

enum sf_refusal { SF_REFUSED_TYPE, SF_REFUSED_BOUND, SF_REFUSED_PLACE };

/* Count one refusal; l may be NULL. */
void sf_limits_count(struct sf_limits *l, enum sf_refusal why);

/* The most decompressed bytes in compressed bytes of one file may give:
 * inflate_ratio times in, plus 1 MiB (small files), at most
 * inflate_file_max; l NULL: the defaults.  Every decompression of a file
 * another user controls (SHF_COMPRESSED and .zdebug sections, the xz of
 * .gnu_debugdata) is held to it and to sf_limits_take(). */
uint64_t sf_inflate_bound(const struct sf_limits *l, uint64_t in);

/* Take n decompressed bytes from l's session budget: false (nothing
 * taken) when that would pass inflate_held_max.  l may be NULL (no
 * budget). */
bool sf_limits_take(struct sf_limits *l, uint64_t n);
void sf_limits_give(struct sf_limits *l, uint64_t n);

#endif
