/*
 * perfmap.h - JIT symbol maps in the /tmp/perf-PID.map convention.
 *
 * Each line is "START SIZE NAME" (START and SIZE hex, optional 0x; NAME is
 * the rest of the line and may hold spaces).  JITs append while running, so
 * a perfmap is read incrementally: perfmap_update() parses only what was
 * appended since the last call.  Garbage lines are counted and skipped; an
 * empty or garbage file is a valid, empty map.  When ranges overlap (code
 * reused by the JIT) the entry written last wins.
 *
 * Ownership: names are owned by the perfmap and stay valid (same address)
 * until perfmap_release(), even across perfmap_update().
 */
#ifndef SF_PERFMAP_H
#define SF_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

struct perfmap_entry {
	uint64_t start, size;
	uint32_t name;	/* id in names */
	uint32_t seq;	/* line order, for "last wins" */
};

struct perfmap {
	struct perfmap_entry *v;	/* sorted by (start, seq) */
	size_t n, cap;
	struct strtab names;
	uint64_t parsed_bytes;	/* file bytes consumed (whole lines) */
	uint64_t bad_lines;
};

int perfmap_init(struct perfmap *pm);	/* 0 or -ENOMEM */
void perfmap_release(struct perfmap *pm);

/* Parse text (complete lines only are consumed; returns the number of
 * bytes consumed through *used).  0 or -ENOMEM. */
int perfmap_parse(struct perfmap *pm, const char *text, size_t len,
		  size_t *used);

/* Read what fd holds past parsed_bytes (pread; fd is not consumed).
 * 0, -ENOMEM or -errno. */
int perfmap_update(struct perfmap *pm, int fd);

/* Name of the entry holding addr, or NULL. */
const char *perfmap_find(const struct perfmap *pm, uint64_t addr);

/* Does an entry start in [start, limit)? */
bool perfmap_any_in(const struct perfmap *pm, uint64_t start, uint64_t limit);

#endif
