/* unwind.c - CFI unwinding over a stack copy; see unwind.h. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/unwind.h"
#include "unwind/unwmap.h"

/* A PT_LOAD segment: file offsets to the ELF's addresses. */
struct uw_seg {
	uint64_t offset, filesz, vaddr;
};

/* One mapped file's CFI. */
struct uw_file {
	const void *key;	/* the session's file */
	Elf *elf;
	Dwarf *dw;		/* for .debug_frame; NULL when none */
	Dwarf_CFI *eh, *dbg;	/* NULL when the file has none */
	bool dbg_tried;		/* .debug_frame looked for (only when
				 * .eh_frame has no rules for a pc) */
	struct uw_seg *segs;
	size_t nsegs;
	bool failed;		/* cannot be read: every pc in it fails */
};

struct unwinder {
	struct sym_session *s;
	struct uw_file *files;
	size_t nfiles, fcap;
	struct u64map file_idx;	/* file key -> index + 1 */
	struct u64map rules;	/* (index + 1) << 48 | address -> frame */
	struct uw_stats st;
};

struct unwinder *uw_new(struct sym_session *s)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->s = s;
	u->file_idx.valsz = sizeof(uint32_t);
	u->rules.valsz = sizeof(Dwarf_Frame *);
	return u;
}

void uw_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->rules.cap; i++) {
		if (!u->rules.keys[i])
			continue;
		Dwarf_Frame *f;
		memcpy(&f, u->rules.vals + i * u->rules.valsz, sizeof(f));
		free(f);
	}
	for (size_t i = 0; i < u->nfiles; i++) {
		struct uw_file *f = &u->files[i];
		if (f->dbg)
			dwarf_cfi_end(f->dbg);
		if (f->eh)
			dwarf_cfi_end(f->eh);
		if (f->dw)
			dwarf_end(f->dw);
		if (f->elf)
			elf_end(f->elf);
		free(f->segs);
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
	f->segs = calloc(n ? n : 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->segs[f->nsegs++] = (struct uw_seg){
				ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
	return 0;
}

/* Open the file's ELF and CFI; f->failed when it cannot be had. */
static int file_open(struct unwinder *u, struct uw_file *f)
{
	int fd = sym_unwind_file_fd(u->s, f->key);
	if (fd < 0) {
		f->failed = true;
		return 0;
	}
	u->st.files++;
	f->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* the whole file is mapped: the descriptor is not needed any more */
	if (f->elf)
		elf_cntl(f->elf, ELF_C_FDDONE);
	close(fd);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		f->failed = true;
		return 0;
	}
	int ret = load_segs(f);
	if (ret)
		return ret == -ENOMEM ? ret : (f->failed = true, 0);
	f->eh = dwarf_getcfi_elf(f->elf);
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
	*f = (struct uw_file){ .key = key };
	*err = file_open(u, f);
	return f;
}

static bool file_vaddr(const struct uw_file *f, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct uw_seg *s = &f->segs[i];
		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return true;
		}
	}
	return false;
}

/* The rules at ELF address a of file idx, cached (NULL: none). */
static int rules_at(struct unwinder *u, struct uw_file *f, uint32_t idx,
		    uint64_t a, Dwarf_Frame **out)
{
	bool found;
	uint64_t key = (uint64_t)(idx + 1) << 48 | (a & ((1ULL << 48) - 1));
	u->st.rule_lookups++;
	if (a >> 48) {	/* not representable in the key: uncached */
		*out = NULL;
		return 0;
	}
	Dwarf_Frame **slot = u64map_slot(&u->rules, key, &found);
	if (!slot)
		return -ENOMEM;
	if (found) {
		*out = *slot;
		return 0;
	}
	u->st.rule_misses++;
	Dwarf_Frame *fr = NULL;
	if (!f->eh || dwarf_cfi_addrframe(f->eh, a, &fr) != 0) {
		fr = NULL;
		if (!f->dbg_tried) {	/* rarely needed: opened then */
			f->dbg_tried = true;
			f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
			f->dbg = f->dw ? dwarf_getcfi(f->dw) : NULL;
		}
		if (f->dbg && dwarf_cfi_addrframe(f->dbg, a, &fr) != 0)
			fr = NULL;
	}
	if (!fr)
		u->st.no_cfi++;
	*slot = fr;
	*out = fr;
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
static bool eval(struct uw_state *w, const Dwarf_Op *ops, size_t nops,
		 uint64_t *out, bool *is_value)
{
	uint64_t s[16], a, b;
	size_t n = 0;
	*is_value = false;
#define PUSH(x) do { if (n == 16) return false; s[n++] = (x); } while (0)
#define POP(x) do { if (!n) return false; (x) = s[--n]; } while (0)
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
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

/* Registers a caller keeps (callee-saved, and the return address): the
 * ones worth restoring. */
static const int kept_regs[] = { 3, UW_RBP, 12, 13, 14, 15, UW_RIP };

/* One step: the caller's registers from fr's rules.  1 when the caller
 * has no return address (the outermost frame), 0 stepped, -1 failed. */
static int step(struct uw_state *w, Dwarf_Frame *fr, const char **why)
{
	Dwarf_Op *ops, mem[3];
	size_t nops;
	bool is_value;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 ||
	    !eval(w, ops, nops, &w->cfa, &is_value)) {
		*why = "CFA rule not evaluable";
		return -1;
	}
	uint64_t nr[UW_NREGS] = { 0 };
	uint32_t nk = 0;
	for (size_t i = 0; i < sizeof(kept_regs) / sizeof(kept_regs[0]); i++) {
		int reg = kept_regs[i];
		if (dwarf_frame_register(fr, reg, mem, &ops, &nops) != 0) {
			*why = "register rule unreadable";
			return -1;
		}
		if (!ops) {	/* same value */
			if (w->known & (1u << reg)) {
				nr[reg] = w->r[reg];
				nk |= 1u << reg;
			}
			continue;
		}
		if (!nops) {	/* undefined */
			if (reg == UW_RIP)
				return 1;
			continue;
		}
		uint64_t v;
		if (!eval(w, ops, nops, &v, &is_value) ||
		    (!is_value && !read_u64(w, v, &v))) {
			if (reg == UW_RIP || w->truncated) {
				*why = "return address rule not evaluable";
				return -1;
			}
			/* GCC's epilogues may put a saved register below
			 * the new sp: unknown, as libdwfl makes it */
			continue;
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

/* The rules for pc (a return address when !exact: looked up at pc - 1,
 * inside the call); *signal: they are a signal frame's. */
static int find_rules(struct unwinder *u, int pid, uint32_t image,
		      uint64_t pc, bool exact, Dwarf_Frame **fr, bool *signal,
		      const char **why)
{
	struct sym_unwind_map m;
	uint64_t look = exact ? pc : pc - 1, a;
	*fr = NULL;
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
	if ((ret = rules_at(u, f, idx, a, fr)))
		return ret;
	if (!*fr) {
		*why = "no CFI for pc";
		return 0;
	}
	*signal = false;
	dwarf_frame_info(*fr, NULL, NULL, signal);
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
		Dwarf_Frame *fr;
		bool signal = false;
		int ret = find_rules(u, pid, image, pc, exact, &fr, &signal,
				     &out->why);
		if (ret)
			return ret;
		if (!fr)
			return 0;
		/* a signal trampoline (__restore_rt) is returned to by the
		 * handler, but named at its pc: its rules start one byte
		 * early for the lookup at pc - 1, its symbol does not */
		if (signal)
			out->exact[out->n - 1] = true;
		ret = step(&w, fr, &out->why);
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
