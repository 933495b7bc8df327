/*
 * bt_lines.h - what a line or a frame name of bpftrace's text is, without
 * a parser's state: bpftrace's side lines (losses it reports between a
 * record's lines), the test that tells bpftrace text from folded text,
 * and the names that tell a kernel stack when frames have no addresses.
 * Pure functions.
 */
#ifndef STACKFOLD_INGEST_BT_LINES_H
#define STACKFOLD_INGEST_BT_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which of bpftrace's side lines s is (no '\r' stripping, nothing
 * counted): for a capture sorting bpftrace's stderr; *lost (may be NULL)
 * gets N of "Lost N events". */
enum bt_side { BT_SIDE_NONE, BT_SIDE_LOST, BT_SIDE_STACKID, BT_SIDE_MAP_FULL };
enum bt_side bt_side_kind(const char *s, size_t len, uint64_t *lost);
/* Never a side line (a record's lines, where a comm may be "map full", or
 * a directive): the test every line read takes, so inline and cheap. */
static inline bool bt_may_be_side(const char *s, size_t len)
{
	if (!len)
		return false;
	switch (s[0]) {
	case '@': case '#': case ',': case ']': case ' ': case '\t':
		return false;
	}
	return true;
}
/* True when the line looks like bpftrace/capture output (for detecting
 * the input format from its first meaningful line). */
bool bt_line_is_bpftrace(const char *line, size_t len);
/* A frame name only the kernel has (entry points, syscall and interrupt
 * paths): its stack is kernel wherever it is in it. */
bool bt_kernel_only_name(const char *s, size_t len);
/* A kernel root a program may name a function too (worker_thread):
 * kernel only as a stack's outermost frame. */
bool bt_kernel_root_name(const char *s, size_t len);

#endif
