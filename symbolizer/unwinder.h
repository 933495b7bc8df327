/*
 * unwinder.h - user stacks from registers and a stack copy, with the call
 * frame information (CFI) of the mapped files: .eh_frame, else
 * .debug_frame, read with libdw (--call-graph dwarf).
 *
 * Each frame's rules come from dwarf_cfi_addrframe() once per (file,
 * address range), converted to the unwinder's own rows (cfirules.h), and
 * stay cached for the unwinder's life, for every process mapping that
 * file; a frame is then a hash lookup and a few reads from the copy.  A
 * file with a build-id keeps its rows in the session's index cache: a
 * later run finds them there and opens neither the file nor its CFI.  The rules are evaluated here (CFA and registers as DWARF
 * expressions: register + offset, the PLT's expression, a signal frame's
 * saved context), over the stack copy only, so a stack is never read from
 * anything but what the capture took.
 *
 * Files are read as elf/elfread.h says: mapped only when root alone can
 * write them, else read into memory (a truncation is then an error, not
 * SIGBUS).
 *
 * A walk ends complete when the return address is undefined (_start,
 * clone) or zero, or at a pc without CFI in the code at its file's entry
 * point when the entry has none either (ld.so's _start); truncated when a rule reads at or above the copy's end
 * (the stack went on past what was copied); in error when a pc has no
 * mapping, no file, no CFI, or a rule this evaluator does not take.  The
 * frames found before the end are exact either way: no frame is guessed.
 *
 * Ownership: the unwinder borrows the session (which must outlive it) and
 * owns its per-file ELF handles and rows; uw_free() writes the rows new
 * in this run to the cache (a failure is a session warning).  Nothing
 * prints.
 *
 * Public: one of the symbolizer's headers collapse/ may include (the list:
 * docs/design.md, checked by scripts/check-layers); implemented in
 * unwind/.
 */
#ifndef SF_UNWINDER_H
#define SF_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer.h"

/* DWARF register numbers of x86-64 (the capture's order) */
enum { UW_NREGS = 17, UW_RBP = 6, UW_RSP = 7, UW_RIP = 16 };
#define UW_MAX_FRAMES 1024

/* Stack bytes copied at the sample: bytes[0] is at address base (the
 * sample's sp). */
struct uw_stack {
	const uint8_t *bytes;
	size_t len;
	uint64_t base;
};

enum uw_end {
	UW_COMPLETE,	/* reached the outermost frame */
	UW_TRUNCATED,	/* the stack goes on above the copy */
	UW_ERROR,	/* could not go on: see why */
};

struct uw_result {
	uint64_t pc[UW_MAX_FRAMES];	/* leaf first; pc[0] the sample's ip,
					 * the others return addresses ... */
	bool exact[UW_MAX_FRAMES];	/* ... except where exact: the pc a
					 * signal interrupted, and the signal
					 * trampoline's (named at the pc) */
	size_t n;
	enum uw_end end;
	const char *why;	/* UW_ERROR's reason, static text */
};

struct uw_stats {
	uint64_t rule_lookups, rule_misses;	/* hits = lookups - misses */
	uint64_t cached_rows;	/* misses served by rows from the cache */
	uint64_t cached_files;	/* files whose rows the cache had */
	uint64_t files;		/* files opened for CFI */
	uint64_t no_cfi;	/* pcs whose file has no rule for them */
};

struct unwinder;

/* NULL on -ENOMEM. */
struct unwinder *uw_new(struct sym_session *s);
void uw_free(struct unwinder *u);	/* NULL is fine */
/* Write the rows new since the last save to the cache now (uw_free()
 * does too): before the session's warnings are shown, so that a failed
 * write is one of them.  NULL is fine. */
void uw_save(struct unwinder *u);

/* Unwind pid's image (its snapshot must be in the session) from regs (all
 * UW_NREGS, DWARF order) and the copy st.  Fills *out; returns 0, or
 * -ENOMEM. */
int uw_unwind(struct unwinder *u, int pid, uint32_t image,
	      const uint64_t regs[UW_NREGS], const struct uw_stack *st,
	      struct uw_result *out);

const struct uw_stats *uw_stats(const struct unwinder *u);

#endif
