/* resolver.c - records to profile samples; see resolver.h. */
#include "ingest/resolver.h"

#include "capture/child.h"
#include "ingest/pyframes.h"
#include "model/fold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cache of resolved raw addresses: open addressing on (pid, image, addr,
 * flags); see sym_process_snapshot() for images. */
struct addr_slot {
	uint64_t addr;
	uint32_t pid, image;
	uint32_t flags;		/* bit0 is_return, bit1 kernel, bit2 a kernel
				 * frame bpftrace named (with its address);
				 * an empty slot has loc == 0 */
	uint32_t loc;
};

struct resolver {
	struct profile *p;
	struct sym_session *sym;
	bool lazy_snapshot;
	struct addr_slot *slots;
	size_t nslots, nused;
	/* named frames: per kind, string id of the name -> location id */
	uint32_t *name_loc[4];
	size_t name_cap[4];
	/* --offsets: named frames with a SYM+OFF offset, per kind, (name's
	 * string id + 1) << 32 | offset -> location id */
	bool offsets;
	struct u64map name_off[4];
	uint32_t *stack;	/* location ids, leaf first */
	size_t stack_cap;
	uint32_t kernel_mapping;
	/* pids whose maps were snapshotted lazily (or tried): a set */
	struct u64map seen;
	/* pid fields (pid and image) refreshed for an unmapped address, to
	 * struct refreshed */
	bool refresh;
	struct u64map refreshed;
	/* resolver_keep_refreshed(): the pid fields refreshed, oldest
	 * first from `taken`, for resolver_next_refreshed() */
	bool keep_refreshed;
	uint64_t *fresh;
	size_t nfresh, freshcap, taken;
	/* resolver_set_python(): Python frame names, and a stack's
	 * frames while Python ones are put in (location ids, leaf first) */
	struct pyframes *py;
	bool py_borrowed;	/* resolver_use_python()'s: not freed here */
	uint32_t *merged;
	size_t merged_cap;
};

/* Refreshes are bounded: a stack walk's garbage addresses are unmapped
 * too, and each refresh retires a snapshot that stays in memory. */
#define REFRESH_MAX_PER_IMAGE 8
#define REFRESH_MIN_GAP_NS 1000000000ull
struct refreshed {	/* per pid and image: an older image's refusal
			 * must not hold back the newest one's refresh */
	uint32_t n;
	uint64_t last_ns;
};

struct resolver *resolver_new(struct profile *p, struct sym_session *sym,
			      bool lazy_snapshot)
{
	struct resolver *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->p = p;
	r->sym = sym;
	r->lazy_snapshot = lazy_snapshot;
	r->nslots = 4096;
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	if (!r->slots) {
		resolver_free(r);
		return NULL;
	}
	return r;
}

void resolver_set_refresh(struct resolver *r, bool on)
{
	r->refresh = on;
}

int resolver_set_python(struct resolver *r, const uint64_t off[PY_OFF_COUNT],
			bool live)
{
	struct pyframes *py = pyframes_new(off, live);
	if (!py)
		return -ENOMEM;
	resolver_use_python(r, py);
	r->py_borrowed = false;
	return 0;
}

void resolver_python_forget_code(struct resolver *r)
{
	if (r->py)
		pyframes_forget_code(r->py);
}

void resolver_use_python(struct resolver *r, struct pyframes *py)
{
	if (!r->py_borrowed)
		pyframes_free(r->py);
	r->py = py;
	r->py_borrowed = true;
}

void resolver_set_offsets(struct resolver *r, bool on)
{
	r->offsets = on;
}

void resolver_keep_refreshed(struct resolver *r, bool on)
{
	r->keep_refreshed = on;
}

bool resolver_next_refreshed(struct resolver *r, int *pid, uint32_t *image)
{
	if (r->taken == r->nfresh) {
		r->taken = r->nfresh = 0;	/* all asked for: start over */
		return false;
	}
	uint64_t f = r->fresh[r->taken++];
	*pid = (int)protocol_pid_of(f);
	*image = protocol_image_of(f);
	return true;
}

