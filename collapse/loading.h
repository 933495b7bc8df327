/*
 * loading.h - processes whose snapshot was taken while ld.so was still
 * mapping their libraries (only the loader and the executable mapped: a
 * fresh exec's first samples), snapshotted again a little later while
 * they run.
 *
 * The snapshot taken for an address outside the map comes only when the
 * samples are read (at a flush, a window's end or the end), when a short
 * command has exited; so such a process's map is read again soon:
 * LOADING_TRIES times, LOADING_GAP_NS apart, until a library is in
 * (sym_process_loading()).  Used by `stackfold record` and `stackfold
 * continuous`.
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

struct loading_list {
	struct loading_entry {
		int pid;
		uint32_t image;
		unsigned tries;
		uint64_t due_ns;	/* monotonic: snapshot again then */
	} *v;
	size_t n, cap;
};

/* pid's image was snapshotted in ss at now_ns: if that was while ld.so
 * was loading (sym_process_loading()), it is looked at again later. */
void loading_add(struct loading_list *l, struct sym_session *ss, int pid,
		 uint32_t image, uint64_t now_ns);
/* The earliest due time (monotonic ns), UINT64_MAX when none. */
uint64_t loading_next_due(const struct loading_list *l);
/* Snapshot again (sym_process_refresh()) every process due at now_ns;
 * fn(ctx, pid, image), if not NULL, after each new snapshot.  A process
 * that exited, or has its libraries now, or used its tries, is dropped. */
void loading_check(struct loading_list *l, struct sym_session *ss,
		   uint64_t now_ns, void (*fn)(void *ctx, int pid, uint32_t image),
		   void *ctx);
/* Forget every process (the session they belong to is gone). */
void loading_clear(struct loading_list *l);
void loading_release(struct loading_list *l);

#endif
