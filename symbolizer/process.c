/* process.c - process snapshots, see process.h. */
#include "process.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/procfs.h"

/* ---- the pid table ---- */

/* Every image of a pid hashes to the same slot: sym_process_forget() and
 * newest_image() walk one chain. */
static size_t pid_slot(const struct sym_session *s, int pid)
{
	return sf_hash_u64((uint64_t)(uint32_t)pid) & (s->nprocs_slots - 1);
}

/* The snapshot of pid's image, or its refused marker. */
static struct sym_process *entry_find(struct sym_session *s, int pid,
				      uint32_t image, bool refused)
{
	if (!s->nprocs_slots)
		return NULL;
	for (struct sym_process *p = s->procs[pid_slot(s, pid)]; p; p = p->next)
		if (p->pid == pid && p->image == image && p->refused == refused)
			return p;
	return NULL;
}

struct sym_process *sym_process_find(struct sym_session *s, int pid,
				     uint32_t image)
{
	return entry_find(s, pid, image, false);
}

/* Are images a and b of one process (bt/profile.bt: the image is the
 * process's start time, 24 bits of 4.2 ms units, times 128, plus its execs
 * since its fork)?  Only they are ordered: the start time wraps every
 * 19.5 h, so across a wrap a later process of the pid has a smaller
 * number.  Images under 128 (older captures, whose image was the exec
 * count; no BTF: image 1) are all one process. */
static bool same_process(uint32_t a, uint32_t b)
{
	return a >> 7 == b >> 7;
}

/* The newest image of pid with a snapshot, of image's process (0 when
 * none). */
static uint32_t newest_image(const struct sym_session *s, int pid,
			     uint32_t image)
{
	uint32_t n = 0;
	if (!s->nprocs_slots)
		return 0;
	for (struct sym_process *p = s->procs[pid_slot(s, pid)]; p; p = p->next)
		if (p->pid == pid && !p->refused && p->image > n &&
		    same_process(p->image, image))
			n = p->image;
	return n;
}

static int procs_grow(struct sym_session *s)
{
	size_t ns = s->nprocs_slots ? s->nprocs_slots * 2 : 256;
	struct sym_process **v = calloc(ns, sizeof(*v));
	if (!v)
		return -ENOMEM;
	struct sym_process **old = s->procs;
	size_t on = s->nprocs_slots;
	s->procs = v;
	s->nprocs_slots = ns;
	for (size_t i = 0; i < on; i++) {
		for (struct sym_process *p = old[i], *nx; p; p = nx) {
			nx = p->next;
			size_t k = pid_slot(s, p->pid);
			p->next = v[k];
			v[k] = p;
		}
	}
	free(old);
	return 0;
}

/* Insert p, retiring an older snapshot of the same pid and image. */
int process_put(struct sym_session *s, struct sym_process *p)
{
	if (s->nprocs + 1 > s->nprocs_slots && procs_grow(s))
		return -ENOMEM;
	struct sym_process **pp = &s->procs[pid_slot(s, p->pid)];
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid != p->pid || (*pp)->image != p->image)
			continue;
		struct sym_process *old = *pp;
		*pp = old->next;
		old->next = s->retired;
		s->retired = old;
		s->nprocs--;
		break;
	}
	p->next = s->procs[pid_slot(s, p->pid)];
	s->procs[pid_slot(s, p->pid)] = p;
	s->nprocs++;
	if (!p->refused)
		s->stats.processes++;
	return 0;
}

void process_free(struct sym_session *s, struct sym_process *p)
{
	sym_jit_release(s, p);
	free(p->m);
	maps_list_release(&p->ml);
	free(p);
}

void sym_process_free_all(struct sym_session *s)
{
	for (size_t i = 0; i < s->nprocs_slots; i++) {
		for (struct sym_process *p = s->procs[i], *nx; p; p = nx) {
			nx = p->next;
			process_free(s, p);
		}
	}
	for (struct sym_process *p = s->retired, *nx; p; p = nx) {
		nx = p->next;
		process_free(s, p);
	}
	free(s->procs);
	s->procs = NULL;
	s->retired = NULL;
	s->nprocs_slots = s->nprocs = 0;
}

