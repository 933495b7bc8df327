/*
 * procfs.h - small readers of /proc/PID files used by the symbolizer
 * and by capture/ (watching pids, the child).
 *
 * Every function returns 0 or a negative errno (-ESRCH when the process
 * does not exist); nothing prints.  The proc root is "/proc".
 */
#ifndef SF_PROCFS_H
#define SF_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* From /proc/PID/stat: the state letter (field 3: R, S, Z, ...), the
 * start time (field 22, in clock ticks since boot: with the pid it names
 * one process), the start of the stack (field 28, mm->start_stack: set at
 * each exec, and random with ASLR, so it tells the programs a pid runs
 * apart) and the start of the arguments (field 48, mm->arg_start: what
 * start_stack holds for a moment during the exec, before the ELF loader
 * sets it).  0 for a kernel thread or a zombie.  comm (field 2): the
 * main thread's name as the kernel keeps it (raw: what /proc/PID/status
 * prints as Name: once its escapes are undone), cut to fit. */
struct procfs_stat {
	char state;
	uint64_t num_threads, starttime, startstack, argstart;
	char comm[64];
};
int procfs_stat(int pid, struct procfs_stat *out);

/* true when pid exists now, has not exited (zombie) and has the given
 * start time (0 = any). */
bool procfs_same_process(int pid, uint64_t starttime);

/* From /proc/PID/status: the innermost namespace pid (NSpid:, pid itself
 * on kernels without it) and the process's name (Name:, the main thread's
 * comm, its escapes undone: it may hold a newline; "" when absent) into
 * name[namesz].  Returns 0 or -errno (-ESRCH: no such process). */
int procfs_status(int pid, int *nspid, char *name, size_t namesz);
/* From /proc/PID/status Uid: the process's real, effective, saved and
 * file-system uids.  0 or -errno (-EINVAL: no such line). */
int procfs_uids(int pid, uid_t uids[4]);
/* Undo, in place, the escapes in a name as /proc/PID/status prints it:
 * "\n" and "\\" (Linux 5.16 on; a tab stays a tab), "\ooo" octal before.
 * procfs_status() does it; for names saved in that form (a raw capture's
 * "#comm" line). */
void procfs_unescape(char *s);

/* dev and inode of /proc/PID/exe's target. */
int procfs_exe_id(int pid, dev_t *dev, ino_t *ino);

/* Read a whole (small) file into a malloc'd NUL-terminated buffer; *len
 * excludes the NUL.  Caller frees. */
int procfs_read_file(const char *path, char **buf, size_t *len);

/* Open path relative to pid's proc dir, e.g. "root/usr/lib/x.so" or
 * "map_files/1000-2000": O_RDONLY|O_CLOEXEC, returns fd or -errno. */
int procfs_open(int pid, const char *rel);

/* procfs_open() of a name the process controls (root/..., map_files/...):
 * sf_open_untrusted() (base/untrusted.h), -SF_ENOTREG for anything but a
 * regular file, *st filled then (st may be NULL). */
int procfs_open_untrusted(int pid, const char *rel, struct stat *st);

/* The boot time, seconds since the epoch (/proc/stat btime): 0 or
 * -errno. */
int procfs_boot_time(uint64_t *sec);

/* stat(2) of path relative to pid's proc dir (a map_files link is
 * followed to the mapped file): 0 or -errno. */
int procfs_stat_path(int pid, const char *rel, struct stat *st);

#endif
