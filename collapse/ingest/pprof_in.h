/*
 * pprof_in.h - pprof as input (perftools.profiles.Profile, gzipped or
 * not: stackfold's own .pb.gz, Go's runtime/pprof, any other writer's),
 * read into a report's profile, so every output and --diff take it.
 *
 * What is kept: mappings, functions, locations with their line chains
 * (inline frames as pprof lists them, innermost first), samples with the
 * pid, tid, comm and thread_name labels stackfold writes; the value of
 * the "samples" sample type (else the last one, pprof's default; a sample
 * without it, or with a negative one, refuses the input); the
 * rate (period of cpu/nanoseconds), start and duration; stackfold's own
 * comments (loss counters, capture metadata), so a re-rendered graph keeps
 * its subtitle.  Locations in a kernel mapping are kernel frames.
 */
#ifndef SF_PPROF_IN_H
#define SF_PPROF_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/report.h"

/* Input starting with these bytes may be pprof: gzip, or a protobuf whose
 * first field is one a Profile starts with (sample_type, sample,
 * mapping...; text that starts with '\n' looks the same: the caller also
 * asks whether the bytes are binary). */
bool pprof_sniff(const unsigned char *head, size_t n);

/* Read the profile: head[0..n) already read from fd, the rest from fd.
 * Into r's profile (its rate, times into r->in), as one input between
 * report_begin_input() and report_end_input().  0, or a negative errno
 * with err filled: -EINVAL not a pprof profile, -EFBIG larger than
 * PPROF_IN_MAX decompressed, -EIO corrupt gzip or a read error, -ENOMEM,
 * -EOVERFLOW counts past 2^63, -EDOM a negative sample value (a pprof
 * -diff_base profile), -EBADMSG a sample without the counted value. */
#ifndef PPROF_IN_MAX	/* a unit test builds pprof_in.c with a small one */
#define PPROF_IN_MAX ((size_t)1024 << 20)
#endif
int pprof_read(struct report *r, const unsigned char *head, size_t n, int fd,
	       struct sf_err *err);

/*
 * Memory, not compressed size, bounds a pprof input.  protobuf-c takes
 * 30 to 80 bytes for each field it decodes: a 2-byte empty sample is a
 * struct, a pointer and a scan slot, so 64 MiB of them (65 KB gzipped)
 * took 2.3 GB.  The wire format is walked first (no allocation) and the
 * decoded size estimated from above; the decompressed bytes plus that
 * estimate may not pass pprof_mem_max(): PPROF_MEM_MAX, or
 * $STACKFOLD_PPROF_MAX (bytes) when set; nor the decompressed bytes a
 * quarter of it.  Past it: -ENOMEM, said.
 */
#ifndef PPROF_MEM_MAX
#define PPROF_MEM_MAX ((size_t)512 << 20)
#endif
size_t pprof_mem_max(void);

/* What protobuf-c allocates (bytes, malloc's overhead and its transient
 * scan slots counted) unpacking b[0..n) as a Profile; an upper bound. */
uint64_t pprof_unpack_cost(const unsigned char *b, size_t n);

/* Unpack b[0..n) as a Profile into *out (free it with
 * perftools__profiles__profile__free_unpacked) when held (bytes the
 * caller holds for it, as the buffer) plus pprof_unpack_cost() is within
 * pprof_mem_max().  0, -ENOMEM (err said: past the bound, or out of
 * memory) or -EINVAL (not a Profile; err not set). */
struct Perftools__Profiles__Profile;
int pprof_unpack(const unsigned char *b, size_t n, size_t held,
		 struct Perftools__Profiles__Profile **out, struct sf_err *err);

/* The one way a pprof file is read (pprof_read(), a continuous window's
 * store, `stackfold comments`): head[0..n) already read from fd, the rest
 * from fd (head may be NULL with n 0), gunzipped when it is gzip, and
 * decoded within the bounds above.  *out is the caller's (free it with
 * pprof_free()).  0, or a negative errno with err filled: -EINVAL not a
 * pprof profile, -EFBIG too large decompressed, -EIO corrupt gzip,
 * -ENOMEM, or the read's errno. */
int pprof_load(const unsigned char *head, size_t n, int fd,
	       struct Perftools__Profiles__Profile **out, struct sf_err *err);
void pprof_free(struct Perftools__Profiles__Profile *pp);

#endif