/* Unlink a live snapshot of pid (any image) from the table; NULL when
 * none is left. */
static struct sym_process *procs_take(struct sym_session *s, int pid)
{
	if (!s->nprocs_slots)
		return NULL;
	struct sym_process **pp = &s->procs[pid_slot(s, pid)];
	for (; *pp; pp = &(*pp)->next) {
		struct sym_process *p = *pp;
		if (p->pid != pid)
			continue;
		*pp = p->next;
		s->nprocs--;
		return p;
	}
	return NULL;
}

/* Free the retired snapshots of pid, or of every pid when pid < 0. */
static size_t retired_free(struct sym_session *s, int pid)
{
	size_t n = 0;
	struct sym_process **pp = &s->retired;
	while (*pp) {
		struct sym_process *p = *pp;
		if (pid >= 0 && p->pid != pid) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		process_free(s, p);
		n++;
	}
	return n;
}

size_t sym_process_forget_older(struct sym_session *s, int pid,
				uint32_t image)
{
	size_t n = 0;
	if (!s->nprocs_slots || newest_image(s, pid, image) < image)
		return 0;
	struct sym_process **pp = &s->procs[pid_slot(s, pid)];
	while (*pp) {
		struct sym_process *p = *pp;
		/* a pid has one process at a time: another's are older */
		if (p->pid != pid ||
		    (same_process(p->image, image) && p->image >= image)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		s->nprocs--;
		process_free(s, p);
		n++;
	}
	return n;
}

size_t sym_process_forget(struct sym_session *s, int pid)
{
	size_t n = 0;
	for (struct sym_process *p; (p = procs_take(s, pid)); n++)
		process_free(s, p);
	return n + retired_free(s, pid);
}

size_t sym_session_drop_retired(struct sym_session *s)
{
	return retired_free(s, -1);
}

struct sym_process *process_new(int pid, uint32_t image)
{
	struct sym_process *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->image = image;
	p->nspid = pid;
	p->pm_fd = -1;
	maps_list_init(&p->ml);
	return p;
}

/* ---- mappings ---- */

struct sym_mapping *sym_process_mapping(struct sym_process *p,
					uint64_t abs_addr)
{
	ptrdiff_t i = maps_list_find(&p->ml, abs_addr);
	return i < 0 ? NULL : &p->m[i];
}

static void module_init(struct sym_module *mod, const struct maps_entry *e,
			const char *path)
{
	mod->start = e->start;
	mod->limit = e->limit;
	mod->offset = e->offset;
	mod->path = path;
	mod->build_id = "";
	mod->deleted = e->deleted;
	mod->dev = (uint64_t)maps_entry_dev(e);
	mod->inode = e->inode;
}

static const char *anon_path(const struct maps_entry *e)
{
	bool anon = e->kind == MAPS_ANON || e->kind == MAPS_ANON_SHM;
	return anon ? "[anon]" : e->path;
}

/* A file-backed mapping's file: opened and pinned now when live, else
 * (saved maps, bid is the recorded build-id or "") opened on first use. */
static int attach_file(struct sym_session *s, struct sym_process *p,
		       struct sym_mapping *m, const char *bid)
{
	const struct maps_entry *e = m->e;
	struct sym_file_desc d = {
		.dev = maps_entry_dev(e), .ino = e->inode,
		.path = e->path, .path_len = strlen(e->path),
		.build_id = bid, .deleted = e->deleted,
		.pid = p->pid, .starttime = p->starttime,
		.map_start = e->start, .map_limit = e->limit,
	};
	m->file = filetab_get(&s->files, &d);
	if (!m->file)
		return -ENOMEM;
	if (!bid)
		filetab_open(&s->files, m->file);
	return 0;
}

/* Attach files to the mappings.  bids: expected build-id per mapping
 * (saved text) or NULL (live). */
int process_attach_files(struct sym_session *s, struct sym_process *p,
			 const char *const *bids)
{
	p->m = calloc(p->ml.n ? p->ml.n : 1, sizeof(*p->m));
	if (!p->m)
		return -ENOMEM;
	for (size_t i = 0; i < p->ml.n; i++) {
		const struct maps_entry *e = &p->ml.v[i];
		struct sym_mapping *m = &p->m[i];
		const char *bid = bids ? bids[i] : NULL;
		m->e = e;
		module_init(&m->mod, e, anon_path(e));
		if (e->kind == MAPS_FILE && attach_file(s, p, m, bid))
			return -ENOMEM;
		if (e->kind == MAPS_VDSO)
			m->file = vdso_file(&s->vdso, bid ? 0 : p->pid,
					    e->start, e->limit, bid);
		if (m->file && m->file->bid_known)
			m->mod.build_id = m->file->build_id;
		if (maps_entry_may_jit(e)) {
			module_init(&m->jit_mod, e, p->pm_path);
			m->jit_mod.has_functions = true;
		}
	}
	return 0;
}

/* Mappings of the file /proc/PID/exe points to. */
static void mark_main(struct sym_process *p, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct maps_entry *e = p->m[i].e;
		if (e->kind == MAPS_FILE && e->inode == ino &&
		    maps_entry_dev(e) == dev)
			p->m[i].mod.is_main = true;
	}
}

