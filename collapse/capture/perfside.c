/*
 * perfside.c - the kernel's side-band records, read from perf ring
 * buffers: see perfside.h.
 *
 * The ring reader is written here by hand: no Debian package ships one
 * for perf events (libperf is not packaged; libbpf's perf_buffer reads
 * BPF perf event arrays only).  The ring follows perf_event_open(2):
 * data_head read with acquire order, the records up to it copied out
 * (one that wraps at the data area's end through ps->buf), then
 * data_tail stored with release order so the kernel may reuse them.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/perfside.h"

/* 128 pages of data a CPU (512 KiB with 4 KiB pages): some 5,000
 * records, seconds of a shell loop's exec churn at the rate the loop
 * reads them (it wakes at a quarter full).  perfside_open() may be given
 * another size. */
#define PERFSIDE_PAGES 128

/* The trailer sample_id_all adds to every record: PERF_SAMPLE_TID then
 * PERF_SAMPLE_TIME. */
struct side_id {
	uint32_t pid, tid;
	uint64_t time;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void init_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->mmap = 1;		/* executable mappings only: mmap_data 0 */
	a->mmap2 = 1;		/* with dev, inode and prot */
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;	/* the probe's start times are monotonic */
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

/* One event of pid (-1: every process) on cpu, its records into the
 * CPU's ring: the CPU's first event maps it, the others write into it
 * (PERF_EVENT_IOC_SET_OUTPUT).  slot[cpu]: the ring's index in ps, -1
 * while it has none. */
static int open_event(struct perfside *ps, int *slot, int pid, int cpu,
		      const struct perf_event_attr *a)
{
	int fd = (int)syscall(SYS_perf_event_open, a, pid, cpu, -1,
			      PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (slot[cpu] >= 0) {
		int e = sf_grow((void **)&ps->xfd, &ps->xfdcap, ps->nxfd + 1,
				sizeof(*ps->xfd)) ? -ENOMEM : 0;
		if (!e && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ps->fd[slot[cpu]]))
			e = -errno;
		if (e) {
			close(fd);
			return e;
		}
		ps->xfd[ps->nxfd++] = fd;
		return 0;
	}
	size_t len = ps->ring_bytes + (size_t)sysconf(_SC_PAGESIZE);
	void *r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED) {
		int e = -errno;
		close(fd);
		return e;
	}
	slot[cpu] = ps->ncpu;
	ps->fd[ps->ncpu] = fd;
	ps->ring[ps->ncpu++] = r;
	return 0;
}

/* pid's events on every CPU: 0, or the first error but ENODEV (an
 * offline CPU) and ESRCH (a thread that has exited: it has no records). */
static int open_pid(struct perfside *ps, int *slot, int pid, long ncpus,
		    const struct perf_event_attr *a)
{
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int e = open_event(ps, slot, pid, cpu, a);
		if (e == -ESRCH)
			return 0;
		if (e && e != -ENODEV)
			return e;
	}
	return 0;
}

/* The thread ids of pid's process (/proc/PID/task), appended to *tids
 * (those there already are not).  0, -ESRCH (gone) or -ENOMEM. */
static int add_threads(int pid, int **tids, size_t *n, size_t *cap)
{
	char path[40];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -ESRCH;
	struct dirent *de;
	int ret = 0;
	while (!ret && (de = readdir(d))) {
		uint64_t t;
		bool known = false;
		if (!sf_parse_u64(de->d_name, strlen(de->d_name), &t) || !t ||
		    t > INT32_MAX)
			continue;
		for (size_t i = 0; i < *n && !known; i++)
			known = (*tids)[i] == (int)t;
		if (known)
			continue;
		if (sf_grow((void **)tids, cap, *n + 1, sizeof(**tids)))
			ret = -ENOMEM;
		else
			(*tids)[(*n)++] = (int)t;
	}
	closedir(d);
	return ret;
}

