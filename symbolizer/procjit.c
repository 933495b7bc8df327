/*
 * procjit.c - a process's JIT perf map (/tmp/perf-NSPID.map), see
 * symbolizer_priv.h.
 *
 * The map is read at the snapshot when the process has anonymous
 * executable memory (its container's /tmp may vanish with it), and again,
 * from where the last read stopped, whenever a lookup misses (the JIT
 * appends while it runs).  It is found through /proc/PID/root under the
 * pid the process has in its own namespace (NSpid), or in our /tmp when
 * the process is gone and shared our pid namespace.  A file last written
 * before the process started is an earlier process's and is not read.
 * Open perf-map fds are
 * capped (a quarter of the pinned-file budget); beyond that each refresh
 * reopens the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/procfs.h"
#include "symbolizer_priv.h"

static bool has_anon_exec(const struct sym_process *p)
{
	for (size_t i = 0; i < p->ml.n; i++)
		if (maps_entry_may_jit(&p->ml.v[i]))
			return true;
	return false;
}

/* Was the perf map on fd last written before p started?  Then it is an
 * earlier process's with the same pid (/tmp outlives its writers), and
 * would name p's JIT code with another program's functions.  Unknown
 * start or boot time: no. */
static bool jit_stale(struct sym_session *s, const struct sym_process *p,
		      int fd)
{
	struct stat st;
	if (!s->btime_done) {
		if (procfs_boot_time(&s->btime))
			s->btime = 0;
		s->btime_done = true;
	}
	long tck = sysconf(_SC_CLK_TCK);
	if (!p->starttime || !s->btime || tck <= 0 || fstat(fd, &st))
		return false;
	/* a second of slack: btime is in whole seconds */
	uint64_t start = s->btime + p->starttime / (uint64_t)tck;
	return st.st_mtime >= 0 && (uint64_t)st.st_mtime + 1 < start;
}

/*
 * Is the perf map st another user's?  As perf requires, it must be owned
 * by root or the process's user (any of its uids): in a shared /tmp
 * anyone may create /tmp/perf-PID.map for a pid of another user's
 * process to come, and name its JIT code at will.  A process not seen
 * running (a saved capture's: without its start time, a process now at
 * that pid may be another) has no known user: root's file only, as perf
 * run by root.
 */
static bool jit_foreign(struct sym_process *p, const struct stat *st)
{
	if (!p->uids_known && p->starttime &&
	    procfs_same_process(p->pid, p->starttime) &&
	    !procfs_uids(p->pid, p->uids))
		p->uids_known = true;
	if (st->st_uid == 0 || st->st_uid == geteuid())
		return false;
	for (int i = 0; p->uids_known && i < 4; i++)
		if (st->st_uid == p->uids[i])
			return false;
	return true;
}

static int jit_open(struct sym_session *s, struct sym_process *p)
{
	char rel[80];
	int fd = -1;
	snprintf(rel, sizeof(rel), "root%s", p->pm_path);
	struct stat st;
	/* the process writes its perf map where it likes: a FIFO there
	 * would block an open for reading */
	if (procfs_same_process(p->pid, p->starttime))
		fd = procfs_open_untrusted(p->pid, rel, &st);
	if (fd < 0 && fd != -SF_ENOTREG && p->nspid == p->pid)
		fd = sf_open_untrusted(p->pm_path, &st);
	if (fd == -SF_ENOTREG) {
		sf_limits_count(&s->limits, SF_REFUSED_TYPE);
		sym_warn(s, "perf map '%s' of process %d is %s, not a regular "
			 "file: not read", p->pm_path, p->pid,
			 sf_file_kind(st.st_mode));
	}
	if (fd >= 0 && jit_foreign(p, &st)) {
		if (!p->pm_foreign) {	/* asked again at each miss: one count */
			sf_limits_count(&s->limits, SF_REFUSED_PLACE);
			sym_warn(s, "perf map '%s' of process %d belongs to uid "
				 "%u, neither root nor the process's user: not "
				 "read", p->pm_path, p->pid, (unsigned)st.st_uid);
		}
		p->pm_foreign = true;
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && jit_stale(s, p, fd)) {
		sym_warn(s, "perf map '%s' is older than process %d: an "
			 "earlier process's, not read", p->pm_path, p->pid);
		close(fd);
		fd = -1;
	}
	return fd < 0 ? -1 : fd;
}

static size_t fd_cap(const struct sym_session *s)
{
	size_t cap = s->files.max_pinned / 4;
	return cap ? cap : 1;
}

/* Read what was appended since the last read.  0 or -errno. */
static int jit_refresh(struct sym_session *s, struct sym_process *p)
{
	int fd = p->pm_fd >= 0 ? p->pm_fd : jit_open(s, p);
	if (fd < 0)
		return -ENOENT;
	if (!p->pm_ready && perfmap_init(&p->pm)) {
		if (fd != p->pm_fd)
			close(fd);
		return -ENOMEM;
	}
	p->pm_ready = true;
	uint64_t bad = p->pm.bad_lines;
	int rc = perfmap_update(&p->pm, fd);
	if (p->pm.bad_lines && !bad)
		sym_warn(s, "ignored malformed lines in perf map '%s' of "
			 "process %d", p->pm_path, p->pid);
	if (fd != p->pm_fd) {
		if (s->npm_fds < fd_cap(s)) {
			p->pm_fd = fd;
			s->npm_fds++;
		} else {
			close(fd);
		}
	}
	return rc;
}

void sym_jit_snapshot(struct sym_session *s, struct sym_process *p)
{
	if (has_anon_exec(p) && jit_refresh(s, p) == -ENOENT)
		p->pm_missing = 1;
}

/* Read what the JIT has written since, but stop asking for a file that
 * was missing twice.  Whether the map is there to search. */
static bool jit_read_on(struct sym_session *s, struct sym_process *p)
{
	if (p->pm_missing < 2 && jit_refresh(s, p) == -ENOENT)
		p->pm_missing++;
	return p->pm_ready;
}

const char *sym_process_jit_name(struct sym_session *s, struct sym_process *p,
				 uint64_t abs_addr)
{
	const char *name = p->pm_ready ? perfmap_find(&p->pm, abs_addr) : NULL;
	if (name || !jit_read_on(s, p))	/* the JIT may have written it */
		return name;
	return perfmap_find(&p->pm, abs_addr);
}

bool sym_process_jit_region(struct sym_session *s, struct sym_process *p,
			    uint64_t start, uint64_t limit)
{
	return (p->pm_ready || jit_read_on(s, p)) &&
	       perfmap_any_in(&p->pm, start, limit);
}

void sym_jit_release(struct sym_session *s, struct sym_process *p)
{
	if (p->pm_fd >= 0) {
		close(p->pm_fd);
		s->npm_fds--;
	}
	p->pm_fd = -1;
	if (p->pm_ready)
		perfmap_release(&p->pm);
	p->pm_ready = false;
}
