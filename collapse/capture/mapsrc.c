/* mapsrc.c - see mapsrc.h. */
#include "capture/mapsrc.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/protocol.h"

/* bpftrace 0.17's key of @stackfold[$key, tid, buf(comm, 16),
 * ustack(perf), kstack(perf)], packed: u64 key, u64 tid, u8 length + 16
 * comm bytes, u64 ustack (u32 stack id | tid << 32), i64 kstack id */
#define K_KEY 0
#define K_TID 8
#define K_COMM 17
#define K_USTACK 33
#define K_KSTACK 41
#define KEY_SIZE_017 49
#define COMM_LEN 16
#define BATCH 1024

struct want {
	const char *kname;	/* as the kernel keeps it: AT_ + 12 */
	const char *name;	/* as the program spells it */
	uint32_t type, key_size, value_size;	/* value_size 0: any */
};

static const struct want wants[MAPSRC_NMAPS] = {
	[MAPSRC_MAIN] = { "AT_stackfold", "@stackfold",
			  BPF_MAP_TYPE_PERCPU_HASH, 0, 8 },
	[MAPSRC_MAIN_B] = { "AT_stackfold_b", "@stackfold_b",
			    BPF_MAP_TYPE_PERCPU_HASH, 0, 8 },
	[MAPSRC_TOTAL] = { "AT_stackfold_t", "@stackfold_t",
			   BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8 },
	[MAPSRC_TOTAL_B] = { "AT_stackfold_t_", "@stackfold_t_b",
			     BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8 },
	[MAPSRC_BUF] = { "AT_stackfold_bu", "@stackfold_buf",
			 BPF_MAP_TYPE_HASH, 8, 8 },
	[MAPSRC_SEEN] = { "AT_stackfold_se", "@stackfold_seen",
			  BPF_MAP_TYPE_HASH, 8, 8 },
	[MAPSRC_SRC] = { "AT_stackfold_sr", "@stackfold_src",
			 BPF_MAP_TYPE_HASH, 8, 8 },
	[MAPSRC_STACK] = { "stack", "stack", BPF_MAP_TYPE_STACK_TRACE, 0, 0 },
	[MAPSRC_STACK_B] = { "stack", "stack (a second)",
			     BPF_MAP_TYPE_STACK_TRACE, 0, 0 },
};

const char *mapsrc_map_name(enum mapsrc_map m)
{
	return m < MAPSRC_NMAPS ? wants[m].name : "?";
}

int mapsrc_layout_for(const char *line, struct mapsrc_layout *out,
		      struct sf_err *err)
{
	const char *v = line ? strstr(line, "v0.") : NULL;
	unsigned maj, min, patch;
	if (!v || sscanf(v + 1, "%u.%u.%u", &maj, &min, &patch) != 3)
		return sf_err_set(err, ENOTSUP, "bpftrace version unknown ('%s')",
				  line ? line : "not told");
	if (maj != 0 || min != 17)
		return sf_err_set(err, ENOTSUP, "bpftrace %u.%u.%u: its map layout "
				  "is not known (0.17 is)", maj, min, patch);
	*out = (struct mapsrc_layout){ .key_size = KEY_SIZE_017,
				       .stack_key_size = 4 };
	snprintf(out->version, sizeof(out->version), "%u.%u.%u", maj, min, patch);
	return 0;
}

/* ---- taking the fds --------------------------------------------------- */

static int take_fd(int pidfd, int target)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, target, 0);
}

/* The map in is (the first stack map found is MAPSRC_STACK, a second
 * MAPSRC_STACK_B: sorted out by depth once all are taken), or -1. */
static int which_map(const struct mapsrc *ms, const struct bpf_map_info *in)
{
	for (int m = 0; m < MAPSRC_NMAPS; m++)
		if (!strcmp(in->name, wants[m].kname))
			return m == MAPSRC_STACK && ms->fd[m] >= 0 ? MAPSRC_STACK_B : m;
	return -1;
}

