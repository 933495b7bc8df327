/*
 * dwarfidx.c - DWARF (through libdw) into an idx_builder: every line-table row
 * and the tree of subprograms and inlined subroutines, flattened into
 * non-overlapping address segments, so a lookup needs no DWARF at all.
 *
 * Names follow what addr2line (binutils) prints: the linkage name when the
 * DIE (or what it integrates through DW_AT_abstract_origin /
 * DW_AT_specification) has one, else DW_AT_name.  Only scope-bearing DIEs
 * are descended into (not types), which keeps a full walk fast.
 */
#include "elf/elfidx_priv.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Depth cap for the DIE walk (libdw's own fuzz fixes cap recursion too). */
#define DWARF_MAX_DEPTH 64
/* Split units whose .dwo is opened at index time to learn whether there
 * are inlined frames (IDX_HAS_INLINE); the others when read. */
#define SPLIT_PROBE_MAX 8

struct drange {
	uint64_t lo, hi;
	uint32_t node;
};

/*
 * Names by abstract origin: every inlined copy of a function names the
 * same DIE, and integrating its attributes (and interning and demangling
 * a long C++ name) again for each copy was a third of a cold C++ build.
 * Keyed by the origin's DIE offset + 1 (struct dwalk.oc), bit 63 set for
 * a DIE of the dwz alt file, whose offsets overlap the unit's file's; the
 * map is emptied before each split unit and after the last (each .dwo's
 * offsets start at 0, as the binary's own do).
 */
struct origin_val {
	uint32_t name, sysname, decl_line;
	uint32_t plain;		/* 1: DW_AT_name only, no linkage name */
};

/* How a unit's language names its symbols, which decides where a
 * function's name comes from (add_node). */
enum unit_lang {
	LANG_OTHER,		/* DWARF's names */
	LANG_MANGLED,		/* C++, D, Rust: mangled symbols */
	LANG_C,			/* C, assembly: symbols are the source's
				 * names or aliases of them */
};

struct dwalk {
	struct idx_builder *b;
	const struct dwsrc *src;	/* the DWARF's file (dwo_place_ok) */
	struct drange *r;
	size_t nr, rcap;
	Dwarf_Files *files;
	size_t nfiles;
	const char *comp_dir;	/* of the current CU, NULL if none */
	size_t *seqs;		/* index in b->lines where a sequence starts */
	size_t nseqs, seqcap;
	int in_func;		/* > 0 while below a subprogram */
	size_t dwo_missing;	/* skeleton units read without their .dwo */
	enum unit_lang lang;	/* how the CU's language names symbols */
	/* CU file index -> interned path + 1 (0: not yet), for call_file */
	uint32_t *fids;
	size_t nfids;
	struct u64map oc;	/* -> struct origin_val */
	bool oc_split;		/* oc holds a split unit's (.dwo) offsets */
	int rc;
};

/*
 * Intern a source path as addr2line (BFD) spells it: libdw joins a file
 * name to its directory entry; when that is still relative, BFD puts the
 * CU's DW_AT_comp_dir in front (giving e.g. "./string/../sysdeps/x.S" for
 * glibc, whose comp_dir is relative).
 */
static int64_t intern_path(struct idx_builder *b, const char *comp_dir,
			   const char *src)
{
	char buf[4096];

	if (!src)
		return 0;
	if (src[0] != '/' && comp_dir && *comp_dir &&
	    snprintf(buf, sizeof(buf), "%s/%s", comp_dir, src) <
		    (int)sizeof(buf))
		src = buf;
	return idxb_str(b, src);
}

/* --- line tables --- */

/* Can DWARF code start at a?  In an executable PT_LOAD segment, and not
 * at 0: the linker leaves the code that --gc-sections removed at 0, where
 * a PIE's first segment has the ELF header, _init or the PLT, and those
 * would take the removed function's name and lines (addr2line does). */
static bool in_loaded(const struct idx_builder *b, uint64_t a)
{
	if (!b->nphdrs)
		return true;
	for (size_t i = 0; a && i < b->nphdrs; i++)
		if ((b->phdrs[i].flags & PF_X) &&
		    a - b->phdrs[i].vaddr < b->phdrs[i].memsz)
			return true;
	return false;
}

