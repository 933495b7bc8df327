/*
 * buf.h - a growable byte buffer for request and response bodies, with the
 * encoders the stores need (ClickHouse's RowBinary: little-endian
 * integers, LEB128 lengths).
 *
 * A failed allocation sets `oom` and later appends do nothing, so a caller
 * builds a whole body and checks once.  The caller owns data (buf_free()).
 */
#ifndef SF_STORE_BUF_H
#define SF_STORE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;
	size_t len, cap;
	bool oom;
};

void buf_add(struct buf *b, const void *p, size_t n);
void buf_str(struct buf *b, const char *s);	/* without its NUL */
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_uleb(struct buf *b, uint64_t v);
void buf_u8(struct buf *b, uint8_t v);
void buf_u32(struct buf *b, uint32_t v);
void buf_u64(struct buf *b, uint64_t v);
/* RowBinary String: LEB128 length, then the bytes. */
void buf_rbstr(struct buf *b, const char *s, size_t n);
void buf_free(struct buf *b);

/* A reader over RowBinary bytes: each get returns false past the end. */
struct rbread {
	const unsigned char *p, *end;
};
bool rb_uleb(struct rbread *r, uint64_t *v);
bool rb_u32(struct rbread *r, uint32_t *v);
bool rb_u64(struct rbread *r, uint64_t *v);
/* A String: *s points into the input (not NUL-terminated). */
bool rb_str(struct rbread *r, const char **s, size_t *n);

#endif
