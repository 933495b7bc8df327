/*
 * perfside.h - the kernel's side-band records (mmap of executable memory,
 * exec and comm, fork and exit) of every process, or of target processes
 * and their descendants only, as perf record reads them: software dummy
 * events whose ring buffers (one per CPU) carry no samples, only those
 * records.  stackfold record reads them so that a
 * process that exited before its /proc/PID/maps could be read (a
 * short-lived one under -a) still has its map: perfside_maps_text() writes
 * it as /proc/PID/maps lines and the "#" lines sym_process_load_maps()
 * reads (symbolizer.h), the form a raw capture saves.
 *
 * Ownership: a struct perfside owns its event fds, their mappings and the
 * process table (sidemaps.h); perfside_close() releases them, safe on one
 * never opened or closed twice.  Nothing here prints: errors come back as
 * -errno with a message in err.
 */
#ifndef SF_PERFSIDE_H
#define SF_PERFSIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "capture/sidemaps.h"

struct perfside_ref {
	uint64_t time;
	size_t off;		/* in batch */
};

struct perfside {
	int ncpu;		/* rings open (0: closed) */
	int *fd;		/* per CPU: the event owning its ring, owned */
	void **ring;		/* per CPU: its mmap()ed pages, owned */
	size_t ring_bytes;	/* data area per CPU (a power of two) */
	int *xfd;		/* targets' other events, writing into their
				 * CPU's ring (SET_OUTPUT), owned */
	size_t nxfd, xfdcap;
	struct sidemaps maps;
	uint64_t lost;		/* records the kernel dropped (ring full) */
	uint64_t records;	/* records read */
	char *buf;		/* a record applied at once (batch full) */
	char *batch;		/* one drain's records, copied out */
	size_t nbatch, batchcap;
	struct perfside_ref *refs;	/* ...in time order */
	size_t nrefs, refscap;
};

/* The largest ring perfside_open() takes, in pages a CPU. */
#define PERFSIDE_PAGES_MAX 16384u
/* Is pages a ring size perfside_open() takes (a power of two, 1 to
 * PERFSIDE_PAGES_MAX)? */
bool perfside_pages_ok(uint64_t pages);

/* Open the events on every online CPU, each CPU's ring of pages pages (a
 * power of two; 0: 128); an exited process is kept keep_ns.
 * npids 0: every process's records (pid -1).  Else those of pids[] (a
 * process id, or a thread's: its whole process) and of every process they
 * fork later: an inherited event per thread and CPU, as perf record -p
 * opens them (the kernel refuses to mmap an inherited event that is not
 * bound to a CPU).  0, or -errno (EINVAL: pages, EACCES without
 * CAP_PERFMON, ESRCH when no target is left, EMFILE past the open files'
 * limit, ...) with err filled and nothing to release. */
int perfside_open(struct perfside *ps, const int *pids, size_t npids,
		  unsigned pages, uint64_t keep_ns, struct sf_err *err);
/* The events' fds, for poll(): each becomes readable once its ring is a
 * quarter full.  Returns ps->ncpu, *fds into ps. */
int perfside_fds(const struct perfside *ps, const int **fds);
/* Read every record the rings hold now into the process table, and
 * forget the processes exited long enough ago. */
void perfside_drain(struct perfside *ps);
/* pid's image (protocol.h) as saved maps text, malloc()ed into *text
 * (caller frees).  0, -ENOENT (not known: not seen, or another image) or
 * -ENOMEM. */
int perfside_maps_text(const struct perfside *ps, int pid, uint32_t image,
		       char **text, size_t *len);
void perfside_close(struct perfside *ps);

#endif