static int add_line(struct idx_builder *b, uint64_t addr, uint32_t file,
		    uint32_t line, uint32_t disc)
{
	if (sf_grow((void **)&b->lines, &b->linecap, b->nlines + 1,
		    sizeof(*b->lines)))
		return -ENOMEM;
	b->lines[b->nlines++] = (struct bline){
		.addr = addr, .file = file, .line = line, .disc = disc,
	};
	return 0;
}

/* Rows of one CU.  A sequence whose start is outside every PT_LOAD
 * segment (code discarded by the linker, left at address 0) is dropped. */
static bool same_place(const struct bline *a, const struct bline *b);
static int64_t call_file(struct dwalk *w, Dwarf_Word u);

/* Start a sequence at addr: kept when addr is in a PT_LOAD segment. */
static int seq_begin(struct dwalk *w, uint64_t addr, bool *keep)
{
	*keep = in_loaded(w->b, addr);
	if (!*keep)
		return 0;
	if (sf_grow((void **)&w->seqs, &w->seqcap, w->nseqs + 1,
		    sizeof(*w->seqs)))
		return -ENOMEM;
	w->seqs[w->nseqs++] = w->b->nlines;
	return 0;
}

/* Interned path of a line's file (through the per-CU index cache). */
static int64_t line_file(struct dwalk *w, Dwarf_Line *l)
{
	Dwarf_Files *files;
	size_t idx;

	if (dwarf_line_file(l, &files, &idx) == 0 && files == w->files)
		return call_file(w, idx);
	return intern_path(w->b, w->comp_dir, dwarf_linesrc(l, NULL, NULL));
}

/* Rows of one CU.  A sequence whose start is outside every PT_LOAD
 * segment (code discarded by the linker, left at address 0) is dropped,
 * and so is a row saying what the row before it in its sequence said. */
