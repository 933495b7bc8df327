/*
 * svg_elide.h - what the frames left out of a flame graph (narrower than
 * --minwidth) hold, kept small enough to embed, so that the SVG's search
 * is exact: for each drawn frame, the samples of its left-out descendants
 * grouped by the chain of names on their left-out part of the stack.  A
 * search adds a group when one of its names matches and no drawn frame
 * above it did.
 *
 * A chain is a node (parent chain, name), interned: the chain of a stack
 * left out below a frame grows by one node per level as frames are
 * dropped, so a chain costs one node, not a copy of its names.
 *
 * Frames come in post-order (children before their parent), as the
 * layout closes them; pending[d] holds what the closed frames at depth d
 * pass to their parent, the next frame at depth d - 1 to come.  A frame
 * kept takes its children's groups (svg_elide_keep()); a frame left out
 * passes them up with its name added, and its own samples as the chain
 * of its name alone (svg_elide_drop()).  A frame kept at first and dropped
 * later (the stream's final width) passes up what it took.
 *
 * Memory: a node per distinct chain (8 bytes, and 5-11 of index), an
 * entry per group per frame (16 bytes), groups of one chain merged.  At
 * most SVG_ELIDE_BUDGET bytes are allocated (checked before an array
 * doubles): a record that would pass it (graphs of many deep, varied
 * stacks: 20,000 lines of bench/gen_folded.awk, not 3,000) is freed and
 * `full` set; the writer then gives each frame's left-out total, says so
 * in the SVG, and a search says "up to".  The budget bounds what the
 * record costs a graph that does not fit it (time, memory) and what it
 * adds to the SVG (about 6 bytes a chain, under 200,000 chains).
 * Nothing here prints.  Functions return 0 or -ENOMEM.
 */
#ifndef SF_SVG_ELIDE_H
#define SF_SVG_ELIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define SVG_ELIDE_BUDGET (4u << 20)
#define SVG_ELIDE_BUDGET_TEXT "4 MiB"	/* as the SVG says it */
/* (so fewer than 2^24 nodes: the index keeps ids in 24 bits) */
_Static_assert(SVG_ELIDE_BUDGET / 8 < 1u << 24, "svg_elide: node ids");

struct se_node {
	uint32_t parent;	/* node id, 0 = none */
	uint32_t name;		/* id in names */
};

struct se_ent {
	uint32_t node;		/* the group's chain */
	uint32_t next;		/* pool index, 0 = end */
	uint64_t count;
};

struct se_pending {
	uint32_t *head;		/* by depth: list of groups, 0 = none */
	size_t cap;
};

struct svg_elide {
	struct strtab names;
	struct se_node *nodes;	/* [0] unused */
	size_t nnodes, nodes_cap;
	uint32_t *idx;		/* open addressing: node ids by (parent,
				 * name), 0 = empty; idx_cap a power of 2 */
	size_t idx_cap;
	struct se_ent *pool;	/* [0] unused */
	size_t n, cap;
	uint32_t free_list;
	struct se_pending pend;	/* the layout's */
	size_t bytes;		/* allocated, against the budget */
	bool full;		/* over budget: nothing kept (see above) */
};

int svg_elide_init(struct svg_elide *e);
void svg_elide_release(struct svg_elide *e);
/* A frame at depth kept: *list is its children's groups (taken from p). */
int svg_elide_keep(struct svg_elide *e, struct se_pending *p, uint32_t depth,
		   uint32_t *list);
/* A frame at depth (> 0) left out: its children's groups in p, and taken
 * (a list it kept before, or 0), with name added, and its self samples as
 * the chain of name alone, go to its parent's pending groups in p. */
int svg_elide_drop(struct svg_elide *e, struct se_pending *p, uint32_t depth,
		   const char *name, size_t len, uint64_t self, uint32_t taken);
/* Add every group of from to to (depth by depth), emptying from. */
int svg_elide_merge(struct svg_elide *e, struct se_pending *to,
		    struct se_pending *from);
/* list with groups of one chain merged (in place); the new head. */
uint32_t svg_elide_compact(struct svg_elide *e, uint32_t list);
void svg_pending_release(struct se_pending *p);

#endif
