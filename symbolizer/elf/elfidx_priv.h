/*
 * elfidx_priv.h - internals shared by elfindex.c, idxcache.c, dwarfidx.c,
 * debuglink.c, dwsrc.c and demangle.c (the debug-file search: debuglink.h;
 * a file's DWARF source: dwsrc.h).  Not for use outside symbolizer/elf*.
 *
 * An index is one flat, position-independent blob (struct idx_hdr followed
 * by its sections).  The same bytes are built in memory from the ELF file and
 * written to / read from the on-disk cache, so a warm open is one read plus a
 * validation pass.  All integers are host-endian; the cache is a local cache,
 * never shared between machines (the header records the layout version).
 *
 * String references are byte offsets into the STRS section; offset 0 is the
 * empty string, which also means "unknown".
 */
#ifndef SF_ELFIDX_PRIV_H
#define SF_ELFIDX_PRIV_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/untrusted.h"
#include "elf/elfindex.h"
#include "elf/elfread.h"
#include "base/util.h"

#define IDX_MAGIC "SFELFIDX"
#define IDX_VERSION 12u
#define IDX_NONE UINT32_MAX
#define IDX_KEY_LEN 96		/* a cache key and its NUL */

enum idx_sect {
	IDX_PHDRS,	/* struct idx_phdr, PT_LOAD segments in file order */
	IDX_SYMS,	/* struct idx_sym, sorted by lo, one per address */
	IDX_STRS,	/* NUL-terminated strings, [0] == '\0' */
	IDX_LINES,	/* struct idx_line, sorted by addr */
	IDX_SEGS,	/* struct idx_seg, sorted, non-overlapping */
	IDX_NODES,	/* struct idx_node, parents before children */
	IDX_CUS,	/* struct idx_cu, the DWARF's compile units by address */
	IDX_EAGER,	/* uint64_t DIE offsets of units without an address
			 * range, always read (in the blob when LAZY) */
	IDX_NSECT
};

enum idx_flags {
	IDX_HAS_SYMBOLS = 1 << 0,	/* a symbol table; not PLT names alone */
	IDX_HAS_FILES = 1 << 1,
	IDX_HAS_LINES = 1 << 2,
	IDX_HAS_INLINE = 1 << 3,
	IDX_DWARF_TRIED = 1 << 4,	/* built with DWARF enabled */
	IDX_DEMANGLED = 1 << 5,		/* names demangled at build */
	IDX_DEBUG_FOUND = 1 << 6,	/* had DWARF (own or separate) */
	IDX_DWARF_LAZY = 1 << 7,	/* LINES/SEGS/NODES hold only the CUs
					 * marked done in CUS (dwlazy.c) */
	IDX_SYMS_RAW = 1 << 8,		/* symbol names as in the table:
					 * demangled at lookup (demangle.c) */
	IDX_NO_LINES = 1 << 9,		/* line tables left out (no_lines) */
	IDX_SYMTAB = 1 << 10,		/* symbols from a .symtab (the file's,
					 * its debug file's, MiniDebugInfo's):
					 * a .dynsym-only entry is poorer */
	IDX_DINFOD_MISS = 1 << 11,	/* no debug file found, and a
					 * configured debuginfod answered "not
					 * found" for it: kept a day where
					 * DEBUGINFOD_URLS is set */
	IDX_DINFOD_DOWN = 1 << 12,	/* ... and the servers could not be
					 * reached or missed the deadline (this
					 * file's request or an earlier one of
					 * the run): kept 10 minutes.  An entry
					 * with neither (no server was set) is
					 * rebuilt once one is. */
};

struct idx_hdr {
	char magic[8];
	uint32_t version;
	uint32_t flags;		/* enum idx_flags */
	uint64_t total_len;	/* header + body, bytes */
	uint32_t crc;		/* idx_crc(): all but this field */
	uint32_t nsect;		/* IDX_NSECT */
	char key[IDX_KEY_LEN];	/* cache key the blob was built for */
	char build_id[48];	/* lowercase hex, "" if none */
	uint64_t addr_base;	/* LINES and SEGS addresses are relative */
	uint64_t built_at;	/* time(NULL) when built */
	uint64_t sect_off[IDX_NSECT];	/* from blob start, 8-aligned */
	uint64_t sect_count[IDX_NSECT];	/* elements (bytes for STRS) */
};

struct idx_phdr {
	uint64_t offset, vaddr, filesz, memsz;
	uint64_t flags;		/* p_flags (PF_X: may hold code) */
};

/* A function symbol; size 0 matches only lo itself. */
struct idx_sym {
	uint64_t lo, size;
	uint32_t name;		/* demangled (== sysname when not mangled) */
	uint32_t sysname;	/* as in the symbol table */
};