/* The targets' events: each thread's, inherited (a thread or process it
 * starts later has them too).  The threads are read once, as perf record
 * -p reads them: one started by an untraced thread between that read and
 * its creator's open is not followed. */
static int open_targets(struct perfside *ps, int *slot, const int *pids,
			size_t npids, long ncpus, const struct perf_event_attr *a)
{
	int *tids = NULL, ret = 0;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < npids && ret != -ENOMEM; i++)
		ret = add_threads(pids[i], &tids, &n, &cap);
	ret = ret == -ENOMEM ? ret : 0;
	for (size_t i = 0; i < n && !ret; i++)
		ret = open_pid(ps, slot, tids[i], ncpus, a);
	free(tids);
	return !ret && !ps->ncpu ? -ESRCH : ret;
}

bool perfside_pages_ok(uint64_t pages)
{
	return pages && !(pages & (pages - 1)) && pages <= PERFSIDE_PAGES_MAX;
}

int perfside_open(struct perfside *ps, const int *pids, size_t npids,
		  unsigned pages, uint64_t keep_ns, struct sf_err *err)
{
	memset(ps, 0, sizeof(*ps));
	if (pages && !perfside_pages_ok(pages))
		return sf_err_set(err, EINVAL, "side-band ring of %u pages: "
				  "a power of two up to %u wanted", pages,
				  PERFSIDE_PAGES_MAX);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	if (n < 1)
		n = 1;
	ps->ring_bytes = (pages ? pages : PERFSIDE_PAGES) *
			 (size_t)sysconf(_SC_PAGESIZE);
	ps->fd = calloc((size_t)n, sizeof(*ps->fd));
	ps->ring = calloc((size_t)n, sizeof(*ps->ring));
	ps->buf = malloc(65536);	/* a record's size is a u16 */
	int *slot = malloc((size_t)n * sizeof(*slot));
	if (!ps->fd || !ps->ring || !ps->buf || !slot) {
		free(slot);
		perfside_close(ps);
		return sf_err_set(err, ENOMEM, "out of memory");
	}
	for (long i = 0; i < n; i++)
		slot[i] = -1;
	struct perf_event_attr a;
	init_attr(&a);
	a.wakeup_watermark = (uint32_t)(ps->ring_bytes / 4);
	a.inherit = npids > 0;
	int e = npids ? open_targets(ps, slot, pids, npids, n, &a) :
			open_pid(ps, slot, -1, n, &a);
	free(slot);
	if (!e && !ps->ncpu)
		e = -ENODEV;
	if (e) {
		perfside_close(ps);
		return sf_err_set(err, -e, "side-band perf event: %s",
				  strerror(-e));
	}
	sidemaps_init(&ps->maps, keep_ns);
	return 0;
}

int perfside_fds(const struct perfside *ps, const int **fds)
{
	*fds = ps->fd;
	return ps->ncpu;
}

static struct side_id trailer(const char *r, size_t size)
{
	struct side_id id = { 0, 0, 0 };
	if (size >= sizeof(struct perf_event_header) + sizeof(id))
		memcpy(&id, r + size - sizeof(id), sizeof(id));
	return id;
}

/* A string field from off to the trailer, NUL-terminated by the kernel
 * (padded to 8 bytes); forced so here too. */
static const char *field_str(char *r, size_t off, size_t size)
{
	size_t end = size - sizeof(struct side_id);
	if (off >= end)
		return "";
	r[end - 1] = 0;
	return r + off;
}

struct rec_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

