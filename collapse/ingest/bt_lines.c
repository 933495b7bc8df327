/* bt_lines.c - see bt_lines.h. */
#include "ingest/bt_lines.h"

#include <string.h>

#include "base/util.h"

static bool contains(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

/* Telling kernel from user stacks when frames are names without
 * addresses (one-liner text, symbolized by bpftrace).  Names only the
 * kernel has make a stack kernel wherever they are in it: its entry
 * points, syscall and interrupt paths. */
bool bt_kernel_only_name(const char *s, size_t len)
{
	static const char *const pfx[] = {
		"entry_SYSCALL", "do_syscall_64", "ret_from_fork",
		"asm_sysvec_", "asm_exc_", "asm_common_interrupt",
		"secondary_startup", "common_startup_64", "__x64_sys_",
		"x64_sys_call", "sysvec_", "__sysvec_", "irq_exit",
		"__irq_exit_rcu", "handle_softirqs", "__do_softirq",
	};
	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (sf_starts(s, len, pfx[i]))
			return true;
	return false;
}

/* Kernel roots whose names a program may have too (a thread pool's
 * worker_thread, a kthread() of its own): kernel only as the stack's
 * outermost frame, so that a user stack through a function named
 * worker_thread stays user. */
bool bt_kernel_root_name(const char *s, size_t len)
{
	static const char *const pfx[] = {
		"kthread", "worker_thread", "smpboot_thread_fn",
		"start_kernel", "x86_64_start_", "rest_init",
		"cpu_startup_entry", "do_idle", "cpu_idle",
	};
	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (sf_starts(s, len, pfx[i]))
			return true;
	return false;
}

enum bt_side bt_side_kind(const char *s, size_t len, uint64_t *lost)
{
	uint64_t n;
	if (!bt_may_be_side(s, len))
		return BT_SIDE_NONE;
	if (sf_starts(s, len, "Lost ") && contains(s, len, " events")) {
		const char *p = s + 5, *q = memchr(p, ' ', len - 5);
		if (q && sf_parse_u64(p, (size_t)(q - p), &n)) {
			if (lost)
				*lost = n;
			return BT_SIDE_LOST;
		}
	}
	if (contains(s, len, "failed to look up stack id"))
		return BT_SIDE_STACKID;
	if (contains(s, len, "Map full") || contains(s, len, "map full"))
		return BT_SIDE_MAP_FULL;
	return BT_SIDE_NONE;
}

bool bt_line_is_bpftrace(const char *line, size_t len)
{
	return sf_starts(line, len, "Attaching ") || sf_starts(line, len, "@") ||
	       sf_starts(line, len, "#") || sf_starts(line, len, "Lost ") ||
	       sf_starts(line, len, "ERROR") || sf_starts(line, len, "WARNING") ||
	       sf_starts(line, len, "HINT") || sf_starts(line, len, "Tracing ") ||
	       contains(line, len, "failed to look up stack id") ||
	       contains(line, len, "Map full") ||
	       contains(line, len, "map full");
}