/* Kept for resolver_next_refreshed(), when asked to.  0 or -ENOMEM. */
static int keep_refreshed(struct resolver *r, uint32_t pid, uint32_t image)
{
	if (!r->keep_refreshed)
		return 0;
	if (sf_grow((void **)&r->fresh, &r->freshcap, r->nfresh + 1,
		    sizeof(*r->fresh)))
		return -ENOMEM;
	r->fresh[r->nfresh++] = protocol_pid_field(pid, image);
	return 0;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	free(r->slots);
	u64map_release(&r->refreshed);
	for (int k = 0; k < 4; k++) {
		free(r->name_loc[k]);
		u64map_release(&r->name_off[k]);
	}
	free(r->stack);
	free(r->fresh);
	u64map_release(&r->seen);
	if (!r->py_borrowed)
		pyframes_free(r->py);
	free(r->merged);
	free(r);
}

static uint64_t slot_hash(uint32_t pid, uint32_t image, uint64_t addr,
			  uint32_t flags)
{
	return sf_hash_u64(addr ^ ((uint64_t)pid << 40) ^ ((uint64_t)flags << 62) ^
			   sf_hash_u64(image));
}

/* The slot of (pid, image, addr, flags), or the empty one it would take. */
static struct addr_slot *slot_find(struct resolver *r, uint32_t pid,
				   uint32_t image, uint64_t addr,
				   uint32_t flags)
{
	size_t mask = r->nslots - 1;
	size_t i = slot_hash(pid, image, addr, flags) & mask;
	for (; r->slots[i].loc; i = (i + 1) & mask) {
		struct addr_slot *s = &r->slots[i];
		if (s->addr == addr && s->pid == pid && s->image == image &&
		    s->flags == flags)
			return s;
	}
	return &r->slots[i];
}

static int slots_grow(struct resolver *r)
{
	size_t ns = r->nslots * 2;
	struct addr_slot *old = r->slots, *s = calloc(ns, sizeof(*s));
	if (!s)
		return -ENOMEM;
	size_t on = r->nslots;
	r->slots = s;
	r->nslots = ns;
	for (size_t i = 0; i < on; i++)
		if (old[i].loc)
			*slot_find(r, old[i].pid, old[i].image, old[i].addr,
				   old[i].flags) = old[i];
	free(old);
	return 0;
}

static int64_t intern(struct resolver *r, const char *s)
{
	return strtab_intern_cstr(&r->p->strs, s ? s : "");
}

static int64_t kernel_mapping(struct resolver *r)
{
	if (r->kernel_mapping)
		return r->kernel_mapping;
	int64_t fn = intern(r, "[kernel.kallsyms]");
	if (fn < 0)
		return fn;
	struct pf_mapping m = { .start = 0xffff800000000000ULL,
				.limit = UINT64_MAX, .filename = (uint32_t)fn,
				.is_kernel = true, .has_functions = true };
	int64_t id = profile_mapping(r->p, &m);
	if (id > 0)
		r->kernel_mapping = (uint32_t)id;
	return id;
}

