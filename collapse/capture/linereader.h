/*
 * linereader.h - fast line reader over a file descriptor: reads large
 * blocks and splits on '\n' with memchr.  Memory is bounded by the longest
 * line, itself bounded by LINEREADER_MAX_LINE (a longer one is skipped, never
 * held: a binary file or /dev/zero as input costs no more), not by the
 * input size.  A final line without '\n' is returned too.  A NUL byte
 * reads as '?' (names are C strings further on): one memchr() a block
 * read, not one a line.
 */
#ifndef SF_LINEREADER_H
#define SF_LINEREADER_H

#include <stdbool.h>
#include <stddef.h>

/* Longer lines are skipped: bpftrace's are short, and a folded line of
 * 127 frames of long C++ names is under 1 MiB. */
#define LINEREADER_MAX_LINE (16u << 20)

struct linereader {
	int fd;			/* not owned */
	char *buf;
	size_t cap, start, end;
	bool eof;
	bool skipping;		/* in a line past LINEREADER_MAX_LINE */
	size_t raw;		/* bytes linereader_peek() read, NULs not yet '?' */
};

int linereader_init(struct linereader *lr, int fd);	/* 0 or -ENOMEM */
void linereader_release(struct linereader *lr);
/* 1 and the line (without '\n', valid until the next call), 2 for a line
 * longer than LINEREADER_MAX_LINE (skipped: *line and *len not set), 0 at end of
 * input, or a negative errno on a read error (EINTR is retried unless
 * *stop is set by a signal handler; pass NULL if unused). */
int linereader_next(struct linereader *lr, const char **line, size_t *len,
		    volatile int *stop);
/* Before the first linereader_next(): read until want bytes (at most a
 * block) are buffered or the input ends, and show them as read (NULs too),
 * to tell the input's format.  Nothing is consumed.  0 or a negative
 * errno. */
int linereader_peek(struct linereader *lr, size_t want,
		    const unsigned char **p, size_t *n);

#endif
