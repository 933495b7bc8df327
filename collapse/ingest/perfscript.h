/*
 * perfscript.h - `perf script` output read as FlameGraph's
 * stackcollapse-perf.pl reads it, into folded lines: a sample is a header
 * line ("COMM PID/TID [CPU] TIME: PERIOD EVENT:", COMM may hold blanks),
 * its frames one a line, leaf first ("\t ADDR FUNC+0xOFF (MODULE)"), and
 * a blank line.  Each sample is one folded line of count 1, root first:
 * the comm ("comm-PID", "comm-PID/TID" with FOLD_PID, FOLD_TID; a header
 * with one id, perf script's default, gives the tid), then the
 * functions without their offsets; an unnamed frame is its module's base
 * name in brackets ("[libc.so.6]"), or [unknown]; kernel frames (module
 * [kernel.kallsyms] or a kernel module in brackets) end in "_[k]".
 * Nothing prints; the caller owns the struct.
 */
#ifndef SF_PERFSCRIPT_H
#define SF_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>

struct perfscript {
	unsigned flags;		/* FOLD_PID, FOLD_TID */
	char *head;		/* the sample's root frame ("" none) */
	size_t hlen, hcap;
	char *fr;		/* its frames, leaf first, each NUL-ended */
	size_t flen, fcap;
	char *out;		/* the folded line */
	size_t olen, ocap;
	bool in_sample;
};

/* Does the input's start (head, n bytes) look like `perf script` output:
 * a header line ("COMM ID ...") followed by a frame line (blanks, hex
 * digits, a blank), after any blank or '#' lines (perf script --header)? */
bool perfscript_sniff(const unsigned char *head, size_t n);
/* perf.data's magic ("PERFILE2") at the start? */
bool perfscript_is_perf_data(const unsigned char *head, size_t n);

void perfscript_init(struct perfscript *ps, unsigned flags);
void perfscript_release(struct perfscript *ps);
/* One input line (no newline).  When a sample ends, *line and *len are
 * its folded line (valid until the next call) and 1 is returned; 0 when
 * none ended; -ENOMEM.  perfscript_end(): the last sample's, if any. */
int perfscript_line(struct perfscript *ps, const char *s, size_t n,
		    const char **line, size_t *len);
int perfscript_end(struct perfscript *ps, const char **line, size_t *len);

#endif
