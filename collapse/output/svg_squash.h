/*
 * svg_squash.h - a stack as the flame graph draws it when frame-pointer
 * walks went wrong: a walk through code built without frame pointers
 * gives tens of [unknown] frames (`bash;[truncated];[unknown] x126;...`),
 * and four such samples made a graph four times taller.  A run of two or
 * more "[unknown]" frames is drawn as one, "[unknown]×N" (N in its name
 * and tooltip); a stack still deeper than SVG_SQUASH_DEPTH frames whose
 * frames are mostly [unknown] keeps its first and last frames, the middle
 * as one "[mostly unknown]×N".  Nothing prints; no allocation but *buf.
 */
#ifndef SF_SVG_SQUASH_H
#define SF_SVG_SQUASH_H

#include <stdbool.h>
#include <stddef.h>

#define SVG_SQUASH_DEPTH 16	/* a mostly unknown stack is cut to this */
#define SVG_SQUASH_MOSTLY 8	/* [unknown] frames, and more than half of
				 * them: a stack "mostly unknown" */

/* Stack (frames split by ';', root first) squashed into *buf (grown as
 * needed, owned by the caller): 1 and *out, *outlen set when it changed,
 * 0 (*out = stack) when not, -ENOMEM.  *mostly: the stack was mostly
 * [unknown] frames (counted by the callers, for their summary). */
int svg_squash(const char *stack, size_t len, char **buf, size_t *cap,
	       const char **out, size_t *outlen, bool *mostly);

#endif
