/*
 * profile.h - the in-memory profile every input is parsed into and every
 * writer reads.
 *
 * Model (close to pprof's, so the pprof writer is a plain walk):
 *   mapping  - a mapped file (or the kernel) with memory range and build-id
 *   function - name (demangled), system_name (raw), filename, start_line
 *   location - one unique address in one mapping, with its line chain
 *              (inline frames innermost first, the real function last);
 *              a location with no lines is an unsymbolized frame that still
 *              carries its mapping and address
 *   sample   - one unique (pid, tid, comm, thread, stack) with a count;
 *              stacks are location ids, leaf first (pprof order)
 * All ids are dense, start at 1 (0 means "none"), and are assigned in
 * first-seen order, so the same input gives the same ids.
 *
 * Memory grows with unique stacks, locations and strings, never with the
 * number of samples read.  All strings live in p->strs (id 0 is "").
 *
 * Nothing here prints or exits.  Functions return 0 / an id, or a negative
 * errno (only -ENOMEM in practice).
 */
#ifndef SF_PROFILE_H
#define SF_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

struct pf_mapping {
	uint64_t start, limit, offset;
	uint32_t filename, build_id;	/* string ids */
	/* the file's identity (sym_module's; 0 when it has a build-id, which
	 * is its identity), not written to pprof: without a build-id, two
	 * files mapped at one path and address are told apart only by it, so
	 * that one process's addresses never take another program's names */
	uint64_t dev, inode;
	bool is_kernel;
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
	bool is_main;		/* the process's executable (pprof writes it as
				 * mapping[0]); not part of the mapping's
				 * identity */
};

struct pf_function {
	uint32_t name, system_name, filename;	/* string ids */
	uint32_t start_line;
};

struct pf_line {
	uint32_t function;	/* function id */
	uint32_t line;		/* 0 when unknown */
};

enum pf_loc_kind {
	PF_LOC_USER = 0,
	PF_LOC_KERNEL,		/* shown with _[k] */
	PF_LOC_JIT,		/* shown with _[j] */
	PF_LOC_MARK,		/* a synthetic frame such as "-" or
				 * "[missed user stack]" */
};

struct pf_location {
	uint32_t mapping;	/* 0: none (folded input, synthetic) */
	uint32_t offset;	/* when has_offset: the address's offset in
				 * the symbol holding it (sym_result's), or
				 * the SYM+OFF text gave it; shown by
				 * --offsets, not written to pprof */
	uint32_t offset_name;	/* string id of that symbol's name where it
				 * is not the outermost line's function's
				 * (work.cold for code DWARF names work),
				 * 0 otherwise */
	uint64_t address;	/* as the process saw it, 0 if unknown */
	uint32_t line_start;	/* index into p->lines */
	uint32_t nlines;	/* innermost first; 0 = unsymbolized */
	uint32_t unknown_name;	/* string id of the fallback text shown when
				 * nlines == 0 (module+0xOFF, [unknown]) */
	uint8_t kind;		/* enum pf_loc_kind */
	uint8_t is_return;	/* address is a return address: named at
				 * address - 1 (the call); apart from a
				 * leaf at the same address, which is
				 * the next instruction */
	uint8_t has_offset;
};

struct pf_sample {
	uint32_t pid, tid;	/* 0 when unknown */
	uint32_t comm;		/* string id: the process frame's name: the
				 * comm bpftrace gives, i.e. the sampled
				 * thread's (0 when none) */
	uint32_t thread_name;	/* string id: thread's comm (0 when none) */
	uint32_t process;	/* string id: the process's name, its main
				 * thread's comm when its map was saved
				 * (0 when unknown: one-liner input) */
	uint32_t stack_start;	/* index into p->stack_ids */
	uint32_t depth;		/* number of locations, leaf first */
	uint64_t count;
};

/* What was read and what was lost; every sample read is in exactly one of
 * the samples' counts or one of these drop counters. */
