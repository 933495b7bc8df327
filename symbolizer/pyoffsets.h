/*
 * pyoffsets.h - what a sampler needs to walk CPython 3.11's frames and
 * name them, read from the interpreter's ELF (.dynsym: _PyRuntime,
 * PyCode_Type, PyUnicode_Type) and its DWARF (member offsets, from the
 * separate debug file found as debuglink.c finds any: build-id first).
 *
 * The values are in enum py_off's order: that order is the bt/ program's
 * positional parameters from $5 on (bt/profile-python.bt) and the fields
 * of the "#python" capture line (capture/protocol.h); the last two came
 * later (a capture's line without them is still read: PY_OFF_OLD_COUNT).
 * Nothing prints.
 *
 * Public: one of the symbolizer's headers collapse/ may include (the list:
 * docs/design.md, checked by scripts/check-layers); implemented in
 * elf/pyoffsets.c.
 */
#ifndef SF_PYOFFSETS_H
#define SF_PYOFFSETS_H

#include <stdint.h>

#include "base/util.h"

enum py_off {
	PY_RUNTIME,		/* &_PyRuntime in the process (absolute) */
	PY_TSTATE_CURRENT,	/* _PyRuntimeState.gilstate.tstate_current */
	PY_CFRAME,		/* PyThreadState.cframe */
	PY_CURRENT_FRAME,	/* _PyCFrame.current_frame */
	PY_F_CODE,		/* _PyInterpreterFrame.f_code */
	PY_PREVIOUS,		/* _PyInterpreterFrame.previous */
	PY_PREV_INSTR,		/* _PyInterpreterFrame.prev_instr */
	PY_IS_ENTRY,		/* _PyInterpreterFrame.is_entry (a char) */
	PY_CODE_TYPE,		/* &PyCode_Type in the process */
	PY_UNICODE_TYPE,	/* &PyUnicode_Type in the process */
	PY_CO_QUALNAME,		/* PyCodeObject members */
	PY_CO_FILENAME,
	PY_CO_FIRSTLINENO,
	PY_CO_LINETABLE,
	PY_CO_CODE_ADAPTIVE,
	PY_ASCII_SIZE,		/* sizeof(PyASCIIObject): its characters */
	PY_ASCII_LENGTH,	/* PyASCIIObject.length */
	PY_ASCII_STATE,		/* PyASCIIObject.state (the bit field's word) */
	PY_BYTES_SVAL,		/* PyBytesObject.ob_sval */
	PY_VAR_SIZE,		/* PyVarObject.ob_size */
	PY_THREAD_ID,		/* PyThreadState.thread_id (pthread_self) */
	PY_CO_NAME,		/* PyCodeObject.co_name (interned: hashed) */
	PY_ASCII_HASH,		/* PyASCIIObject.hash */
	PY_OFF_COUNT,
};
#define PY_OFF_OLD_COUNT PY_CO_NAME	/* "#python" lines before the tags */

/* The name printed for value k ("tstate_current"...). */
const char *py_off_name(enum py_off k);

struct py_offsets {
	uint64_t v[PY_OFF_COUNT];
	char binary[4096];	/* the ELF file that holds _PyRuntime */
	char debug[4096];	/* its debug file ("" when none was found) */
};

/* Errors of py_offsets_find() the caller tells apart. */
#define PY_ENODEBUG 1001	/* no debug file: install the -dbg package */
#define PY_ENOPYTHON 1002	/* no _PyRuntime in the binary or maps */
#define PY_EVERSION 1003	/* a CPython other than 3.11 (its Py_Version) */

/*
 * Fill o for the process pid (pid > 0: its executable, else the
 * libpython*.so it maps; addresses relocated by its load bias) or for
 * the file path (pid 0; addresses as linked: a non-PIE executable's).
 * 0, or a negative errno (-PY_ENODEBUG, -PY_ENOPYTHON, -PY_EVERSION,
 * -EINVAL: a member not found in the DWARF) with err saying what;
 * o->binary is set as far as it was found.
 */
int py_offsets_find(int pid, const char *path, struct py_offsets *o,
		    struct sf_err *err);

#endif