static int check_map(struct mapsrc *ms, int m, const struct bpf_map_info *in,
		     const struct mapsrc_layout *lay, struct sf_err *err)
{
	const struct want *w = &wants[m];
	uint32_t ks = w->key_size;
	if (m == MAPSRC_MAIN || m == MAPSRC_MAIN_B)
		ks = lay->key_size;
	if (m == MAPSRC_STACK || m == MAPSRC_STACK_B)
		ks = lay->stack_key_size;
	if (in->type != w->type)
		return sf_err_set(err, ENOTSUP, "map %s is of type %u, not %u",
				  w->name, in->type, w->type);
	if (in->key_size != ks)
		return sf_err_set(err, ENOTSUP, "map %s has %u-byte keys, not %u",
				  w->name, in->key_size, ks);
	if (w->value_size && in->value_size != w->value_size)
		return sf_err_set(err, ENOTSUP, "map %s has %u-byte values, not %u",
				  w->name, in->value_size, w->value_size);
	if (w->type == BPF_MAP_TYPE_STACK_TRACE &&
	    (!in->value_size || in->value_size % 8 ||
				  in->value_size / 8 > BT_STACK_LIMIT_MAX))
		return sf_err_set(err, ENOTSUP, "stack map of %u-byte values",
				  in->value_size);
	ms->value_size[m] = in->value_size;
	return 0;
}

/* One fd of bpftrace's: ours when it is a map of the layout.  0, or
 * -ENOTSUP (a map of ours not as expected, or twice), -errno. */
static int consider(struct mapsrc *ms, int pidfd, int target,
		    const struct mapsrc_layout *lay, struct sf_err *err)
{
	int fd = take_fd(pidfd, target);
	if (fd < 0)
		return sf_err_set(err, errno, "pidfd_getfd of bpftrace's fd %d: %s "
				  "(ptrace rights over bpftrace needed)", target,
				  strerror(errno));
	struct bpf_map_info in;
	uint32_t len = sizeof(in);
	memset(&in, 0, sizeof(in));
	if (bpf_obj_get_info_by_fd(fd, &in, &len)) {
		int e = errno;
		close(fd);
		return sf_err_set(err, e, "BPF_OBJ_GET_INFO_BY_FD: %s", strerror(e));
	}
	int m = which_map(ms, &in);
	if (m < 0) {
		close(fd);
		return 0;
	}
	if (ms->fd[m] >= 0) {
		close(fd);
		return sf_err_set(err, ENOTSUP, "two maps named %s (names cut to "
				  "15 characters collide)", wants[m].kname);
	}
	ms->fd[m] = fd;
	return check_map(ms, m, &in, lay, err);
}

static bool is_map_link(int pid, long fdno)
{
	char path[64], link[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", pid, fdno);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return !strcmp(link, "anon_inode:bpf-map");
}

/* Two stack maps: @stackfold's is the deeper (bt/continuous.bt takes
 * @stackfold_b's stacks 126 deep), put first.  Two of one depth cannot
 * be told apart: refused. */
static int pair_stacks(struct mapsrc *ms, struct sf_err *err)
{
	uint32_t *v = ms->value_size;
	ms->per_buffer = ms->fd[MAPSRC_STACK_B] >= 0;
	if (!ms->per_buffer)
		return 0;
	if (v[MAPSRC_STACK] == v[MAPSRC_STACK_B])
		return sf_err_set(err, ENOTSUP, "two stack maps of %u-byte values "
				  "(which buffer's is which?)", v[MAPSRC_STACK]);
	if (v[MAPSRC_STACK] < v[MAPSRC_STACK_B]) {
		int fd = ms->fd[MAPSRC_STACK];
		uint32_t vs = v[MAPSRC_STACK];
		ms->fd[MAPSRC_STACK] = ms->fd[MAPSRC_STACK_B];
		v[MAPSRC_STACK] = v[MAPSRC_STACK_B];
		ms->fd[MAPSRC_STACK_B] = fd;
		v[MAPSRC_STACK_B] = vs;
	}
	return 0;
}

static int take_maps(struct mapsrc *ms, int pidfd, const struct mapsrc_layout *lay,
		     struct sf_err *err)
{
	char dir[32];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", ms->pid);
	DIR *d = opendir(dir);
	if (!d)
		return sf_err_set(err, errno, "%s: %s", dir, strerror(errno));
	int ret = 0;
	struct dirent *de;
	while (!ret && (de = readdir(d))) {
		char *end;
		long n = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || !is_map_link(ms->pid, n))
			continue;
		ret = consider(ms, pidfd, (int)n, lay, err);
	}
	closedir(d);
	for (int m = 0; !ret && m < MAPSRC_NMAPS; m++)
		if (ms->fd[m] < 0 && m != MAPSRC_STACK_B)
			ret = sf_err_set(err, ENOTSUP, "no map %s in bpftrace "
					 "(another program, or a map renamed)",
					 wants[m].name);
	return ret ? ret : pair_stacks(ms, err);
}

