/* unwind.c - CFI unwinding over a stack copy; see unwinder.h. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/untrusted.h"
#include "elf/elfindex.h"
#include "elf/elfread.h"
#include "elf/idxcache.h"
#include "unwind/cfirules.h"
#include "unwinder.h"
#include "unwind/unwmap.h"

/* One mapped file's CFI: its rows (cfirules.h), from the cache or
 * converted from libdw's as pcs need them; the file itself is opened only
 * when a pc has no row yet. */
struct uw_file {
	const void *key;	/* the session's file */
	const char *bid;	/* its build-id (session-owned), NULL: none */
	struct cfr_table t;	/* rows and PT_LOAD segments */
	bool opened;		/* file_open() was run */
	Elf *elf;
	Dwarf *dw;		/* for .debug_frame; NULL when none */
	Dwarf_CFI *eh, *dbg;	/* NULL when the file has none */
	bool dbg_tried;		/* .debug_frame looked for (only when
				 * .eh_frame has no rules for a pc) */
	uint64_t inflated;	/* libdw's decompressed bytes, taken from
				 * the session's budget */
	bool failed;		/* cannot be read (nor its segments cached):
				 * every pc in it fails */
};

struct unwinder {
	struct sym_session *s;
	struct uw_file *files;
	size_t nfiles, fcap;
	struct u64map file_idx;	/* file key -> index + 1 */
	struct u64map rules;	/* (index + 1) << 48 | address -> row + 1
				 * (0: the file has no CFI for it) */
	const struct elfidx_opts *cache;	/* NULL: rows not kept */
	struct uw_stats st;
};

struct unwinder *uw_new(struct sym_session *s)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->s = s;
	u->file_idx.valsz = sizeof(uint32_t);
	u->rules.valsz = sizeof(uint32_t);
	u->cache = sym_unwind_cache(s);
	return u;
}

/* Keep a file's rows for the next run: DIR/b-BUILDID-c.idx. */
static void file_save(struct unwinder *u, struct uw_file *f)
{
	char key[64];
	unsigned char *blob;
	size_t len;
	if (!u->cache || !f->bid || !f->t.dirty || !f->t.nsegs ||
	    snprintf(key, sizeof(key), "b-%s-c", f->bid) >= (int)sizeof(key) ||
	    cfr_encode(&f->t, &blob, &len))
		return;
	if (!idxcache_put(u->cache, key, blob, len))	/* (a failure warns) */
		f->t.dirty = false;
	free(blob);
}

void uw_save(struct unwinder *u)
{
	for (size_t i = 0; u && i < u->nfiles; i++)
		file_save(u, &u->files[i]);
}

void uw_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nfiles; i++) {
		struct uw_file *f = &u->files[i];
		file_save(u, f);
		if (f->dbg)
			dwarf_cfi_end(f->dbg);
		if (f->eh)
			dwarf_cfi_end(f->eh);
		if (f->dw)
			dwarf_end(f->dw);
		if (f->elf)
			elf_end(f->elf);
		sf_limits_give(sym_unwind_limits(u->s), f->inflated);
		cfr_release(&f->t);
	}
	free(u->files);
	u64map_release(&u->file_idx);
	u64map_release(&u->rules);
	free(u);
}

const struct uw_stats *uw_stats(const struct unwinder *u)
{
	return &u->st;
}

static int load_segs(struct uw_file *f)
{
	size_t n;
	if (elf_getphdrnum(f->elf, &n))
		return -1;
	struct cfr_seg *segs = calloc(n ? n : 1, sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			segs[k++] = (struct cfr_seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
	if (f->t.nsegs) {	/* the cache's: the same file (build-id) */
		free(segs);
		return 0;
	}
	f->t.segs = segs;
	f->t.nsegs = k;
	GElf_Ehdr eh;
	if (gelf_getehdr(f->elf, &eh) &&
	    (eh.e_type == ET_EXEC || eh.e_type == ET_DYN))
		f->t.entry = eh.e_entry;
	return 0;
}

/* Does elf have a .debug_frame section? */
static bool has_debug_frame(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, ".debug_frame"))
			return true;
	return false;
}

/* The file's .debug_frame CFI (once; only when .eh_frame has no rules
 * for a pc, or for a file read into memory, when it has the section). */
static void file_dbg(struct unwinder *u, struct uw_file *f)
{
	if (f->dbg_tried || !f->elf)
		return;
	f->dbg_tried = true;
	/* libdw decompresses the file's sections itself: bounded first */
	f->inflated = elfidx_bound_libdw(f->elf, sym_unwind_limits(u->s));
	f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	f->dbg = f->dw ? dwarf_getcfi(f->dw) : NULL;
}

