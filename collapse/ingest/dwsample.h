/*
 * dwsample.h - one whole --call-graph dwarf sample, what both of its
 * assemblers (dwarfrec.h: per-sample records; dwarfwin.h: flushed maps)
 * hand on, and the counters they add to.  The sizes are fixed by the
 * capture (bt/profile-dwarf.bt).  Nothing prints or exits.
 */
#ifndef SF_DWSAMPLE_H
#define SF_DWSAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* sizes fixed by the capture: 48 words a chunk, at most 255 chunks */
#define DWREC_CHUNK_WORDS 48
#define DWREC_CHUNK_BYTES (DWREC_CHUNK_WORDS * 8)
#define DWREC_MAX_CHUNKS 255
#define DWREC_NREGS 17
#define DWREC_MAX_KFRAMES 256
#define DWREC_MAX_CPUS 8192

/* #U flags */
enum {
	DWREC_CUT = 1,		/* the copy stopped at the maximum size */
	DWREC_BADREGS = 2,	/* the user registers failed the cs check */
	DWREC_KTHREAD = 4,	/* a kernel thread: no user side */
};

struct dw_sample {
	uint32_t cpu, pid, image, tid;
	uint64_t seq;
	int mode;		/* 3: taken in user mode */
	unsigned flags;
	char comm[17];
	size_t comm_len;
	uint64_t regs[DWREC_NREGS];
	const uint8_t *stack;	/* stack_len bytes from regs[7] (sp) */
	size_t stack_len;
	const uint64_t *kframes;	/* kernel stack, leaf first */
	size_t nkframes;
	size_t line;		/* the #U line's number */
};

struct dwrec_counters {
	uint64_t samples;	/* complete samples emitted */
	uint64_t partial;	/* samples dropped: records missing */
	uint64_t orphans;	/* records of no open sample (their header
				 * lost): their samples are in partial */
	uint64_t bad_lines;	/* malformed records */
	size_t first_bad_line;
	uint64_t badregs, kthreads, cut;	/* flags of emitted samples */
};

/* A kernel frame line as bpftrace prints one ("\tADDR sym+off"): its
 * address; false when the line is not one (not indented, no hex first). */
bool dwsample_kframe_addr(const char *s, size_t len, uint64_t *addr);

#endif
