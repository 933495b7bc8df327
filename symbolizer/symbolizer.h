/*
 * symbolizer.h - turn sampled addresses into function names.
 *
 * A struct sym_session owns every cache: process memory-map snapshots, the
 * files they map (pinned open so they stay reachable after the process exits
 * or the file is deleted), per-file ELF indexes (persisted on disk keyed by
 * build-id) and kallsyms.  It is shaped like libdwfl: processes are reported
 * from a *saved* /proc/PID/maps, so symbolization works after they exit.
 *
 * Address kinds are named in the function: _user takes an absolute address in
 * a process, _kernel a kernel address, _elf an address in a file's own ELF
 * address space (what `addr2line -e FILE` takes).
 *
 * Errors: a whole call that cannot run returns a negative errno and fills
 * *err.  An address that cannot be named is not an error: the call returns 0
 * with result->nframes == 0 and result->reason saying why; the caller prints
 * it as `module+0xOFFSET` or `[unknown]`.
 *
 * Nothing in symbolizer/ prints or exits.  Warnings worth telling the user
 * once (a corrupt cache entry rebuilt, kptr_restrict on, a debuglink with a
 * bad CRC) are queued and drained with sym_session_next_warning().
 *
 * Strings in results are owned by the session and live until
 * sym_session_free().
 */
#ifndef SF_SYMBOLIZER_H
#define SF_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"

struct sym_session;

struct sym_opts {
	const char *cache_dir;	/* NULL: $STACKFOLD_CACHE_DIR, else
				 * $XDG_CACHE_HOME/stackfold, else
				 * ~/.cache/stackfold */
	bool no_cache;		/* never read or write the on-disk index */
	bool no_demangle;	/* keep raw (mangled) names */
	bool no_dwarf;		/* .symtab/.dynsym only: no inline, no lines */
	bool no_lines;		/* DWARF's inline frames but no line tables
				 * (file, line): what folded, top and SVG
				 * output need; .debug_line is not decoded,
				 * unless a cached index with lines (which
				 * answers too) has units left to read */
	bool dwarf_whole;	/* read a file's DWARF whole at its first
				 * lookup, not a group of units at a time:
				 * for long runs, which would otherwise open
				 * it again whenever a window lands in new
				 * units after sym_session_flush() */
	uint64_t cache_max_bytes;	/* 0: default cap (256 MiB) */
};

/* The index cache's directory when sym_opts.cache_dir is NULL:
 * $STACKFOLD_CACHE_DIR, else $XDG_CACHE_HOME/stackfold, else
 * ~/.cache/stackfold.  Malloc'd (the caller frees it); NULL when none of
 * them is set, or out of memory. */
char *sym_default_cache_dir(void);
/* May this process (root) use dir as its index cache?  The cache feeds
 * names into every profile and takes root's writes, so it is made when
 * missing (0700) and must then be reached through directories and links
 * of trusted users only (base/safedir.h, SF_DIR_STRICT): not a $HOME or
 * $XDG_CACHE_HOME of another user's.  false with err filled ("refusing to
 * write '<dir>': ...") when it must not be used; true otherwise, even when
 * it cannot be made (its stores then say why). */
bool sym_cache_dir_usable(const char *dir, struct sf_err *err);

/* NULL on failure (err filled).  opts may be NULL for defaults. */
struct sym_session *sym_session_new(const struct sym_opts *opts,
				    struct sf_err *err);
void sym_session_free(struct sym_session *s);	/* NULL is fine */