int process_set_pm_path(struct sym_session *s, struct sym_process *p)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", p->nspid);
	p->pm_path = sym_strdup(s, path);
	return p->pm_path ? 0 : -ENOMEM;
}

/* ---- snapshot ---- */

/* at: where saved text came from (NULL: /proc/PID/maps, or unknown). */
void process_warn_bad_lines(struct sym_session *s, struct sym_process *p,
			    const char *what, const struct sym_origin *at)
{
	if (!p->ml.bad_lines)
		return;
	s->stats.bad_maps_lines += p->ml.bad_lines;
	uint64_t first = p->ml.first_bad_line;

	if (at && at->src) {
		first += at->line - 1;
		sym_warn(s, "%s:%" PRIu64 ": ignored %" PRIu64 " malformed "
			 "line(s) in %s of process %d (first at line %" PRIu64
			 ")", at->src, first, p->ml.bad_lines, what, p->pid,
			 first);
	} else {
		sym_warn(s, "ignored %" PRIu64 " malformed line(s) in %s of "
			 "process %d (first: line %" PRIu64 ")",
			 p->ml.bad_lines, what, p->pid, first);
	}
}

/* maps marks a deleted file by " (deleted)" after its name, which a file
 * may also really end in: when a file of that whole name, seen from the
 * process's root, is the mapped one (device and inode), it is that file,
 * not a deleted one, and keeps its whole name (a stat: never opened).
 * 0 or -ENOMEM. */
static int undelete_real_names(int pid, struct maps_list *ml)
{
	static const char sfx[] = " (deleted)";
	for (size_t i = 0; i < ml->n; i++) {
		struct maps_entry *e = &ml->v[i];
		char full[4352];
		struct stat st;
		if (!e->deleted || e->kind != MAPS_FILE ||
		    snprintf(full, sizeof(full), "/proc/%d/root%s%s", pid, e->path,
			     sfx) >= (int)sizeof(full) ||
		    stat(full, &st) != 0 || st.st_ino != e->inode ||
		    major(st.st_dev) != e->dev_major ||
		    minor(st.st_dev) != e->dev_minor)
			continue;
		size_t skip = strlen("/proc/") + (size_t)snprintf(NULL, 0, "%d", pid) +
			      strlen("/root");
		char *name = sf_strpool_copy(&ml->pool, full + skip, strlen(full + skip));
		if (!name)
			return -ENOMEM;
		e->path = name;
		e->deleted = false;
	}
	return 0;
}

/* /proc/PID/maps into ml (empty when the process has no memory: a
 * kernel thread, or one exiting). */