static int alloc_bufs(struct mapsrc *ms, struct sf_err *err)
{
	ms->stk[0].depth = ms->value_size[MAPSRC_STACK] / 8;
	ms->stk[1].depth = ms->value_size[MAPSRC_STACK_B] / 8;
	for (int s = 0; s < 2; s++)
		ms->stk[s].ids.valsz = 2 * sizeof(uint32_t);
	ms->batch = BATCH;
	ms->keys = malloc(ms->batch * ms->key_size);
	ms->vals = malloc(ms->batch * 8 * (size_t)ms->ncpu);
	/* the deeper map is stk[0] */
	ms->frames = calloc(2 * (size_t)ms->stk[0].depth, sizeof(*ms->frames));
	if (!ms->keys || !ms->vals || !ms->frames)
		return sf_err_set(err, ENOMEM, "out of memory");
	return 0;
}

int mapsrc_open(struct mapsrc *ms, int pid, const struct mapsrc_layout *lay,
		struct sf_err *err)
{
	memset(ms, 0, sizeof(*ms));
	for (int m = 0; m < MAPSRC_NMAPS; m++)
		ms->fd[m] = -1;
	ms->pid = pid;
	ms->key_size = lay->key_size;
	ms->ncpu = libbpf_num_possible_cpus();
	if (ms->ncpu <= 0)
		return sf_err_set(err, ENOTSUP, "cannot count possible CPUs");
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return sf_err_set(err, errno, "pidfd_open %d: %s", pid, strerror(errno));
	int ret = take_maps(ms, pidfd, lay, err);
	close(pidfd);
	if (!ret && lay->key_size != KEY_SIZE_017)
		ret = sf_err_set(err, ENOTSUP, "no reader for %u-byte keys",
				 lay->key_size);
	if (!ret)
		ret = alloc_bufs(ms, err);
	if (ret)
		mapsrc_close(ms);
	return ret;
}

void mapsrc_close(struct mapsrc *ms)
{
	/* fd 0 is a zeroed struct's, never one taken (stdin is open) */
	for (int m = 0; m < MAPSRC_NMAPS; m++)
		if (ms->fd[m] > 0)
			close(ms->fd[m]);
	for (int s = 0; s < 2; s++) {
		u64map_release(&ms->stk[s].ids);
		free(ms->stk[s].ips);
	}
	free(ms->ids);
	free(ms->keys);
	free(ms->vals);
	free(ms->frames);
	memset(ms, 0, sizeof(*ms));
	for (int m = 0; m < MAPSRC_NMAPS; m++)
		ms->fd[m] = -1;
}

/* ---- reading ---------------------------------------------------------- */