struct pf_counters {
	uint64_t samples;	/* sum of all pf_sample.count */
	uint64_t lost_events;	/* bpftrace "Lost N events" */
	uint64_t map_dropped;	/* samples the BPF map had no room for */
	uint64_t over_total;	/* samples past bpftrace's own count of them:
				 * a map printed twice (bpftrace 0.17 does on
				 * SIGTERM then SIGINT); they are in the
				 * output, counted twice */
	uint64_t stackid_errors;	/* "failed to look up stack id" */
	uint64_t unparsable_lines;
	uint64_t incomplete_records;	/* truncated final record */
	uint64_t unsymbolized_frames;	/* frames shown as module+off/unknown */
	uint64_t truncated_stacks;	/* depth hit the stack limit */
	uint64_t map_full_warnings;	/* bpftrace said a map was full */
	uint64_t nonstack_ignored;	/* counts of maps without stacks (@[comm])
					 * not added: the input has stack maps,
					 * the same samples (report.h) */
	uint64_t captures_cut;	/* captures whose bpftrace ended early (killed
				 * or failed, "#meta ended"): the samples it
				 * took since its last flush were lost with
				 * it, how many unknown */
	uint64_t empty_stacks;	/* samples of a stack map whose stacks were
				 * all empty ("@[, , comm]: N"): drawn as
				 * the process alone */
	uint64_t maps_unsaved;	/* "#pid" marks (a process's first sample,
				 * or its first after an exec) whose memory
				 * map could not be saved: the process had
				 * exited; its frames stay [unknown] */
	/* --call-graph dwarf (ingest/dwarfin.h) */
	uint64_t dwarf_samples;	/* complete samples with a stack copy */
	uint64_t dwarf_partial;	/* samples dropped: records lost */
	uint64_t dwarf_badregs;	/* no user registers (the capture's check) */
	uint64_t dwarf_bad_lines;	/* malformed records */
	uint64_t dwarf_truncated;	/* stack copy ended before the stack */
	uint64_t dwarf_cut;	/* of those, copies the size bound cut (more
				 * --stack-size would have unwound further) */
	uint64_t dwarf_cut_bytes;	/* the largest such copy: the bound */
	uint64_t dwarf_unwind_errors;	/* the unwinder could not go on */
	uint64_t dwarf_cfi_files;	/* files read for their CFI */
	uint64_t dwarf_cfi_cached;	/* files whose CFI rows the cache had */
	uint64_t other_pids;	/* samples of processes --pid left out (not
				 * a loss: asked for) */
	uint64_t py_unknown_frames;	/* Python frames whose code object could
					 * not be read or checked: shown as
					 * [python:unknown] */
	uint64_t py_cut_stacks;	/* samples whose Python frames were cut at
				 * the capture's bound (16) */
	uint64_t mem_overflow;	/* samples of stacks past the memory budget
				 * (continuous --max-memory), added as one
				 * [overflow] stack */
	uint64_t side_lost;	/* the kernel's side-band records (the maps
				 * of short-lived processes, perfside.h)
				 * dropped with its ring full ("#meta
				 * sideband_lost") */
	uint64_t exec_capped;	/* "#pid" marks of an image past the probe's
				 * exec cap (protocol_image_capped()): several
				 * programs under one key, so its frames
				 * stay unnamed */
	bool losses_unknown;	/* folded text only: the capture's losses
				 * (lost events, drops, stack-id errors) were
				 * not recorded in it */
	bool drops_unknown;	/* bpftrace text without a sample total (a
				 * one-liner's): map_dropped, over_total not
				 * measured */
};

struct pf_meta {
	uint64_t hz;		/* 0 when unknown */
	uint64_t time_nanos;	/* capture start, 0 when unknown */
	uint64_t duration_nanos;
	uint32_t bpftrace_version, kernel_release, hostname, cmdline;
				/* string ids, 0 when unknown */
};

struct profile {
	struct strtab strs;
	struct pf_mapping *mappings;	/* [0] unused */
	size_t nmappings, mappings_cap;
	struct pf_function *functions;	/* [0] unused */
	size_t nfunctions, functions_cap;
	struct pf_location *locations;	/* [0] unused */
	size_t nlocations, locations_cap;
	struct pf_line *lines;
	size_t nlines, lines_cap;
	uint32_t *stack_ids;
	size_t nstack_ids, stack_ids_cap;
	struct pf_sample *samples;	/* [0] unused */
	size_t nsamples, samples_cap;
	struct pf_counters counters;
	struct pf_meta meta;
	/* private hash indexes */
	uint32_t *fn_slots, *loc_slots, *map_slots, *sample_slots;
	size_t fn_nslots, loc_nslots, map_nslots, sample_nslots;
};

int profile_init(struct profile *p);	/* 0 or -ENOMEM */
void profile_release(struct profile *p);

/* Interning: each returns the existing id for an equal entry, else a new
 * one (> 0), or a negative errno. */
int64_t profile_mapping(struct profile *p, const struct pf_mapping *m);
int64_t profile_function(struct profile *p, const struct pf_function *f);
/* A location is identified by (mapping, address, kind, is_return,
 * unknown_name, offset) when it has an address, else by (kind, offset,
 * its lines).  lines[] is copied. */
int64_t profile_location(struct profile *p, const struct pf_location *key,
			 const struct pf_line *lines, uint32_t nlines);
/* Shortcut: a location that is just one function name (folded input,
 * pre-symbolized bpftrace text).  Interns name and function. */
int64_t profile_named_location(struct profile *p, const char *name,
			       size_t len, enum pf_loc_kind kind);
/* The same, with the rest of the location from key (its mapping, address,
 * kind, offset; its lines ignored). */
int64_t profile_named_location_at(struct profile *p, const char *name,
				  size_t len, const struct pf_location *key);

/* Add count samples of one stack (locs leaf first).  Merges with an equal
 * (pid, tid, comm, thread_name, process, stack).  0 or negative errno.
 * profile_add_sample() leaves the process name unknown. */
/* The same, with the labels in key (pid, tid, comm, thread_name, process;
 * its other fields are ignored), returning the sample's id (> 0) or a
 * negative errno. */
int64_t profile_add_sample_id(struct profile *p, const struct pf_sample *key,
			      const uint32_t *locs, uint32_t depth,
			      uint64_t count);
/* Add count to an existing sample id (a repeat of a known stack).
 * 0, -EINVAL for an unknown id, -EOVERFLOW past the int64 total. */
int profile_sample_add_count(struct profile *p, uint32_t id, uint64_t count);
int profile_add_sample(struct profile *p, uint32_t pid, uint32_t tid,
		       uint32_t comm, uint32_t thread_name,
		       const uint32_t *locs, uint32_t depth, uint64_t count);

static inline const char *profile_str(const struct profile *p, uint32_t id)
{
	return strtab_get(&p->strs, id);
}
static inline const uint32_t *profile_stack(const struct profile *p,
					    const struct pf_sample *s)
{
	return p->stack_ids + s->stack_start;
}

#endif
