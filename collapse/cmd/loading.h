/*
 * loading.h - processes whose map may still grow, snapshotted again a
 * little later while they run:
 *  - caught while ld.so was still mapping their libraries (only the
 *    loader and the executable mapped: a fresh exec's first samples):
 *    snapshotted again LOADING_TRIES times, LOADING_GAP_NS apart, until a
 *    library is in (sym_process_loading());
 *  - young (run for under YOUNG_NS when first snapshotted, as a profiled
 *    command's children are; or a program exec()ed during the capture, a
 *    newer image of a pid already seen; or one the caller knows is new,
 *    as the command `stackfold record --start-pid` resumes, which was
 *    forked, stopped, before bpftrace started): their map read again at gaps
 *    doubling from SETTLE_FIRST_NS up to SETTLE_LAST_NS (rounded up to
 *    SETTLE_GRID_NS, so that many fall due at one wake-up), and snapshotted
 *    again only when its executable lines changed: libraries dlopen()ed
 *    (Python's extension modules at import), a JIT's code region made.
 *
 * The snapshot taken for an address outside the map comes only when the
 * samples are read (at a flush, a window's end or the end), when a short
 * command has exited: so these are read while the process still runs.
 * Old processes are not watched (their first snapshot is their settled
 * map; what they map later is read at the end if they still run): a
 * system-wide capture pays for the processes born during it only, at
 * most 9 reads of /proc/PID/maps each.  Used by `stackfold record` (both)
 * and `stackfold continuous` (loading only).
 *
 * struct loading_list is zeroed to start; loading_release() frees it.
 * Nothing here prints; out of memory only skips a process (the read-time
 * refresh is still there).
 */
#ifndef SF_LOADING_H
#define SF_LOADING_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer.h"

#define LOADING_GAP_NS 20000000ULL	/* 20 ms */
#define LOADING_TRIES 5
#define YOUNG_NS 2000000000ULL		/* 2 s */
#define SETTLE_FIRST_NS 50000000ULL	/* 50 ms */
#define SETTLE_LAST_NS 6400000000ULL	/* 6.4 s: the 9th read 12.8 s on */
#define SETTLE_GRID_NS 100000000ULL	/* settling looks fall due on 0.1 s */

struct loading_list {
	struct loading_entry {
		int pid;
		uint32_t image;
		unsigned tries;		/* loading: snapshots left, 0 after */
		bool young;		/* then settling: look for changes */
		uint64_t gap_ns;	/* settling: the next gap */
		uint64_t due_ns;	/* monotonic: look again then */
	} *v;
	size_t n, cap;
};

/* pid's image was snapshotted in ss at now_ns: if that was while ld.so
 * was loading (sym_process_loading()), or, with settle, the process is
 * young (is_new: the caller knows it is), it is looked at again later.
 * `stackfold continuous` does not settle: on a machine that keeps starting
 * short programs its CPU grew by 40% (bench/churn.sh), against its budget. */
void loading_add(struct loading_list *l, struct sym_session *ss, int pid,
		 uint32_t image, bool settle, bool is_new, uint64_t now_ns);
/* The earliest due time (monotonic ns), UINT64_MAX when none. */
uint64_t loading_next_due(const struct loading_list *l);
/* Look again at every process due at now_ns: a loading one is
 * snapshotted again (sym_process_refresh()), a settling one when its map
 * changed; fn(ctx, pid, image), if not NULL, after each new snapshot.  A
 * process that exited, or is done loading and not young, or is past its
 * last gap, is dropped. */
void loading_check(struct loading_list *l, struct sym_session *ss,
		   uint64_t now_ns, void (*fn)(void *ctx, int pid, uint32_t image),
		   void *ctx);
/* Forget every process (the session they belong to is gone). */
void loading_clear(struct loading_list *l);
void loading_release(struct loading_list *l);

#endif