static int read_maps(int pid, struct maps_list *ml, struct sf_err *err)
{
	int fd = procfs_open(pid, "maps");
	if (fd < 0)
		return sf_err_set(err, fd == -ENOENT ? ESRCH : -fd,
				  "cannot open '/proc/%d/maps': %s", pid,
				  strerror(fd == -ENOENT ? ESRCH : -fd));
	int rc = maps_list_read_fd(ml, fd);
	close(fd);
	if (!rc)
		rc = undelete_real_names(pid, ml);
	if (rc)
		return sf_err_set(err, -rc, "cannot read '/proc/%d/maps': %s",
				  pid, strerror(-rc));
	return 0;
}

/* The error of a map that is another program's than the sample's. */
static int err_stale(struct sf_err *err, int pid)
{
	return sf_err_set(err, ESTALE, "process %d has run another program "
			  "since its sample", pid);
}

/*
 * /proc/PID/stat, read once, after the map: the process's start time,
 * name and start of stack.  Is p still the program sampled?  An image
 * never comes back, so the same start of stack now (want, from the
 * sample; 0: not told) means the map read before was that program's.  A
 * sample taken during the exec itself may have seen the start of the
 * arguments there (procfs.h).  A process that has exited since its map
 * was read (a zombie keeps its start time, not its stack) cannot say:
 * the map is taken as it is.  An empty map of an exited process is none.
 */
static int read_stat(struct sym_process *p, uint64_t want,
		     struct sf_err *err)
{
	struct procfs_stat st;
	int rc = procfs_stat(p->pid, &st);
	if (rc || st.state == 'Z' || st.state == 'X') {
		if (!p->ml.lines)	/* exited: no memory left */
			return sf_err_set(err, ESRCH, "process %d exited",
					  p->pid);
		if (rc)
			return 0;	/* reaped: start time unknown */
		st.argstart = 0;
	}
	p->starttime = st.starttime;
	p->startstack = st.startstack;
	snprintf(p->name, sizeof(p->name), "%s", st.comm);
	if (!want || !p->startstack || p->startstack == want ||
	    st.argstart == want)
		return 0;
	return err_stale(err, p->pid);
}

/* The pid p has in its own pid namespace: p's pid when that is ours (one
 * stat of /proc/PID/ns/pid), else /proc/PID/status's NSpid. */
static void read_nspid(struct sym_session *s, struct sym_process *p)
{
	struct stat st;
	if (!s->own_pidns_done) {
		s->own_pidns_done = true;
		s->own_pidns_known = !stat("/proc/self/ns/pid", &s->own_pidns);
	}
	if (s->own_pidns_known && !procfs_stat_path(p->pid, "ns/pid", &st) &&
	    st.st_dev == s->own_pidns.st_dev && st.st_ino == s->own_pidns.st_ino)
		return;		/* process_new() set nspid = pid */
	char name[sizeof(p->name)];
	procfs_status(p->pid, &p->nspid, name, sizeof(name));
}

/* The map first, then the stat (read_stat()): two reads of /proc/PID. */
static int snapshot(struct sym_session *s, struct sym_process *p,
		    uint64_t want_stack, struct sf_err *err)
{
	int rc;
	p->taken_ns = sf_clock_ns(CLOCK_BOOTTIME);
	if ((rc = read_maps(p->pid, &p->ml, err)) ||
	    (rc = read_stat(p, want_stack, err)))
		return rc;	/* (before another program's files are opened) */
	read_nspid(s, p);
	p->n = p->ml.n;
	if ((rc = process_set_pm_path(s, p)) || (rc = process_attach_files(s, p, NULL)))
		return sf_err_set(err, -rc, "snapshot of process %d: %s",
				  p->pid, strerror(-rc));
	p->exe_known = !procfs_exe_id(p->pid, &p->exe_dev, &p->exe_ino);
	if (p->exe_known)
		mark_main(p, p->exe_dev, p->exe_ino);
	sym_jit_snapshot(s, p);
	process_warn_bad_lines(s, p, "/proc/PID/maps", NULL);
	return 0;
}

static bool has_file(const struct sym_process *p)
{
	for (size_t i = 0; i < p->ml.n; i++)
		if (p->ml.v[i].kind == MAPS_FILE)
			return true;
	return false;
}

