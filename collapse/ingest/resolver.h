/*
 * resolver.h - turn parsed records (bt_parse.h) and folded lines into
 * profile samples, symbolizing raw addresses through a sym_session.
 *
 * Each unique frame is resolved once: raw addresses are cached per
 * (pid, address, is_return), names per (kind, text).  Frames that cannot be
 * named become honest locations (their mapping and address, shown as
 * module+0xOFF or [unknown]) and are counted in the profile's
 * unsymbolized_frames counter.  Nothing here prints or exits.
 */
#ifndef SF_RESOLVER_H
#define SF_RESOLVER_H

#include <stdbool.h>

#include "pyoffsets.h"
#include "ingest/bt_parse.h"
#include "model/profile.h"
#include "symbolizer.h"

struct pyframes;

struct resolver;

/* sym may be NULL (then raw addresses stay unsymbolized).  lazy_snapshot:
 * snapshot a pid's maps the first time a raw user address of it is seen,
 * when no snapshot was loaded (for live `bpftrace | stackfold` pipes).
 * Returns NULL on -ENOMEM.  The resolver borrows p and sym. */
struct resolver *resolver_new(struct profile *p, struct sym_session *sym,
			      bool lazy_snapshot);
void resolver_free(struct resolver *r);	/* NULL is fine */

/* on: a raw user address outside its process's snapshot takes a fresh
 * snapshot of that process if it still runs (sym_process_refresh()), at
 * most 8 times a pid, a second apart: for libraries mapped after the
 * first sample.  Off by default; for live captures. */
void resolver_set_refresh(struct resolver *r, bool on);
/* on: a frame bpftrace named with an offset (SYM+31) is a location of
 * its own per offset, which --offsets shows; off (the default), one per
 * name.  Locations from addresses carry their offset either way. */
void resolver_set_offsets(struct resolver *r, bool on);
/* on: remember each refresh that took a new snapshot, for
 * resolver_next_refreshed() (stackfold record saves those maps); then a
 * record can also fail with -ENOMEM for keeping it.  Off by default. */
void resolver_keep_refreshed(struct resolver *r, bool on);
/* The oldest refresh remembered and not asked for yet: true with its pid
 * and image; false when none is left. */
bool resolver_next_refreshed(struct resolver *r, int *pid, uint32_t *image);

/* Name the Python frames of records that carry them
 * (bt/profile-python.bt's keys) from their live process's memory, with
 * the offsets off (pyoffsets.h's order), and merge them with the
 * native frames (docs/python.md); live false (a replay): every one
 * [python:unknown].  0 or -ENOMEM. */
int resolver_set_python(struct resolver *r, const uint64_t off[PY_OFF_COUNT],
			bool live);
/* The same with a namer the caller keeps (borrowed: freed by the caller,
 * after the resolver; its cache outlives one report: stackfold
 * continuous's windows).  An own namer set before is freed. */
void resolver_use_python(struct resolver *r, struct pyframes *py);
/* The Python code objects read so far are forgotten
 * (pyframes_forget_code()): the next records' are read anew.  No namer:
 * nothing happens. */
void resolver_python_forget_code(struct resolver *r);

/* Add one bpftrace record.  0 or a negative errno. */
int resolver_record(struct resolver *r, const struct bt_record *rec);
/* The same, returning the profile sample id it went to (> 0). */
int64_t resolver_record_id(struct resolver *r, const struct bt_record *rec);
/* Add one folded line "a;b;c" with count.  0 or a negative errno. */
int resolver_folded(struct resolver *r, const char *stack, size_t len,
		    uint64_t count);

#endif