/*
 * Processes.
 *
 * A process is a pid and an image: the image numbers the programs the pid
 * has run (an exec starts a new one; bt/profile.bt gives the task's exec
 * count plus one).  Image 0 means "not told": one image for the pid's
 * whole life, as in one-liner input.  Snapshots of a pid's images live
 * side by side, so a sample taken before an exec is named from the
 * program it ran even when it is read after the exec (two non-PIE
 * programs map their code at the same addresses).
 *
 * sym_process_snapshot() reads /proc/PID/maps now, keeps the executable
 * mappings, opens each mapped file once (through /proc/PID/map_files/, else
 * /proc/PID/root/PATH) and keeps it open until the session is freed, and
 * records its build-id.  Call it at the first sample of each image.
 * start_stack is the process's start of stack (mm->start_stack) as the
 * sample saw it, 0 when not told: it is set anew at each exec, so when
 * /proc/PID/stat shows another one after the map is read, the pid has run
 * exec between the sample and now and the map is another program's.  The
 * snapshot is then refused (-ESTALE), and remembered: a later call for
 * that pid and image with no start of stack (a lazy snapshot) or the same
 * one is refused at once, so nothing takes the newer program's map for it;
 * one with another start of stack is tried (a sample taken during the
 * exec itself may have seen a passing value).  A snapshot the image
 * already has stays.
 * Returns 0, -ESRCH when the process is gone, -ESTALE as above, other
 * -errno.  Snapshotting a pid and image twice replaces the first snapshot
 * (pid reuse).
 */
int sym_process_snapshot(struct sym_session *s, int pid, uint32_t image,
			 uint64_t start_stack, struct sf_err *err);

/*
 * sym_process_refresh() snapshots pid's image again when the pid still
 * runs it (same start time, no newer image known, the same /proc/PID/exe
 * and start of stack): for libraries mapped after its first sample (ld.so still
 * loading them at exec, dlopen).  The old snapshot is retired, not freed,
 * so sym_module pointers already handed out stay valid.  Returns 0,
 * -ENOENT without a snapshot, -ESRCH when the process exited, runs another
 * program, or the pid is another process now.
 */
int sym_process_refresh(struct sym_session *s, int pid, uint32_t image,
			struct sf_err *err);

/*
 * sym_session_set_exited_maps(): where sym_process_snapshot() and
 * sym_process_refresh() get the map of a process that has exited (or, for
 * a refresh, runs another program now): fn(ctx,
 * pid, image, &text, &len) gives it as sym_process_load_maps() reads it,
 * malloc()ed (the session frees it), and returns 0, or -errno when it
 * has none.  stackfold record's side band (the kernel's mmap records)
 * knows the whole map of a process gone before its libraries were read.
 * fn NULL: none (the default).
 */
typedef int (*sym_exited_maps_fn)(void *ctx, int pid, uint32_t image,
				  char **text, size_t *len);
void sym_session_set_exited_maps(struct sym_session *s, sym_exited_maps_fn fn,
				 void *ctx);

/*
 * sym_process_name(): the process's name when the snapshot of pid's image
 * was taken (its main thread's comm, from /proc/PID/stat), NULL
 * when unknown.  Valid while the snapshot is.
 */
const char *sym_process_name(struct sym_session *s, int pid, uint32_t image);

/* sym_process_known(): has pid's image a snapshot (taken or loaded)? */
bool sym_process_known(struct sym_session *s, int pid, uint32_t image);
/* sym_process_newer_known(): has a newer image of pid than image, of the
 * same process (images carry the process's start time: bt/profile.bt), a
 * snapshot?  Then the process runs another program now than image's: a
 * snapshot taken now would not be image's map. */
bool sym_process_newer_known(struct sym_session *s, int pid, uint32_t image);

/*
 * sym_process_current(): has pid's image a snapshot taken from the process
 * that has the pid now (same start time)?  Then another first-sample mark
 * for it (bt/profile.bt prints them again after each flush) needs no new
 * snapshot.
 */
bool sym_process_current(struct sym_session *s, int pid, uint32_t image);

/*
 * sym_process_loading(): does pid's snapshot map no file at all (taken
 * during an exec), or the dynamic loader (ld-*.so) and no other shared
 * object?  Then ld.so was still loading the libraries when it was taken (a
 * process caught in its first milliseconds, as a profiled command's first
 * samples are), and a refresh soon after will see them.  False without a
 * snapshot.
 */
bool sym_process_loading(struct sym_session *s, int pid, uint32_t image);

