/*
 * cfirules.h - one file's CFI rows in the unwinder's own form, kept in
 * the index cache (internal to symbolizer/).
 *
 * A row is what libdw's dwarf_cfi_addrframe() says for an address range
 * of the file (the range where exactly those rules hold, so that a row
 * found in the cache answers as libdw would): the CFA and the registers a caller keeps (rbx, rbp,
 * r12-r15, the return address), each the same value, undefined, or a
 * DWARF expression; and whether it is a signal frame's.  Rows converted
 * while unwinding are saved per build-id (DIR/b-BUILDID-c.idx) with the
 * file's PT_LOAD segments, so that a later run finds its rows there and
 * opens neither the file nor its CFI.
 *
 * Blob: header (magic, version, counts, CRC32 of the rest, the file's
 * entry point), segments,
 * rows sorted by address and not overlapping, operations in row order.
 * Every field is checked on load: a cache file is never trusted.
 *
 * Ownership: a table owns its arrays.  Nothing prints.
 */
#ifndef SF_CFIRULES_H
#define SF_CFIRULES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { CFR_SAME, CFR_UNDEF, CFR_EXPR, CFR_BAD };
/* the CFA, then the kept registers in cfr_regs[] order */
#define CFR_NREGS 7
#define CFR_NEXPR (1 + CFR_NREGS)
#define CFR_MAX_OPS 32		/* an expression's; longer ones are CFR_BAD */
extern const int cfr_regs[CFR_NREGS];

struct cfr_op {
	uint8_t atom;
	uint64_t number, number2;
};

struct cfr_row {
	uint64_t start, end;	/* ELF addresses, [start, end) */
	uint32_t op0;		/* its expressions' operations, in order */
	uint8_t signal;
	uint8_t kind[CFR_NEXPR];
	uint8_t nops[CFR_NEXPR];
};

struct cfr_seg {
	uint64_t offset, filesz, vaddr;
};

struct cfr_table {
	struct cfr_row *rows;
	size_t nrows, rcap;
	size_t nsorted;		/* rows[0, nsorted) came sorted from a blob */
	struct cfr_op *ops;
	size_t nops, ocap;
	struct cfr_seg *segs;
	size_t nsegs;
	uint64_t entry;		/* the ELF header's entry point, 0: none */
	bool dirty;		/* rows added since the blob */
};

void cfr_release(struct cfr_table *t);
/* Append fr's row, starting at from when that is above the start libdw
 * reports (which can be too early: unwind.c's row_start()); *row its
 * index.  0 or -ENOMEM. */
int cfr_add(struct cfr_table *t, Dwarf_Frame *fr, uint64_t from, size_t *row);
/* The loaded row holding ELF address a, or SIZE_MAX. */
size_t cfr_find(const struct cfr_table *t, uint64_t a);
/* The table as a blob (malloc'd): rows sorted, a row overlapping the one
 * before it cut to the part past it (dropped when none is).  0 or
 * -ENOMEM. */
int cfr_encode(const struct cfr_table *t, unsigned char **blob, size_t *len);
/* Fill an empty table from a blob.  0; -ESTALE for another version's;
 * -EINVAL when it is not a valid one; -ENOMEM. */
int cfr_decode(struct cfr_table *t, const unsigned char *blob, size_t len);

#endif