static int cu_lines(struct dwalk *w, Dwarf_Die *cu)
{
	struct idx_builder *b = w->b;
	Dwarf_Lines *lines;
	size_t n;
	bool keep = false, seq_start = true;
	struct bline prev = { 0 };

	if (dwarf_getsrclines(cu, &lines, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool end = false;
		int lineno = 0;
		unsigned disc = 0;
		if (!l || dwarf_lineaddr(l, &addr))
			continue;
		dwarf_lineendsequence(l, &end);
		if (seq_start) {
			if (seq_begin(w, addr, &keep))
				return -ENOMEM;
			prev.line = 0;	/* no previous row */
		}
		seq_start = end;
		if (!keep)
			continue;
		if (end) {
			if (add_line(b, addr, 0, 0, 0))
				return -ENOMEM;
			continue;
		}
		dwarf_lineno(l, &lineno);
		dwarf_linediscriminator(l, &disc);
		int64_t file = line_file(w, l);
		if (file < 0)
			return -ENOMEM;
		struct bline cur = { addr, (uint32_t)file,
				     lineno > 0 ? (uint32_t)lineno : 0, disc };
		if (prev.line && same_place(&prev, &cur))
			continue;
		prev = cur;
		if (add_line(b, addr, cur.file, cur.line, cur.disc))
			return -ENOMEM;
	}
	return 0;
}

static int line_cmp(const void *pa, const void *pb)
{
	const struct bline *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* An end of sequence sorts before a row starting at the same
	 * address, so the row (the last one <= addr) wins the lookup. */
	bool ea = !a->file && !a->line, eb = !b->file && !b->line;
	if (ea != eb)
		return ea ? -1 : 1;
	/* Equal: the merges below are stable, so rows at one address keep
	 * table order and the later one wins, as in addr2line. */
	return 0;
}

static bool same_place(const struct bline *a, const struct bline *b)
{
	return a->file == b->file && a->line == b->line && a->disc == b->disc;
}

struct seqref {
	uint64_t first, last;
	size_t start, n;
};

static int seqref_cmp(const void *pa, const void *pb)
{
	const struct seqref *a = pa, *b = pb;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* End of the non-decreasing run of v[0..n) starting at i. */
static size_t run_end(const struct bline *v, size_t i, size_t n)
{
	while (++i < n && line_cmp(&v[i - 1], &v[i]) <= 0)
		;
	return i;
}

/* A run being merged: its next row and its end. */
struct run {
	size_t at, end;
};

/* Is run x's head before run y's head (ties: earlier run first)? */
static bool run_before(const struct bline *v, const struct run *x,
		       const struct run *y)
{
	int c = line_cmp(&v[x->at], &v[y->at]);
	return c < 0 || (c == 0 && x->at < y->at);
}

static void heap_down(const struct bline *v, struct run *h, size_t n,
		      size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < n && run_before(v, &h[l], &h[m]))
			m = l;
		if (r < n && run_before(v, &h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct run t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Merge the natural runs of v[0..n) in one pass through a heap of run
 * heads, into t (n elements), then back: O(n log runs), two copies.  A
 * cluster of overlapping sequences is a handful of long sorted runs.
 * Returns -ENOMEM or 0. */
static int merge_runs(struct bline *v, struct bline *t, size_t n)
{
	struct run *h = NULL;
	size_t nr = 0, cap = 0, w = 0;

	for (size_t i = 0; i < n;) {
		size_t e = run_end(v, i, n);
		if (sf_grow((void **)&h, &cap, nr + 1, sizeof(*h)))
			return -ENOMEM;
		h[nr++] = (struct run){ i, e };
		i = e;
	}
	for (size_t i = nr / 2; i-- > 0;)
		heap_down(v, h, nr, i);
	while (nr) {
		t[w++] = v[h[0].at++];
		if (h[0].at == h[0].end)
			h[0] = h[--nr];
		heap_down(v, h, nr, 0);
	}
	free(h);
	memcpy(v, t, n * sizeof(*v));
	return 0;
}

/*
 * Line programs emit sorted sequences that seldom overlap in a linked
 * file: order the sequences by start address and concatenate them, then
 * sort only the clusters of sequences whose address ranges overlap.
 * Nearly O(rows), where sorting every row was the biggest cost of a cold
 * build.  Ties keep table order: sequences are ordered by (start address,
 * table position) and the merge is stable.
 */
static int sort_rows(struct idx_builder *b, const size_t *seqs, size_t nseqs)
{
	struct seqref *sr = malloc((nseqs ? nseqs : 1) * sizeof(*sr));
	struct bline *out = malloc((b->nlines ? b->nlines : 1) * sizeof(*out));
	struct bline *tmp = NULL;	/* merge scratch */
	size_t n = 0, tcap = 0;

	if (!sr || !out) {
		free(sr);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nseqs; i++) {
		size_t end = i + 1 < nseqs ? seqs[i + 1] : b->nlines;
		sr[i] = (struct seqref){ 0, 0, seqs[i], end - seqs[i] };
		for (size_t k = seqs[i]; k < end; k++) {
			uint64_t a = b->lines[k].addr;
			if (k == seqs[i] || a < sr[i].first)
				sr[i].first = a;
			if (a > sr[i].last)
				sr[i].last = a;
		}
	}
	if (nseqs)
		qsort(sr, nseqs, sizeof(*sr), seqref_cmp);
	for (size_t i = 0; i < nseqs;) {
		size_t j = i + 1, from = n;
		uint64_t last = sr[i].last;
		for (; j < nseqs && sr[j].first < last; j++)
			last = sr[j].last > last ? sr[j].last : last;
		for (size_t k = i; k < j; k++) {
			memcpy(out + n, b->lines + sr[k].start,
			       sr[k].n * sizeof(*out));
			n += sr[k].n;
		}
		if (run_end(out + from, 0, n - from) < n - from) {
			if (sf_grow((void **)&tmp, &tcap, n - from, sizeof(*tmp))) {
				free(sr);
				free(out);
				free(tmp);
				return -ENOMEM;
			}
			if (merge_runs(out + from, tmp, n - from)) {
				free(sr);
				free(out);
				free(tmp);
				return -ENOMEM;
			}
		}
		i = j;
	}
	free(tmp);
	free(sr);
	free(b->lines);
	b->lines = out;
	b->linecap = b->nlines;
	b->nlines = n;
	return 0;
}

/* Sort rows, then drop the ones no lookup can reach: a row shadowed by a
 * later one at the same address, and a row that repeats its predecessor's
 * file:line (columns and is_stmt flags are not kept). */
static int lines_sort(struct idx_builder *b, const size_t *seqs, size_t nseqs)
{
	size_t n = 0;
	int rc = sort_rows(b, seqs, nseqs);

	if (rc)
		return rc;
	for (size_t i = 0; i < b->nlines; i++) {
		const struct bline *l = &b->lines[i];
		if (i + 1 < b->nlines && b->lines[i + 1].addr == l->addr)
			continue;
		if (n && same_place(&b->lines[n - 1], l))
			continue;
		if (!n && !l->file && !l->line)
			continue;
		b->lines[n++] = *l;
	}
	b->nlines = n;
	return 0;
}

/* --- scopes --- */

static const char *die_name(Dwarf_Die *die, bool *linkage)
{
	Dwarf_Attribute a;
	const char *s = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		s = dwarf_formstring(&a);
	*linkage = s != NULL;
	if (!s && dwarf_attr_integrate(die, DW_AT_name, &a))
		s = dwarf_formstring(&a);
	return s;
}

/* Name and first line of die, through the origin cache; *plain: the name
 * is a DW_AT_name, not a linkage name. */
static int node_names(struct dwalk *w, Dwarf_Die *die, struct idx_node *nd,
		      bool *plain)
{
	Dwarf_Attribute a;
	Dwarf_Die org;
	struct origin_val *v = NULL;
	bool found = false, linkage;
	int line;

	if (dwarf_attr(die, DW_AT_abstract_origin, &a) &&
	    dwarf_formref_die(&a, &org)) {
		uint64_t key = dwarf_dieoffset(&org) + 1;
		if (dwarf_cu_getdwarf(org.cu) != dwarf_cu_getdwarf(die->cu))
			key |= 1ULL << 63;
		v = u64map_slot(&w->oc, key, &found);
		if (!v)
			return -ENOMEM;
	}
	if (!found) {
		const char *name = die_name(die, &linkage);
		struct origin_val nv = { 0 };
		if (idxb_name(w->b, name ? name : "", &nv.name, &nv.sysname))
			return -ENOMEM;
		if (!dwarf_decl_line(die, &line) && line > 0)
			nv.decl_line = (uint32_t)line;
		nv.plain = name && *name && !linkage;
		if (v)
			*v = nv;
		v = v ? v : &nv;
		nd->name = v->name;
		nd->sysname = v->sysname;
		nd->decl_line = v->decl_line;
		*plain = v->plain;
		return 0;
	}
	nd->name = v->name;
	nd->sysname = v->sysname;
	nd->decl_line = v->decl_line;
	*plain = v->plain;
	return 0;
}

/* Interned path of the CU's file index u, cached per CU; 0 if none. */
static int64_t call_file(struct dwalk *w, Dwarf_Word u)
{
	if (!w->files || u >= w->nfiles)
		return 0;
	if (u < w->nfids && w->fids[u])
		return w->fids[u] - 1;
	int64_t id = intern_path(w->b, w->comp_dir,
				 dwarf_filesrc(w->files, u, NULL, NULL));
	if (id >= 0 && u < w->nfids)
		w->fids[u] = (uint32_t)id + 1;
	return id;
}

static int add_node(struct dwalk *w, Dwarf_Die *die, uint32_t parent,
		    uint32_t *out)
{
	struct idx_builder *b = w->b;
	struct idx_node nd = { .parent = parent };
	Dwarf_Word u;
	Dwarf_Attribute a;
	bool plain;

	if (node_names(w, die, &nd, &plain))
		return -ENOMEM;
	/* binutils (addr2line) names such a function, in a language whose
	 * symbols are mangled, by its symbol: a member of a local class
	 * (a lambda's std::function manager) has no linkage name, and its
	 * DW_AT_name alone ("_M_manager") says little. */
	if (parent == IDX_NONE && plain && w->lang == LANG_MANGLED)
		nd.call_line = IDX_NODE_SYMNAME;
	/* A C function is named by its symbol, so that its name does not
	 * depend on whether the debug file is installed: glibc's write() is
	 * __libc_write in DWARF, __GI___libc_write by its asm label (which
	 * addr2line and perf print with libc6-dbg), and write in both symbol
	 * tables (elfsyms.c's choice among aliases). */
	if (parent == IDX_NONE && w->lang == LANG_C)
		nd.call_line = IDX_NODE_SYMNAME_C;
	if (parent != IDX_NONE && !b->no_lines) {
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &u) == 0)
			nd.call_line = (uint32_t)u;
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &u) == 0) {
			int64_t id = call_file(w, u);
			if (id < 0)
				return -ENOMEM;
			nd.call_file = (uint32_t)id;
		}
	}
	if (b->nnodes >= IDX_NONE - 1 ||
	    sf_grow((void **)&b->nodes, &b->nodecap, b->nnodes + 1,
		    sizeof(*b->nodes)))
		return -ENOMEM;
	*out = (uint32_t)b->nnodes;
	b->nodes[b->nnodes++] = nd;
	return 0;
}

