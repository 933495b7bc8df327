/* linereader.c - see linereader.h. */
#include "capture/linereader.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINEREADER_BLOCK (1 << 20)

int linereader_init(struct linereader *lr, int fd)
{
	memset(lr, 0, sizeof(*lr));
	lr->fd = fd;
	lr->cap = LINEREADER_BLOCK;
	lr->buf = malloc(lr->cap);
	return lr->buf ? 0 : -ENOMEM;
}

void linereader_release(struct linereader *lr)
{
	free(lr->buf);
	lr->buf = NULL;
}

/* Make room for another block: move the partial line to the front, grow
 * the buffer when the line fills it. */
static int linereader_fill(struct linereader *lr, volatile int *stop)
{
	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (lr->end == lr->cap) {
		char *nb = realloc(lr->buf, lr->cap * 2);
		if (!nb)
			return -ENOMEM;
		lr->buf = nb;
		lr->cap *= 2;
	}
	for (;;) {
		ssize_t n = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end);
		if (n > 0) {
			sf_nul_to_q(lr->buf + lr->end, (size_t)n);
			lr->end += (size_t)n;
			return 0;
		}
		if (n == 0) {
			lr->eof = true;
			return 0;
		}
		if (errno != EINTR || (stop && *stop))
			return -errno;
	}
}

int linereader_peek(struct linereader *lr, size_t want,
		    const unsigned char **p, size_t *n)
{
	if (want > lr->cap)
		want = lr->cap;
	while (!lr->eof && lr->end < want) {
		ssize_t r = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end);
		if (r > 0)
			lr->end += (size_t)r;
		else if (r == 0)
			lr->eof = true;
		else if (errno != EINTR)
			return -errno;
	}
	lr->raw = lr->end;
	*p = (const unsigned char *)lr->buf;
	*n = lr->end;
	return 0;
}

int linereader_next(struct linereader *lr, const char **line, size_t *len,
		    volatile int *stop)
{
	if (lr->raw) {	/* peeked: now as a block read gives them */
		sf_nul_to_q(lr->buf, lr->raw);
		lr->raw = 0;
	}
	for (;;) {
		char *s = lr->buf + lr->start;
		char *nl = memchr(s, '\n', lr->end - lr->start);
		if (nl && lr->skipping) {	/* the long line ends here */
			lr->start += (size_t)(nl - s) + 1;
			lr->skipping = false;
			return 2;
		}
		if (nl) {
			*line = s;
			*len = (size_t)(nl - s);
			lr->start += *len + 1;
			return 1;
		}
		if (lr->eof) {
			if (lr->start == lr->end && !lr->skipping)
				return 0;
			*line = s;
			*len = lr->end - lr->start;
			lr->start = lr->end;
			if (lr->skipping) {
				lr->skipping = false;
				return 2;
			}
			return 1;
		}
		if (lr->end - lr->start >= LINEREADER_MAX_LINE || lr->skipping) {
			lr->skipping = true;	/* drop what it has so far */
			lr->start = lr->end;
		}
		int ret = linereader_fill(lr, stop);
		if (ret)
			return ret;
	}
}
