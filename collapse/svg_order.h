/*
 * svg_order.h - the line order the flame graph layout needs.
 *
 * The layout merges a frame across consecutive lines only, so all lines
 * through one frame must be adjacent.  The fold's bytewise order breaks
 * that when a frame name is a prefix of a sibling's name and the sibling
 * continues with a byte below ';' (digits, '.', ':', '(', ' ', '-'):
 *   a;f  <  a;f.cold;x  <  a;f0  <  a;f;g      (f is split in two)
 * which real profiles hit all the time (foo/foo.cold, comm-1/comm-12).
 * FlameGraph draws such a frame twice; we re-order instead: frame-wise
 * order is bytewise order with ';' below every byte.
 */
#ifndef SF_SVG_ORDER_H
#define SF_SVG_ORDER_H

#include <stdint.h>
#include <string.h>

#include "fold.h"

/* Unknown entry of svg_order.cp */
#define SVG_CP_UNKNOWN UINT32_MAX

struct svg_order {
	uint32_t *order;	/* line indexes; NULL: the fold's order */
	uint32_t *cp;		/* cp[i]: common prefix length of lines i-1
				 * and i in that order (SVG_CP_UNKNOWN where
				 * lines moved), so the layout need not
				 * compare them again */
};

/* Frame-wise order of f's lines.  0 or -ENOMEM.  Linear in the bytes the
 * lines share with their neighbours plus those of the lines that need
 * moving, not a full sort. */
int svg_order_build(struct svg_order *o, const struct fold *f);
void svg_order_release(struct svg_order *o);

/* Length of the common prefix of a and b (n = the shorter length). */
static inline uint32_t svg_common_prefix(const char *a, const char *b,
					 uint32_t n)
{
	uint32_t i = 0;
	while (i + 8 <= n) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return i + (uint32_t)(__builtin_ctzll(x ^ y) / 8);
#else
			return i + (uint32_t)(__builtin_clzll(x ^ y) / 8);
#endif
		}
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* Order of byte i of s in frame-wise comparison: the end below ';' below
 * every other byte. */
static inline int svg_fkey(const char *s, uint32_t len, uint32_t i)
{
	if (i >= len)
		return -1;
	return s[i] == ';' ? 0 : (unsigned char)s[i] + 1;
}

#endif
