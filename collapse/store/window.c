/*
 * window.c - see window.h.
 */
#include "store/window.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/pprof_comments.h"
#include "ingest/pprof_in.h"
#include "model/profile.pb-c.h"


/* Window files bigger than this are refused (memory bound). */
#define WIN_MAX_BYTES (256u << 20)

const char *win_loss_key(int i)
{
	return loss_table[loss_stored((unsigned)i)].key;
}

uint64_t win_stack_id(const char *comm, size_t comm_len,
		      const struct win_frame *f, uint32_t n)
{
	uint64_t h = sf_hash_bytes(comm, comm_len, 0xcbf29ce484222325ULL);
	h = sf_hash_bytes("", 1, h);
	for (uint32_t i = 0; i < n; i++) {
		h = sf_hash_bytes(f[i].s, f[i].len, h);
		h = sf_hash_bytes("", 1, h);
	}
	return h;
}

/* fd's bytes (st_size of them) into *buf, NUL-terminated. */
static int read_all(int fd, size_t size, char **buf)
{
	*buf = malloc(size + 1);
	if (!*buf)
		return -ENOMEM;
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd, *buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EBADMSG;
		got += (size_t)n;
	}
	(*buf)[size] = 0;
	return 0;
}

/* path opened for reading, without following a symlink and without
 * blocking; it must be a regular file of ours (-EPERM) no larger than
 * WIN_MAX_BYTES: DIR may be shared, and another user's file there is no
 * window of this host's (windir.c's rule).  The fd, or a negative errno;
 * *size its size. */
static int open_own(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = -EBADMSG;
	else if (st.st_uid != geteuid())
		ret = -EPERM;
	else if (st.st_size > WIN_MAX_BYTES)
		ret = -EFBIG;
	if (ret) {
		close(fd);
		return ret;
	}
	*size = (size_t)st.st_size;
	return fd;
}

/* path's bytes into *buf, NUL-terminated (open_own()'s rules). */
static int slurp(const char *path, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = open_own(path, len);
	if (fd < 0)
		return fd;
	int ret = read_all(fd, *len, buf);
	close(fd);
	return ret;
}

/* The pprof's fields and comments a store keeps (pprof_comments.h). */
static void take_meta(struct store_window *w, const Perftools__Profiles__Profile *pp)
{
	struct pprof_comments c;
	pprof_comments_parse(&c, pp);
	w->start_ns = (uint64_t)pp->time_nanos;
	w->duration_ns = (uint64_t)pp->duration_nanos;
	if (pp->period > 0)
		w->hz = (uint32_t)((1000000000ULL + (uint64_t)pp->period / 2) /
				   (uint64_t)pp->period);
	w->samples = c.samples;
	for (int i = 0; i < WIN_NLOSS; i++) {
		w->loss[i] = c.loss[loss_stored((unsigned)i)];
		w->losses_unknown |= c.unknown[loss_stored((unsigned)i)];
	}
	if (c.host.s && !w->host[0])
		snprintf(w->host, sizeof(w->host), "%.*s", (int)c.host.len, c.host.s);
	if (c.kernel.s)
		snprintf(w->kernel, sizeof(w->kernel), "%.*s", (int)c.kernel.len,
			 c.kernel.s);
}

/* DIR/STEM.pb.gz, decoded by the one pprof reader (ingest/pprof_in.h). */
static int read_meta(struct store_window *w, const char *path, struct sf_err *err)
{
	size_t size;
	int fd = open_own(path, &size);
	if (fd < 0)
		return fd == -ENOENT ? fd
			: sf_err_set(err, -fd == EBADMSG ? EBADMSG : -fd,
				     "cannot read '%s': %s", path, strerror(-fd));
	Perftools__Profiles__Profile *pp;
	struct sf_err perr = { "" };
	int ret = pprof_load(NULL, 0, fd, &pp, &perr);
	close(fd);
	if (ret == -EINVAL || ret == -EIO)
		return sf_err_set(err, EBADMSG, "'%s' is not a pprof profile", path);
	if (ret)
		return sf_err_set(err, -ret, "cannot read '%s': %s", path, perr.msg);
	take_meta(w, pp);
	pprof_free(pp);
	return 0;
}

