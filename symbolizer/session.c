/*
 * session.c - struct sym_session: options, lookups and stats (see
 * symbolizer.h).  Snapshots live in process.c, files in filetab.c, the
 * kernel in kallsyms.c, the warning queue and interned strings in
 * sessbase.c.
 *
 * Lookups never allocate once a mapping's index is built: a binary search
 * for the mapping, one for the symbol.
 *
 * res->module_addr: the address in the module's ELF space (for a return
 * address, the return address itself, not the adjusted one), the file
 * offset when the file cannot be read or for [vdso], the absolute address
 * for anonymous memory and for the kernel.
 *
 * sym_stats: files_pinned counts distinct files opened (once each, however
 * often the LRU reopens them); index_cache_hits counts indexes loaded from
 * the on-disk cache plus indexes shared by files with the same build-id;
 * index_corrupt counts corrupt cache entries elfindex rebuilt (recognised
 * by its warning text until elfindex.h reports them directly).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/libopen.h"
#include "base/safedir.h"
#include "process.h"
#include "symbolizer_priv.h"

/* ---- session ---- */

char *sym_default_cache_dir(void)
{
	const char *e = getenv("STACKFOLD_CACHE_DIR");
	const char *h = getenv("HOME");
	char buf[4096];
	if (e && *e)
		return strdup(e);
	/* a relative XDG_CACHE_HOME is invalid and ignored (XDG Base
	 * Directory spec) */
	if (!sf_xdg_cache(buf, sizeof(buf), h && *h ? h : NULL,
			  "stackfold", false))
		return NULL;
	return strdup(buf);
}

bool sym_cache_dir_usable(const char *dir, struct sf_err *err)
{
	return sf_cache_dir_usable(dir, err);
}

/* A cache dir not to be used: said once, and none used. */
static void cache_dir_check(struct sym_session *s)
{
	struct sf_err e = { "" };
	if (sym_cache_dir_usable(s->cache_dir, &e))
		return;
	sym_warn(s, "index cache not used: %s", e.msg);
	free(s->cache_dir);
	s->cache_dir = NULL;
	s->opts.cache_dir = NULL;
	s->eopts.cache_dir = NULL;
}

static int session_init(struct sym_session *s, const struct sym_opts *opts)
{
	if (opts)
		s->opts = *opts;
	if (!s->opts.no_cache) {
		s->cache_dir = s->opts.cache_dir ? strdup(s->opts.cache_dir) :
						   sym_default_cache_dir();
		s->opts.cache_dir = s->cache_dir;
	}
	s->eopts = (struct elfidx_opts){
		.cache_dir = s->cache_dir,
		.no_demangle = s->opts.no_demangle,
		.no_dwarf = s->opts.no_dwarf,
		.no_lines = s->opts.no_lines,
		.dwarf_whole = s->opts.dwarf_whole,
		.cache_max_bytes = s->opts.cache_max_bytes,
		.warn = sym_warn_cb,
		.warn_ctx = s,
		.limits = &s->limits,
	};
	sf_limits_init(&s->limits);
	vdso_set_init(&s->vdso, &s->files, &s->stats.vdso_reads);
	int rc = strtab_init(&s->strs);
	if (!rc)
		rc = strtab_init(&s->warn_seen);
	if (!rc && s->cache_dir)
		cache_dir_check(s);
	if (!rc)
		rc = filetab_init(&s->files, 0, &s->eopts, &s->stats);
	return rc;
}

struct sym_session *sym_session_new(const struct sym_opts *opts,
				    struct sf_err *err)
{
	struct sym_session *s = calloc(1, sizeof(*s));
	if (s) {
		s->libopen_base = sf_libopen_refused();
		s->libopen_bound_base = sf_libopen_refused_bound();
	}
	if (!s || session_init(s, opts)) {
		sym_session_free(s);
		sf_err_set(err, ENOMEM, "cannot create symbolizer session: %s",
			   strerror(ENOMEM));
		return NULL;
	}
	return s;
}

void sym_session_flush(struct sym_session *s)
{
	filetab_flush(&s->files);
}

void sym_session_free(struct sym_session *s)
{
	if (!s)
		return;
	sym_process_free_all(s);
	filetab_release(&s->files);
	if (s->ks_loaded)
		kallsyms_release(&s->ks);
	strtab_release(&s->strs);
	strtab_release(&s->warn_seen);
	free(s->warnq);
	vdso_set_release(&s->vdso);
	free(s->cache_dir);
	free(s);
}

void sym_session_stats(const struct sym_session *s, struct sym_stats *out)
{
	*out = s->stats;
	out->files_refused =
		__atomic_load_n(&s->limits.refused_type, __ATOMIC_RELAXED) +
		__atomic_load_n(&s->limits.refused_place, __ATOMIC_RELAXED) +
		sf_libopen_refused() - s->libopen_base;
	out->bounds_refused =
		__atomic_load_n(&s->limits.refused_bound, __ATOMIC_RELAXED) +
		sf_libopen_refused_bound() - s->libopen_bound_base;
}