static void on_mmap2(struct perfside *ps, char *r, size_t size, uint64_t t)
{
	struct rec_mmap2 m;
	if (size < sizeof(m) + sizeof(struct side_id))
		return;
	memcpy(&m, r, sizeof(m));
	struct side_map sm = { .start = m.addr, .len = m.len, .pgoff = m.pgoff,
			       .ino = m.ino, .maj = m.maj, .min = m.min,
			       .prot = m.prot, .flags = m.flags };
	/* with PERF_RECORD_MISC_MMAP_BUILD_ID the ids are a build-id: not
	 * asked for (attr.build_id 0) */
	if (m.h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		sm.maj = sm.min = 0, sm.ino = 0;
	sm.path = (char *)field_str(r, sizeof(m), size);
	sidemaps_mmap(&ps->maps, (int)m.pid, &sm, t);
}

static void on_record(struct perfside *ps, char *r, size_t size)
{
	struct perf_event_header h;
	memcpy(&h, r, sizeof(h));
	struct side_id id = trailer(r, size);
	uint32_t v[4] = { 0, 0, 0, 0 };
	if (size >= sizeof(h) + sizeof(v))
		memcpy(v, r + sizeof(h), sizeof(v));
	ps->records++;
	switch (h.type) {
	case PERF_RECORD_MMAP2:
		on_mmap2(ps, r, size, id.time);
		break;
	case PERF_RECORD_COMM:	/* pid, tid, comm */
		if (v[0] == v[1])
			sidemaps_comm(&ps->maps, (int)v[0],
				      field_str(r, sizeof(h) + 8, size),
				      h.misc & PERF_RECORD_MISC_COMM_EXEC, id.time);
		break;
	case PERF_RECORD_FORK:	/* pid, ppid, tid, ptid: a process if pid == tid */
		if (v[0] == v[2] && v[0] != v[1])
			sidemaps_fork(&ps->maps, (int)v[0], (int)v[1], id.time);
		break;
	case PERF_RECORD_EXIT:
		if (v[0] == v[2])
			sidemaps_exit(&ps->maps, (int)v[0], id.time);
		break;
	case PERF_RECORD_LOST: {	/* id, lost */
		uint64_t lost[2];
		if (size >= sizeof(h) + sizeof(lost)) {
			memcpy(lost, r + sizeof(h), sizeof(lost));
			sf_sat_addto(&ps->lost, lost[1]);
		}
		break;
	}
	default:
		break;
	}
}

/* Copy a record (size bytes at off in the data area, maybe wrapped) into
 * the batch.  0 or -1 out of memory (the record is then applied at once,
 * out of order). */
static int take(struct perfside *ps, const char *data, uint64_t dsize,
		uint64_t off, size_t size)
{
	size_t at = ps->nbatch;
	if (sf_grow((void **)&ps->batch, &ps->batchcap, at + size, 1) ||
	    sf_grow((void **)&ps->refs, &ps->refscap, ps->nrefs + 1,
		    sizeof(*ps->refs)))
		return -1;
	size_t first = off + size > dsize ? (size_t)(dsize - off) : size;
	memcpy(ps->batch + at, data + off, first);
	memcpy(ps->batch + at + first, data, size - first);	/* wrapped */
	ps->nbatch += size;
	struct side_id id = trailer(ps->batch + at, size);
	ps->refs[ps->nrefs++] = (struct perfside_ref){ id.time, at };
	return 0;
}

static void drain_ring(struct perfside *ps, struct perf_event_mmap_page *pg)
{
	char *data = (char *)pg + pg->data_offset;
	uint64_t size = pg->data_size ? pg->data_size : ps->ring_bytes;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		uint64_t off = tail & (size - 1);
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)	/* may wrap too */
			((char *)&h)[i] = data[(off + i) & (size - 1)];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;	/* the kernel never writes these */
		if (take(ps, data, size, off, h.size)) {
			size_t first = off + h.size > size ? (size_t)(size - off) : h.size;
			memcpy(ps->buf, data + off, first);
			memcpy(ps->buf + first, data, h.size - first);
			on_record(ps, ps->buf, h.size);
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

static int by_time(const void *a, const void *b)
{
	const struct perfside_ref *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;	/* a ring's order */
}

/* Each CPU's ring is in time order, the rings between them are not (a
 * child's fork on one CPU, its exec on another): a drain's records are
 * applied in time order, as perf orders them. */
void perfside_drain(struct perfside *ps)
{
	ps->nbatch = ps->nrefs = 0;
	for (int i = 0; i < ps->ncpu; i++)
		drain_ring(ps, ps->ring[i]);
	if (ps->nrefs)	/* (none read: refs may still be NULL) */
		qsort(ps->refs, ps->nrefs, sizeof(*ps->refs), by_time);
	for (size_t i = 0; i < ps->nrefs; i++) {
		char *r = ps->batch + ps->refs[i].off;
		struct perf_event_header h;
		memcpy(&h, r, sizeof(h));
		on_record(ps, r, h.size);
	}
	if (ps->ncpu)
		sidemaps_expire(&ps->maps, now_ns());
}

/* A name as /proc/PID/status shows it (procfs_unescape() reads it). */
static void put_comm(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\\')
			fputs("\\\\", f);
		else
			fputc(*s, f);
}

/* A path as /proc/PID/maps shows it: a newline escaped as \012. */
static void put_path(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '\n')
			fputs("\\012", f);
		else
			fputc(*s, f);
}

static void put_map(FILE *f, const struct side_map *m)
{
	fprintf(f, "%08" PRIx64 "-%08" PRIx64 " %c%c%c%c %08" PRIx64
		" %02x:%02x %" PRIu64 " ", m->start, m->start + m->len,
		m->prot & PROT_READ ? 'r' : '-', m->prot & PROT_WRITE ? 'w' : '-',
		m->prot & PROT_EXEC ? 'x' : '-',
		m->flags & MAP_SHARED ? 's' : 'p', m->pgoff, m->maj, m->min, m->ino);
	put_path(f, m->path);
	fputc('\n', f);
}

/* /proc/PID/stat's start time (clock ticks since boot) from the fork
 * record's monotonic time: files are then reopened through /proc/PID
 * only while pid is that process (a tick off, they are opened by path). */
static uint64_t start_ticks(uint64_t mono_ns)
{
	struct timespec b, m;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &b) ||
	    clock_gettime(CLOCK_MONOTONIC, &m))
		return 0;
	int64_t off = ((int64_t)b.tv_sec - m.tv_sec) * 1000000000LL +
		      (b.tv_nsec - m.tv_nsec);
	return (uint64_t)((int64_t)mono_ns + off) / (1000000000ULL / (uint64_t)hz);
}

