/*
 * process.h - process snapshots (internal to symbolizer/).
 *
 * Implements sym_process_snapshot(), sym_process_load_maps() and
 * sym_process_write_maps() from symbolizer.h, plus the lookups session.c
 * needs; the types live in symbolizer_priv.h.
 *
 * Saved-maps text format (what sym_process_write_maps() writes):
 *   - the kept /proc/PID/maps lines, verbatim (except text remapped onto
 *     anonymous pages, written as the file mapping it replaced, see
 *     maps.h `remapped`), and `#remap START-HEX` after them for each
 *     such mapping, so that a reload still asks the JIT's perf map about
 *     addresses the file cannot name;
 *   - `#bid START-HEX BUILDID-HEX` for every mapping with a build-id;
 *   - `#main START-HEX` for the mapping of the process's executable;
 *   - `#starttime TICKS` and `#nspid PID`: identify the process (so files
 *     are reopened through /proc/PID only while it is the same process) and
 *     find its JIT perf map;
 *   - `#comm NAME`: the process's name (status Name:, escaped there).
 * Other lines starting with '#' are ignored, so the format can grow.
 */
#ifndef SF_PROCESS_H
#define SF_PROCESS_H

#include "symbolizer_priv.h"

#endif
