/*
 * dwarfrec.h - assemble --call-graph dwarf's records into whole samples:
 * bt/profile-dwarf.bt's flushed maps (dwarfwin.h), and the per-sample
 * records (#U header, #K kernel stack, #W stack words) that raw captures
 * of earlier versions hold.
 *
 * Records of different CPUs interleave in bpftrace's output; one CPU's
 * stay in order.  A sample is complete only when its header, its kernel
 * stack (samples taken in the kernel) and every one of its chunks came,
 * in order, with its CPU and sequence number; anything else (a lost perf
 * event dropped a record) makes it partial: counted, never emitted.
 *
 * Memory: one open sample per CPU.  Nothing prints or exits.
 */
#ifndef SF_DWARFREC_H
#define SF_DWARFREC_H

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

struct dwrec;

/* sample(): a complete sample, valid during the call; <0 stops with that
 * error. */
struct dwrec *dwrec_new(int (*sample)(void *ctx, const struct dw_sample *s),
			void *ctx);
void dwrec_free(struct dwrec *d);	/* NULL is fine */
/* Is this line one of the records (or inside a #K block)? */
bool dwrec_wants(const struct dwrec *d, const char *s, size_t len);
/* Feed one such line; line is its number.  0; 1 when the line was not a
 * record after all (it ended a flushed kernel stack: hand it on); or <0
 * (-ENOMEM, the callback's). */
int dwrec_line(struct dwrec *d, const char *s, size_t len, size_t line);
/* End of input: held flushed records assembled, samples still open
 * partial.  0 or the callback's error. */
int dwrec_finish(struct dwrec *d);
const struct dwrec_counters *dwrec_counters(struct dwrec *d);
/* A kernel frame line as bpftrace prints one ("\tADDR sym+off"): its
 * address; false when the line is not one (not indented, no hex first). */
bool dwrec_kframe_addr(const char *s, size_t len, uint64_t *addr);

#endif