const char *sym_reason_str(enum sym_reason r)
{
	static const char *const names[] = {
		[SYM_OK] = "ok",
		[SYM_UNMAPPED] = "address not mapped",
		[SYM_NO_PROCESS] = "process not snapshotted",
		[SYM_NO_FILE] = "mapped file unavailable",
		[SYM_NO_SYMBOLS] = "no symbol table",
		[SYM_NOT_FOUND] = "no symbol at address",
		[SYM_ANON] = "anonymous memory",
		[SYM_KPTR_RESTRICTED] = "kernel addresses hidden (kptr_restrict)",
	};
	if ((unsigned)r < sizeof(names) / sizeof(names[0]) && names[r])
		return names[r];
	return "unknown reason";
}

/* ---- lookups ---- */

static void res_clear(struct sym_result *res, enum sym_reason r)
{
	res->reason = r;
	res->nframes = 0;
	res->module = NULL;
	res->module_addr = 0;
	res->jit = false;
	res->has_offset = false;
	res->offset = 0;
	res->offset_name = NULL;
}

static int finish(struct sym_session *s, struct sym_result *res)
{
	if (res->reason != SYM_OK || !res->nframes)
		s->stats.unresolved++;
	return 0;
}

static void fill_caps(struct sym_mapping *m)
{
	const struct elfidx_caps *c = &m->file->caps;
	m->mod.has_functions = c->has_symbols;
	m->mod.has_filenames = c->has_filenames;
	m->mod.has_line_numbers = c->has_line_numbers;
	m->mod.has_inline_frames = c->has_inline_frames;
	m->mod.build_id = m->file->build_id;
	m->caps_done = true;
}

/* File-backed mapping (or [vdso] image): offset -> ELF vaddr -> symbol. */
static void lookup_file(struct sym_session *s, struct sym_mapping *m,
			uint64_t addr, bool is_return, struct sym_result *res)
{
	uint64_t off = m->e->offset + (addr - m->e->start), vaddr;
	res->module_addr = off + is_return;
	if (!m->file) {
		res->reason = SYM_NO_FILE;
		return;
	}
	struct elf_index *idx = filetab_index(&s->files, m->file);
	if (!idx) {
		res->reason = m->file->state == SYMF_FAILED ? SYM_NO_FILE :
							      SYM_NO_SYMBOLS;
		return;
	}
	if (!m->caps_done)
		fill_caps(m);
	if (!elfidx_file_offset_to_vaddr(idx, off, &vaddr)) {
		res->reason = SYM_NOT_FOUND;
		return;
	}
	if (m->e->kind != MAPS_VDSO)
		res->module_addr = vaddr + is_return;
	elfidx_lookup(idx, vaddr, res);
	res->offset += res->has_offset && is_return;
}

static void jit_named(struct sym_result *res, const char *name)
{
	res->reason = SYM_OK;
	res->jit = true;
	res->has_offset = false;
	res->offset = 0;
	res->offset_name = NULL;
	res->nframes = 1;
	res->frames[0] = (struct sym_frame){ .name = name,
					     .system_name = name };
}

/* Anonymous memory: named by the JIT's perf map, if any.  Where the
 * process has one, the region is the perf map's even at an address it
 * does not name, so that one region is one mapping (pprof), not two. */
static void lookup_anon(struct sym_session *s, struct sym_process *p,
			struct sym_mapping *m, uint64_t addr,
			struct sym_result *res)
{
	const char *name = sym_process_jit_name(s, p, addr);
	res->reason = SYM_ANON;
	if (p->pm_ready && m->jit_mod.path)
		res->module = &m->jit_mod;
	if (!name)
		return;
	res->module = &m->jit_mod;
	jit_named(res, name);
}

int sym_lookup_user(struct sym_session *s, int pid, uint32_t image,
		    uint64_t abs_addr, bool is_return, struct sym_result *res)
{
	res_clear(res, SYM_NO_PROCESS);
	s->stats.lookups++;
	struct sym_process *p = sym_process_find(s, pid, image);
	if (!p)
		return finish(s, res);
	bool adj = is_return && abs_addr > 0;
	uint64_t addr = abs_addr - adj;
	struct sym_mapping *m = sym_process_mapping(p, addr);
	res->reason = SYM_UNMAPPED;
	if (!m)
		return finish(s, res);
	res->module = &m->mod;
	res->module_addr = abs_addr;
	switch (m->e->kind) {
	case MAPS_FILE:
	case MAPS_VDSO:
		/* a guessed remap or a memfd where the perf map has code is
		 * the JIT's, all of it: one region, one mapping */
		if (maps_entry_file_may_jit(m->e) &&
		    sym_process_jit_region(s, p, m->e->start, m->e->limit)) {
			lookup_anon(s, p, m, addr, res);
			break;
		}
		lookup_file(s, m, addr, adj, res);
		/* a guessed remap or a memfd that the file cannot name may
		 * be JIT code */
		if (maps_entry_file_may_jit(m->e) && res->reason != SYM_OK &&
		    sym_process_jit_name(s, p, addr))
			lookup_anon(s, p, m, addr, res);
		break;
	case MAPS_ANON:
	case MAPS_ANON_NAMED:
	case MAPS_ANON_SHM:
	case MAPS_HEAP:		/* some JITs emit code into the brk heap */
		lookup_anon(s, p, m, addr, res);
		break;
	default:
		res->reason = SYM_ANON;
		break;
	}
	return finish(s, res);
}

