/* continuous_python.c - stackfold continuous's Python frames: the
 * "#python" line of bt/continuous-python.bt (the interpreter's offsets)
 * makes one namer (ingest/pyframes.h) that every window's report borrows.
 * One for the run, not one a window: a process's offsets are checked
 * against its interpreter's DWARF once (a file read, not a memory read),
 * and its code objects are read once and only checked again in later
 * windows.  The maps source does not read this program's key: the text
 * is read (continuous_source.c). */
#include <stdio.h>
#include <string.h>

#include "ingest/pyframes.h"
#include "ingest/report.h"
#include "cmd/continuous_priv.h"

void cont_python_line(struct cont *x, const char *s, size_t len)
{
	uint64_t off[PY_OFF_COUNT];
	if (!pyframes_parse_line(s, len, off)) {
		if (x->r)
			report_count_unparsable(x->r);
		return;
	}
	/* a restarted bpftrace says the same again: the cache stays */
	if (x->py && memcmp(off, x->py_off, sizeof(off)) == 0)
		return;
	struct pyframes *py = pyframes_new(off, true);
	if (!py) {
		fprintf(stderr, "stackfold: out of memory: no Python frame names\n");
		return;
	}
	if (x->r)
		report_use_python(x->r, py);
	pyframes_free(x->py);
	x->py = py;
	memcpy(x->py_off, off, sizeof(off));
}

void cont_python_window(struct cont *x)
{
	if (!x->py)
		return;
	pyframes_new_window(x->py);
	report_use_python(x->r, x->py);
}

void cont_python_release(struct cont *x)
{
	pyframes_free(x->py);
	x->py = NULL;
}