/*
 * sym_process_age_ns(): how long pid's image's process had run when its
 * snapshot was taken (from its start time), UINT64_MAX when unknown.
 *
 * sym_process_maps_changed(): has the live process's executable memory
 * changed since the snapshot of its image (a library dlopen()ed, a JIT's
 * code region made, one unmapped)?  1 yes, 0 no, -ESRCH when the pid is
 * gone or another process now, or image is not its newest; -ENOENT
 * without a snapshot, -ENOMEM.  Reads /proc/PID/maps once; compares the
 * kept (executable) lines verbatim.  A change is for the caller to take
 * with sym_process_refresh().
 */
uint64_t sym_process_age_ns(struct sym_session *s, int pid, uint32_t image);
int sym_process_maps_changed(struct sym_session *s, int pid, uint32_t image);

/*
 * For long-running callers (the continuous mode), between uses: once no
 * sym_module or sym_mapping pointer of pid is held any more,
 * sym_process_forget() frees pid's snapshots (every image) and every
 * retired one of it
 * (a later lookup of pid finds nothing, as for a pid never seen).  The
 * mapped files stay in the session.  sym_session_drop_retired() frees the
 * retired snapshots of every pid, once none of their pointers is held.
 * Both return the number of snapshots freed.
 */
size_t sym_process_forget(struct sym_session *s, int pid);
/* sym_process_forget_older(): free the live snapshots of pid's images
 * older than image (an exec since) and those of the pid's other processes
 * (image is the pid's process now), once none of their pointers is held;
 * their retired ones go with sym_session_drop_retired().  Returns the
 * number freed. */
size_t sym_process_forget_older(struct sym_session *s, int pid,
				uint32_t image);
size_t sym_session_drop_retired(struct sym_session *s);

/*
 * sym_session_flush(): store in the index cache the DWARF read so far and
 * release the decompressed debug sections it was read from (a few MB for
 * libc); a later lookup in unread units opens them again.  For long runs,
 * between windows; sym_session_free() does it too.
 */
void sym_session_flush(struct sym_session *s);

/*
 * sym_process_load_maps() reports a process from saved text (as written by
 * sym_process_write_maps(), which is /proc/PID/maps lines, executable ones
 * only, followed by `#bid START BUILDID` lines).  Files are opened lazily by
 * path (through /proc/PID/root when the pid is alive) and used only if their
 * build-id matches the recorded one.  Malformed lines are skipped,
 * counted in sym_stats.bad_maps_lines and warned about once, naming the
 * first as at->src:LINE (at may be NULL: the line within text).  Returns 0 or -ENOMEM.
 */
struct sym_origin {
	const char *src;	/* the file text came from, NULL if unknown */
	uint64_t line;		/* the line number in src of text's first */
};
int sym_process_load_maps(struct sym_session *s, int pid, uint32_t image,
			  const char *text, size_t len,
			  const struct sym_origin *at, struct sf_err *err);

/* Write the snapshot of pid's image in the format sym_process_load_maps()
 * reads, and fflush(out) (a write error shows then).  Returns 0, -ENOENT if
 * it has no snapshot, -EIO on write error. */
int sym_process_write_maps(struct sym_session *s, int pid, uint32_t image,
			   FILE *out);

/* Describes the mapped file an address resolved into (one per mapping).
 * Stable pointer: the same mapping always gives the same sym_module. */
struct sym_module {
	uint64_t start, limit, offset;	/* memory range, file offset */
	const char *path;	/* file name as mapped, "[vdso]", "[kernel]" */
	const char *build_id;	/* lowercase hex, "" when unknown */
	bool is_kernel;
	bool is_main;		/* the process's executable */
	bool deleted;		/* the mapped file was deleted (maps said so) */
	uint64_t dev, inode;	/* the mapped file's identity (maps), 0 for
				 * none: two files mapped at one path and
				 * address (one replaced, or in another mount
				 * namespace) are two modules */
	bool has_functions, has_filenames, has_line_numbers,
		has_inline_frames;	/* what symbolization really provided */
};

