/*
 * mapsrc.h - the second capture source: bt/continuous.bt's maps read
 * straight from the kernel, no text in between.
 *
 * bpftrace loads and runs the probes; we take its map fds (pidfd_open +
 * pidfd_getfd: needs ptrace rights over it), check each map's name, type
 * and key/value sizes against the layout known for its version, and then
 * per window flip the buffer selector ourselves, wait for programs already
 * running (membarrier), take the retired map with
 * bpf_map_lookup_and_delete_batch, read and zero its total, and hand each
 * entry on as the bt_record the text parser would have made of it.
 *
 * Known layout: bpftrace 0.17 (0.18 is the same, untested).  A map
 * renamed, missing, doubled (names are cut to 15 characters by the
 * kernel) or of another size is refused with a reason: the caller falls
 * back to bpftrace's text.  Stacks are looked up in bpftrace's
 * stack-trace maps and cached.  With one map (both buffers' stacks in it)
 * nothing deletes from it: an id keeps its stack and the cache lives as
 * long as the reader, but the map only fills, and a stack hashing to a
 * taken bucket fails (a stack-id error).  With two (bt/continuous.bt's
 * @stackfold_b takes its stacks 126 deep, so bpftrace makes a second
 * map), each buffer has its own: after a window is read, its map is
 * emptied and its cache forgotten, so buckets never fill up over time.
 * Nothing here prints or exits.
 */
#ifndef SF_MAPSRC_H
#define SF_MAPSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "ingest/bt_parse.h"

/* What is expected of one bpftrace version's maps. */
struct mapsrc_layout {
	char version[32];	/* "0.17.0" */
	uint32_t key_size;	/* @stackfold[...]'s key */
	uint32_t stack_key_size;	/* the stack-trace map's */
};

/* The layout for a version line ("bpftrace v0.17.0", as --version
 * prints it); -ENOTSUP with the reason in err for any other. */
int mapsrc_layout_for(const char *version_line, struct mapsrc_layout *out,
		      struct sf_err *err);

enum mapsrc_map {
	MAPSRC_MAIN,		/* @stackfold */
	MAPSRC_MAIN_B,		/* @stackfold_b */
	MAPSRC_TOTAL,		/* @stackfold_t */
	MAPSRC_TOTAL_B,		/* @stackfold_t_b */
	MAPSRC_BUF,		/* @stackfold_buf: which of the two is live */
	MAPSRC_SEEN,		/* @stackfold_seen */
	MAPSRC_SRC,		/* @stackfold_src: 1 = we read, bpftrace
				 * prints no window */
	MAPSRC_STACK,		/* bpftrace's stack-trace map (@stackfold's,
				 * the deeper one when there are two) */
	MAPSRC_STACK_B,		/* @stackfold_b's, when a second: optional */
	MAPSRC_NMAPS
};

/* Stacks read from one stack-trace map: id + 1 -> {offset, count} in ips */
struct mapsrc_stacks {
	struct u64map ids;
	uint64_t *ips;
	size_t nips, cap;
	uint32_t depth;		/* the map's frames per stack */
};

struct mapsrc {
	int pid;
	int fd[MAPSRC_NMAPS];	/* -1 when not taken */
	uint32_t value_size[MAPSRC_NMAPS];
	int ncpu;		/* possible CPUs: per-CPU values are this wide */
	uint32_t key_size;
	bool no_membarrier;	/* membarrier refused: a short sleep instead */
	bool per_buffer;	/* two stack maps: each emptied once read */
	struct mapsrc_stacks stk[2];	/* [1] used when per_buffer */
	uint32_t *ids;		/* a stack map's ids, while it is emptied */
	size_t ids_cap;
	/* one batch of keys and values, and the record's frames */
	unsigned char *keys, *vals;
	size_t batch;
	struct bt_frame *frames;
};

/* What one read found. */
struct mapsrc_window {
	int map;		/* MAPSRC_MAIN or MAPSRC_MAIN_B: the one read */
	uint64_t total;		/* its total (samples taken into it) */
	uint64_t sum;		/* the entries' counts: total - sum lost to a
				 * full map */
	uint64_t entries;
	uint64_t stackid_errors;	/* entries whose stack id failed
					 * (-EFAULT, a kernel stack of a user
					 * sample, is not one, as bpftrace) */
	uint64_t stack_lookups;	/* ids new to the cache */
	uint64_t stacks_cleared;	/* ids deleted from the window's own
					 * stack map after it was read */
	bool slept;		/* no membarrier: slept instead */
};

/* Take the maps of bpftrace process pid.  0; -ENOTSUP when the layout is
 * not the one expected (err says which map and how); another -errno when
 * the fds cannot be taken (err says why).  On failure nothing is held. */
int mapsrc_open(struct mapsrc *ms, int pid, const struct mapsrc_layout *lay,
		struct sf_err *err);
void mapsrc_close(struct mapsrc *ms);	/* an unopened (zeroed) one is fine */

/* Tell the program who reads the windows (@stackfold_src): on, bpftrace
 * prints only the "#window" marks.  0 or -errno. */
int mapsrc_set_reader(struct mapsrc *ms, bool on, struct sf_err *err);

/* A record; pointers valid during the call only.  <0 stops the read with
 * that value (the rest of the batch is lost: counted by the caller). */
typedef int (*mapsrc_record_fn)(void *ctx, const struct bt_record *r);

/* Read one window: flip the selector, wait, take the retired map and its
 * total, and (per_buffer) empty its stack map.  peek: read the live map and total as they are, changing
 * nothing (a test holds it against bpftrace's own print).  0 or -errno. */
int mapsrc_read(struct mapsrc *ms, bool peek, mapsrc_record_fn fn, void *ctx,
		struct mapsrc_window *w, struct sf_err *err);

/* The map names as bt/continuous.bt spells them ("@stackfold" ...). */
const char *mapsrc_map_name(enum mapsrc_map m);

#endif
