/*
 * svg_text.h - the byte-level helpers of the SVG writer: a buffered output
 * sink, XML-safe text (any input bytes in, well-formed XML 1.0 out) and
 * fast number formatting.
 *
 * The writer emits millions of small pieces; going through stdio for each
 * costs more than the layout itself, so everything is appended to one
 * buffer that is flushed with fwrite() when full.
 */
#ifndef SF_SVG_TEXT_H
#define SF_SVG_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SVG_BUF_SIZE (256 * 1024)

struct svg_buf {
	FILE *out;
	size_t len;
	int failed;		/* a fwrite() came up short */
	char b[SVG_BUF_SIZE];
};

void svg_buf_init(struct svg_buf *b, FILE *out);
/* Write what is buffered; 0, or -EIO when any write so far failed. */
int svg_buf_flush(struct svg_buf *b);
void svg_put(struct svg_buf *b, const char *s, size_t n);
void svg_puts(struct svg_buf *b, const char *s);
static inline void svg_putc(struct svg_buf *b, char c)
{
	if (b->len == SVG_BUF_SIZE)
		svg_buf_flush(b);
	b->b[b->len++] = c;
}

/* Decimal; with thousands separators (1,234,567) for counts in titles. */
void svg_put_u64(struct svg_buf *b, uint64_t v);
void svg_put_u64_commas(struct svg_buf *b, uint64_t v);
/* v / 10^decimals as a fixed-point decimal: (1234, 1) -> "123.4",
 * (-5, 2) -> "-0.05". */
void svg_put_fixed(struct svg_buf *b, int64_t v, unsigned decimals);

/*
 * Characters of s[0..len) as svg_put_xml() will write them: every valid
 * UTF-8 sequence counts one, every byte that is not part of one counts one
 * (it becomes U+FFFD).
 */
size_t svg_text_chars(const char *s, size_t len);
/* s[0..len) as XML character data or attribute value: & < > " ' escaped,
 * control bytes written as '?', invalid UTF-8 and the non-characters
 * U+FFFE/U+FFFF as U+FFFD.  When the text has more than max_chars
 * characters, only the first max_chars - 2 are written, followed by "..",
 * so a cut never splits a UTF-8 sequence.  SIZE_MAX: no limit. */
void svg_put_xml(struct svg_buf *b, const char *s, size_t len,
		 size_t max_chars);
/* s as the body of a JavaScript string literal safe inside a <script>
 * CDATA section (", \, <, >, & and controls as \uXXXX escapes). */
void svg_put_js_string(struct svg_buf *b, const char *s, size_t len);

#endif