int perfside_maps_text(const struct perfside *ps, int pid, uint32_t image,
		       char **text, size_t *len)
{
	const struct side_proc *p = ps->ncpu ? sidemaps_find(&ps->maps, pid, image) : NULL;
	if (!p)
		return -ENOENT;
	*text = NULL;
	FILE *f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++)
		put_map(f, &p->m[i]);
	if (p->main_set)
		fprintf(f, "#main %" PRIx64 "\n", p->main_start);
	uint64_t st = p->fork_known ? start_ticks(p->start_ns) : 0;
	if (st)
		fprintf(f, "#starttime %" PRIu64 "\n", st);
	fprintf(f, "#nspid %d\n", pid);
	if (p->comm[0]) {
		fputs("#comm ", f);
		put_comm(f, p->comm);
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}

void perfside_close(struct perfside *ps)
{
	size_t len = ps->ring_bytes + (size_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < ps->nxfd; i++)
		close(ps->xfd[i]);
	for (int i = 0; i < ps->ncpu; i++) {
		munmap(ps->ring[i], len);
		close(ps->fd[i]);
	}
	if (ps->ncpu)
		sidemaps_release(&ps->maps);
	free(ps->fd);
	free(ps->ring);
	free(ps->buf);
	free(ps->batch);
	free(ps->refs);
	free(ps->xfd);
	memset(ps, 0, sizeof(*ps));
}
