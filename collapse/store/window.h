/*
 * window.h - one window of `stackfold continuous`, read back from its
 * files for a store: DIR/STEM.folded (the stacks: "comm-PID;frame;... N",
 * frames as the fold shows them) and DIR/STEM.pb.gz (the window's start,
 * length, host, kernel and loss counters, from the pprof's fields and
 * comments).
 *
 * The files are the spool: what a store has not acknowledged is read
 * again from them, so nothing about a window is kept in memory between
 * deliveries.  Nothing here prints; errors are negative errno values with
 * a text in sf_err.
 */
#ifndef SF_STORE_WINDOW_H
#define SF_STORE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "model/losses.h"

/* The loss counters a store keeps of a window's comment, in the loss
 * table's stored order (model/losses.h): the window's loss[i] is counter
 * win_loss_key(i)'s. */
#define WIN_NLOSS LOSS_NSTORED
/* The key of loss[i] (i below WIN_NLOSS). */
const char *win_loss_key(int i);

struct win_frame {
	const char *s;		/* into text */
	uint32_t len;
};

struct win_stack {
	const char *comm;	/* into text */
	uint32_t comm_len;
	uint32_t pid;
	uint32_t frame0, nframes;	/* into frames[], root first */
	uint64_t count;
	uint64_t stack_id;	/* win_stack_id() of comm and frames */
};

struct store_window {
	char stem[64];
	uint64_t id;		/* win_id(): host, stem and start */
	uint64_t start_ns, duration_ns;
	uint32_t hz;
	char host[256], kernel[256];
	const char *labels;	/* "k=v,...": the pusher's (not owned); NULL none */
	uint64_t samples;	/* the comment's samples= */
	uint64_t loss[WIN_NLOSS];
	uint8_t losses_unknown;	/* a counter said "unknown" */
	char *text;		/* the .folded file, owned */
	struct win_stack *stacks;
	size_t nstacks, stacks_cap;
	struct win_frame *frames;
	size_t nframes, frames_cap;
	uint64_t total;		/* sum of the stacks' counts */
};

/* Read DIR/STEM.*.  host_override (NULL: the window's own) names the host.
 * 0; -ENOENT when the window is gone (removed by retention); -EBADMSG
 * when a file is malformed (err names file and line); -ENOMEM. */
int store_window_read(struct store_window *w, const char *dir,
		      const char *stem, const char *host_override,
		      struct sf_err *err);
void store_window_release(struct store_window *w);

/* A stack's identity: 64-bit FNV-1a over its process name (comm, the
 * flame graph's root frame) and its frames, each followed by a NUL byte
 * (stable: it is stored). */
uint64_t win_stack_id(const char *comm, size_t comm_len,
		      const struct win_frame *f, uint32_t n);

#endif