/* The DIE's address ranges as drange entries for node; false if none. */
static int add_ranges(struct dwalk *w, Dwarf_Die *die, uint32_t node,
		      bool *any)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	*any = false;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo || !in_loaded(w->b, lo))
			continue;
		if (sf_grow((void **)&w->r, &w->rcap, w->nr + 1, sizeof(*w->r)))
			return -ENOMEM;
		w->r[w->nr++] = (struct drange){ lo, hi, node };
		*any = true;
	}
	return 0;
}

static void walk(struct dwalk *w, Dwarf_Die *die, uint32_t parent, int depth);

static void walk_children(struct dwalk *w, Dwarf_Die *die, uint32_t parent,
			  int depth)
{
	Dwarf_Die child;

	if (depth >= DWARF_MAX_DEPTH || dwarf_child(die, &child))
		return;
	do
		walk(w, &child, parent, depth + 1);
	while (!w->rc && dwarf_siblingof(&child, &child) == 0);
}

/* A subprogram or inlined subroutine: a node, then its scope. */
static void walk_func(struct dwalk *w, Dwarf_Die *die, uint32_t parent,
		      int depth)
{
	uint32_t node;
	bool any;
	size_t mark_nodes = w->b->nnodes, mark_r = w->nr;

	if ((w->rc = add_node(w, die, parent, &node)))
		return;
	if ((w->rc = add_ranges(w, die, node, &any)))
		return;
	if (!any) {
		/* A declaration or an abstract instance: no node, but a
		 * local class below it may hold a concrete function (a
		 * lambda's operator()). */
		w->b->nnodes = mark_nodes;
		w->nr = mark_r;
		node = IDX_NONE;
	}
	w->in_func++;
	walk_children(w, die, node, depth);
	w->in_func--;
}

