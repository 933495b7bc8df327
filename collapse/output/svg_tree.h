/*
 * svg_tree.h - the frame tree of folded stacks, for a flame graph of lines
 * that come in any order (stdin, an unsorted file).
 *
 * Each distinct frame in its calling context is one node (name, samples
 * through it, samples ending in it), so memory follows the unique frames
 * of the tree, not the input: lines are not kept.  Lines that arrive in
 * the fold's order (fold_cmp) are added without a lookup; the first line
 * out of that order builds the (parent, name) hash that the rest use.
 *
 * svg_tree_walk() hands the frames to draw in the order the layout of a
 * fold closes them (post-order, siblings by name, a frame's own samples
 * before its children's), so the SVG is byte for byte the fold's.
 *
 * svg_tree_add() makes each stack safe by the fold's rule
 * (fold_safe_stack()) first, so frames are named as through a fold.
 * Nothing here prints or exits.
 */
#ifndef SF_SVG_TREE_H
#define SF_SVG_TREE_H

#include <stddef.h>
#include <stdint.h>

struct svg_tree;

/* NULL on ENOMEM. */
struct svg_tree *svg_tree_new(void);
void svg_tree_free(struct svg_tree *t);	/* NULL is fine */
/* 0, or -ENOMEM (the tree then misses that line), -E2BIG past 2^32
 * nodes. */
int svg_tree_add(struct svg_tree *t, const char *stack, size_t len,
		 uint64_t count);
uint64_t svg_tree_total(const struct svg_tree *t);
size_t svg_tree_stacks(const struct svg_tree *t);	/* distinct stacks */

/* One frame to draw: name[0..len) (valid until svg_tree_free), depth 0
 * for the root "all", start = samples left of it. */
struct svg_tree_frame {
	const char *name;
	uint32_t len, depth;
	uint64_t start, count, self;
};
typedef int (*svg_tree_fn)(void *ctx, const struct svg_tree_frame *f);
/* Every frame at least min_count wide (the root always), as above; stops
 * at the first nonzero return of fn and returns it, else 0 or -ENOMEM.
 * (It sums the samples through each node first: no svg_tree_add() after
 * it.) */
int svg_tree_walk(struct svg_tree *t, double min_count, svg_tree_fn fn,
		  void *ctx);

#endif
