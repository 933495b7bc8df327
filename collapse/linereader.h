/*
 * linereader.h - fast line reader over a file descriptor: reads large
 * blocks and splits on '\n' with memchr.  Memory is bounded by the longest
 * line, not by the input size.  A final line without '\n' is returned too.
 */
#ifndef SF_LINEREADER_H
#define SF_LINEREADER_H

#include <stdbool.h>
#include <stddef.h>

struct linereader {
	int fd;			/* not owned */
	char *buf;
	size_t cap, start, end;
	bool eof;
};

int lr_init(struct linereader *lr, int fd);	/* 0 or -ENOMEM */
void lr_release(struct linereader *lr);
/* 1 and the line (without '\n', valid until the next call), 0 at end of
 * input, or a negative errno on a read error (EINTR is retried unless
 * *stop is set by a signal handler; pass NULL if unused). */
int lr_next(struct linereader *lr, const char **line, size_t *len,
	    volatile int *stop);

#endif