static void walk(struct dwalk *w, Dwarf_Die *die, uint32_t parent, int depth)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_subprogram:
		walk_func(w, die, IDX_NONE, depth);	/* nested: own root */
		break;
	case DW_TAG_inlined_subroutine:
		if (parent != IDX_NONE)
			walk_func(w, die, parent, depth);
		break;
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
		walk_children(w, die, parent, depth);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		/* Local classes (lambda closures) can hold concrete member
		 * functions; at file scope they hold only declarations. */
		if (w->in_func)
			walk_children(w, die, IDX_NONE, depth);
		break;
	default:
		break;
	}
}

/* --- flatten nested ranges into segments --- */

static int drange_cmp(const void *pa, const void *pb)
{
	const struct drange *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi > b->hi ? -1 : 1;	/* outer first */
	return a->node < b->node ? -1 : a->node > b->node;
}

static int seg_emit(struct idx_builder *b, uint64_t lo, uint32_t node)
{
	if (b->nsegs && b->segs[b->nsegs - 1].lo == lo) {
		b->nsegs--;	/* superseded at the same address */
	}
	if (b->nsegs && b->segs[b->nsegs - 1].node == node)
		return 0;
	if (!b->nsegs && node == IDX_NONE)
		return 0;
	if (sf_grow((void **)&b->segs, &b->segcap, b->nsegs + 1,
		    sizeof(*b->segs)))
		return -ENOMEM;
	b->segs[b->nsegs++] = (struct bseg){ .lo = lo, .node = node };
	return 0;
}

/* Innermost scope at each address.  Ranges that are not properly nested
 * are clipped to their enclosing range. */
