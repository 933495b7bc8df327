/*
 * src_text.c - the text capture source: bpftrace run as a child
 * (child.h), its stdout and stderr split into lines (the pipes' line
 * splitter, linereader.h's limits) and every line handed to the sink, the
 * capture protocol's meaning left to the front-end (protocol.h).  Its
 * run functions (start, stop, reap) are every source's: each runs
 * bpftrace.
 */
#include <fcntl.h>

#include "capture/source.h"

const struct capsrc_ops capsrc_text_ops = {
	.name = "text",
};

int capsrc_start(struct capsrc *s, char **argv, bool err_nonblock)
{
	if (bt_child_start(&s->bt, argv))
		return -1;
	s->err_nonblock = false;
	if (err_nonblock) {
		int fl = fcntl(s->bt.err.fd, F_GETFL);
		s->err_nonblock = fl >= 0 &&
			fcntl(s->bt.err.fd, F_SETFL, fl | O_NONBLOCK) == 0;
	}
	s->ended = false;
	return 0;
}

int capsrc_pollfds(const struct capsrc *s, struct pollfd pf[2])
{
	pf[0] = (struct pollfd){ s->bt.out.eof ? -1 : s->bt.out.fd, POLLIN, 0 };
	pf[1] = (struct pollfd){ s->bt.err.eof ? -1 : s->bt.err.fd, POLLIN, 0 };
	return 2;
}

int capsrc_text_read(struct capsrc *s, const struct pollfd *pf,
		     bool err_first, bt_line_fn out, void *ctx)
{
	int ret = 0;
	if (err_first && pf[1].revents)
		ret = bt_child_read(&s->bt, true, s->sink.err, s->sink.ctx);
	if (!ret && pf[0].revents)
		ret = bt_child_read(&s->bt, false, out, ctx);
	if (!err_first && !ret && pf[1].revents)
		ret = bt_child_read(&s->bt, true, s->sink.err, s->sink.ctx);
	return ret;
}

int capsrc_drain_err(struct capsrc *s)
{
	return s->bt.err.eof || !s->err_nonblock ? 0 :
	       bt_child_read(&s->bt, true, s->sink.err, s->sink.ctx);
}

void capsrc_stop(struct capsrc *s)
{
	bt_child_stop(&s->bt);
}

bool capsrc_done(const struct capsrc *s)
{
	return bt_child_done(&s->bt);
}

void capsrc_kill(struct capsrc *s)
{
	bt_child_kill(&s->bt);
}

bool capsrc_watchdog(struct capsrc *s, uint64_t now, char *where, size_t n)
{
	bt_child_nudge(&s->bt, now);
	return bt_child_kill_hung(&s->bt, now, where, n);
}

int capsrc_version(char *const *argv, char *buf, size_t n)
{
	return bt_child_version(argv, buf, n);
}