static int add_frame(struct store_window *w, const char *s, size_t len)
{
	if (sf_grow((void **)&w->frames, &w->frames_cap, w->nframes + 1,
		    sizeof(*w->frames)))
		return -ENOMEM;
	w->frames[w->nframes++] = (struct win_frame){ s, (uint32_t)len };
	return 0;
}

/* "comm-PID;f1;f2 COUNT": the process frame split at its last '-'. */
static int parse_line(struct store_window *w, char *s, size_t len)
{
	char *sp = memrchr(s, ' ', len), *end;
	if (!sp || sp == s)
		return -EBADMSG;
	errno = 0;
	unsigned long long count = strtoull(sp + 1, &end, 10);
	if (end != s + len || end == sp + 1 || errno || !count)
		return -EBADMSG;
	if (sf_grow((void **)&w->stacks, &w->stacks_cap, w->nstacks + 1,
		    sizeof(*w->stacks)))
		return -ENOMEM;
	struct win_stack *k = &w->stacks[w->nstacks];
	*k = (struct win_stack){ .comm = s, .count = count,
				 .frame0 = (uint32_t)w->nframes };
	size_t plen = strcspn(s, ";");
	if (plen > (size_t)(sp - s))
		plen = (size_t)(sp - s);
	const char *dash = memrchr(s, '-', plen);
	k->comm_len = (uint32_t)plen;
	if (dash && dash + 1 < s + plen && strspn(dash + 1, "0123456789") ==
	    (size_t)(s + plen - dash - 1)) {
		k->comm_len = (uint32_t)(dash - s);
		k->pid = (uint32_t)strtoul(dash + 1, NULL, 10);
	}
	for (char *f = s + plen; f < sp && *f == ';';) {
		char *e = memchr(f + 1, ';', (size_t)(sp - f - 1));
		if (!e)
			e = sp;
		if (add_frame(w, f + 1, (size_t)(e - f - 1)))
			return -ENOMEM;
		f = e;
	}
	k->nframes = (uint32_t)(w->nframes - k->frame0);
	w->total += count;
	w->nstacks++;
	return 0;
}

static int read_folded(struct store_window *w, const char *path, struct sf_err *err)
{
	size_t len;
	int ret = slurp(path, &w->text, &len);
	if (ret)
		return ret == -ENOENT ? ret
			: sf_err_set(err, -ret, "cannot read '%s': %s", path,
				     strerror(-ret));
	size_t lineno = 0;
	for (char *s = w->text, *end = w->text + len; s < end;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		lineno++;
		if (n && (ret = parse_line(w, s, n)))
			return ret == -ENOMEM ? sf_err_set(err, ENOMEM, "out of memory")
				: sf_err_set(err, EBADMSG, "%s:%zu: not a folded "
					     "line (STACK COUNT)", path, lineno);
		s += n + 1;
	}
	/* frames point into text: stack ids once every frame is in place */
	for (size_t i = 0; i < w->nstacks; i++)
		w->stacks[i].stack_id = win_stack_id(w->stacks[i].comm,
						     w->stacks[i].comm_len,
						     w->frames + w->stacks[i].frame0,
						     w->stacks[i].nframes);
	return 0;
}

int store_window_read(struct store_window *w, const char *dir,
		      const char *stem, const char *host_override,
		      struct sf_err *err)
{
	*w = (struct store_window){ 0 };
	char path[4096];
	snprintf(w->stem, sizeof(w->stem), "%s", stem);
	if (host_override)
		snprintf(w->host, sizeof(w->host), "%s", host_override);
	snprintf(path, sizeof(path), "%s/%s.pb.gz", dir, stem);
	int ret = read_meta(w, path, err);
	if (!ret) {
		snprintf(path, sizeof(path), "%s/%s.folded", dir, stem);
		ret = read_folded(w, path, err);
	}
	if (ret == -ENOENT)
		sf_err_set(err, ENOENT, "window %s is gone", stem);
	uint64_t h = sf_hash_bytes(w->host, strlen(w->host) + 1, 0x5f3759df);
	h = sf_hash_bytes(stem, strlen(stem) + 1, h);
	w->id = sf_hash_bytes(&w->start_ns, sizeof(w->start_ns), h);
	return ret;
}

void store_window_release(struct store_window *w)
{
	free(w->text);
	free(w->stacks);
	free(w->frames);
	*w = (struct store_window){ 0 };
}
