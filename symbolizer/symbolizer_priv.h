/*
 * symbolizer_priv.h - struct sym_session internals shared by session.c,
 * sessbase.c, process.c and procjit.c (not for use outside symbolizer/).
 *
 * Ownership: the session owns everything reachable from it.  Replaced
 * process snapshots are retired, not freed, so sym_module pointers and
 * strings handed out in results stay valid until sym_session_free().
 */
#ifndef SF_SYMBOLIZER_PRIV_H
#define SF_SYMBOLIZER_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/untrusted.h"
#include "elf/elfindex.h"
#include "elf/filetab.h"
#include "proc/kallsyms.h"
#include "proc/maps.h"
#include "proc/perfmap.h"
#include "proc/vdso.h"
#include "symbolizer.h"
#include "base/util.h"

/* One kept (executable) mapping of a process. */
struct sym_mapping {
	const struct maps_entry *e;	/* in the process's maps_list */
	struct sym_file *file;	/* MAPS_FILE and MAPS_VDSO, else NULL */
	struct sym_module mod;	/* what results point to */
	struct sym_module jit_mod;	/* anon memory named by the perf map */
	bool caps_done;		/* mod.has_* filled from the index */
};

struct sym_process {
	int pid, nspid;
	uint32_t image;		/* which program of the pid's life (0: any) */
	uint64_t starttime;	/* 0 when unknown (loaded text) */
	uint64_t taken_ns;	/* CLOCK_BOOTTIME at the snapshot, 0: unknown */
	uint64_t startstack;	/* /proc/PID/stat's, 0 when unknown; for a
				 * refused marker, the one refused */
	bool refused;		/* no snapshot: a marker that the map read for
				 * this image was another program's
				 * (sym_process_snapshot()) */
	char name[64];		/* /proc/PID/status Name: ("" unknown) */
	bool exe_known;		/* exe_dev/exe_ino read at the snapshot */
	dev_t exe_dev;
	ino_t exe_ino;
	bool loaded;		/* from sym_process_load_maps() */
	struct maps_list ml;
	struct sym_mapping *m;	/* parallel to ml.v */
	size_t n;
	/* JIT perf map (procjit.c) */
	int pm_fd;		/* -1 when not kept open */
	int pm_missing;		/* times the file was not found */
	bool pm_ready;		/* pm initialised */
	struct perfmap pm;
	const char *pm_path;	/* "/tmp/perf-NSPID.map", session-owned */
	bool pm_foreign;	/* the map was another user's: refused (once) */
	bool uids_known;	/* uids read while the process ran */
	uid_t uids[4];		/* real, effective, saved, fs: a perf map
				 * must be one's or root's (procjit.c) */
	struct sym_process *next;	/* hash chain / retired list */
};

struct sym_session {
	struct sym_opts opts;
	char *cache_dir;	/* NULL: no cache */
	struct elfidx_opts eopts;
	struct sym_stats stats;
	struct sf_limits limits;	/* eopts.limits */
	uint64_t libopen_base;	/* sf_libopen_refused() when made */
	uint64_t libopen_bound_base;	/* sf_libopen_refused_bound() then */
	struct filetab files;
	struct strtab strs;	/* misc. session-lifetime strings */

	/* processes by pid (chained hash), replaced ones retired */
	struct sym_process **procs;
	size_t nprocs_slots, nprocs;
	struct sym_process *retired;
	sym_exited_maps_fn exited_maps;	/* sym_session_set_exited_maps() */
	void *exited_ctx;
	size_t npm_fds;		/* perf-map fds kept open */
	uint64_t btime;		/* boot time, s since the epoch (procjit.c) */
	bool btime_done;	/* read, or unknown (btime 0) */
	struct stat own_pidns;	/* /proc/self/ns/pid (process.c) */
	bool own_pidns_done, own_pidns_known;

	/* [vdso] images (proc/vdso.h): files in files, reads counted in
	 * stats.vdso_reads */
	struct vdso_set vdso;

	/* kernel */
	struct kallsyms ks;
	bool ks_loaded;
	int ks_err;

	/* warnings: ids in warn_seen (dedup) queued in order */
	struct strtab warn_seen;
	uint32_t *warnq;
	size_t warnq_n, warnq_cap, warnq_head;
};

/* Queue a warning unless the same text was queued before. */
void sym_warn(struct sym_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* elfidx_opts.warn callback: ctx is the session. */
void sym_warn_cb(void *ctx, const char *msg);

/* Intern a session-lifetime string (NULL on ENOMEM). */
const char *sym_strdup(struct sym_session *s, const char *str);

/* process.c */
struct sym_process *sym_process_find(struct sym_session *s, int pid,
				     uint32_t image);
void sym_process_free_all(struct sym_session *s);
/* The mapping holding abs_addr, or NULL. */
struct sym_mapping *sym_process_mapping(struct sym_process *p,
					uint64_t abs_addr);

/* procjit.c: read p's perf map at its snapshot (when it has anonymous
 * executable memory); name abs_addr from it (NULL: none); release it. */
void sym_jit_snapshot(struct sym_session *s, struct sym_process *p);
/* Has the perf map code in [start, limit)?  Reads the map first if it
 * never was (saved maps: on first use). */
bool sym_process_jit_region(struct sym_session *s, struct sym_process *p,
			    uint64_t start, uint64_t limit);
const char *sym_process_jit_name(struct sym_session *s, struct sym_process *p,
				 uint64_t abs_addr);
void sym_jit_release(struct sym_session *s, struct sym_process *p);

#endif
