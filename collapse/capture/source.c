/*
 * source.c - the table of capture sources and the calls that reach a
 * source's operations (source.h).  A new source is its row here.
 */
#include <errno.h>
#include <string.h>

#include "capture/source.h"

static const struct capsrc_ops *const sources[] = {
	&capsrc_text_ops,
	&capsrc_maps_ops,
};

int capsrc_init(struct capsrc *s, const char *name,
		const struct capsrc_sink *sink)
{
	memset(s, 0, sizeof(*s));
	s->bt.out.fd = s->bt.err.fd = -1;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (!strcmp(sources[i]->name, name)) {
			s->ops = sources[i];
			s->sink = *sink;
			return s->ops->init ? s->ops->init(s) : 0;
		}
	return -EINVAL;
}

void capsrc_release(struct capsrc *s)
{
	if (s->ops && s->ops->detach)
		s->ops->detach(s);
	if (s->ops && s->ops->release)
		s->ops->release(s);
	bt_child_release(&s->bt);
}

int capsrc_read(struct capsrc *s, const struct pollfd pf[2], bool err_first)
{
	if (s->ops->read)
		return s->ops->read(s, pf, err_first);
	return capsrc_text_read(s, pf, err_first, s->sink.line, s->sink.ctx);
}

int capsrc_attached(struct capsrc *s, struct sf_err *err)
{
	return s->ops->attached ? s->ops->attached(s, err) : 0;
}

int capsrc_mark(struct capsrc *s)
{
	return s->ops->mark ? s->ops->mark(s) : 0;
}

void capsrc_tick(struct capsrc *s, uint64_t now, bool window_open)
{
	if (s->ops->tick)
		s->ops->tick(s, now, window_open);
}

/* Reaped, or about to be abandoned: the source lets go of the run. */
int capsrc_wait(struct capsrc *s)
{
	int status = bt_child_wait(&s->bt);
	if (s->ops->detach)
		s->ops->detach(s);
	s->records = false;
	return status;
}