/* One line-table row; it covers [addr_base + addr, next row's).  file == 0
 * and line == 0 marks an end of sequence (a gap).  Addresses are 32-bit
 * offsets from addr_base to halve the biggest table (rows beyond 4 GiB of
 * text are dropped). */
struct idx_line {
	uint32_t addr;
	uint32_t file, line;
	uint32_t disc;
};

/* [addr_base + lo, next seg's) is covered by DWARF scope node
 * (IDX_NONE: none). */
struct idx_seg {
	uint32_t lo;
	uint32_t node;
};

/*
 * Compile units by address, for an index whose DWARF is read lazily, one
 * group of units at a time (dwlazy.c).  Units whose address ranges overlap
 * form one group: every entry of a group has the group's whole range
 * [lo, hi), one entry per unit (off: the unit's DIE offset), and groups
 * are disjoint and sorted.  A unit with several ranges is in several
 * groups.  done: the unit's rows and scopes are in this blob.
 */
struct idx_cu {
	uint64_t lo, hi;
	uint64_t off;
	uint32_t done;
	uint32_t pad;
};

/* Builder forms of the above, with full addresses. */
struct bline {
	uint64_t addr;
	uint32_t file, line, disc;
};
struct bseg {
	uint64_t lo;
	uint32_t node;
};

/* A subprogram (parent == IDX_NONE) or an inlined instance inside parent,
 * called from call_file:call_line of the parent.  A subprogram has no call
 * site: its call_line is 0; IDX_NODE_SYMNAME when its name is a plain
 * DW_AT_name in a language that mangles symbols, so that the symbol-table
 * name of the symbol starting in it is preferred (as addr2line does);
 * IDX_NODE_SYMNAME_C for a C function, whose symbol's name is preferred
 * too.  Either way a compiler-made part with a plain name (foo.cold,
 * foo.constprop.0) keeps the source's name. */
#define IDX_NODE_SYMNAME UINT32_MAX
#define IDX_NODE_SYMNAME_C (UINT32_MAX - 1)
struct idx_node {
	uint32_t name, sysname;
	uint32_t call_file, call_line;
	uint32_t parent;
	uint32_t decl_line;	/* function's first line, 0 if unknown */
};

/* Index of the last element with key <= a, or SIZE_MAX. */
#define LAST_LE(arr, n, field, a)                                      \
	({                                                             \
		size_t lo_ = 0, hi_ = (n);                             \
		while (lo_ < hi_) {                                    \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;           \
			if ((arr)[mid_].field <= (a))                  \
				lo_ = mid_ + 1;                        \
			else                                           \
				hi_ = mid_;                            \
		}                                                      \
		lo_ ? lo_ - 1 : SIZE_MAX;                              \
	})

struct dwlazy;
struct demangle_cache;

/* The opened index: a validated blob plus typed views into it. */
struct elf_index {
	unsigned char *blob;	/* owned: malloc'd, or inside map_base */
	void *map_base;		/* anonymous mapping holding blob (a big
				 * cache entry), NULL when blob is malloc'd */
	size_t map_span;
	size_t len;
	const struct idx_hdr *hdr;
	const struct idx_phdr *phdrs;
	const struct idx_sym *syms;
	const char *strs;
	const struct idx_line *lines;
	const struct idx_seg *segs;
	const struct idx_node *nodes;
	const struct idx_cu *cus;
	const uint64_t *eager;
	size_t nphdrs, nsyms, nstrs, nlines, nsegs, nnodes, ncus, neager;
	bool from_cache;
	bool no_demangle;
	bool no_store;		/* built without a .dwo: not to be cached */
	struct dwlazy *lazy;	/* owned; NULL unless IDX_DWARF_LAZY */
	struct demangle_cache *dm;	/* owned; NULL unless IDX_SYMS_RAW */
};

/*
 * struct idx_builder - collects an index before it is frozen into a blob.
 * Strings are interned in a util strtab; ids are turned into byte offsets
 * when the blob is written.
 */