/* Open the file's ELF and CFI (once); f->failed when it cannot be had and
 * no cached segments stand for it.  The file is read as elfread.h says: a
 * file another user may write is read into memory (what the CFI needs,
 * now: its descriptor is not kept), never mapped, so that its truncation
 * is a read error, not SIGBUS. */
static int file_open(struct unwinder *u, struct uw_file *f)
{
	if (f->opened)
		return 0;
	f->opened = true;
	int fd = sym_unwind_file_fd(u->s, f->key);
	if (fd < 0) {
		f->failed = !f->t.nsegs;
		return 0;
	}
	u->st.files++;
	Elf_Cmd cmd = elf_read_cmd(fd);
	f->elf = elf_begin(fd, cmd, NULL);
	int ret = 0;
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		f->failed = !f->t.nsegs;
	} else if ((ret = load_segs(f))) {
		f->failed = !f->t.nsegs;
		ret = ret == -ENOMEM ? ret : 0;
	} else {
		f->eh = dwarf_getcfi_elf(f->elf);
		if (cmd != ELF_C_READ_MMAP_PRIVATE && has_debug_frame(f->elf))
			file_dbg(u, f);
		f->dbg_tried |= cmd != ELF_C_READ_MMAP_PRIVATE;
	}
	/* mapped whole, or read: the descriptor is not needed any more */
	if (f->elf)
		elf_cntl(f->elf, ELF_C_FDDONE);
	close(fd);
	return ret;
}

/* A file's rows from the cache, when it has a build-id and an entry: then
 * the file is opened only for a pc the entry has no row for.  A corrupt
 * entry is dropped (rebuilt at the end of the run). */
static int file_cached(struct unwinder *u, struct uw_file *f)
{
	char key[64];
	unsigned char *blob;
	size_t len;
	if (!u->cache || !f->bid ||
	    snprintf(key, sizeof(key), "b-%s-c", f->bid) >= (int)sizeof(key) ||
	    idxcache_read(u->cache->cache_dir, key, &blob, &len))
		return 0;
	int ret = cfr_decode(&f->t, blob, len);
	free(blob);
	if (ret == -ENOMEM)
		return ret;
	if (ret == -EINVAL)
		idxcache_drop(u->cache->cache_dir, key);
	if (!ret)
		u->st.cached_files++;
	return 0;
}

static struct uw_file *file_get(struct unwinder *u, const void *key,
				uint32_t *idx, int *err)
{
	bool found;
	/* room first: a key must not enter the map without its file */
	if (sf_grow((void **)&u->files, &u->fcap, u->nfiles + 1,
		    sizeof(*u->files))) {
		*err = -ENOMEM;
		return NULL;
	}
	uint32_t *slot = u64map_slot(&u->file_idx, (uint64_t)(uintptr_t)key,
				     &found);
	*err = 0;
	if (!slot) {
		*err = -ENOMEM;
		return NULL;
	}
	if (found) {
		*idx = *slot - 1;
		return &u->files[*idx];
	}
	*idx = (uint32_t)u->nfiles;
	*slot = *idx + 1;	/* before file_open: the map may not move now */
	struct uw_file *f = &u->files[u->nfiles++];
	*f = (struct uw_file){ .key = key, .bid = sym_unwind_file_build_id(key) };
	*err = file_cached(u, f);
	if (!*err && !f->t.nsegs)
		*err = file_open(u, f);
	return f;
}

static bool file_vaddr(const struct uw_file *f, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->t.nsegs; i++) {
		const struct cfr_seg *s = &f->t.segs[i];
		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return true;
		}
	}
	return false;
}

/* The true start of the row libdw gave for a, [start, end).  Its end is
 * right (the next row's start), its start not always: after
 * DW_CFA_restore_state libdw reports the remembered row's start, and the
 * rows between (an epilogue's) have other rules.  From start, each row's
 * end is the next row's start, up to the row that ends at end: a's.  At
 * most 64 rows; else (or on an error) a itself, which is always right. */
static uint64_t row_start(Dwarf_CFI *cfi, uint64_t a, uint64_t start,
			  uint64_t end)
{
	uint64_t x = start;
	for (int i = 0; i < 64 && x < a; i++) {
		Dwarf_Frame *fr;
		Dwarf_Addr s, e;
		bool signal;
		if (dwarf_cfi_addrframe(cfi, x, &fr) != 0)
			return a;
		dwarf_frame_info(fr, &s, &e, &signal);
		free(fr);
		if (e >= end)
			return x;
		if (e <= x)
			return a;
		x = e;
	}
	return a;
}

