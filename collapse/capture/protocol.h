/*
 * protocol.h - the capture protocol: the lines bt/ programs and stackfold
 * record/continuous put around bpftrace's map entries, in one place for
 * those that write them (cmd_record.c, cmd_continuous.c, rawcap.c) and
 * those that read them (the parser, report.c).
 *
 *   # stackfold-capture 1       first line of a capture stackfold made
 *   #meta KEY VALUE             capture metadata (enum protocol_meta)
 *   #maps PID ... #endmaps      a process's memory map (raw capture)
 *   #pid PID[:STACK[:PARENT]] COMM  a process's first sample: snapshot
 *                               its map (COMM with %rx)
 *   #window T                   bt/continuous.bt's clock at a window boundary
 *   #python V...                bt/profile-python.bt's offsets (its $5...,
 *                               pyoffsets.h's order): its keys end in
 *                               Python frames (ingest/pyframes.h)
 *   #attached                   every probe attached: sampling starts
 *   #flushed                    bt/profile.bt printed and cleared a buffer
 *   #end                        bt/continuous.bt's END printed its window
 *   @stackfold[_a|_b][...]: N   stackfold's own sample maps
 *   @stackfold_total[_a|_b]: N  the samples taken since the last total
 *   @stackfold_t[_a|_b]: N      the same (bt/continuous.bt: names unique
 *                               within 12 characters, capture/mapsrc.h)
 *   @stackfold_d{u,k,w,n}_{a,b}  bt/profile-dwarf.bt's flushed maps: a
 *                               header with the user registers, the kernel
 *                               stack, stack words, the count
 *                               (ingest/dwarfwin.h)
 *   #U ... / #K ... #k / #W ...  the same as per-sample records, in raw
 *                               captures of earlier versions
 *
 * PID is a pid field: the pid in its low 32 bits, the image (which program
 * of the pid's life, bt/profile.bt) in its high 32.  Static data and pure
 * functions, but protocol_snapshot(), which takes a process's snapshot in
 * a symbolizer session.  Nothing prints.
 */
#ifndef STACKFOLD_CAPTURE_PROTOCOL_H
#define STACKFOLD_CAPTURE_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer.h"

#define PROTOCOL_HEADER_STEM "# stackfold-capture "
#define PROTOCOL_HEADER PROTOCOL_HEADER_STEM "1"
#define PROTOCOL_MAPS_WORD "#maps"
#define PROTOCOL_ENDMAPS_WORD "#endmaps"
#define PROTOCOL_PYTHON_WORD "#python"
#define PROTOCOL_OWN_MAP "@stackfold"
#define PROTOCOL_OWN_TOTAL "@stackfold_total"
#define PROTOCOL_OWN_TOTAL_SHORT "@stackfold_t"
/* --call-graph dwarf's records (bt/profile-dwarf.bt) */
#define PROTOCOL_DWARF_HEADER "#U "
#define PROTOCOL_DWARF_KSTACK "#K "
#define PROTOCOL_DWARF_KSTACK_END "#k"
#define PROTOCOL_DWARF_WORDS "#W "
/* bt/profile-dwarf.bt's flushed maps: @stackfold_du_a, _dk_, _dw_, _dn_ */
#define PROTOCOL_DWARF_MAPS "@stackfold_d"
/* In place of a line too long to read: a line no format takes, so that a
 * replay of a raw capture counts it as unparsable too. */
#define PROTOCOL_OVERLONG "\x01"

/* What a line is, by its start (a directive's arguments unchecked). */
enum protocol_line {
	PROTOCOL_OTHER,		/* a map entry, text, or a "#" comment */
	PROTOCOL_PID,		/* "#pid " */
	PROTOCOL_ATTACHED,	/* "#attached" */
	PROTOCOL_FLUSHED,	/* "#flushed", alone */
	PROTOCOL_END,		/* "#end", alone */
	PROTOCOL_WINDOW,	/* "#window " */
	PROTOCOL_MAPS,		/* "#maps " */
	PROTOCOL_ENDMAPS,	/* "#endmaps" */
	PROTOCOL_META,		/* "#meta " */
	PROTOCOL_PYTHON,	/* "#python " and its offsets */
	PROTOCOL_TOTAL,		/* "@stackfold_total" */
};
enum protocol_line protocol_line(const char *s, size_t len);

/* Which of stackfold's own sample maps NAME (with its '@', len bytes) is:
 * "_a" 0, "_b" 1, none 2 (bt/profile.bt's double buffers, a single map);
 * -1 for any other.  protocol_own_total() the same for their totals. */
int protocol_own_map(const char *name, size_t len);
int protocol_own_total(const char *name, size_t len);
/* The own map (as protocol_own_map()) of a line "@NAME[...": -1 when its
 * map is not one, or it is no map entry. */
