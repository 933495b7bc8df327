/*
 * sidemaps.h - every process's executable mappings as the kernel's
 * side-band records told them (perfside.h reads the records): from its
 * fork (a copy of its parent's) or from its exec on, kept a while after
 * its exit, so that a process gone before record read its /proc/PID/maps
 * still has a map, as perf keeps one through its MMAP2 records.
 *
 * Ownership: a struct sidemaps owns its processes and their strings;
 * sidemaps_release() frees them.  Nothing here prints; out of memory an
 * event is dropped and counted in `dropped` (its process may then lack a
 * mapping, and its samples are counted where a map is missing).
 */
#ifndef SF_SIDEMAPS_H
#define SF_SIDEMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct side_map {
	uint64_t start, len, pgoff, ino;
	uint32_t maj, min, prot, flags;
	char *path;		/* owned */
};

struct side_proc {
	int pid;
	uint32_t execs;		/* execs since its fork (126 at most) */
	bool fork_known;	/* start_ns is its fork's time */
	bool exited;
	bool main_set;		/* the first text mapped since exec seen */
	bool complete;		/* every mapping seen: from an exec, or a
				 * fork of a complete parent */
	uint64_t start_ns, exit_ns, last_ns;	/* CLOCK_MONOTONIC */
	uint64_t main_start;	/* the executable's first text mapping */
	char comm[16];
	struct side_map *m;	/* owned */
	size_t n, cap;
	struct side_proc *next;	/* hash chain */
};

#define SIDEMAPS_BUCKETS 4096

struct sidemaps {
	struct side_proc *b[SIDEMAPS_BUCKETS];
	uint64_t keep_ns;	/* an exited process is kept this long */
	uint64_t dropped;	/* events not applied (out of memory) */
	size_t nprocs;
	uint64_t made;		/* process entries ever made (-v: how many
				 * processes the records were of) */
};

void sidemaps_init(struct sidemaps *sm, uint64_t keep_ns);
void sidemaps_release(struct sidemaps *sm);

/* The events, at time t (CLOCK_MONOTONIC ns).  fork: a new process pid
 * of parent ppid; exec: pid ran exec (comm: its new name); comm: renamed;
 * exit: the process ended; mmap: an executable mapping (path copied). */
void sidemaps_fork(struct sidemaps *sm, int pid, int ppid, uint64_t t);
void sidemaps_comm(struct sidemaps *sm, int pid, const char *comm, bool exec,
		   uint64_t t);
void sidemaps_exit(struct sidemaps *sm, int pid, uint64_t t);
void sidemaps_mmap(struct sidemaps *sm, int pid, const struct side_map *m,
		   uint64_t t);
/* Free the processes exited more than keep_ns before now. */
void sidemaps_expire(struct sidemaps *sm, uint64_t now);

/* The process pid's image `image` (bt/profile.bt's key: its start time's
 * bits and exec count, protocol.h), or NULL: not seen, another image, no
 * mapping known, or not all of them (a process begun before the
 * capture: its /proc/PID/maps is the better map). */
const struct side_proc *sidemaps_find(const struct sidemaps *sm, int pid,
				      uint32_t image);

#endif