static int get_u64(struct mapsrc *ms, int m, uint64_t *v)
{
	uint64_t key = 0;
	*v = 0;
	if (bpf_map_lookup_elem(ms->fd[m], &key, v))
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

static int set_u64(struct mapsrc *ms, int m, uint64_t v)
{
	uint64_t key = 0;
	return bpf_map_update_elem(ms->fd[m], &key, &v, BPF_ANY) ? -errno : 0;
}

int mapsrc_set_reader(struct mapsrc *ms, bool on, struct sf_err *err)
{
	int ret = set_u64(ms, MAPSRC_SRC, on);
	return ret ? sf_err_set(err, -ret, "cannot set %s: %s",
				wants[MAPSRC_SRC].name, strerror(-ret)) : 0;
}

/* The per-CPU total of map m (an array of one), zeroed unless peek. */
static int take_total(struct mapsrc *ms, int m, bool peek, uint64_t *total)
{
	uint32_t key = 0;
	uint64_t *v = (uint64_t *)ms->vals;
	*total = 0;
	if (bpf_map_lookup_elem(ms->fd[m], &key, v))
		return -errno;
	for (int c = 0; c < ms->ncpu; c++)
		*total += v[c];
	if (peek)
		return 0;
	memset(v, 0, 8 * (size_t)ms->ncpu);
	return bpf_map_update_elem(ms->fd[m], &key, v, BPF_ANY) ? -errno : 0;
}

/* Wait for BPF programs that may still write the retired map: they run
 * under RCU, which MEMBARRIER_CMD_GLOBAL waits out. */
static void barrier(struct mapsrc *ms, struct mapsrc_window *w)
{
	if (!ms->no_membarrier &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	ms->no_membarrier = true;
	w->slept = true;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

/* The stack of id in stack map fd (its frames leaf first) from the cache
 * st, looked up in the map when new.  false when the id failed (counted
 * by the caller). */
static bool stack_of(struct mapsrc_stacks *st, int fd, int64_t id,
		     const uint64_t **ips, uint32_t *n, struct mapsrc_window *w)
{
	if (id < 0 || id > UINT32_MAX)
		return false;
	bool found;
	uint32_t *slot = u64map_slot(&st->ids, (uint64_t)id + 1, &found);
	if (!slot)
		return false;
	if (!found) {
		slot[0] = 0;
		slot[1] = UINT32_MAX;	/* failed, until read below */
		if (sf_grow((void **)&st->ips, &st->cap, st->nips + st->depth,
			    sizeof(*st->ips)))
			return false;
		uint32_t key = (uint32_t)id;
		uint64_t *dst = st->ips + st->nips;
		w->stack_lookups++;
		if (bpf_map_lookup_elem(fd, &key, dst))
			return false;	/* remembered as failed */
		uint32_t k = 0;
		while (k < st->depth && dst[k])
			k++;
		slot = u64map_slot(&st->ids, (uint64_t)id + 1, &found);
		slot[0] = (uint32_t)st->nips;
		slot[1] = k;
		st->nips += k;
	}
	if (slot[1] == UINT32_MAX)
		return false;
	*ips = st->ips + slot[0];
	*n = slot[1];
	return true;
}

/* Empty stack map s (its buffer's window read, its programs done) and
 * forget its cache: an id may name another stack from now on.  The ids
 * are listed first: a deleted key makes the next get_next_key start over. */
static int clear_stacks(struct mapsrc *ms, int s, struct mapsrc_window *w)
{
	int fd = ms->fd[s ? MAPSRC_STACK_B : MAPSRC_STACK];
	struct mapsrc_stacks *st = &ms->stk[s];
	size_t n = 0;
	uint32_t key, *prev = NULL;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		if (sf_grow((void **)&ms->ids, &ms->ids_cap, n + 1, sizeof(*ms->ids)))
			return -ENOMEM;
		ms->ids[n++] = key;
		prev = &ms->ids[n - 1];
	}
	u64map_release(&st->ids);
	st->ids.valsz = 2 * sizeof(uint32_t);
	st->nips = 0;
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_delete_elem(fd, &ms->ids[i]) && errno != ENOENT)
			return -errno;
		w->stacks_cleared++;
	}
	return 0;
}

/* frames from ips (leaf first), appended root first */
static size_t push_frames(struct bt_frame *f, const uint64_t *ips, uint32_t n,
			  bool kernel)
{
	for (uint32_t i = 0; i < n; i++)
		f[i] = (struct bt_frame){ .kind = BT_FRAME_ADDR, .kernel = kernel,
					  .has_addr = true, .addr = ips[n - 1 - i] };
	return n;
}

static uint64_t ld64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* One side's stack: id as bpftrace stores it; -EFAULT (no kernel stack for
 * a user-mode sample) is no error, as bpftrace does not report it. */
static size_t side(struct mapsrc *ms, int s, int64_t id, bool kernel,
		   struct bt_frame *f, bool *limit, struct mapsrc_window *w)
{
	const uint64_t *ips;
	uint32_t n;
	int fd = ms->fd[s ? MAPSRC_STACK_B : MAPSRC_STACK];
	if (!stack_of(&ms->stk[s], fd, id, &ips, &n, w)) {
		if (id != -EFAULT)
			w->stackid_errors++;
		return 0;
	}
	*limit |= n == BT_STACK_LIMIT_DEFAULT || n == BT_STACK_LIMIT_MAX ||
		  n == ms->stk[s].depth;
	return push_frames(f, ips, n, kernel);
}

