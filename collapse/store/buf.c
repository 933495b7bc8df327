/*
 * buf.c - see buf.h.
 */
#include "store/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct buf *b, size_t n)
{
	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	char *d = realloc(b->data, cap);
	if (!d) {
		b->oom = true;
		return false;
	}
	b->data = d;
	b->cap = cap;
	return true;
}

void buf_add(struct buf *b, const void *p, size_t n)
{
	if (n && reserve(b, n)) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
	}
}

void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_uleb(struct buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;
	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	buf_add(b, tmp, n);
}

void buf_u8(struct buf *b, uint8_t v)
{
	buf_add(b, &v, 1);
}

void buf_u32(struct buf *b, uint32_t v)
{
	unsigned char t[4] = { v, v >> 8, v >> 16, v >> 24 };
	buf_add(b, t, 4);
}

void buf_u64(struct buf *b, uint64_t v)
{
	buf_u32(b, (uint32_t)v);
	buf_u32(b, (uint32_t)(v >> 32));
}

void buf_rbstr(struct buf *b, const char *s, size_t n)
{
	buf_uleb(b, n);
	buf_add(b, s, n);
}

void buf_free(struct buf *b)
{
	free(b->data);
	*b = (struct buf){ 0 };
}

bool rb_uleb(struct rbread *r, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return false;
		unsigned char c = *r->p++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

bool rb_u32(struct rbread *r, uint32_t *v)
{
	if (r->end - r->p < 4)
		return false;
	*v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 |
	     (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	return true;
}

bool rb_u64(struct rbread *r, uint64_t *v)
{
	uint32_t lo, hi;
	if (!rb_u32(r, &lo) || !rb_u32(r, &hi))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

bool rb_str(struct rbread *r, const char **s, size_t *n)
{
	uint64_t len;
	if (!rb_uleb(r, &len) || (uint64_t)(r->end - r->p) < len)
		return false;
	*s = (const char *)r->p;
	*n = (size_t)len;
	r->p += len;
	return true;
}
