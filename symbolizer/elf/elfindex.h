/*
 * elfindex.h - per-file symbol index (internal to symbolizer/).
 *
 * An elf_index answers "which function (and inline chain, file:line) holds
 * this address in the file's own ELF address space".  It is built from the
 * file's .symtab/.dynsym (libelf) and, when present, DWARF (libdw), looking
 * for debug info wherever it lives (build-id debug dirs, .gnu_debuglink,
 * .gnu_debugdata, debuginfod).  The built index is persisted in the cache
 * directory as one file per build-id (fallback key: dev, inode, size, mtime)
 * and loaded back with one mmap.
 *
 * Ownership: the index owns its strings; results point into it and stay
 * valid until elfidx_free().  The caller keeps ownership of fd.
 *
 * Cache entries (symbolizer/elf/idxcache.h) are read into memory with one
 * pread and fully validated (magic, version, length, CRC32, every
 * reference) rather than used through a shared mmap: a file truncated by
 * another process could otherwise SIGBUS us.  A corrupt entry is deleted,
 * rebuilt and reported once through opts->warn.
 *
 * Where debug info is looked for, in order: the file itself; for each
 * debug root ROOT in $STACKFOLD_DEBUG_DIRS (colon-separated; for tests and
 * sysroots) and then /usr/lib/debug, ROOT/.build-id/xx/yyyy.debug; the
 * .gnu_debuglink name next to the file, in its .debug/ directory and in
 * ROOT/<file's directory>/ (CRC32 checked; a mismatch is warned about and
 * the file ignored); debuginfod, only when $DEBUGINFOD_URLS is set (a 5 s
 * deadline, after which the process stops asking; libdebuginfod caches
 * "not found" answers; an index built without debug info asks again after
 * a day).  A cached index made from a poorer copy of the file (stripped,
 * or before its debug file was installed) is rebuilt.  Symbols come from
 * .symtab, else the debug file's .symtab, else .dynsym plus the
 * .gnu_debugdata (MiniDebugInfo) .symtab.
 */
#ifndef SF_ELFINDEX_H
#define SF_ELFINDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer.h"
#include "base/util.h"

struct elf_index;

struct sf_limits;

struct elfidx_opts {
	const char *cache_dir;	/* NULL: no persistent cache */
	bool no_demangle;
	bool no_dwarf;
	bool no_lines;		/* no line tables (.debug_line not decoded):
				 * cached apart, and an entry with them is
				 * used when the cache has one */
	bool dwarf_whole;	/* every unit at the first miss (dwlazy.c) */
	uint64_t cache_max_bytes;
	/* session warning sink (may be NULL): called with one-line messages */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	/* bounds and refusal counts shared by the caller's indexes (may be
	 * NULL: default bounds, nothing counted); base/untrusted.h */
	struct sf_limits *limits;
};

/*
 * Open the index for the ELF file readable through fd (not consumed; the
 * index may dup it).  path is for messages and debuglink lookup (the
 * directory of the original file).  Returns NULL with err filled when the
 * file is not a usable ELF at all.
 */
struct elf_index *elfidx_open(int fd, const char *path,
			      const struct elfidx_opts *opts,
			      struct sf_err *err);
void elfidx_free(struct elf_index *idx);	/* NULL is fine */

/*
 * An index reads the DWARF of its file one group of compile units at a
 * time, at the first lookup landing in them.  elfidx_flush() stores what
 * was read so far in the cache (the next run reads no unit twice) and
 * closes the file's decompressed DWARF; later lookups in other units
 * open it again.  Call it before elfidx_free() and between windows of a
 * long run.  NULL is fine.
 */
void elfidx_flush(struct elf_index *idx);

/* Lowercase hex build-id, "" if the file has none. */
const char *elfidx_build_id(const struct elf_index *idx);

/* Translate a file offset (maps offset + (abs - start)) into the ELF
 * virtual address space using the PT_LOAD headers.  false if no segment
 * covers it. */
bool elfidx_file_offset_to_vaddr(const struct elf_index *idx, uint64_t off,
				 uint64_t *vaddr);

/* What the index can provide (for pprof's has_* flags). */
struct elfidx_caps {
	bool has_symbols, has_filenames, has_line_numbers, has_inline_frames;
};
void elfidx_caps(const struct elf_index *idx, struct elfidx_caps *caps);

/*
 * Look up vaddr (already adjusted by the caller for return addresses).
 * Fills res->frames/nframes/reason (SYM_OK, SYM_NOT_FOUND, SYM_NO_SYMBOLS)
 * and res->has_offset/offset/offset_name (vaddr's offset in the symbol
 * holding it, and its name: the caller adds back a return address's 1);
 * leaves res->module and res->module_addr alone.  Symbols without a size
 * match only their exact address: never a far-away name.
 */
void elfidx_lookup(const struct elf_index *idx, uint64_t vaddr,
		   struct sym_result *res);

/* true when idx was loaded from the on-disk cache (the ELF file's symbols
 * and DWARF were not parsed).  false for NULL. */
bool elfidx_from_cache(const struct elf_index *idx);

/* DWARF line-table discriminator of the row holding vaddr (what addr2line
 * prints as "(discriminator N)" after the innermost line), 0 if none. */
uint32_t elfidx_discriminator(const struct elf_index *idx, uint64_t vaddr);

/*
 * Before libdw opens elf itself (dwarf_begin_elf: the unwinder's
 * .debug_frame), which decompresses every compressed debug section to
 * the size its header claims: the sizes held to l's bounds as an index's
 * are (sf_inflate_bound, the session's budget); past them every
 * compressed debug section is hidden from libdw, the refusal counted.
 * Returns the bytes taken from l's budget: sf_limits_give() them once
 * elf is closed.
 */
struct Elf;
uint64_t elfidx_bound_libdw(struct Elf *elf, struct sf_limits *l);

/* Read only the build-id of an open ELF file into hex (size >= 41).
 * Returns 0, or -ENOENT when there is none, -EINVAL when not ELF. */
int elf_read_build_id(int fd, char *hex, size_t hexsize);

#endif