static int one_entry(struct mapsrc *ms, int map, const unsigned char *k,
		     const uint64_t *v, mapsrc_record_fn fn, void *ctx,
		     struct mapsrc_window *w)
{
	uint64_t count = 0;
	for (int c = 0; c < ms->ncpu; c++)
		count += v[c];
	uint64_t key = ld64(k + K_KEY);
	const char *comm = (const char *)k + K_COMM;
	size_t clen = strnlen(comm, COMM_LEN);
	bool limit = false;
	int s = ms->per_buffer && map == MAPSRC_MAIN_B;
	size_t nu = side(ms, s, (int32_t)(uint32_t)ld64(k + K_USTACK), false,
			 ms->frames, &limit, w);
	size_t nk = side(ms, s, (int64_t)ld64(k + K_KSTACK), true, ms->frames + nu,
			 &limit, w);
	const char *name = wants[map].name;
	struct bt_record r = {
		.map = name, .map_len = strlen(name),
		.has_pid = true, .has_tid = true,
		.pid = protocol_pid_of(key), .image = protocol_image_of(key),
		.tid = (uint32_t)ld64(k + K_TID),
		.comm = comm, .comm_len = clen,
		.frames = ms->frames, .nframes = nu + nk, .nuser = nu, .nkernel = nk,
		.had_stack = true, .maybe_truncated = limit, .count = count,
	};
	w->entries++;
	w->sum += count;
	return fn(ctx, &r);
}

/* Every entry of map m, deleted unless peek. */
static int take_entries(struct mapsrc *ms, int m, bool peek, mapsrc_record_fn fn,
			void *ctx, struct mapsrc_window *w, struct sf_err *err)
{
	uint64_t token = 0;
	bool first = true;
	size_t vw = 8 * (size_t)ms->ncpu;
	for (;;) {
		uint32_t n = (uint32_t)ms->batch;
		int r = peek ? bpf_map_lookup_batch(ms->fd[m], first ? NULL : &token,
						    &token, ms->keys, ms->vals, &n, NULL)
			     : bpf_map_lookup_and_delete_batch(ms->fd[m],
						first ? NULL : &token, &token,
						ms->keys, ms->vals, &n, NULL);
		int e = r ? errno : 0;
		if (r && e != ENOENT)
			return sf_err_set(err, e, "batch read of %s: %s",
					  wants[m].name, strerror(e));
		first = false;
		for (uint32_t i = 0; i < n; i++) {
			int ret = one_entry(ms, m, ms->keys + i * ms->key_size,
					    (const uint64_t *)(ms->vals + i * vw),
					    fn, ctx, w);
			if (ret < 0)
				return ret;
		}
		if (e == ENOENT)
			return 0;
	}
}

int mapsrc_read(struct mapsrc *ms, bool peek, mapsrc_record_fn fn, void *ctx,
		struct mapsrc_window *w, struct sf_err *err)
{
	uint64_t live;
	memset(w, 0, sizeof(*w));
	int ret = get_u64(ms, MAPSRC_BUF, &live);
	if (ret)
		return sf_err_set(err, -ret, "cannot read %s: %s",
				  wants[MAPSRC_BUF].name, strerror(-ret));
	/* "@stackfold_buf == 0" writes @stackfold */
	int map = live ? MAPSRC_MAIN_B : MAPSRC_MAIN;
	if (!peek) {
		if ((ret = set_u64(ms, MAPSRC_BUF, !live)))
			return sf_err_set(err, -ret, "cannot flip %s: %s",
					  wants[MAPSRC_BUF].name, strerror(-ret));
		barrier(ms, w);
	}
	w->map = map;
	int tm = map == MAPSRC_MAIN ? MAPSRC_TOTAL : MAPSRC_TOTAL_B;
	ret = take_entries(ms, map, peek, fn, ctx, w, err);
	if (ret)
		return ret;
	if ((ret = take_total(ms, tm, peek, &w->total)))
		return sf_err_set(err, -ret, "total %s: %s", wants[tm].name,
				  strerror(-ret));
	if (!peek && ms->per_buffer &&
	    (ret = clear_stacks(ms, map == MAPSRC_MAIN_B, w)))
		return sf_err_set(err, -ret, "emptying %s's stack map: %s",
				  wants[map].name, strerror(-ret));
	return 0;
}