/* libdw's row for a, from .eh_frame, else .debug_frame; *from: where it
 * truly starts.  NULL when neither has one. */
static Dwarf_Frame *libdw_row(struct unwinder *u, struct uw_file *f,
			      uint64_t a, uint64_t *from)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_CFI *cfi = f->eh;
	if (!cfi || dwarf_cfi_addrframe(cfi, a, &fr) != 0) {
		fr = NULL;
		file_dbg(u, f);	/* rarely needed */
		cfi = f->dbg;
		if (cfi && dwarf_cfi_addrframe(cfi, a, &fr) != 0)
			fr = NULL;
	}
	if (fr) {
		Dwarf_Addr s, e;
		bool signal;
		dwarf_frame_info(fr, &s, &e, &signal);
		*from = s < a && e > a ? row_start(cfi, a, s, e) : s;
	}
	return fr;
}

/* The row holding ELF address a of file idx: from this run's lookups,
 * the cache's rows, else libdw (then kept).  *row SIZE_MAX: no CFI. */
static int rules_at(struct unwinder *u, struct uw_file *f, uint32_t idx,
		    uint64_t a, size_t *row)
{
	bool found;
	uint64_t key = (uint64_t)(idx + 1) << 48 | (a & ((1ULL << 48) - 1));
	u->st.rule_lookups++;
	*row = SIZE_MAX;
	if (a >> 48)	/* not representable in the key: none */
		return 0;
	uint32_t *slot = u64map_slot(&u->rules, key, &found);
	if (!slot)
		return -ENOMEM;
	if (found) {
		*row = *slot ? *slot - 1 : SIZE_MAX;
		return 0;
	}
	u->st.rule_misses++;
	size_t r = cfr_find(&f->t, a);
	if (r != SIZE_MAX) {
		u->st.cached_rows++;
	} else {
		int ret = file_open(u, f);
		if (ret)
			return ret;
		uint64_t from;
		Dwarf_Frame *fr = libdw_row(u, f, a, &from);
		if (fr) {
			ret = cfr_add(&f->t, fr, from, &r);
			free(fr);
			if (ret)
				return ret;
		} else {
			u->st.no_cfi++;
		}
	}
	*slot = r == SIZE_MAX ? 0 : (uint32_t)r + 1;
	*row = r;
	return 0;
}

/* The state of one frame being unwound. */
struct uw_state {
	uint64_t r[UW_NREGS];
	uint32_t known;		/* bit i: r[i] is known */
	const struct uw_stack *st;
	uint64_t cfa;
	bool truncated;		/* a read at or above the copy's end */
};

/* 8 bytes of the copy at addr; false when outside it (truncated when at
 * or above its end). */
static bool read_u64(struct uw_state *w, uint64_t addr, uint64_t *v)
{
	const struct uw_stack *st = w->st;
	if (addr < st->base)
		return false;
	if (addr - st->base > st->len || st->len - (addr - st->base) < 8) {
		w->truncated = true;
		return false;
	}
	memcpy(v, st->bytes + (addr - st->base), 8);
	return true;
}

static bool reg_value(const struct uw_state *w, uint64_t reg, uint64_t *v)
{
	if (reg >= UW_NREGS || !(w->known & (1u << reg)))
		return false;
	*v = w->r[reg];
	return true;
}

/* Evaluate a DWARF expression of CFI (the subset call frame information
 * uses).  *is_value: it ended with DW_OP_stack_value (a value, not an
 * address).  False when it cannot be evaluated. */
