/*
 * rawcap.h - stackfold record's raw capture (--save-raw): bpftrace's lines
 * as they came, and a "#maps" block (sym_process_write_maps()) for every
 * snapshot taken, placed before the records named from it, so that a
 * replay names them as the capture did.
 *
 * A snapshot taken while a record was being read (a refresh for an address
 * mapped after the process's first snapshot: report_next_refreshed()) is
 * written once that record is complete, before the record's lines: those
 * are held until then (1 MiB at most: past that, the record goes out in
 * order of arrival and its snapshots after it).  Nothing here prints; write errors show at
 * rawcap_commit().  Every function is a no-op on a capture not open.
 */
#ifndef SF_RAWCAP_H
#define SF_RAWCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/atomic.h"
#include "symbolizer.h"

struct rawcap_due {
	int pid;
	uint32_t image;
};

struct rawcap {
	struct atomic_file f;
	bool open;
	char *held;		/* lines of a record not complete yet */
	size_t nheld, heldcap;
	struct rawcap_due *due;	/* snapshots to write before them */
	size_t ndue, duecap;
	bool split;		/* part of the open record went out already
				 * (past 1 MiB): its snapshots go after it */
};

/* Open path for writing (atomic_open_mode(), owner-only: 0600).  0 or -errno with err filled. */
int rawcap_open(struct rawcap *rc, const char *path, struct sf_err *err);
/* Add one line (without its newline).  whole: no record is open after
 * it (report_between_records()); then the snapshots due and the lines
 * held go out, in that order.  Out of memory, the line is written at once
 * (the order is then that of arrival, as before snapshots were held). */
void rawcap_line(struct rawcap *rc, struct sym_session *ss, const char *s,
		 size_t len, bool whole);
/* Write pid's image's snapshot now (between records). */
void rawcap_maps(struct rawcap *rc, struct sym_session *ss, int pid,
		 uint32_t image);
/* Write pid's image's snapshot before the lines held (a refresh while a
 * record was read); once, however often it is asked for before that.  Out
 * of memory, it is written at once. */
void rawcap_due(struct rawcap *rc, struct sym_session *ss, int pid,
		uint32_t image);
/* Write what is held, then atomic_commit().  Always releases rc.  0 or
 * -errno with err filled. */
int rawcap_commit(struct rawcap *rc, struct sym_session *ss,
		  struct sf_err *err);
/* Abandon: the temporary file is removed, rc released.  Safe twice. */
void rawcap_abort(struct rawcap *rc);

#endif