static int64_t module_mapping(struct resolver *r, const struct sym_module *m)
{
	if (m->is_kernel)
		return kernel_mapping(r);
	/* a deleted file's name says so, as maps does: "PATH (deleted)" (a
	 * file really named so is not deleted: sym_module.deleted is false) */
	char del[4352];
	const char *name = m->path;
	if (m->deleted && snprintf(del, sizeof(del), "%s (deleted)", m->path) <
			  (int)sizeof(del))
		name = del;
	int64_t fn = intern(r, name), bid = intern(r, m->build_id);
	if (fn < 0 || bid < 0)
		return -ENOMEM;
	struct pf_mapping pm = {
		.start = m->start, .limit = m->limit, .offset = m->offset,
		.filename = (uint32_t)fn, .build_id = (uint32_t)bid,
		/* without a build-id, the file's identity tells two files at
		 * one path apart; with one, one file seen under two devices
		 * (overlayfs: the mount's device, the lower layer's inode)
		 * stays one mapping */
		.dev = *m->build_id ? 0 : m->dev,
		.inode = *m->build_id ? 0 : m->inode,
		.is_main = m->is_main,
		.has_functions = m->has_functions,
		.has_filenames = m->has_filenames,
		.has_line_numbers = m->has_line_numbers,
		.has_inline_frames = m->has_inline_frames,
	};
	return profile_mapping(r->p, &pm);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/* l's offset, when there is one and it fits (a location keeps 32 bits:
 * no function is 4 GiB long).  Returns whether it was set. */
static bool set_offset(struct pf_location *l, bool has, uint64_t offset)
{
	l->has_offset = has && offset <= UINT32_MAX;
	l->offset = l->has_offset ? (uint32_t)offset : 0;
	return l->has_offset;
}

/* Build a profile location from a symbolizer result. */
static int64_t location_from_result(struct resolver *r, uint64_t addr,
				    bool kernel, bool is_return,
				    const struct sym_result *res)
{
	struct pf_location loc = { .address = addr,
				   .kind = kernel ? PF_LOC_KERNEL : PF_LOC_USER,
				   .is_return = is_return && addr };
	struct pf_line lines[SYM_MAX_INLINE];
	char unk[512];
	if (res->module) {
		int64_t m = module_mapping(r, res->module);
		if (m < 0)
			return m;
		loc.mapping = (uint32_t)m;
	}
	if (res->jit)
		loc.kind = PF_LOC_JIT;
	if (res->nframes && set_offset(&loc, res->has_offset, res->offset) &&
	    res->offset_name) {
		int64_t on = intern(r, res->offset_name);
		if (on < 0)
			return on;
		loc.offset_name = (uint32_t)on;
	}
	for (unsigned i = 0; i < res->nframes; i++) {
		const struct sym_frame *f = &res->frames[i];
		int64_t n = intern(r, f->name), sn = intern(r, f->system_name),
			fl = intern(r, f->file);
		if (n < 0 || sn < 0 || fl < 0)
			return -ENOMEM;
		struct pf_function fn = { .name = (uint32_t)n,
					  .system_name = (uint32_t)sn,
					  .filename = (uint32_t)fl,
					  .start_line = f->start_line };
		int64_t fid = profile_function(r->p, &fn);
		if (fid < 0)
			return fid;
		lines[i].function = (uint32_t)fid;
		lines[i].line = f->line;
	}
	if (!res->nframes) {
		if (res->module)
			snprintf(unk, sizeof(unk), "%s%s+0x%llx",
				 base_name(res->module->path),
				 res->module->deleted ? " (deleted)" : "",
				 (unsigned long long)res->module_addr);
		else
			snprintf(unk, sizeof(unk), "[unknown]");
		int64_t u = intern(r, unk);
		if (u < 0)
			return u;
		loc.unknown_name = (uint32_t)u;
	}
	return profile_location(r->p, &loc, lines, res->nframes);
}

/* Was pid's image seen before?  (It is from now on.)  Per image: a
 * fork's child failed before its exec (gone, its map unknown) leaves the
 * program it exec()ed its own try.  Out of memory: seen, so that no
 * snapshot is taken again and again. */
static bool pid_seen(struct resolver *r, uint32_t pid, uint32_t image)
{
	bool found = true;
	r->seen.valsz = 1;	/* a set: the value is not used */
	u64map_slot(&r->seen, protocol_pid_field(pid, image), &found);
	return found;
}

/* An address outside pid's snapshot: was it mapped after the snapshot?
 * At most REFRESH_MAX_PER_IMAGE refreshes a pid and image,
 * REFRESH_MIN_GAP_NS apart. */
static bool may_refresh(struct resolver *r, uint32_t pid, uint32_t image)
{
	uint64_t now = sf_clock_ns(CLOCK_MONOTONIC);
	bool found;
	r->refreshed.valsz = sizeof(struct refreshed);
	struct refreshed *f = u64map_slot(&r->refreshed,
					  protocol_pid_field(pid, image), &found);
	if (!f)
		return false;
	if (!found)
		*f = (struct refreshed){ 0 };
	else if (f->n >= REFRESH_MAX_PER_IMAGE ||
		 now - f->last_ns < REFRESH_MIN_GAP_NS)
		return false;
	f->n++;
	f->last_ns = now;
	return true;
}

/* pid's image from the symbolizer: a snapshot taken on the spot for a pid
 * with none (bpftrace's own output, no saved maps: the live process is
 * taken for the one sampled, once an image, unless a newer image of it is
 * known), a refresh for an address mapped after the snapshot, and for
 * one still outside it (the process gone), the JIT's perf map. */
static int lookup_user(struct resolver *r, uint32_t pid, uint32_t image,
		       uint64_t addr, bool is_return, struct sym_result *res)
{
	if (protocol_image_capped(image))
		return 0;	/* several programs under one key: unnamed */
	int ret = sym_lookup_user(r->sym, (int)pid, image, addr, is_return, res);
	if (!ret && res->reason == SYM_NO_PROCESS && r->lazy_snapshot &&
	    !sym_process_newer_known(r->sym, (int)pid, image) &&
	    !pid_seen(r, pid, image) &&
	    sym_process_snapshot(r->sym, (int)pid, image, 0, NULL) == 0)
		ret = sym_lookup_user(r->sym, (int)pid, image, addr, is_return,
				      res);
	if (!ret && res->reason == SYM_UNMAPPED && r->refresh &&
	    may_refresh(r, pid, image) &&
	    sym_process_refresh(r->sym, (int)pid, image, NULL) == 0) {
		ret = keep_refreshed(r, pid, image);
		if (!ret)
			ret = sym_lookup_user(r->sym, (int)pid, image, addr,
					      is_return, res);
	}
	if (!ret && res->reason == SYM_UNMAPPED)
		ret = sym_lookup_unmapped_jit(r->sym, (int)pid, image, addr,
					      is_return, res);
	return ret;
}

static int64_t resolve_addr(struct resolver *r, uint32_t pid, uint32_t image,
			    uint64_t addr, bool kernel, bool is_return)
{
	uint32_t flags = (is_return ? 1u : 0u) | (kernel ? 2u : 0u);
	if (kernel)
		pid = image = 0;
	struct addr_slot *s = slot_find(r, pid, image, addr, flags);
	if (s->loc)
		return s->loc;
	struct sym_result res = { .reason = SYM_NO_PROCESS };
	if (r->sym) {
		int ret = kernel ? sym_lookup_kernel(r->sym, addr, is_return, &res)
				 : lookup_user(r, pid, image, addr, is_return,
					       &res);
		if (ret < 0)
			return ret;
	}
	int64_t loc = location_from_result(r, addr, kernel, is_return, &res);
	if (loc < 0)
		return loc;
	s = slot_find(r, pid, image, addr, flags);
	*s = (struct addr_slot){ .addr = addr, .pid = pid, .image = image,
				 .flags = flags, .loc = (uint32_t)loc };
	if (++r->nused * 2 > r->nslots && slots_grow(r))
		return -ENOMEM;
	return loc;
}

/* Named frame (already symbolized text): cached per (kind, name). */
static int64_t resolve_name(struct resolver *r, const char *name, size_t len,
			    enum pf_loc_kind kind)
{
	/* cache: (kind, the name's string id, full length) -> location */
	int64_t id = strtab_intern(&r->p->strs, name, len);
	if (id < 0)
		return id;
	uint32_t **cache = &r->name_loc[kind & 3];
	size_t *cap = &r->name_cap[kind & 3];
	if ((size_t)id < *cap && (*cache)[id])
		return (*cache)[id];
	size_t old = *cap;
	if (sf_grow((void **)cache, cap, (size_t)id + 1, sizeof(**cache)))
		return -ENOMEM;
	if (*cap > old)
		memset(*cache + old, 0, (*cap - old) * sizeof(**cache));
	int64_t loc = profile_named_location(r->p, name, len, kind);
	if (loc < 0)
		return loc;
	(*cache)[id] = (uint32_t)loc;
	return loc;
}

/* A named frame with its SYM+OFF offset (--offsets): a location per
 * (kind, name, offset), apart from the name's own. */
static int64_t resolve_name_off(struct resolver *r, const struct bt_frame *f,
				enum pf_loc_kind kind)
{
	struct pf_location pl = { .kind = (uint8_t)kind };
	if (!r->offsets || !set_offset(&pl, f->has_offset, f->offset))
		return resolve_name(r, f->name, f->name_len, kind);
	int64_t id = strtab_intern(&r->p->strs, f->name, f->name_len);
	if (id < 0)
		return id;
	struct u64map *m = &r->name_off[kind & 3];
	bool found;
	m->valsz = sizeof(uint32_t);
	uint32_t *slot = u64map_slot(m, ((uint64_t)id + 1) << 32 | pl.offset,
				     &found);
	if (!slot)
		return -ENOMEM;
	if (found)
		return *slot;
	int64_t loc = profile_named_location_at(r->p, f->name, f->name_len, &pl);
	if (loc < 0)
		return loc;
	/* nothing has touched m since u64map_slot(): slot is valid */
	*slot = (uint32_t)loc;
	return loc;
}

/* A kernel frame bpftrace named, with its address: a location of its own
 * on the kernel mapping, per (address, is_return), as resolve_addr()
 * makes them (a return address is written as the call's last byte). */
static int64_t resolve_kernel_named(struct resolver *r,
				    const struct bt_frame *f, bool is_return)
{
	uint64_t addr = f->addr;
	uint32_t flags = 4u | (is_return ? 1u : 0u);
	struct addr_slot *s = slot_find(r, 0, 0, addr, flags);
	if (s->loc)
		return s->loc;
	int64_t m = kernel_mapping(r);
	if (m < 0)
		return m;
	struct pf_location pl = { .mapping = (uint32_t)m, .address = addr,
				  .kind = PF_LOC_KERNEL,
				  .is_return = is_return && addr };
	set_offset(&pl, f->has_offset, f->offset);
	int64_t kloc = profile_named_location_at(r->p, f->name, f->name_len,
						 &pl);
	if (kloc < 0)
		return kloc;
	s = slot_find(r, 0, 0, addr, flags);
	*s = (struct addr_slot){ .addr = addr, .flags = flags, .loc = (uint32_t)kloc };
	if (++r->nused * 2 > r->nslots && slots_grow(r))
		return -ENOMEM;
	return kloc;
}

/* A return address bpftrace named "SYM+0" (f->at_start): the call was
 * the last instruction of the function before SYM (a noreturn call), and
 * bpftrace does not look up address - 1.  Looked up here when its
 * process's map, or kallsyms, names it; 0 when neither can (then
 * bpftrace's name stands). */
static int64_t resolve_at_start(struct resolver *r, uint32_t pid,
				uint32_t image, const struct bt_frame *f)
{
	if (!r->sym || (!f->kernel && !pid))
		return 0;
	int64_t loc = resolve_addr(r, pid, image, f->addr, f->kernel, true);
	if (loc <= 0)
		return loc;
	return r->p->locations[loc].nlines ? loc : 0;
}

static int stack_push(struct resolver *r, size_t n, int64_t loc)
{
	if (loc < 0)
		return (int)loc;
	if (sf_grow((void **)&r->stack, &r->stack_cap, n + 1, sizeof(*r->stack)))
		return -ENOMEM;
	r->stack[n] = (uint32_t)loc;
	return 0;
}


int resolver_record(struct resolver *r, const struct bt_record *rec)
{
	int64_t id = resolver_record_id(r, rec);
	return id < 0 ? (int)id : 0;
}

/* String id of the record's process name, from its snapshot (0 when
 * there is none: one-liner input, a process gone before its map was
 * saved). */
static int64_t process_name(struct resolver *r, const struct bt_record *rec)
{
	const char *name = r->sym && rec->has_pid && rec->pid
				   ? sym_process_name(r->sym, (int)rec->pid,
						      rec->image)
				   : NULL;
	return name ? intern(r, name) : 0;
}

/* The record's comm; "[empty]" for one that is there but empty
 * (prctl(PR_SET_NAME, "") is allowed), as an empty frame is named: id 0
 * means the input has no comm, and the folded line would lose its
 * process frame, its first function taking that place. */
static int64_t record_comm(struct resolver *r, const struct bt_record *rec)
{
	if (!rec->comm)
		return 0;
	if (!rec->comm_len)
		return intern(r, "[empty]");
	return strtab_intern(&r->p->strs, rec->comm, rec->comm_len);
}


/* --- Python frames (bt/profile-python.bt, docs/python.md) --- */

#define PY_EVAL_NAME "_PyEval_EvalFrameDefault"
#define PY_HDR_COUNT 255u	/* the key's header: frames taken */
#define PY_HDR_CUT 256u		/* ... the walk was cut at its bound */
#define PY_HDR_PYTHON 512u	/* ... the thread was a Python one */
#define PY_CODE_MASK 0x7ffffffffffeull
#define PY_DELTA_UNKNOWN 0xffffu
#define PY_HDR_TAG_SHIFT 16	/* ... and the sample's tag, 47 bits */
#define PY_HDR_TAG_MASK 0x7fffffffffffull	/* (a key's integers print signed) */

/* Is location loc (one of its lines) CPython's evaluation loop? */
static bool loc_is_eval(const struct resolver *r, uint32_t loc)
{
	const struct pf_location *l = &r->p->locations[loc];
	for (uint32_t i = 0; i < l->nlines; i++) {
		const struct pf_line *ln = &r->p->lines[l->line_start + i];
		const char *nm = profile_str(r->p, r->p->functions[ln->function].name);
		if (nm && strcmp(nm, PY_EVAL_NAME) == 0)
			return true;
	}
	return false;
}

/* Python frame v of the key (code | delta << 47 | is_entry) named (not
 * when trusted is false); an unnamed one counted for each of the
 * record's samples. */
static int64_t py_frame(struct resolver *r, uint32_t pid, uint32_t image,
			uint64_t v, uint64_t count, bool trusted)
{
	uint64_t code = v & PY_CODE_MASK, delta = v >> 47 & 0xffff;
	uint64_t instr = delta == PY_DELTA_UNKNOWN ? 0 : code + 2 * delta;
	char name[600];
	if (!trusted ||
	    !pyframes_name(r->py, pid, image, code, instr, name, sizeof(name))) {
		sf_sat_addto(&r->p->counters.py_unknown_frames, count);
		return resolve_name(r, "[python:unknown]", 16, PF_LOC_USER);
	}
	return resolve_name(r, name, strlen(name), PF_LOC_USER);
}

static int merged_push(struct resolver *r, size_t *n, int64_t loc)
{
	if (loc < 0)
		return (int)loc;
	if (sf_grow((void **)&r->merged, &r->merged_cap, *n + 1,
		    sizeof(*r->merged)))
		return -ENOMEM;
	r->merged[(*n)++] = (uint32_t)loc;
	return 0;
}

/* Are the record's k Python frames' code objects still the ones sampled?
 * Its tag (the header's high bits) against the fold of what they hold
 * now: a freed code object's address taken by another one since the
 * sample gives another fold, and none of the frames is named (one of
 * them is wrong, and which is not known).  A capture without tags: yes. */
static bool py_trusted(struct resolver *r, const struct bt_record *rec,
		       uint32_t pid, size_t k)
{
	if (!pyframes_tagged(r->py))
		return true;
	uint64_t acc = 0;
	for (size_t i = 0; i < k; i++)
		if (!pyframes_fold_code(r->py, pid, rec->image,
					rec->ints[1 + i] & PY_CODE_MASK, &acc))
			return false;
	return (acc & PY_HDR_TAG_MASK) == rec->ints[0] >> PY_HDR_TAG_SHIFT;
}

/*
 * Put the record's Python frames into r->stack[0..*n) (leaf first): each
 * _PyEval_EvalFrameDefault frame gets, just above it, the Python frames
 * from the next not yet placed down to the first entry frame (is_entry:
 * the one the call of that evaluation loop began with).  Frames left
 * over (the native walk stopped early, or found no evaluation loop) go
 * at the root end, callers of all.
 */
static int py_merge(struct resolver *r, const struct bt_record *rec, size_t *n)
{
	uint64_t hdr = rec->ints[0];
	size_t k = hdr & PY_HDR_COUNT, pi = 0, m = 0;
	uint32_t pid = rec->has_pid ? rec->pid : 0;
	if (k > rec->nints - 1)
		k = rec->nints - 1;
	if (hdr & PY_HDR_CUT)
		r->p->counters.py_cut_stacks += rec->count;
	bool trusted = py_trusted(r, rec, pid, k);
	for (size_t i = 0; i < *n; i++) {
		bool eval = loc_is_eval(r, r->stack[i]);
		while (eval && pi < k) {
			uint64_t v = rec->ints[1 + pi++];
			int ret = merged_push(r, &m, py_frame(r, pid, rec->image, v,
							      rec->count, trusted));
			if (ret)
				return ret;
			if (v & 1)
				break;	/* the entry frame: this loop's first */
		}
		int ret = merged_push(r, &m, r->stack[i]);
		if (ret)
			return ret;
	}
	while (pi < k) {
		int ret = merged_push(r, &m, py_frame(r, pid, rec->image,
							  rec->ints[1 + pi++], rec->count,
							  trusted));
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < m; i++) {
		int ret = stack_push(r, i, r->merged[i]);
		if (ret)
			return ret;
	}
	*n = m;
	return 0;
}

int64_t resolver_record_id(struct resolver *r, const struct bt_record *rec)
{
	size_t n = rec->nframes;
	uint32_t pid = rec->has_pid ? rec->pid : 0;
	/* frames are root first; the profile wants leaf first */
	for (size_t i = 0; i < n; i++) {
		const struct bt_frame *f = &rec->frames[n - 1 - i];
		size_t pos = n - 1 - i;
		/* the leaf of each side is an exact IP, the rest return addresses */
		bool leaf = f->kernel ? pos == n - 1 : pos == rec->nuser - 1;
		enum pf_loc_kind kind = f->kernel ? PF_LOC_KERNEL : PF_LOC_USER;
		int64_t loc = 0;
		if (f->kind == BT_FRAME_ADDR)
			loc = resolve_addr(r, pid, rec->image, f->addr,
					   f->kernel, !leaf);
		else if (!leaf && f->at_start && f->has_addr)
			loc = resolve_at_start(r, pid, rec->image, f);
		if (loc == 0 && f->has_addr && kind == PF_LOC_KERNEL)
			loc = resolve_kernel_named(r, f, !leaf);
		else if (loc == 0)
			loc = resolve_name_off(r, f, kind);
		int ret = stack_push(r, i, loc);
		if (ret)
			return ret;
	}
	if (r->py && rec->nints > 0 && (rec->ints[0] & PY_HDR_PYTHON)) {
		int ret = py_merge(r, rec, &n);
		if (ret)
			return ret;
	}
	if (rec->maybe_truncated) {	/* as perf and pprof mark them */
		int ret = stack_push(r, n++, resolve_name(r, "[truncated]", 11,
							  PF_LOC_USER));
		if (ret)
			return ret;
		r->p->counters.truncated_stacks += rec->count;
	}
	int64_t comm = record_comm(r, rec);
	int64_t proc = process_name(r, rec);
	if (comm < 0 || proc < 0)
		return -ENOMEM;
	struct pf_sample key = { .pid = pid, .tid = rec->has_tid ? rec->tid : 0,
				 .comm = (uint32_t)comm,
				 .thread_name = (uint32_t)comm,
				 .process = (uint32_t)proc };
	return profile_add_sample_id(r->p, &key, r->stack, (uint32_t)n,
				     rec->count);
}

static bool has_suffix(const char *s, size_t len, const char *sfx)
{
	return len >= 4 && memcmp(s + len - 4, sfx, 4) == 0;
}

/* A physical frame of folded input and the frames inlined into it: folded
 * text (stackfold's, perf's) marks a frame inlined into the one before it
 * with _[i], and pprof has such a chain as one location's lines. */
#define SF_INLINE_MAX 64
struct inline_run {
	struct pf_line lines[SF_INLINE_MAX];	/* outermost first */
	uint32_t n;		/* 0: the frame takes no inlined lines */
	uint8_t kind;
};

/* Start a run at the one-line named location loc. */
static void run_start(const struct resolver *r, struct inline_run *run,
		      uint32_t loc)
{
	const struct pf_location *l = &r->p->locations[loc];
	run->n = l->nlines == 1;
	run->kind = l->kind;
	if (run->n)
		run->lines[0] = r->p->lines[l->line_start];
}

/* Add inlined frame loc (a one-line named location): false when the
 * run cannot take it (full, or no run). */
static bool run_add(const struct resolver *r, struct inline_run *run,
		    uint32_t loc)
{
	const struct pf_location *l = &r->p->locations[loc];
	if (!run->n || run->n >= SF_INLINE_MAX || l->nlines != 1)
		return false;
	run->lines[run->n++] = r->p->lines[l->line_start];
	return true;
}

/* The location of a run with inlined frames, innermost first, in place of
 * the run's frame at r->stack[top].  0 or -ENOMEM. */
static int run_flush(struct resolver *r, struct inline_run *run, size_t top)
{
	if (run->n > 1) {
		struct pf_line lines[SF_INLINE_MAX];
		for (uint32_t i = 0; i < run->n; i++)
			lines[i] = run->lines[run->n - 1 - i];
		struct pf_location key = { .kind = run->kind };
		int64_t loc = profile_location(r->p, &key, lines, run->n);
		if (loc < 0)
			return (int)loc;
		r->stack[top] = (uint32_t)loc;
	}
	run->n = 0;
	return 0;
}

int resolver_folded(struct resolver *r, const char *stack, size_t len,
		    uint64_t count)
{
	const char *p = stack, *end = stack + len;
	size_t n = 0;
	struct inline_run run = { .n = 0 };
	int ret;
	/* collect root first into r->stack, then reverse; an empty stack is
	 * no frame ("[no stack]"), as fold_add_frames() reads it */
	while (len && p <= end) {
		size_t flen;
		const char *f = p, *e = fold_next_frame(p, end, &flen);
		enum pf_loc_kind kind = PF_LOC_USER;
		bool inl = false;
		/* a bare mark ("_[k]", "_[j]", "_[i]") is a name, as the
		 * direct folded path prints it */
		if (flen > 4 && has_suffix(p, flen, "_[k]")) {
			kind = PF_LOC_KERNEL;
			flen -= 4;
		} else if (flen > 4 && has_suffix(p, flen, "_[j]")) {
			kind = PF_LOC_JIT;
			flen -= 4;
		} else if (flen > 4 && has_suffix(p, flen, "_[i]") && run.n) {
			inl = true;
		} else if (!n) {
			/* the root is the process, by FlameGraph's convention:
			 * kept by -K as by -U, like a capture's process frame */
			kind = PF_LOC_MARK;
		}
		int64_t loc = resolve_name(r, f, flen - (inl ? 4 : 0), kind);
		if (loc < 0)
			return (int)loc;
		p = e + 1;
		if (inl && run_add(r, &run, (uint32_t)loc))
			continue;
		if (inl)	/* the run is full: a frame of its own, marked */
			loc = resolve_name(r, f, flen, kind);
		if ((n && (ret = run_flush(r, &run, n - 1))) ||
		    (ret = stack_push(r, n++, loc)))
			return ret;
		if (!inl)
			run_start(r, &run, r->stack[n - 1]);
	}
	if (n && (ret = run_flush(r, &run, n - 1)))
		return ret;
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = r->stack[i];
		r->stack[i] = r->stack[n - 1 - i];
		r->stack[n - 1 - i] = t;
	}
	return profile_add_sample(r->p, 0, 0, 0, 0, r->stack, (uint32_t)n, count);
}