struct idx_builder {
	struct strtab strs;
	struct idx_phdr *phdrs;
	size_t nphdrs, phcap;
	struct idx_sym *syms;	/* name/sysname are strtab ids until frozen */
	size_t nsyms, symcap;
	struct bline *lines;
	size_t nlines, linecap;
	struct bseg *segs;
	size_t nsegs, segcap;
	struct idx_node *nodes;
	size_t nnodes, nodecap;
	struct idx_cu *cus;
	size_t ncus, cucap;
	uint64_t *eager;	/* units without address ranges (always read) */
	size_t neager, eagercap;
	uint32_t flags;
	char build_id[48];
	bool demangle;
	bool no_lines;		/* leave line tables out (IDX_NO_LINES) */
	bool dwo_missing;	/* a unit was read without its .dwo: the
				 * result is not stored (a .dwo found later
				 * must not be hidden by a cached entry) */
	bool dwo_warned;	/* in: a missing .dwo of this file was
				 * reported already (say it once a file) */
	/* raw name id -> demangled id + 1 (0: not demangled yet): inlined
	 * C++ functions repeat their names thousands of times */
	uint32_t *dm;
	size_t dmcap;
	/* warning sink, copied from the opts */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	struct sf_limits *limits;	/* from the opts; may be NULL */
};

int idxb_init(struct idx_builder *b);
/* Names demangled, warnings to o's sink, build_id recorded. */
void idxb_start(struct idx_builder *b, const struct elfidx_opts *o,
		const char *build_id);
void idxb_release(struct idx_builder *b);
/* Intern a string; returns the id, or -ENOMEM. */
int64_t idxb_str(struct idx_builder *b, const char *s);
/* Intern a symbol name and its demangled form (b->demangle); 0 or -ENOMEM. */
int idxb_name(struct idx_builder *b, const char *raw, uint32_t *name,
	      uint32_t *sysname);