struct sym_frame {
	const char *name;	/* demangled (unless no_demangle) */
	const char *system_name;	/* as in the symbol table */
	const char *file;	/* source file, NULL when unknown */
	uint32_t line;		/* 0 when unknown */
	uint32_t start_line;	/* function's first line, 0 when unknown */
};

enum sym_reason {
	SYM_OK = 0,
	SYM_UNMAPPED,		/* no mapping covers the address */
	SYM_NO_PROCESS,		/* pid was never snapshotted or loaded */
	SYM_NO_FILE,		/* mapping's file could not be opened/verified */
	SYM_NO_SYMBOLS,		/* file has no symbol table at all */
	SYM_NOT_FOUND,		/* in a file with symbols, but no symbol covers it */
	SYM_ANON,		/* anonymous executable memory ([anon], JIT) */
	SYM_KPTR_RESTRICTED,	/* kallsyms addresses hidden */
};
const char *sym_reason_str(enum sym_reason r);

#define SYM_MAX_INLINE 32
struct sym_result {
	enum sym_reason reason;
	/* Inline chain, innermost first; frames[nframes-1] is the real
	 * (non-inlined) function.  0 frames when not resolved. */
	unsigned nframes;
	struct sym_frame frames[SYM_MAX_INLINE];
	const struct sym_module *module;	/* NULL when SYM_UNMAPPED */
	uint64_t module_addr;	/* address in the file's ELF space, for
				 * module+0xOFFSET (file offset for [vdso]) */
	bool jit;		/* named by the process's JIT perf map */
	/* The address's offset from the start of the symbol-table symbol
	 * (or kallsyms entry) that holds it, as perf script -F +symoff and
	 * bpftrace's SYM+OFF print it: the offset of the address itself, a
	 * return address's too (not address - 1).  has_offset false when no
	 * symbol holds it (a name from DWARF alone, a JIT's perf map).
	 * offset_name: that symbol's name (demangled unless no_demangle)
	 * where it is not frames[nframes-1]'s, else NULL: DWARF names code
	 * in a compiler-made part or clone (work.cold, f.part.0, f.isra.0)
	 * by its source function, but the offset is from the part's own
	 * start. */
	bool has_offset;
	uint64_t offset;
	const char *offset_name;
};

/*
 * Lookups.  is_return: the address is a return address (every frame but the
 * leaf); it is looked up at address-1 so the call site, not the next line,
 * is named.  Returns 0 (see result->reason) or a negative errno.
 */
int sym_lookup_user(struct sym_session *s, int pid, uint32_t image,
		    uint64_t abs_addr, bool is_return, struct sym_result *res);
/* An address that no mapping of pid's snapshot covers (SYM_UNMAPPED from
 * sym_lookup_user, after any refresh): named by the process's JIT perf map
 * when that names it (code a JIT mapped after the last snapshot, in a
 * process gone since), with no module; else res is left as it is. */
int sym_lookup_unmapped_jit(struct sym_session *s, int pid, uint32_t image,
			    uint64_t abs_addr, bool is_return,
			    struct sym_result *res);
int sym_lookup_kernel(struct sym_session *s, uint64_t addr, bool is_return,
		      struct sym_result *res);
int sym_lookup_elf(struct sym_session *s, const char *path, uint64_t elf_addr,
		   struct sym_result *res);

struct sym_stats {
	uint64_t lookups, unresolved;
	uint64_t index_cache_hits, index_builds, index_corrupt;
	uint64_t processes, files_pinned, files_mismatched;
	uint64_t refreshes;	/* sym_process_refresh() snapshots taken */
	uint64_t vdso_reads;	/* [vdso] images read from a process's
				 * memory (a 64-bit one's is ours: vdso.c) */
	uint64_t bad_maps_lines;
	/* files not read because they are not regular files, or (.dwo) not
	 * in a place they may come from; and files or sections refused past
	 * a size bound (docs/security.md).  Each is also a warning. */
	uint64_t files_refused, bounds_refused;
};
void sym_session_stats(const struct sym_session *s, struct sym_stats *out);

/* Next queued warning, or NULL.  The string is valid until the next call. */
const char *sym_session_next_warning(struct sym_session *s);

#endif