/* A new snapshot of pid, put in the table (an older one retired); with
 * need_file, refused (-ESRCH) when it maps no file: the process is
 * exiting, its map already gone.  want_stack: same_program(). */
static int snapshot_put(struct sym_session *s, int pid, uint32_t image,
			bool need_file, uint64_t want_stack, struct sf_err *err)
{
	struct sym_process *p = process_new(pid, image);
	if (!p)
		return sf_err_set(err, ENOMEM, "out of memory");
	int rc = snapshot(s, p, want_stack, err);
	if (!rc && need_file && !has_file(p))
		rc = sf_err_set(err, ESRCH, "process %d is exiting", pid);
	if (!rc)
		rc = process_put(s, p);
	if (rc)
		process_free(s, p);
	return rc;
}

/* The map read for pid's image at start of stack `stack` was another
 * program's: remembered in its marker (p, or a new one), unless the image
 * has a snapshot (taken before, still right: kept). */
static void mark_refused(struct sym_session *s, struct sym_process *p,
			 int pid, uint32_t image, uint64_t stack)
{
	if (sym_process_find(s, pid, image))
		return;
	if (p) {
		p->startstack = stack;
		return;
	}
	if (!(p = process_new(pid, image)))
		return;
	p->refused = true;
	p->startstack = stack;
	if (process_put(s, p))
		process_free(s, p);
}

void sym_session_set_exited_maps(struct sym_session *s, sym_exited_maps_fn fn,
				 void *ctx)
{
	s->exited_maps = fn;
	s->exited_ctx = ctx;
}

/* The map of pid's image, gone from /proc, from the session's
 * exited-maps source (sym_session_set_exited_maps()): a snapshot before
 * it retired.  0, or -ESRCH when the source has none. */
static int load_exited(struct sym_session *s, int pid, uint32_t image)
{
	char *text = NULL;
	size_t len = 0;
	if (!s->exited_maps || s->exited_maps(s->exited_ctx, pid, image,
					      &text, &len))
		return -ESRCH;
	int rc = sym_process_load_maps(s, pid, image, text, len, NULL, NULL);
	free(text);
	return rc ? -ESRCH : 0;
}

int sym_process_snapshot(struct sym_session *s, int pid, uint32_t image,
			 uint64_t start_stack, struct sf_err *err)
{
	if (pid <= 0)
		return sf_err_set(err, ESRCH, "no such process %d", pid);
	struct sym_process *m = entry_find(s, pid, image, true);
	if (m && (!start_stack || start_stack == m->startstack))
		return err_stale(err, pid);
	/* a failed snapshot adds and retires no entry: m stays valid */
	int rc = snapshot_put(s, pid, image, false, start_stack, err);
	if (rc == -ESTALE)
		mark_refused(s, m, pid, image, start_stack);
	/* gone: the exited-maps source may know its map */
	if ((rc == -ENOENT || rc == -ESRCH) && !load_exited(s, pid, image))
		rc = 0;
	return rc;
}

/* Has pid an executable (/proc/PID/exe)?  Kernel threads have none. */
static bool has_exe(int pid)
{
	char path[64], target[8];
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return readlink(path, target, sizeof(target)) > 0;
}

/* Has the process run another program since old was taken?  Seen by a
 * newer image's snapshot, or by /proc/PID/exe naming another file. */
static bool exec_since(struct sym_session *s, const struct sym_process *old)
{
	if (newest_image(s, old->pid, old->image) > old->image)
		return true;
	dev_t dev;
	ino_t ino;
	return old->exe_known &&
	       (procfs_exe_id(old->pid, &dev, &ino) || dev != old->exe_dev ||
		ino != old->exe_ino);
}

static int refresh_exited(struct sym_session *s, int pid, uint32_t image,
			  const char *why, struct sf_err *err)
{
	if (load_exited(s, pid, image))
		return sf_err_set(err, ESRCH, "process %d %s", pid, why);
	s->stats.refreshes++;
	return 0;
}

