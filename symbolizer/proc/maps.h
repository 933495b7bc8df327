/*
 * maps.h - parse /proc/PID/maps text, keeping executable mappings only.
 *
 * The parser is bytewise (no sscanf) and decides whether a line is kept
 * before it allocates anything, so a process with millions of non-exec
 * mappings costs one pass over the text and memory only for the exec ones.
 *
 * Line format (proc(5)):
 *   START-END PERMS OFFSET MAJ:MIN INODE [PATH]
 * PATH may hold spaces; a trailing " (deleted)" is stripped and recorded.
 *
 * Ownership: a struct maps_list owns its entries and their strings (path,
 * verbatim line); they stay valid until maps_list_release().  Nothing here
 * prints; malformed lines are counted in bad_lines (and the first one's
 * line number is kept for the caller's warning).
 */
#ifndef SF_MAPS_H
#define SF_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/util.h"

/* What a mapping is backed by.  Only MAPS_FILE is ever opened as a file. */
enum maps_kind {
	MAPS_FILE,		/* a path starting with '/' */
	MAPS_ANON,		/* no path: anonymous (JIT, huge-page text) */
	MAPS_ANON_NAMED,	/* [anon:NAME] (prctl PR_SET_VMA_ANON_NAME) */
	MAPS_VDSO,		/* [vdso] */
	MAPS_VSYSCALL,		/* [vsyscall] */
	MAPS_HEAP,		/* [heap] */
	MAPS_STACK,		/* [stack], [stack:TID] */
	MAPS_PSEUDO,		/* any other [name] or non-path (anon_inode:...) */
	MAPS_ANON_SHM,		/* shared anonymous memory, which maps shows
				 * with a path, deleted: /dev/zero
				 * (MAP_SHARED|MAP_ANONYMOUS), /anon_hugepage,
				 * /SYSV<key> (shmget); never an ELF file */
};

/* Executable memory of this kind may hold JIT code named by a perf map:
 * anonymous, [anon:NAME], shared anonymous and the [heap]. */
static inline bool maps_kind_may_jit(enum maps_kind k)
{
	return k == MAPS_ANON || k == MAPS_ANON_NAMED || k == MAPS_ANON_SHM ||
	       k == MAPS_HEAP;
}

struct maps_entry {
	uint64_t start, limit;	/* [start, limit) in the process */
	uint64_t offset;	/* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[4];		/* "r-xp", not NUL-terminated */
	enum maps_kind kind;
	bool deleted;		/* path ended in " (deleted)" (stripped) */
	bool remapped;		/* anonymous in maps, but starts where a file
				 * mapping ends: taken as that file's text
				 * remapped onto (huge) anonymous pages, with
				 * the file's path, dev, inode and the offset
				 * continuing its mapping (as hugepage text
				 * remapping tools leave it) */
	bool memfd;		/* a file named /memfd:NAME: it may be an ELF
				 * image, or JIT code (.NET maps its code
				 * through one) */
	const char *path;	/* NUL-terminated, "" for anonymous */
	const char *line;	/* the line verbatim, without newline */
	uint32_t line_len;
};

/* A file mapping that its file may not name, whose addresses are then
 * asked of the JIT's perf map: guessed remapped text, a memfd. */
static inline bool maps_entry_file_may_jit(const struct maps_entry *e)
{
	return e->kind == MAPS_FILE && (e->remapped || e->memfd);
}

/* Any mapping whose addresses the JIT's perf map may name. */
static inline bool maps_entry_may_jit(const struct maps_entry *e)
{
	return maps_kind_may_jit(e->kind) || maps_entry_file_may_jit(e);
}

/* Result of parsing one line. */
enum maps_line_status {
	MAPS_LINE_KEEP,		/* well-formed executable mapping */
	MAPS_LINE_SKIP,		/* well-formed, not executable (or empty) */
	MAPS_LINE_BAD,		/* malformed */
};

/*
 * Parse one line (no newline) into *e.  On MAPS_LINE_KEEP and on
 * MAPS_LINE_SKIP of a non-empty line, e is filled: e->path points into
 * line (not NUL-terminated: its length is *path_len) and e->line is line.
 * Never allocates.
 */
enum maps_line_status maps_parse_line(const char *line, size_t len,
				      struct maps_entry *e, size_t *path_len);

/* dev_t of a parsed entry, comparable with struct stat's st_dev. */
dev_t maps_entry_dev(const struct maps_entry *e);

struct maps_list {
	struct maps_entry *v;	/* sorted by start after maps_list_finish() */
	size_t n, cap;
	uint64_t lines, bad_lines;
	uint64_t first_bad_line;	/* 1-based, 0 when none */
	/* internal: path and line copies */
	struct sf_strpool pool;
	/* internal: partial line carried between maps_list_feed() calls */
	char *carry;
	size_t carry_len, carry_cap;
	/* internal: the last file-backed line (any perms), for `remapped` */
	struct maps_entry prev;
	char *prev_path;
	size_t prev_path_cap;
	bool prev_valid;
};

void maps_list_init(struct maps_list *ml);
void maps_list_release(struct maps_list *ml);

/*
 * Parse one line and append it when kept.  Returns 0 or -ENOMEM; malformed
 * lines are counted, not errors.
 */
int maps_list_add_line(struct maps_list *ml, const char *line, size_t len);

/*
 * Streaming: feed arbitrary chunks of text; complete lines are parsed as
 * they arrive.  maps_list_finish() parses a final line without newline and
 * sorts the entries by start.  Both return 0 or -ENOMEM.
 */
int maps_list_feed(struct maps_list *ml, const char *buf, size_t len);
int maps_list_finish(struct maps_list *ml);

/* Read a whole maps file from fd (e.g. /proc/PID/maps) into ml, streaming
 * through a fixed buffer.  Returns 0, -ENOMEM or -errno of read(2). */
int maps_list_read_fd(struct maps_list *ml, int fd);

/* Index of the entry holding addr, or -1.  Needs maps_list_finish(). */
ptrdiff_t maps_list_find(const struct maps_list *ml, uint64_t addr);

#endif
