/* child.c - see child.h. */
#include "capture/child.h"
#include "capture/linereader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/protocol.h"
#include "base/procfs.h"
#include "base/util.h"

static bool named(const char *path, const char *name)
{
	const char *b = strrchr(path, '/');
	return strcmp(b ? b + 1 : path, name) == 0;
}

/* Read fd to end of file or n - 1 bytes into buf, NUL-terminated, giving
 * up after a silence of timeout_ms. */
static size_t read_some(int fd, char *buf, size_t n, int timeout_ms)
{
	size_t len = 0;
	while (len < n - 1) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int r = poll(&pf, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t k = read(fd, buf + len, n - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	buf[len] = 0;
	return len;
}

int bt_child_version(char *const *argv, char *buf, size_t n)
{
	size_t i = 0;
	if (!argv[0] || n < 2)
		return -1;
	if (named(argv[0], "env"))
		for (i = 1; argv[i] && (strchr(argv[i], '=') || argv[i][0] == '-'); i++)
			;
	if (!argv[i] || !named(argv[i], "bpftrace"))
		return -1;
	int fd[2];
	if (pipe2(fd, O_CLOEXEC))
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *av[] = { argv[i], (char *)"--version", NULL };
	pid_t pid;
	int r = posix_spawnp(&pid, argv[i], &fa, NULL, av, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	size_t len = r == 0 ? read_some(fd[0], buf, n, 5000) : 0;
	close(fd[0]);
	if (r == 0) {
		kill(pid, SIGKILL);	/* done or silent: it has nothing more */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	buf[strcspn(buf, "\n")] = 0;
	return len && strncmp(buf, "bpftrace", 8) == 0 ? 0 : -1;
}

bool bpftrace_noise(const char *s, size_t len)
{
	return memmem(s, len, "RLIMIT_MEMLOCK", 14) != NULL;
}

/* In the child, signals blocked (child_spawn): the parent's handlers are
 * reset before they are unblocked, so a stop sent at once (a watched pid
 * already gone) ends the child instead of landing in the parent's handler,
 * copied with its memory, where it was lost and the capture never ended. */
static void child_exec(char **argv, int out, int err, pid_t parent,
		       const sigset_t *mask)
{
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);	/* the parent died before PDEATHSIG was set */
	dup2(out, 1);
	dup2(err, 2);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	execvp(argv[0], argv);
	fprintf(stderr, "cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* bt_child_start()'s spawn: the pid, or -1 with errno */
static pid_t child_spawn(char **argv, int *out_fd, int *err_fd)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC))
		return -1;
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	sigset_t all, mask;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &mask);
	pid_t parent = getpid(), pid = fork();
	if (pid == 0)
		child_exec(argv, po[1], pe[1], parent, &mask);
	int e = errno;
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (pid < 0) {
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		errno = e;
		return -1;
	}
	/* here too, as the child does: a kill of the group right after the
	 * fork must not find no group (ESRCH) and leave the child running */
	setpgid(pid, pid);
	close(po[1]);
	close(pe[1]);
	fcntl(po[0], F_SETPIPE_SZ, 1 << 20);	/* best effort: fewer wakeups */
	*out_fd = po[0];
	*err_fd = pe[0];
	return pid;
}

/* Lines of a pipe to fn, as bt_child_read() says; overlong: what fn gets
 * for a line past LINEREADER_MAX_LINE. */
static int pipebuf_read(struct pipebuf *pb, const char *overlong,
			bt_line_fn fn, void *ctx)
{
	if (pb->len + 65536 > pb->cap &&
	    sf_grow((void **)&pb->buf, &pb->cap, pb->len + 65536, 1))
		return -ENOMEM;
	ssize_t n = read(pb->fd, pb->buf + pb->len, pb->cap - pb->len);
	if (n <= 0) {
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return 0;
		pb->eof = true;
		int ret = pb->skipping ? fn(ctx, overlong, strlen(overlong)) :
			  pb->len ? fn(ctx, pb->buf, pb->len) : 0;
		pb->len = 0;
		pb->skipping = false;
		return ret;
	}
	sf_nul_to_q(pb->buf + pb->len, (size_t)n);	/* as linereader.h */
	pb->len += (size_t)n;
	size_t start = 0;
	char *nl;
	while ((nl = memchr(pb->buf + start, '\n', pb->len - start))) {
		size_t end = (size_t)(nl - pb->buf);
		int ret = pb->skipping ? fn(ctx, overlong, strlen(overlong)) :
			  fn(ctx, pb->buf + start, end - start);
		if (ret)
			return ret;
		pb->skipping = false;
		start = end + 1;
	}
	/* a line past the limit is dropped as it comes (memory stays
	 * bounded), and reported once it ends */
	if (pb->skipping || pb->len - start >= LINEREADER_MAX_LINE) {
		pb->skipping = true;
		start = pb->len;
	}
	memmove(pb->buf, pb->buf + start, pb->len - start);
	pb->len -= start;
	return 0;
}

bool stop_clock_safe(const struct stop_clock *c, uint64_t now)
{
	const uint64_t s = 1000000000ULL;
	if (!c->period_ns || !c->attached_ns)
		return true;
	uint64_t period = c->period_ns, el = now - c->attached_ns;
	if (now - c->wanted_ns > 2 * period + 2 * s &&
	    (!c->in_print || now - c->out_ns > s || now - c->wanted_ns > 60 * s))
		return true;
	/* a print under way (its entries came, not its closing line), even
	 * when "#attached" was read late and el lags */
	if (c->in_print)
		return false;
	uint64_t due = el / period, phase = el % period;
	if (c->flushes < due)
		return false;	/* a flush is in progress */
	return period <= s || phase + s / 2 < period;
}

int bt_child_start(struct bt_child *b, char **argv)
{
	bt_child_close(b);
	b->clock = (struct stop_clock){ .period_ns = b->clock.period_ns };
	b->stop_wanted = b->stop_sent = b->killed = false;
	b->stop_sent_ns = b->nudged_ns = 0;
	b->pid = child_spawn(argv, &b->out.fd, &b->err.fd);
	return b->pid < 0 ? -1 : 0;
}

void bt_child_stop(struct bt_child *b)
{
	if (b->stop_sent)
		return;
	uint64_t now = sf_clock_ns(CLOCK_MONOTONIC);
	if (!b->stop_wanted)
		b->clock.wanted_ns = now;
	b->stop_wanted = true;
	if (!stop_clock_safe(&b->clock, now))
		return;
	kill(b->pid, SIGINT);
	b->stop_sent = true;
	b->stop_sent_ns = now;
}

int bt_child_read(struct bt_child *b, bool err, bt_line_fn fn, void *ctx)
{
	if (err)
		return pipebuf_read(&b->err, "(a line past 16 MiB, left out)",
				    fn, ctx);
	b->clock.out_ns = sf_clock_ns(CLOCK_MONOTONIC);
	return pipebuf_read(&b->out, PROTOCOL_OVERLONG, fn, ctx);
}

void bt_child_nudge(struct bt_child *b, uint64_t now)
{
	const uint64_t every = BT_NUDGE_MS * 1000000ULL;
	uint64_t last = b->nudged_ns > b->stop_sent_ns ? b->nudged_ns :
							 b->stop_sent_ns;
	if (!b->stop_sent || b->killed || now <= last || now - last < every)
		return;
	kill(b->pid, SIGTERM);
	b->nudged_ns = now;
}

bool bt_child_done(const struct bt_child *b)
{
	return b->out.eof && b->err.eof;
}

void bt_child_where(const struct bt_child *b, char *buf, size_t n)
{
	char path[64];
	size_t off = 0;
	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)b->pid);
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d)) && off + 1 < n;) {
		if (e->d_name[0] == '.')
			continue;
		char *w = NULL;
		size_t len;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/wchan",
			 (int)b->pid, e->d_name);
		if (!procfs_read_file(path, &w, &len) && len && strcmp(w, "0"))
			off += (size_t)snprintf(buf + off, n - off, "%s%.60s",
						off ? " " : "", w);
		free(w);
		if (off >= n)
			off = n - 1;
	}
	if (d)
		closedir(d);
}