/* Warn through the sink, printf-style. */
void idxb_warn(const struct idx_builder *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Freeze into a malloc'd blob (*blob, *len) under cache key `key`. */
int idxb_freeze(struct idx_builder *b, const char *key, unsigned char **blob,
		size_t *len);

/*
 * Validate a blob (magic, version, length, checksum, every section and
 * every string/node reference) and fill idx's views.  Takes ownership of
 * blob on success.  Returns 0, -ESTALE for another format version (an
 * entry written by an older or newer stackfold), or -EINVAL with why in
 * err.
 */
int idx_attach(struct elf_index *idx, unsigned char *blob, size_t len,
	       const char *key, struct sf_err *err);

/* demangle.c: malloc'd demangled C++/Rust name, or NULL if not mangled
 * (or the demangler is unavailable). */
char *demangle_name(const char *name);

/*
 * demangle.c: symbol names demangled when first looked up rather than
 * when indexed.  A C++ library's table holds 100,000 names of which a
 * profile shows a few dozen, and demangling them all was most of indexing
 * it.  demangle_cache_new() returns NULL on ENOMEM (names then stay
 * raw); demangle_cache_name() returns the demangled form of the string at
 * strs+off (owned by the cache, valid until demangle_cache_free()), or
 * that string itself when it is not mangled or memory runs out.
 */
struct demangle_cache *demangle_cache_new(void);
const char *demangle_cache_name(struct demangle_cache *c, const char *strs,
				uint32_t off);
void demangle_cache_free(struct demangle_cache *c);	/* NULL is fine */

/* elfsyms.c: function symbols of elf (and of extra, e.g. the
 * .gnu_debugdata symtab, when not NULL) into b->syms, sorted and
 * alias-reduced, with names for the PLT stubs of either (elfplt.c);
 * want_dynsym false reads .symtab only.  0 or -ENOMEM. */
int elfsyms_collect(struct idx_builder *b, Elf *elf, Elf *extra,
		    bool want_dynsym);
/* elfplt.c: "name@plt" for the PLT stubs of an x86-64 elf (other
 * machines, or a file without PLT sections or relocations: none), each
 * stub one entry long.  Appended to out; names owned by out.  0 or -ENOMEM
 * (out then holds what was added; release it either way). */
struct pltsym {
	uint64_t lo, size;
	char *name;
};
struct pltsyms {
	struct pltsym *v;
	size_t n, cap;
};
int elfplt_collect(Elf *elf, struct pltsyms *out);
void pltsyms_release(struct pltsyms *s);

/* PT_LOAD headers of elf into b->phdrs.  0 or -ENOMEM. */
int elfsyms_phdrs(struct idx_builder *b, Elf *elf);
/* true when elf has a non-empty .symtab */
bool elfsyms_has_symtab(Elf *elf);

/*
 * dwarfidx.c: an open DWARF source.  dwarfidx_open() takes elf and fd (the
 * file holding the DWARF; both closed by dwarfidx_close(), also on
 * failure), decompresses its debug sections and opens libdw on them.
 * 0, -ENOENT when it has no usable DWARF, -ENOMEM.
 */
struct elfcomp_bufs {
	void **v;
	size_t n, cap;
	struct sf_limits *limits;	/* charged bytes are given back to */
	uint64_t charged;		/* decompressed bytes held */
};
struct dwsrc {
	Elf *elf;
	int fd;
	struct stat st;		/* fd's when opened (dwarfidx_changed) */
	struct elfcomp_bufs zb;
	Dwarf *dw;
};
/* o->no_lines: .debug_line is hidden from libdw, not decoded;
 * o->limits bound the decompression (path names the file in messages). */
int dwarfidx_open(struct dwsrc *s, Elf *elf, int fd,
		  const struct elfidx_opts *o, const char *path);
void dwarfidx_close(struct dwsrc *s);	/* zeroed: closing twice is fine */
/* dwoplace.c: may libdw look for the .dwo that skeleton unit cudie of
 * src names (every name it would open is in a place allowed for it)?
 * false: refused, counted and said through b.  src NULL: true. */
bool dwo_place_ok(struct idx_builder *b, const struct dwsrc *src,
		  Dwarf_Die *cudie);
/* Has the file under s been rewritten since it was opened (its size or
 * mtime differ, or it cannot be stat'ed)?  libdw reads it through a
 * mapping: pages past a new, shorter end would kill the process with
 * SIGBUS, and the same size read new bytes for the old unit table. */
bool dwarfidx_changed(const struct dwsrc *s);
/* dwarfidx.c: the unit table (b->cus, all done = 0; b->eager: units with
 * rows or scopes but no address range) and what the DWARF can give
 * (IDX_HAS_FILES, IDX_HAS_LINES, IDX_HAS_INLINE in b->flags).
 * 0 or -ENOMEM. */
int dwarfidx_cus(struct idx_builder *b, const struct dwsrc *src);
/* dwarfidx.c: line tables and inline scopes of the units at DIE offsets
 * offs[0..n) into b.  0, -ENOMEM, or
 * -ESTALE when an offset is not a unit of dw (the table came from other
 * DWARF). */
int dwarfidx_collect(struct idx_builder *b, const struct dwsrc *src,
		     const uint64_t *offs, size_t n);

/*
 * dwlazy.c: DWARF read a group of units at a time, on first lookup.
 * dwlazy_attach() gives x (an IDX_DWARF_LAZY index) what it needs to read
 * more: a dup of fd, path, the options, and src when it is already open
 * (taken, also on failure).  dwlazy_for() returns the index holding the
 * DWARF of vaddr: x, or an overlay built now for vaddr's group (x when it
 * cannot be read: symbols only).  dwlazy_flush() stores an index of every
 * group read so far in the cache (once per change) and closes the DWARF
 * source; dwlazy_free() releases everything (overlays too).
 */
int dwlazy_attach(struct elf_index *x, int fd, const char *path,
		  const struct elfidx_opts *o, struct dwsrc *src);
const struct elf_index *dwlazy_for(const struct elf_index *x, uint64_t vaddr);
void dwlazy_flush(struct elf_index *x);
/* x's entry could not be stored: dwlazy_flush() will not try again (it
 * would rebuild the whole entry to fail, and warn, a second time). */
void dwlazy_uncache(struct elf_index *x);
void dwlazy_free(struct elf_index *x);

/* elfcompress.c: decompress the SHF_COMPRESSED (zlib, zstd) .debug_*
 * sections of elf in memory, on two threads (libelf < 0.189 cannot do
 * zstd, and does zlib serially); the buffers are kept in bufs and must
 * outlive every use of elf's data.  0 or -ENOMEM.  Compressed sections
 * it does not decompress (undecodable, implausible, past o->limits'
 * bounds: counted and said) are hidden from libdw, which would
 * decompress them to any size their header claims. */
int elfcomp_inflate(Elf *elf, struct elfcomp_bufs *bufs,
		    const struct elfidx_opts *o, const char *path);
/* elfcompress.c: give every string-holding debug section of elf (after
 * elfcomp_inflate) a NUL after its end, copying the ones that lack it
 * into bufs.  0 or -ENOMEM. */
int elfcomp_terminate(Elf *elf, struct elfcomp_bufs *bufs);
void elfcomp_release(struct elfcomp_bufs *bufs);
/* elfcompress.c: hide from libdw the debug sections the index never reads
 * (location lists, macros, name indexes; and line tables when no_lines),
 * so dwarf_begin_elf does not decompress them.  Changes only elf's
 * in-memory section headers. */
void elfcomp_hide_unused(Elf *elf, bool no_lines);

/* Free idx->blob (munmap or free, as it was made). */
void idx_release_blob(struct elf_index *idx);

/* crc32 of a blob (len >= its header) as stored in idx_hdr.crc: the
 * header but that field, and the body.  (Until format 11 the body only: a
 * flipped addr_base or flags gave wrong names on every later run.) */
uint32_t idx_crc(const unsigned char *blob, size_t len);

#endif
