/* svg_text.c - see svg_text.h. */
#include "output/svg_text.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

void svg_buf_init(struct svg_buf *b, FILE *out)
{
	b->out = out;
	b->len = 0;
	b->failed = 0;
}

int svg_buf_flush(struct svg_buf *b)
{
	if (b->len && fwrite(b->b, 1, b->len, b->out) != b->len)
		b->failed = 1;
	b->len = 0;
	return b->failed ? -EIO : 0;
}

void svg_put(struct svg_buf *b, const char *s, size_t n)
{
	while (n) {
		if (b->len == SVG_BUF_SIZE)
			svg_buf_flush(b);
		size_t k = SVG_BUF_SIZE - b->len;
		if (k > n)
			k = n;
		memcpy(b->b + b->len, s, k);
		b->len += k;
		s += k;
		n -= k;
	}
}

void svg_puts(struct svg_buf *b, const char *s)
{
	svg_put(b, s, strlen(s));
}

void svg_put_u64(struct svg_buf *b, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	svg_put(b, tmp + i, sizeof(tmp) - i);
}

void svg_put_u64_commas(struct svg_buf *b, uint64_t v)
{
	char tmp[32];
	size_t i = sizeof(tmp);
	unsigned digits = 0;
	do {
		if (digits && digits % 3 == 0)
			tmp[--i] = ',';
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
		digits++;
	} while (v);
	svg_put(b, tmp + i, sizeof(tmp) - i);
}

void svg_put_fixed(struct svg_buf *b, int64_t v, unsigned decimals)
{
	uint64_t p = 1, u;
	for (unsigned i = 0; i < decimals; i++)
		p *= 10;
	if (v < 0) {
		svg_putc(b, '-');
		u = (uint64_t)(-(v + 1)) + 1;	/* no overflow at INT64_MIN */
	} else {
		u = (uint64_t)v;
	}
	svg_put_u64(b, u / p);
	if (!decimals)
		return;
	svg_putc(b, '.');
	uint64_t frac = u % p;
	for (uint64_t q = p / 10; q; q /= 10) {
		svg_putc(b, (char)('0' + frac / q));
		frac %= q;
	}
}

static bool is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/* Length of the valid UTF-8 sequence at s (2..4 bytes), or 0 when the
 * bytes there are not one.  Rejects overlong forms, surrogates, code
 * points above U+10FFFF and U+FFFE/U+FFFF, which XML 1.0 forbids. */
static size_t utf8_valid(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	if (c >= 0xc2 && c <= 0xdf)
		return len >= 2 && is_cont(s[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (len < 3 || !is_cont(s[1]) || !is_cont(s[2]))
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		if (c == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (len < 4 || !is_cont(s[1]) || !is_cont(s[2]) ||
		    !is_cont(s[3]))
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* Bytes that need more than a copy: markup, controls, and non-ASCII. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '&' && c != '<' && c != '>' &&
	       c != '"' && c != '\'';
}

/* Length in input bytes of the character at s (an invalid byte is a
 * character of its own). */
static size_t char_len(const unsigned char *s, size_t len)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = utf8_valid(s, len);
	return n ? n : 1;
}

size_t svg_text_chars(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	for (size_t i = 0; i < len; n++)
		i += char_len(p + i, len - i);
	return n;
}

/* One character that is not plain ASCII; returns the bytes consumed. */
static size_t put_special(struct svg_buf *b, const unsigned char *s,
			  size_t len)
{
	switch (s[0]) {
	case '&': svg_put(b, "&amp;", 5); return 1;
	case '<': svg_put(b, "&lt;", 4); return 1;
	case '>': svg_put(b, "&gt;", 4); return 1;
	case '"': svg_put(b, "&quot;", 6); return 1;
	case '\'': svg_put(b, "&#39;", 5); return 1;
	}
	if (s[0] < 0x20) {
		svg_putc(b, '?');
		return 1;
	}
	size_t n = utf8_valid(s, len);
	if (!n) {
		svg_put(b, "\xef\xbf\xbd", 3);	/* U+FFFD */
		return 1;
	}
	svg_put(b, (const char *)s, n);
	return n;
}

/* Bytes of s that hold its first `chars` characters. */
static size_t prefix_bytes(const char *s, size_t len, size_t chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (chars-- && i < len)
		i += char_len(p + i, len - i);
	return i;
}

void svg_put_xml(struct svg_buf *b, const char *s, size_t len,
		 size_t max_chars)
{
	bool cut = false;
	if (max_chars != SIZE_MAX && len > max_chars &&
	    svg_text_chars(s, len) > max_chars) {
		len = prefix_bytes(s, len, max_chars >= 2 ? max_chars - 2 : 0);
		cut = true;
	}
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		size_t run = i;
		while (run < len && plain(p[run]))
			run++;
		svg_put(b, s + i, run - i);
		i = run;
		if (i < len)
			i += put_special(b, p + i, len - i);
	}
	if (cut)
		svg_put(b, "..", 2);
}

void svg_put_js_string(struct svg_buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		if (c >= 0x80) {
			size_t n = utf8_valid(p + i, len - i);
			if (n)
				svg_put(b, s + i, n);
			else
				svg_put(b, "\\ufffd", 6);
			i += n ? n : 1;
			continue;
		}
		if (c < 0x20 || c == '"' || c == '\\' || c == '<' ||
		    c == '>' || c == '&' || c == '\'') {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4],
				      hex[c & 15] };
			svg_put(b, e, 6);
		} else {
			svg_putc(b, (char)c);
		}
		i++;
	}
}