void bt_child_kill(struct bt_child *b)
{
	kill(-b->pid, SIGKILL);
	b->killed = true;
}

bool bt_child_kill_hung(struct bt_child *b, uint64_t now, char *where,
			size_t n)
{
	if (!b->stop_sent || b->killed)
		return false;
	uint64_t last = b->clock.out_ns > b->stop_sent_ns ? b->clock.out_ns :
							      b->stop_sent_ns;
	/* (now may have been read before the stop was sent) */
	if (now <= last || now - last <= BT_STOP_GRACE_S * 1000000000ULL)
		return false;
	bt_child_where(b, where, n);
	bt_child_kill(b);	/* its pipes close */
	return true;
}

int bt_child_wait(struct bt_child *b)
{
	const uint64_t grace = BT_STOP_GRACE_S * 1000000000ULL;
	uint64_t t0 = sf_clock_ns(CLOCK_MONOTONIC);
	int status = 0, ms = 1;
	for (;;) {
		pid_t r = waitpid(b->pid, &status, WNOHANG);
		if (r == b->pid || (r < 0 && errno != EINTR))
			return status;
		if (!b->killed && sf_clock_ns(CLOCK_MONOTONIC) - t0 > grace)
			bt_child_kill(b);
		poll(NULL, 0, ms);	/* it normally exits in a few ms */
		ms = ms < 64 ? ms * 2 : 64;
	}
}

static void pipebuf_close(struct pipebuf *pb)
{
	if (pb->fd >= 0)
		close(pb->fd);
	pb->fd = -1;
	pb->len = 0;
	pb->eof = pb->skipping = false;
}

void bt_child_close(struct bt_child *b)
{
	pipebuf_close(&b->out);
	pipebuf_close(&b->err);
}

void bt_child_release(struct bt_child *b)
{
	bt_child_close(b);
	free(b->out.buf);
	free(b->err.buf);
	b->out.buf = b->err.buf = NULL;
	b->out.cap = b->err.cap = 0;
}