int sym_lookup_unmapped_jit(struct sym_session *s, int pid, uint32_t image,
			    uint64_t abs_addr, bool is_return,
			    struct sym_result *res)
{
	struct sym_process *p = sym_process_find(s, pid, image);
	uint64_t addr = abs_addr - (is_return && abs_addr > 0);
	if (!p || sym_process_mapping(p, addr))
		return 0;	/* not an unmapped address: res stands */
	const char *name = sym_process_jit_name(s, p, addr);
	if (name) {
		res_clear(res, SYM_UNMAPPED);
		jit_named(res, name);
		if (s->stats.unresolved)	/* sym_lookup_user counted it */
			s->stats.unresolved--;
	}
	return 0;
}

static void kallsyms_ensure(struct sym_session *s)
{
	if (s->ks_loaded)
		return;
	const char *kpath, *mpath;
	kallsyms_default_paths(&kpath, &mpath);
	s->ks_err = kallsyms_load(&s->ks, kpath, mpath);
	s->ks_loaded = true;
	if (s->ks_err)
		sym_warn(s, "cannot read '%s': %s: kernel frames are shown as "
			 "addresses", kpath, strerror(-s->ks_err));
	else if (s->ks.restricted)
		sym_warn(s, "kernel symbol addresses are hidden (kptr_restrict "
			 "or no CAP_SYSLOG): kernel frames are shown as "
			 "addresses; run as root or set "
			 "kernel.kptr_restrict=0");
}

int sym_lookup_kernel(struct sym_session *s, uint64_t addr, bool is_return,
		      struct sym_result *res)
{
	static const struct sym_module unknown_kernel = {
		.path = "[kernel]", .build_id = "", .is_kernel = true,
	};
	res_clear(res, SYM_NO_SYMBOLS);
	s->stats.lookups++;
	kallsyms_ensure(s);
	res->module = &unknown_kernel;
	res->module_addr = addr;
	if (s->ks_err || !s->ks.nmods)
		return finish(s, res);
	res->module = &s->ks.mods[0];
	if (s->ks.restricted) {
		res->reason = SYM_KPTR_RESTRICTED;
		return finish(s, res);
	}
	uint64_t a = addr - (is_return && addr > 0);
	const struct ksym *k = kallsyms_find(&s->ks, a);
	if (!k) {
		res->reason = SYM_NOT_FOUND;
		res->module = kallsyms_module_of(&s->ks, a);
		return finish(s, res);
	}
	const char *name = strtab_get(&s->ks.names, k->name);
	res->reason = SYM_OK;
	res->module = &s->ks.mods[k->mod];
	res->has_offset = true;
	res->offset = addr - k->addr;
	res->nframes = 1;
	res->frames[0] = (struct sym_frame){ .name = name,
					     .system_name = name };
	return finish(s, res);
}

/* sym_lookup_elf() is not on the sampling hot path: one stat(2) per call
 * finds the file by (dev, inode) in the file table. */
int sym_lookup_elf(struct sym_session *s, const char *path, uint64_t elf_addr,
		   struct sym_result *res)
{
	res_clear(res, SYM_NO_FILE);
	s->stats.lookups++;
	struct stat st;
	if (!path || stat(path, &st))
		return finish(s, res);
	struct sym_file_desc d = { .dev = st.st_dev, .ino = st.st_ino,
				   .path = path, .path_len = strlen(path) };
	struct sym_file *f = filetab_get(&s->files, &d);
	if (!f)
		return -ENOMEM;
	struct elf_index *idx = filetab_index(&s->files, f);
	res->module = &f->elf_mod;
	res->module_addr = elf_addr;
	f->elf_mod.path = f->path;
	f->elf_mod.build_id = f->build_id;
	if (!idx) {
		res->reason = f->state == SYMF_FAILED ? SYM_NO_FILE :
							SYM_NO_SYMBOLS;
		return finish(s, res);
	}
	f->elf_mod.has_functions = f->caps.has_symbols;
	f->elf_mod.has_filenames = f->caps.has_filenames;
	f->elf_mod.has_line_numbers = f->caps.has_line_numbers;
	f->elf_mod.has_inline_frames = f->caps.has_inline_frames;
	elfidx_lookup(idx, elf_addr, res);
	return finish(s, res);
}
