/*
 * filetab.h - the session's table of mapped files (internal to symbolizer/).
 *
 * One struct sym_file per distinct file: a (dev, inode) seen in a live
 * /proc/PID/maps, a file named by a saved maps text (keyed additionally by
 * its recorded build-id), a [vdso] image, or a path given to
 * sym_lookup_elf().  Each file is opened once and its fd kept ("pinned") so
 * it stays readable after the process exits or the file is deleted.  At
 * most max_pinned fds are held: beyond that the least recently used one is
 * closed, and reopened later through the file's recipe (map_files or
 * /proc/PID/root while the same process lives, else its path), accepted
 * only if its build-id (or, without one, dev/inode) still matches.  Once a
 * file's elf_index is built the table's fd is no longer needed and is
 * closed (an index whose DWARF has units left to read keeps a dup of its
 * own, outside max_pinned: see dwlazy.c); a deleted file is indexed before
 * the LRU closes it, since its path cannot reopen it.  Files with the same
 * build-id share one index.
 *
 * Ownership: the table owns the files, their fds, paths and indexes, all
 * freed by filetab_release().  Pointers to a sym_file stay valid until then.
 * Nothing prints: problems go to opts->warn once per file.
 */
#ifndef SF_FILETAB_H
#define SF_FILETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "elf/elfindex.h"
#include "symbolizer.h"
#include "base/util.h"

enum sym_file_state {
	SYMF_NEW,	/* never opened */
	SYMF_OPEN,	/* fd pinned */
	SYMF_CLOSED,	/* fd closed by the LRU or after indexing */
	SYMF_FAILED,	/* cannot be opened or verified: SYM_NO_FILE */
};

struct sym_file {
	dev_t dev;		/* as the maps line says; 0 when unknown */
	ino_t ino;
	const char *path;	/* as mapped (no " (deleted)"), or "[vdso]" */
	char build_id[41];	/* lowercase hex, "" unknown / none */
	bool bid_known;		/* build_id is authoritative (read or saved) */
	bool deleted;
	bool memfd;		/* in-memory image ([vdso]): never evicted */
	bool stamp_known;	/* size and mtime below, from its first open */
	off_t size;
	struct timespec mtime;
	enum sym_file_state state;
	int fd;
	/* reopen recipe: a process that maps it */
	int pid;
	uint64_t starttime;
	uint64_t map_start, map_limit;
	/* LRU of pinned fds, most recent first */
	struct sym_file *lru_prev, *lru_next;
	struct elf_index *idx;
	bool idx_shared;	/* idx belongs to another file (same build-id) */
	bool idx_failed;
	struct elfidx_caps caps;
	struct sym_module elf_mod;	/* for sym_lookup_elf() */
};

struct filetab {
	struct sym_file **v;
	size_t n, cap;
	struct sym_file **hash;	/* open addressing by (dev, ino) */
	size_t nhash;
	struct sym_file *lru_head, *lru_tail;
	size_t npinned, max_pinned;
	struct strtab paths;
	const struct elfidx_opts *opts;	/* warn sink, index options */
	struct sym_stats *stats;	/* files_pinned, files_mismatched,
					 * index_builds */
};

/* max_pinned 0: derived from RLIMIT_NOFILE (at most 4096).  opts and stats
 * are borrowed and must outlive the table.  0 or -ENOMEM. */
int filetab_init(struct filetab *ft, size_t max_pinned,
		 const struct elfidx_opts *opts, struct sym_stats *stats);
void filetab_release(struct filetab *ft);
/* elfidx_flush() every index (see elfindex.h). */
void filetab_flush(struct filetab *ft);

/* What identifies a new file and how to reopen it. */
struct sym_file_desc {
	dev_t dev;
	ino_t ino;
	const char *path;
	size_t path_len;
	const char *build_id;	/* expected build-id (saved maps), or NULL */
	bool deleted;
	int pid;
	uint64_t starttime;
	uint64_t map_start, map_limit;
};

/*
 * The file for desc: an existing entry with the same (dev, ino) whose
 * build-id does not contradict desc->build_id, else a new unopened entry.
 * A live mapping (desc->pid, no build-id) is checked first: the file may
 * have been rewritten in place, or its inode freed and reused by another
 * file (a rebuilt program copied in place), so the mapped file's size and
 * mtime (through the entry's fd, or the process's map_files or root) must
 * be the entry's.
 * NULL on -ENOMEM.
 */
struct sym_file *filetab_get(struct filetab *ft,
			     const struct sym_file_desc *desc);

/* Add an in-memory image (a memfd the table takes over).  NULL on ENOMEM
 * (fd is closed then). */
struct sym_file *filetab_add_memfd(struct filetab *ft, int fd,
				   const char *path);

/* Open (or reopen) f now if needed.  Returns 0, or -ENOENT when it cannot
 * be opened or verified (f is then SYMF_FAILED). */
int filetab_open(struct filetab *ft, struct sym_file *f);

/* The file's index, built on first use; NULL when the file cannot be
 * opened (f->state == SYMF_FAILED) or is not a usable ELF. */
struct elf_index *filetab_index(struct filetab *ft, struct sym_file *f);

#endif