int protocol_own_entry(const char *s, size_t len);
/* Has a map name stackfold's own stem (@stackfold, @stackfold_b...)? */
bool protocol_own_stem(const char *name);
/* bt/profile.bt's flush state from a line: 1 when a double buffer's print
 * has begun ("@stackfold_a[" or "@stackfold_b["), 0 when another of
 * stackfold's maps printed (its total comes after the clear: the flush is
 * done), -1 when the line says nothing of it.  Any line of
 * bt/profile-dwarf.bt's maps (@stackfold_du_a...) is 1: its flush ends at
 * "#flushed". */
int protocol_in_print(const char *s, size_t len);

/* "#meta" keys. */
enum protocol_meta {
	PROTOCOL_META_HZ,		/* sampling rate */
	PROTOCOL_META_START_NS,		/* capture start, realtime ns */
	PROTOCOL_META_DURATION_NS,
	PROTOCOL_META_BPFTRACE,		/* bpftrace's version */
	PROTOCOL_META_KERNEL,		/* uname -r */
	PROTOCOL_META_HOST,		/* uname -n */
	PROTOCOL_META_CMDLINE,
	PROTOCOL_META_LOST,		/* events lost (a replay's count) */
	PROTOCOL_META_STACKID_ERRORS,
	PROTOCOL_META_ENDED,		/* bpftrace ended early: how */
	PROTOCOL_META_SIDEBAND_LOST,	/* side-band records lost */
	PROTOCOL_META_UNKNOWN,
};
/* The key of enum k ("hz"...), and the enum of a key (UNKNOWN if none). */
const char *protocol_meta_name(enum protocol_meta k);
enum protocol_meta protocol_meta_key(const char *k, size_t klen);
/* "#meta KEY VALUE" into buf (terminated, cut to size); its length, 0 when
 * it could not be made. */
size_t protocol_meta_line(char *buf, size_t size, enum protocol_meta k,
			  const char *value);

/* A pid field, split, and made. */
static inline uint32_t protocol_pid_of(uint64_t v) { return (uint32_t)v; }
static inline uint32_t protocol_image_of(uint64_t v) { return (uint32_t)(v >> 32); }
static inline uint64_t protocol_pid_field(uint32_t pid, uint32_t image)
{
	return (uint64_t)image << 32 | pid;
}

/* An image whose exec count is past the probe's cap (its low 7 bits all
 * set: 126 execs or more since the fork, bt/profile.bt): several programs
 * share it, so no frame is ever named from a map of it. */
static inline bool protocol_image_capped(uint32_t image)
{
	return (image & 127) == 127;
}

/* bpftrace's buf(comm, 16): the bytes a comm field prints. */
#define PROTOCOL_COMM_BYTES 16
/* A buf(comm, 16) as bpftrace prints it, with %r (\xNN for bytes outside
 * 32..126, a backslash as itself) or %rx (every byte \xNN), into out (cap
 * bytes, NUL-terminated), up to its first NUL; returns the length.  A \xNN
 * of a printable byte is read as its four characters (%r never escapes
 * one); one of another byte is that byte, unless the 16 bytes printed
 * leave room for the four characters of a comm that holds them (then
 * they are taken from the left: a comm holding both a control byte and
 * the spelling of one reads back ambiguously only with %r, not with %rx). */
size_t protocol_comm_decode(const char *s, size_t len, char *out, size_t cap);

/* A "#pid PID[:STACK[:PARENT]] COMM" line, split: PID is a pid field,
 * STACK the process's start of stack at the sample (mm->start_stack, see
 * sym_process_snapshot(); absent in older captures: 0), PARENT its
 * parent's pid field when the process has run no exec since its fork and
 * has its parent's start of stack (0: not so, or not told).  The comm is
 * decoded (protocol_comm_decode()) into comm_buf. */
struct protocol_pid {
	uint32_t pid, image;	/* pid in 1..INT32_MAX */
	uint64_t start_stack;	/* 0: not told */
	uint32_t parent_pid, parent_image;	/* 0: none */
	const char *comm;	/* comm_buf */
	size_t comm_len;
	char comm_buf[PROTOCOL_COMM_BYTES + 1];
};
/* Parse one; false when it is not a well-formed "#pid" line. */
bool protocol_pid_line(const char *s, size_t len, struct protocol_pid *out);
/* The first-sample snapshot of a "#pid" line's process in ss (NULL: none
 * to take it in).  0 when taken (for a child gone already that ran no exec
 * since its fork, a copy of its parent's map, when the line names the
 * parent); -1 when the map could not be saved: the process exited, or ran
 * exec since the sample, or a newer image of it is known already (per-CPU
 * buffers are read in turn), or its image is past the exec cap
 * (protocol_image_capped()); the caller counts it (report_map_unsaved()). */
int protocol_snapshot(struct sym_session *ss, const struct protocol_pid *pl);

#endif