static bool eval(struct uw_state *w, const struct cfr_op *ops, size_t nops,
		 uint64_t *out, bool *is_value)
{
	uint64_t s[16], a, b;
	size_t n = 0;
	*is_value = false;
#define PUSH(x) do { if (n == 16) return false; s[n++] = (x); } while (0)
#define POP(x) do { if (!n) return false; (x) = s[--n]; } while (0)
	for (size_t i = 0; i < nops; i++) {
		const struct cfr_op *op = &ops[i];
		uint8_t at = op->atom;
		if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
			PUSH((uint64_t)(at - DW_OP_lit0));
		} else if (at >= DW_OP_breg0 && at <= DW_OP_breg31) {
			if (!reg_value(w, at - DW_OP_breg0, &a))
				return false;
			PUSH(a + op->number);
		} else {
			switch (at) {
			case DW_OP_bregx:
				if (!reg_value(w, op->number, &a))
					return false;
				PUSH(a + op->number2);
				break;
			case DW_OP_call_frame_cfa:
				PUSH(w->cfa);
				break;
			case DW_OP_const1u: case DW_OP_const1s:
			case DW_OP_const2u: case DW_OP_const2s:
			case DW_OP_const4u: case DW_OP_const4s:
			case DW_OP_const8u: case DW_OP_const8s:
			case DW_OP_constu: case DW_OP_consts:
				PUSH(op->number);
				break;
			case DW_OP_plus_uconst:
				POP(a); PUSH(a + op->number);
				break;
			case DW_OP_deref:
				POP(a);
				if (!read_u64(w, a, &b))
					return false;
				PUSH(b);
				break;
			case DW_OP_dup:
				POP(a); PUSH(a); PUSH(a);
				break;
			case DW_OP_plus: POP(b); POP(a); PUSH(a + b); break;
			case DW_OP_minus: POP(b); POP(a); PUSH(a - b); break;
			case DW_OP_mul: POP(b); POP(a); PUSH(a * b); break;
			case DW_OP_and: POP(b); POP(a); PUSH(a & b); break;
			case DW_OP_or: POP(b); POP(a); PUSH(a | b); break;
			case DW_OP_shl: POP(b); POP(a); PUSH(b < 64 ? a << b : 0); break;
			case DW_OP_shr: POP(b); POP(a); PUSH(b < 64 ? a >> b : 0); break;
			case DW_OP_ge: POP(b); POP(a); PUSH((int64_t)a >= (int64_t)b); break;
			case DW_OP_gt: POP(b); POP(a); PUSH((int64_t)a > (int64_t)b); break;
			case DW_OP_le: POP(b); POP(a); PUSH((int64_t)a <= (int64_t)b); break;
			case DW_OP_lt: POP(b); POP(a); PUSH((int64_t)a < (int64_t)b); break;
			case DW_OP_eq: POP(b); POP(a); PUSH(a == b); break;
			case DW_OP_ne: POP(b); POP(a); PUSH(a != b); break;
			case DW_OP_stack_value:
				*is_value = true;
				break;
			default:
				return false;
			}
		}
	}
#undef PUSH
#undef POP
	if (!n)
		return false;
	*out = s[n - 1];
	return true;
}

/* One step: the caller's registers from row r of t.  1 when the caller
 * has no return address (the outermost frame), 0 stepped, -1 failed. */
static int step(struct uw_state *w, const struct cfr_table *t,
		const struct cfr_row *r, const char **why)
{
	const struct cfr_op *op = t->ops + r->op0;
	uint64_t sp = w->r[UW_RSP];	/* (always known) */
	bool is_value;
	if (r->kind[0] != CFR_EXPR || !eval(w, op, r->nops[0], &w->cfa, &is_value)) {
		*why = "CFA rule not evaluable";
		return -1;
	}
	op += r->nops[0];
	uint64_t nr[UW_NREGS] = { 0 };
	uint32_t nk = 0;
	for (int i = 0; i < CFR_NREGS; i++) {
		int reg = cfr_regs[i];
		const struct cfr_op *ops = op;
		size_t nops = r->nops[1 + i];
		op += nops;
		switch (r->kind[1 + i]) {
		case CFR_BAD:
			*why = "register rule unreadable";
			return -1;
		case CFR_SAME:
			if (w->known & (1u << reg)) {
				nr[reg] = w->r[reg];
				nk |= 1u << reg;
			}
			continue;
		case CFR_UNDEF:
			if (reg == UW_RIP)
				return 1;
			continue;
		}
		uint64_t v;
		if (!eval(w, ops, nops, &v, &is_value)) {
			if (reg == UW_RIP || w->truncated) {
				*why = "return address rule not evaluable";
				return -1;
			}
			continue;
		}
		/* a save slot below sp: an epilogue restored the register
		 * from it already (GCC's rules keep naming the slot after
		 * its `pop`), so its value now is the caller's.  libdwfl
		 * and perf make it unknown, and lose a caller whose CFA is
		 * rbp-based. */
		if (!is_value && reg != UW_RIP && v < sp && reg_value(w, reg, &v)) {
			nr[reg] = v;
			nk |= 1u << reg;
			continue;
		}
		if (!is_value && !read_u64(w, v, &v)) {
			if (reg == UW_RIP || w->truncated) {
				*why = "return address rule not evaluable";
				return -1;
			}
			continue;	/* below the copy: unknown */
		}
		nr[reg] = v;
		nk |= 1u << reg;
	}
	nr[UW_RSP] = w->cfa;
	nk |= 1u << UW_RSP;
	memcpy(w->r, nr, sizeof(nr));
	w->known = nk;
	return 0;
}

