/*
 * pyframes.h - names of CPython 3.11 frames from a live process: the
 * (code object, instruction pointer) pairs bt/profile-python.bt records
 * become "function (file:line)", read from the process's memory with
 * process_vm_readv (the offsets: pyoffsets.h, from the capture's
 * "#python" line).
 *
 * The offsets are first checked against the DWARF of the process's
 * interpreter (pyoffsets.h), once a process (pid and image, the
 * capture's: a pid taken again is another process): a mismatch names none
 * of its frames.  Each code object is read once per (process, address)
 * and kept until pyframes_forget_code() (stackfold record: each flush) or
 * pyframes_new_window() (stackfold continuous: each window) forgets them:
 * another code object made at a freed one's address (its names' strings
 * and line table too, often) is read anew, never given the old name.  A
 * name is read after its sample, when the flush or window holding it is
 * read: a code object freed and another made at its address in between
 * is told apart by the sample's tag (pyframes_fold() of its frames'
 * co_name hashes, which CPython computed when it interned the names, and
 * first lines), taken by the program at the sample and compared with the
 * one the code objects read now give (docs/python.md).  The process
 * checks are kept (a window asks a refusal again), so one namer serves a
 * long run.
 * Before its fields are believed it must look like a code object: its
 * ob_type is PyCode_Type's address, its names are compact PyUnicode
 * objects (any kind: UTF-8 out) of sane length.  Anything else is unknown (pyframes_name() returns
 * false; the caller shows [python:unknown] and counts it): never a name
 * made from memory that is not what the offsets say.  Nothing prints.
 */
#ifndef SF_PYFRAMES_H
#define SF_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pyoffsets.h"

struct pyframes;

/* A namer for offsets off (PY_OFF_COUNT values); NULL on -ENOMEM.  live
 * false (a replay of a saved capture: its processes are gone, and a pid
 * may be another process's now): no memory is read, no frame named. */
struct pyframes *pyframes_new(const uint64_t off[PY_OFF_COUNT], bool live);
void pyframes_free(struct pyframes *pf);	/* NULL is fine */

/* The "#python V0 V1 ..." line's values (enum py_off's order) into off:
 * false when the line is not that (too few numbers, or not numbers).  An
 * older capture's line (PY_OFF_OLD_COUNT values, no tags) leaves the
 * rest 0. */
bool pyframes_parse_line(const char *s, size_t len,
			 uint64_t off[PY_OFF_COUNT]);

/* The name of the frame running code object code at instruction instr
 * (its prev_instr) in process pid (image: the capture's, which tells a
 * reused pid apart), as "qualname (file:line)" into buf (cap bytes,
 * terminated; file is the base name): true, or false when the code
 * object cannot be read or does not look like one. */
bool pyframes_name(struct pyframes *pf, uint32_t pid, uint32_t image,
		   uint64_t code, uint64_t instr, char *buf, size_t cap);

/* A sample's tag, as bt/profile-python.bt takes it frame by frame,
 * current first, from 0: acc, then each frame's code object's co_name
 * hash and co_firstlineno, FNV-1a's step on 64-bit words.  The program
 * keeps the low 47 bits (its key's header, above bit 16: bpftrace prints
 * a key's integers signed).  Two samples whose code objects differ only
 * where a freed one's address was reused are told apart unless the low
 * 47 bits agree. */
uint64_t pyframes_fold(uint64_t acc, uint64_t name_hash, uint32_t firstlineno);

/* Does the capture take tags (its "#python" line has the offsets they
 * are read with)?  An older capture's has not. */
bool pyframes_tagged(const struct pyframes *pf);

/* *acc folded with code object code of pid as it is now (pyframes_fold()):
 * true, or false when it cannot be read (or the capture takes no tags). */
bool pyframes_fold_code(struct pyframes *pf, uint32_t pid, uint32_t image,
			uint64_t code, uint64_t *acc);

/* A new window begins: the code objects read are forgotten (a process
 * may have freed one and made another there), and each process whose
 * check failed is asked again. */
void pyframes_new_window(struct pyframes *pf);
/* The code objects read are forgotten, as in pyframes_new_window(), but
 * a process refused stays refused (its check, a DWARF read, is not asked
 * again): stackfold record calls it at each flush of the capture. */
void pyframes_forget_code(struct pyframes *pf);

/* The line of code unit index addrq (-1: before the first) in a 3.11
 * co_linetable lt[0..n), the code's first line firstlineno; -1: none. */
int pyframes_line(const unsigned char *lt, size_t n, int firstlineno,
		  int64_t addrq);

#endif