int sym_process_refresh(struct sym_session *s, int pid, uint32_t image,
			struct sf_err *err)
{
	const struct sym_process *old = sym_process_find(s, pid, image);
	if (!old)
		return sf_err_set(err, ENOENT, "process %d has no snapshot", pid);
	struct procfs_stat st;
	if (procfs_stat(pid, &st) || st.state == 'Z' || st.state == 'X' ||
	    st.starttime != old->starttime)
		return refresh_exited(s, pid, image, "exited", err);
	if (exec_since(s, old))
		return refresh_exited(s, pid, image, "runs another program now",
				      err);
	s->stats.refreshes++;
	/* old one retired; refused, as exec_since(), if the start of the
	 * stack is not the one of old */
	int rc = snapshot_put(s, pid, image, true, old->startstack, err);
	return rc == -ESTALE ? -ESRCH : rc;
}

uint64_t sym_process_age_ns(struct sym_session *s, int pid, uint32_t image)
{
	const struct sym_process *p = sym_process_find(s, pid, image);
	long tck = sysconf(_SC_CLK_TCK);
	if (!p || !p->starttime || !p->taken_ns || tck <= 0)
		return UINT64_MAX;
	uint64_t start = p->starttime * (1000000000ull / (uint64_t)tck);
	return p->taken_ns > start ? p->taken_ns - start : 0;
}

/* Do ml's kept lines equal those of p's snapshot, in order? */
static bool same_lines(const struct maps_list *ml, const struct sym_process *p)
{
	if (ml->n != p->ml.n)
		return false;
	for (size_t i = 0; i < ml->n; i++) {
		const struct maps_entry *a = &ml->v[i], *b = &p->ml.v[i];
		if (a->line_len != b->line_len ||
		    memcmp(a->line, b->line, a->line_len))
			return false;
	}
	return true;
}

int sym_process_maps_changed(struct sym_session *s, int pid, uint32_t image)
{
	const struct sym_process *p = sym_process_find(s, pid, image);
	if (!p)
		return -ENOENT;
	if (sym_process_newer_known(s, pid, image) ||
	    !procfs_same_process(pid, p->starttime))
		return -ESRCH;
	struct maps_list ml;
	maps_list_init(&ml);
	int rc = read_maps(pid, &ml, NULL);
	if (!rc && !ml.lines)	/* exiting: its memory is gone */
		rc = -ESRCH;
	if (!rc)
		rc = !same_lines(&ml, p);
	maps_list_release(&ml);
	return rc == -ENOMEM || rc >= 0 ? rc : -ESRCH;
}

const char *sym_process_name(struct sym_session *s, int pid, uint32_t image)
{
	const struct sym_process *p = sym_process_find(s, pid, image);
	return p && p->name[0] ? p->name : NULL;
}

bool sym_process_newer_known(struct sym_session *s, int pid, uint32_t image)
{
	return newest_image(s, pid, image) > image;
}

bool sym_process_known(struct sym_session *s, int pid, uint32_t image)
{
	return sym_process_find(s, pid, image) != NULL;
}

bool sym_process_current(struct sym_session *s, int pid, uint32_t image)
{
	const struct sym_process *p = sym_process_find(s, pid, image);
	return p && p->starttime && procfs_same_process(pid, p->starttime);
}

bool sym_process_loading(struct sym_session *s, int pid, uint32_t image)
{
	const struct sym_process *p = sym_process_find(s, pid, image);
	if (!p)
		return false;
	if (!has_file(p))	/* taken during an exec: nothing mapped yet */
		return has_exe(pid);	/* (a kernel thread never maps any) */
	bool ldso = false;
	for (size_t i = 0; i < p->ml.n; i++) {
		const struct maps_entry *e = &p->ml.v[i];
		if (e->kind != MAPS_FILE)
			continue;
		const char *base = strrchr(e->path, '/');
		base = base ? base + 1 : e->path;
		const char *so = strstr(base, ".so");
		if (strncmp(base, "ld-", 3) == 0)
			ldso = true;
		else if (so && (so[3] == '\0' || so[3] == '.'))
			return false;	/* a library is in: loaded */
	}
	return ldso;
}