static int flatten(struct dwalk *w)
{
	struct drange *st = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (w->nr)
		qsort(w->r, w->nr, sizeof(*w->r), drange_cmp);
	for (size_t i = 0; i <= w->nr && !rc; i++) {
		uint64_t lo = i < w->nr ? w->r[i].lo : UINT64_MAX;
		while (n && st[n - 1].hi <= lo && !rc) {
			uint64_t h = st[--n].hi;
			rc = seg_emit(w->b, h, n ? st[n - 1].node : IDX_NONE);
		}
		if (i == w->nr || rc)
			break;
		struct drange r = w->r[i];
		if (n && r.hi > st[n - 1].hi)
			r.hi = st[n - 1].hi;
		if (r.lo >= r.hi)
			continue;
		if (sf_grow((void **)&st, &cap, n + 1, sizeof(*st))) {
			rc = -ENOMEM;
			break;
		}
		st[n++] = r;
		rc = seg_emit(w->b, r.lo, r.node);
	}
	free(st);
	return rc;
}

int dwarfidx_open(struct dwsrc *s, Elf *elf, int fd,
		  const struct elfidx_opts *o, const char *path)
{
	bool no_lines = o->no_lines;
	memset(s, 0, sizeof(*s));
	s->elf = elf;
	s->fd = fd;
	if (fstat(fd, &s->st)) {
		dwarfidx_close(s);
		return -ENOENT;
	}
	elfcomp_hide_unused(elf, no_lines);
	if (elfcomp_inflate(elf, &s->zb, o, path) ||
	    elfcomp_terminate(elf, &s->zb)) {
		dwarfidx_close(s);
		return -ENOMEM;
	}
	s->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!s->dw) {
		dwarfidx_close(s);
		return -ENOENT;
	}
	return 0;
}

bool dwarfidx_changed(const struct dwsrc *s)
{
	return s->elf && sf_file_changed(s->fd, &s->st);
}

void dwarfidx_close(struct dwsrc *s)
{
	if (s->dw)
		dwarf_end(s->dw);
	if (s->elf) {
		elf_end(s->elf);
		if (s->fd >= 0)
			close(s->fd);
	}
	elfcomp_release(&s->zb);
	memset(s, 0, sizeof(*s));
}

/* Languages whose symbols carry mangled names (binutils' mangle_style),
 * and C and assembly, whose symbols are their names. */
static enum unit_lang unit_lang_of(int lang)
{
	switch (lang) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_ObjC_plus_plus:
	case DW_LANG_D:
	case DW_LANG_Rust:
		return LANG_MANGLED;
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:	/* GNU as: one DIE per alias */
		return LANG_C;
	default:
		return LANG_OTHER;
	}
}

/*
 * The DIE that holds a unit's scopes.  Split DWARF (-gsplit-dwarf) leaves
 * only a skeleton in the binary: its address ranges and line table, with
 * the subprograms and inlined calls in a .dwo file that libdw opens by
 * DW_AT_dwo_name (beside the binary, or under DW_AT_comp_dir).  With the
 * .dwo missing, the skeleton itself: file:line from its line table, names
 * from the symbol table.
 */
static Dwarf_Die *scope_die(struct idx_builder *b, const struct dwsrc *src,
			    Dwarf_Die *cudie, Dwarf_Die *split)
{
	uint8_t ut;

	/* asking for the split unit makes libdw open the .dwo */
	if (dwarf_cu_info(cudie->cu, NULL, &ut, NULL, NULL, NULL, NULL,
			  NULL) == 0 && ut == DW_UT_skeleton &&
	    !dwo_place_ok(b, src, cudie))
		return cudie;
	if (dwarf_cu_info(cudie->cu, NULL, &ut, NULL, split, NULL, NULL,
			  NULL) == 0 &&
	    ut == DW_UT_skeleton && split->cu &&
	    dwarf_tag(split) == DW_TAG_compile_unit)
		return split;
	return cudie;
}

/* A skeleton unit whose .dwo libdw did not find (scope_die() gave scopes
 * = cudie): its name, else NULL. */