/* The code at a file's entry point without CFI (ld.so's _start: `mov
 * %rsp,%rdi; call _dl_start`, then _dl_init, then a jump to the
 * program's entry): how far past the entry a pc counts as in it. */
#define UW_ENTRY_SPAN 128

/* Is ELF address a, which has no CFI, in the code at the file's entry
 * point, which has none either?  Then its frame is the outermost: the
 * kernel entered the process there. */
static int at_entry(struct unwinder *u, struct uw_file *f, uint32_t idx,
		    uint64_t a, bool *yes)
{
	size_t r;
	uint64_t e = f->t.entry;
	*yes = false;
	if (!e || a < e || a - e >= UW_ENTRY_SPAN)
		return 0;
	int ret = rules_at(u, f, idx, e, &r);
	*yes = !ret && r == SIZE_MAX;
	return ret;
}

/* The rules for pc (a return address when !exact: looked up at pc - 1,
 * inside the call); *signal: they are a signal frame's.  *outermost: pc
 * has none, and is in the code at an entry point that has none. */
static int find_rules(struct unwinder *u, int pid, uint32_t image,
		      uint64_t pc, bool exact, const struct uw_file **file,
		      const struct cfr_row **row, bool *outermost,
		      const char **why)
{
	struct sym_unwind_map m;
	uint64_t look = exact ? pc : pc - 1, a;
	*row = NULL;
	*outermost = false;
	int ret = sym_unwind_map(u->s, pid, image, look, &m);
	if (ret) {
		*why = ret == -ESRCH ? "no memory map of the process"
				     : "pc outside any executable mapping";
		return 0;
	}
	if (!m.file) {
		*why = "pc in anonymous or JIT code (no CFI)";
		return 0;
	}
	uint32_t idx;
	struct uw_file *f = file_get(u, m.file, &idx, &ret);
	if (ret)
		return ret;
	if (f->failed) {
		*why = "mapped file unreadable";
		return 0;
	}
	if (!file_vaddr(f, look - m.start + m.offset, &a)) {
		*why = "pc outside the file's segments";
		return 0;
	}
	size_t r;
	if ((ret = rules_at(u, f, idx, a, &r)))
		return ret;
	if (r == SIZE_MAX) {
		*why = f->failed ? "mapped file unreadable" : "no CFI for pc";
		return f->failed ? 0 : at_entry(u, f, idx, a, outermost);
	}
	*file = f;
	*row = &f->t.rows[r];
	return 0;
}

int uw_unwind(struct unwinder *u, int pid, uint32_t image,
	      const uint64_t regs[UW_NREGS], const struct uw_stack *st,
	      struct uw_result *out)
{
	struct uw_state w = { .st = st, .known = (1u << UW_NREGS) - 1 };
	memcpy(w.r, regs, sizeof(w.r));
	out->n = 0;
	out->end = UW_ERROR;
	out->why = NULL;
	bool exact = true;
	while (out->n < UW_MAX_FRAMES) {
		uint64_t pc = w.r[UW_RIP], sp = w.r[UW_RSP];
		out->pc[out->n] = pc;
		out->exact[out->n] = exact;
		out->n++;
		const struct uw_file *f;
		const struct cfr_row *row;
		bool outermost;
		int ret = find_rules(u, pid, image, pc, exact, &f, &row,
				     &outermost, &out->why);
		if (ret)
			return ret;
		if (outermost) {
			out->end = UW_COMPLETE;
			out->why = NULL;
			return 0;
		}
		if (!row)
			return 0;
		bool signal = row->signal;
		/* a signal trampoline (__restore_rt) is returned to by the
		 * handler, but named at its pc: its rules start one byte
		 * early for the lookup at pc - 1, its symbol does not */
		if (signal)
			out->exact[out->n - 1] = true;
		ret = step(&w, &f->t, row, &out->why);
		if (ret == 1 || (ret == 0 && w.r[UW_RIP] == 0)) {
			out->end = UW_COMPLETE;
			return 0;
		}
		if (ret < 0) {
			if (w.truncated) {
				out->end = UW_TRUNCATED;
				out->why = NULL;
			}
			return 0;
		}
		/* the stack grows down: a caller's frame is above; a signal
		 * frame may return to an interrupted sp anywhere (an
		 * alternate signal stack), once */
		if (w.r[UW_RSP] <= sp && !signal) {
			out->why = "stack pointer did not move up";
			return 0;
		}
		/* the pc a signal interrupted is exact, not a return address */
		exact = signal;
	}
	out->why = "more than UW_MAX_FRAMES frames";
	return 0;
}
