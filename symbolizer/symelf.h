/*
 * symelf.h - one ELF file's symbols without a session: addresses in the
 * file's own ELF address space (what `addr2line -e FILE` takes) named
 * with their inline chains and lines, through the same per-file index
 * (and on-disk cache) a session uses.  For `stackfold symbolize`, which
 * has no process to map.
 *
 * Ownership: a struct sym_elf owns its index; strings in results point
 * into it and stay valid until sym_elf_free().  The caller keeps fd.
 * Errors: sym_elf_open() returns NULL with err filled.  Nothing prints;
 * warnings go to opts->warn.
 *
 * Public: one of the symbolizer's headers collapse/ may include (the list:
 * docs/design.md, checked by scripts/check-layers).
 */
#ifndef SF_SYMELF_H
#define SF_SYMELF_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer.h"
#include "base/util.h"

struct sym_elf;
struct sf_limits;

struct sym_elf_opts {
	const char *cache_dir;	/* NULL: no persistent cache */
	bool no_demangle;
	bool no_dwarf;		/* symbol tables only */
	/* one-line warnings (may be NULL), called with warn_ctx */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	/* bounds and refusal counts shared by the caller's files (may be
	 * NULL: default bounds); base/untrusted.h */
	struct sf_limits *limits;
};

/* The file readable through fd (not consumed); path names it in messages
 * and is where its .gnu_debuglink is looked for.  NULL with err filled
 * when it is no usable ELF file, or on ENOMEM. */
struct sym_elf *sym_elf_open(int fd, const char *path,
			     const struct sym_elf_opts *opts,
			     struct sf_err *err);
/* Stores what was read in the cache first.  NULL is fine. */
void sym_elf_free(struct sym_elf *e);
/* Name vaddr: res->frames/nframes/reason (SYM_OK, SYM_NOT_FOUND,
 * SYM_NO_SYMBOLS; e NULL: SYM_NO_SYMBOLS) and the offset fields; res->module and
 * res->module_addr are left alone. */
void sym_elf_lookup(const struct sym_elf *e, uint64_t vaddr,
		    struct sym_result *res);
/* The line-table discriminator of the row holding vaddr (addr2line's
 * "(discriminator N)"), 0 if none (or e is NULL). */
uint32_t sym_elf_discriminator(const struct sym_elf *e, uint64_t vaddr);

#endif