static const char *missing_dwo(Dwarf_Die *cudie, Dwarf_Die *scopes)
{
	Dwarf_Attribute a;
	const char *name;
	uint8_t ut;

	if (scopes != cudie ||
	    dwarf_cu_info(cudie->cu, NULL, &ut, NULL, NULL, NULL, NULL, NULL) ||
	    ut != DW_UT_skeleton)
		return NULL;
	name = dwarf_formstring(dwarf_attr(cudie, DW_AT_dwo_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr(cudie, DW_AT_GNU_dwo_name, &a));
	return name ? name : "?";
}

/* One unit: its rows and its scopes (no_lines: scopes only, without the
 * files of inlined calls).  Calls name files of the scopes' unit: a split
 * unit has its own file table (.debug_line.dwo). */
static void collect_unit(struct dwalk *w, Dwarf_Die *cudie)
{
	Dwarf_Die split, *scopes = scope_die(w->b, w->src, cudie, &split);
	const char *dwo = missing_dwo(cudie, scopes);

	if (scopes != cudie || w->oc_split)
		u64map_release(&w->oc);	/* valsz is set again below */
	w->oc_split = scopes != cudie;
	w->oc.valsz = sizeof(struct origin_val);
	if (dwo && !w->dwo_missing++ && !w->b->dwo_warned)
		idxb_warn(w->b, "split DWARF '%s' not found: file:line only, names from the symbol table, no inlined frames",
			  dwo);

	w->files = NULL;
	w->nfiles = 0;
	if (!w->b->no_lines)
		dwarf_getsrcfiles(scopes, &w->files, &w->nfiles);
	if (w->nfiles > w->nfids) {
		uint32_t *f = realloc(w->fids, w->nfiles * sizeof(*f));
		if (!f) {
			w->rc = -ENOMEM;
			return;
		}
		w->fids = f;
		w->nfids = w->nfiles;
	}
	if (w->fids)
		memset(w->fids, 0, w->nfids * sizeof(*w->fids));
	Dwarf_Attribute cd;
	w->comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &cd));
	w->lang = unit_lang_of(dwarf_srclang(scopes));
	w->rc = w->b->no_lines ? 0 : cu_lines(w, cudie);
	if (!w->rc)
		walk_children(w, scopes, IDX_NONE, 0);
}

static bool unit_wanted(uint8_t unit_type)
{
	return unit_type == DW_UT_compile || unit_type == DW_UT_partial ||
	       unit_type == DW_UT_skeleton;
}

/* Is off the DIE of a compile (or partial) unit of dw?  An entry built
 * from another copy of the file (same build-id, other DWARF) or a forged
 * one would otherwise have us walk some inner DIE as a unit. */
static bool is_unit_die(Dwarf *dw, uint64_t off, Dwarf_Die *cudie)
{
	Dwarf_Die cu;
	int tag;

	if (!dwarf_offdie(dw, off, cudie))
		return false;
	tag = dwarf_tag(cudie);
	return (tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit ||
		tag == DW_TAG_skeleton_unit) &&
	       dwarf_diecu(cudie, &cu, NULL, NULL) &&
	       dwarf_dieoffset(&cu) == off;
}

int dwarfidx_collect(struct idx_builder *b, const struct dwsrc *src,
		     const uint64_t *offs, size_t n)
{
	struct dwalk w = { .b = b, .src = src };
	Dwarf *dw = src->dw;
	Dwarf_Die cudie;

	for (size_t i = 0; i < n && !w.rc; i++) {
		if (!is_unit_die(dw, offs[i], &cudie))
			w.rc = -ESTALE;	/* not this DWARF's unit table */
		else
			collect_unit(&w, &cudie);
	}
	if (!w.rc)
		w.rc = flatten(&w);
	if (w.dwo_missing)
		b->dwo_missing = true;
	free(w.r);
	free(w.fids);
	u64map_release(&w.oc);
	if (!w.rc)
		w.rc = lines_sort(b, w.seqs, w.nseqs);
	free(w.seqs);
	if (w.rc)
		return w.rc;
	b->flags |= IDX_DWARF_TRIED;
	if (b->nlines)
		b->flags |= IDX_HAS_FILES | IDX_HAS_LINES;
	for (size_t i = 0; i < b->nnodes && !(b->flags & IDX_HAS_INLINE); i++)
		if (b->nodes[i].parent != IDX_NONE)
			b->flags |= IDX_HAS_INLINE;
	return 0;
}

/* --- the unit table, for reading units lazily (dwlazy.c) --- */

/* Does the unit's abbreviation table declare inlined subroutines? */
static bool unit_has_inline(Dwarf_Die *cudie)
{
	Dwarf_Off off = 0;
	size_t len;
	Dwarf_Abbrev *a;

	for (int k = 0; k < 100000; k++) {
		a = dwarf_getabbrev(cudie, off, &len);
		if (!a || a == DWARF_END_ABBREV)
			break;
		if (dwarf_getabbrevtag(a) == DW_TAG_inlined_subroutine)
			return true;
		if (!len)
			break;
		off += len;
	}
	return false;
}

static int cu_add(struct idx_builder *b, uint64_t lo, uint64_t hi,
		  uint64_t off)
{
	if (sf_grow((void **)&b->cus, &b->cucap, b->ncus + 1, sizeof(*b->cus)))
		return -ENOMEM;
	b->cus[b->ncus++] = (struct idx_cu){ .lo = lo, .hi = hi, .off = off };
	return 0;
}

/* Ranges of one unit into b->cus (those outside every PT_LOAD segment,
 * code the linker discarded, are left out); a unit with none and with a
 * line table or children goes to b->eager. */
static int cu_ranges(struct idx_builder *b, Dwarf_Die *cudie)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t it = 0;
	size_t had = b->ncus;
	uint64_t off = dwarf_dieoffset(cudie);

	while ((it = dwarf_ranges(cudie, it, &base, &lo, &hi)) > 0)
		if (hi > lo && in_loaded(b, lo) && cu_add(b, lo, hi, off))
			return -ENOMEM;
	if (b->ncus > had ||
	    (!dwarf_hasattr(cudie, DW_AT_stmt_list) && !dwarf_haschildren(cudie)))
		return 0;
	if (sf_grow((void **)&b->eager, &b->eagercap, b->neager + 1,
		    sizeof(*b->eager)))
		return -ENOMEM;
	b->eager[b->neager++] = off;
	return 0;
}

static int cu_cmp(const void *pa, const void *pb)
{
	const struct idx_cu *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* Overlapping ranges into groups: each entry gets its group's range. */
static void cu_group(struct idx_builder *b)
{
	if (b->ncus)
		qsort(b->cus, b->ncus, sizeof(*b->cus), cu_cmp);
	for (size_t i = 0; i < b->ncus;) {
		size_t j = i + 1;
		uint64_t hi = b->cus[i].hi;
		for (; j < b->ncus && b->cus[j].lo < hi; j++)
			hi = b->cus[j].hi > hi ? b->cus[j].hi : hi;
		for (size_t k = i; k < j; k++) {
			b->cus[k].lo = b->cus[i].lo;
			b->cus[k].hi = hi;
		}
		i = j;
	}
}

int dwarfidx_cus(struct idx_builder *b, const struct dwsrc *src)
{
	Dwarf *dw = src->dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	bool inl = false, lines = false;
	int splits = 0;

	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie,
			       NULL) == 0) {
		if (!unit_wanted(unit_type))
			continue;
		if (cu_ranges(b, &cudie))
			return -ENOMEM;
		lines = lines || dwarf_hasattr(&cudie, DW_AT_stmt_list);
		/* a skeleton's scopes are in its .dwo: look into the first
		 * few only (libdw opens them), not into every .dwo of a big
		 * build at index time; its units are read when needed */
		if (!inl && unit_type == DW_UT_skeleton &&
		    splits++ < SPLIT_PROBE_MAX) {
			Dwarf_Die split;
			inl = unit_has_inline(scope_die(b, src, &cudie, &split));
		} else if (!inl && unit_type != DW_UT_skeleton) {
			inl = unit_has_inline(&cudie);
		}
	}
	cu_group(b);
	b->flags |= IDX_DWARF_TRIED;
	if (lines && !b->no_lines)
		b->flags |= IDX_HAS_FILES | IDX_HAS_LINES;
	if (inl)
		b->flags |= IDX_HAS_INLINE;
	return 0;
}
