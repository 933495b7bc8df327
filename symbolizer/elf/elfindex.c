/*
 * elfindex.c - see elfindex.h.  Opening (cache, else build from the ELF
 * file and its debug info) and lookups over the flat index blob.
 */
#include "elf/elfidx_priv.h"
#include "elf/debuglink.h"
#include "elf/dwsrc.h"
#include "elf/idxcache.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void hex_encode(const unsigned char *p, size_t n, char *hex,
		       size_t hexsize)
{
	static const char digits[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n && o + 2 < hexsize; i++) {
		hex[o++] = digits[p[i] >> 4];
		hex[o++] = digits[p[i] & 15];
	}
	hex[o] = '\0';
}

/* Build-id of an open Elf into hex; 0 or -ENOENT. */
static int build_id_hex(Elf *elf, char *hex, size_t hexsize)
{
	const void *id = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	hex[0] = '\0';
	if (n <= 0 || !id)
		return -ENOENT;
	/* Build-ids are 16 or 20 bytes; keep at most what fits (<= 32). */
	hex_encode(id, (size_t)n > 32 ? 32 : (size_t)n, hex, hexsize);
	return 0;
}

int elf_read_build_id(int fd, char *hex, size_t hexsize)
{
	if (hexsize < 41)
		return -EINVAL;
	hex[0] = '\0';
	Elf *elf = dwsrc_elf_open(fd, ELF_C_READ);
	if (!elf)
		return -EINVAL;
	int rc = build_id_hex(elf, hex, hexsize);
	elf_end(elf);
	return rc;
}

const char *elfidx_build_id(const struct elf_index *idx)
{
	return idx ? idx->hdr->build_id : "";
}

bool elfidx_from_cache(const struct elf_index *idx)
{
	return idx && idx->from_cache;
}

bool elfidx_file_offset_to_vaddr(const struct elf_index *idx, uint64_t off,
				 uint64_t *vaddr)
{
	if (!idx)
		return false;
	for (size_t i = 0; i < idx->nphdrs; i++) {
		const struct idx_phdr *p = &idx->phdrs[i];
		if (off >= p->offset && off - p->offset < p->filesz) {
			*vaddr = p->vaddr + (off - p->offset);
			return true;
		}
	}
	/* A mapping starts page-aligned, so its first bytes may lie below
	 * p_offset (e.g. the ELF header before the first segment). */
	for (size_t i = 0; i < idx->nphdrs; i++) {
		const struct idx_phdr *p = &idx->phdrs[i];
		uint64_t pstart = p->offset & ~(uint64_t)0xfff;
		if (off >= pstart && off < p->offset &&
		    p->vaddr >= p->offset - off) {
			*vaddr = p->vaddr - (p->offset - off);
			return true;
		}
	}
	return false;
}

void elfidx_caps(const struct elf_index *idx, struct elfidx_caps *caps)
{
	uint32_t f = idx ? idx->hdr->flags : 0;

	caps->has_symbols = f & IDX_HAS_SYMBOLS;
	caps->has_filenames = f & IDX_HAS_FILES;
	caps->has_line_numbers = f & IDX_HAS_LINES;
	caps->has_inline_frames = f & IDX_HAS_INLINE;
}

/* --- lookup --- */

/* Last symbol covering vaddr; a few overlapping predecessors are tried so
 * a sizeless label inside a sized function does not hide it. */
static const struct idx_sym *find_sym(const struct elf_index *x, uint64_t a)
{
	size_t lo = 0, hi = x->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->syms[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* 16 sized ones, past any number of sizeless labels up to 4096 (an
	 * interpreter's loop in assembly has hundreds inside one function) */
	for (size_t i = lo, tries = 0, steps = 0; i > 0 && tries < 16 &&
	     steps < 4096; i--, steps++) {
		const struct idx_sym *s = &x->syms[i - 1];
		if (s->size ? a - s->lo < s->size : a == s->lo)
			return s;
		tries += s->size != 0;
	}
	return NULL;
}

/* vaddr as an offset from addr_base, false if out of the 32-bit range. */
static bool rel_addr(const struct elf_index *x, uint64_t vaddr, uint32_t *r)
{
	uint64_t base = x->hdr->addr_base;

	if (vaddr < base || vaddr - base > UINT32_MAX)
		return false;
	*r = (uint32_t)(vaddr - base);
	return true;
}

static const struct idx_line *find_line(const struct elf_index *x,
					uint64_t vaddr)
{
	uint32_t a;
	if (!rel_addr(x, vaddr, &a))
		return NULL;
	size_t i = LAST_LE(x->lines, x->nlines, addr, a);
	if (i == SIZE_MAX || (!x->lines[i].file && !x->lines[i].line))
		return NULL;
	return &x->lines[i];
}

static uint32_t find_node(const struct elf_index *x, uint64_t vaddr)
{
	uint32_t a;
	if (!rel_addr(x, vaddr, &a))
		return IDX_NONE;
	size_t i = LAST_LE(x->segs, x->nsegs, lo, a);
	return i == SIZE_MAX ? IDX_NONE : x->segs[i].node;
}

static const char *str_or_null(const struct elf_index *x, uint32_t off)
{
	return off ? x->strs + off : NULL;
}

static void set_name(const struct elf_index *x, struct sym_frame *f,
		     uint32_t name, uint32_t sysname)
{
	f->system_name = x->strs + sysname;
	f->name = x->strs + (x->no_demangle ? sysname : name);
}

/* A symbol-table name: demangled now if the index keeps names raw. */
static void set_sym_name(const struct elf_index *x, struct sym_frame *f,
			 const struct idx_sym *sym)
{
	f->system_name = x->strs + sym->sysname;
	if (x->no_demangle)
		f->name = f->system_name;
	else if (x->hdr->flags & IDX_SYMS_RAW)
		f->name = demangle_cache_name(x->dm, x->strs, sym->sysname);
	else
		f->name = x->strs + sym->name;
}

/* The subprogram that node n is inlined into (n itself if it is one). */
static uint32_t root_of(const struct elf_index *d, uint32_t n)
{
	while (n != IDX_NONE && d->nodes[n].parent != IDX_NONE)
		n = d->nodes[n].parent;
	return n;
}

/* Does root node nd take sym's name rather than its own?  Not when the
 * symbol is a compiler-made part of it with a plain name (foo.cold,
 * main.cold): that keeps the source's name.  A mangled one demangles to
 * "foo() [clone .cold]". */
static bool symname_wanted(const struct elf_index *x, const struct idx_node *nd,
			   const struct idx_sym *sym)
{
	const char *raw = x->strs + sym->sysname;

	if (nd->call_line != IDX_NODE_SYMNAME &&
	    nd->call_line != IDX_NODE_SYMNAME_C)
		return false;
	return !strchr(raw, '.') || strncmp(raw, "_Z", 2) == 0;
}

/* Frames from the DWARF scope chain starting at node n of d (x or one of
 * its overlays); sym is x's.  A chain longer than SYM_MAX_INLINE keeps
 * its innermost frames and its root, the function the code is in, with
 * the root's call line; the inlined frames between are left out. */
static void fill_inline(const struct elf_index *d, uint32_t n,
			const struct elf_index *x, const struct idx_sym *sym,
			struct sym_result *res)
{
	unsigned k = 0;
	uint32_t last = n;	/* the root, once n is IDX_NONE */

	while (n != IDX_NONE && k < SYM_MAX_INLINE) {
		if (k == SYM_MAX_INLINE - 1 && d->nodes[n].parent != IDX_NONE) {
			uint32_t below = n;
			while (d->nodes[d->nodes[below].parent].parent != IDX_NONE)
				below = d->nodes[below].parent;
			res->frames[k].file = str_or_null(d, d->nodes[below].call_file);
			res->frames[k].line = d->nodes[below].call_line;
			n = d->nodes[below].parent;
		}
		const struct idx_node *nd = &d->nodes[n];
		last = n;
		struct sym_frame *f = &res->frames[k++];
		set_name(d, f, nd->name, nd->sysname);
		f->start_line = nd->decl_line;
		if (nd->parent != IDX_NONE && k < SYM_MAX_INLINE) {
			res->frames[k].file = str_or_null(d, nd->call_file);
			res->frames[k].line = nd->call_line;
		}
		n = nd->parent;
	}
	/* DWARF names are the source's (a clone like foo.constprop.0 is
	 * foo, as in addr2line); a nameless DWARF function, or one marked
	 * IDX_NODE_SYMNAME(_C) whose symbol starts in it, takes the symbol
	 * table's name. */
	if (sym && k && (!*res->frames[k - 1].system_name ||
			 (n == IDX_NONE &&	/* frames[k - 1] is root */
			  symname_wanted(x, &d->nodes[last], sym) &&
			  root_of(d, find_node(d, sym->lo)) == last)))
		set_sym_name(x, &res->frames[k - 1], sym);
	res->nframes = k;
}

/* res's offset: vaddr's in sym, and sym's name where the root frame is
 * not named by it (then only is it demangled). */
static void set_offset(const struct elf_index *x, const struct idx_sym *sym,
		       uint64_t vaddr, struct sym_result *res)
{
	if (!res->nframes)
		return;
	const struct sym_frame *root = &res->frames[res->nframes - 1];
	res->has_offset = true;
	res->offset = vaddr - sym->lo;
	if (strcmp(root->system_name, x->strs + sym->sysname)) {
		struct sym_frame named;
		set_sym_name(x, &named, sym);
		res->offset_name = named.name;
	}
}

/* The index holding vaddr's DWARF rows and scopes. */
static const struct elf_index *dwarf_of(const struct elf_index *x,
					uint64_t vaddr)
{
	return x->lazy ? dwlazy_for(x, vaddr) : x;
}

void elfidx_lookup(const struct elf_index *x, uint64_t vaddr,
		   struct sym_result *res)
{
	res->nframes = 0;
	res->has_offset = false;
	res->offset = 0;
	res->offset_name = NULL;
	memset(res->frames, 0, sizeof(res->frames));
	/* PLT stubs' names alone (a stripped file) are not a symbol table */
	bool named = x && ((x->hdr->flags & IDX_HAS_SYMBOLS) || x->nsegs ||
			   x->lazy);
	if (!x || (!named && !x->nsyms)) {
		res->reason = SYM_NO_SYMBOLS;
		return;
	}
	const struct elf_index *d = dwarf_of(x, vaddr);
	const struct idx_sym *sym = find_sym(x, vaddr);
	uint32_t node = find_node(d, vaddr);
	if (!sym && node == IDX_NONE) {
		res->reason = named ? SYM_NOT_FOUND : SYM_NO_SYMBOLS;
		return;
	}
	res->reason = SYM_OK;
	if (node != IDX_NONE) {
		fill_inline(d, node, x, sym, res);
	} else {
		set_sym_name(x, &res->frames[0], sym);
		res->nframes = 1;
	}
	if (sym)
		set_offset(x, sym, vaddr, res);
	const struct idx_line *l = find_line(d, vaddr);
	res->frames[0].file = l ? str_or_null(d, l->file) : NULL;
	res->frames[0].line = l ? l->line : 0;
}

uint32_t elfidx_discriminator(const struct elf_index *x, uint64_t vaddr)
{
	const struct idx_line *l = x ? find_line(dwarf_of(x, vaddr), vaddr) :
				       NULL;
	return l ? l->disc : 0;
}

/* --- open --- */

void elfidx_flush(struct elf_index *idx)
{
	if (idx && idx->lazy)
		dwlazy_flush(idx);
}

void elfidx_free(struct elf_index *idx)
{
	if (!idx)
		return;
	dwlazy_free(idx);
	demangle_cache_free(idx->dm);
	idx_release_blob(idx);
	free(idx);
}

static int cache_key(int fd, const char *build_id, bool no_dwarf, char *key,
		     size_t size)
{
	struct stat st;

	if (*build_id) {
		snprintf(key, size, "b-%s%s", build_id, no_dwarf ? "-s" : "");
		return 0;
	}
	if (fstat(fd, &st))
		return -errno;
	/* No build-id: the file is its inode as it is now.  ctime too, which
	 * touch -r cannot set back: a file rewritten in place (cp, cat >) with
	 * its old size and mtime kept is another file.  Hashed, so the key
	 * stays short. */
	uint64_t v[5] = { (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
			  (uint64_t)st.st_mtim.tv_nsec, (uint64_t)st.st_ctim.tv_sec,
			  (uint64_t)st.st_ctim.tv_nsec };
	snprintf(key, size, "f-%llx-%llx-%016llx%s",
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		 (unsigned long long)sf_hash_bytes(v, sizeof(v), 0),
		 no_dwarf ? "-s" : "");
	return 0;
}

/* The key of key's index without line tables (no_lines), into dst
 * (NKEY_LEN bytes: key, IDX_KEY_LEN at most, and "-n"); key itself when
 * lines is true. */
#define NKEY_LEN (IDX_KEY_LEN + 2)
static void lines_key(char *dst, const char *key, bool lines)
{
	snprintf(dst, NKEY_LEN, "%s%s", key, lines ? "" : "-n");
}

/* Symbols: the file's .symtab; else the debug file's .symtab plus the
 * file's .dynsym; else .dynsym plus the MiniDebugInfo .symtab. */
static int build_syms(struct idx_builder *b, Elf *elf, Elf *dbg,
		      const char *path)
{
	struct debugdata md;
	int rc;

	if (elfsyms_has_symtab(elf)) {
		b->flags |= IDX_SYMTAB;
		return elfsyms_collect(b, elf, NULL, true);
	}
	if (dbg && elfsyms_has_symtab(dbg)) {
		b->flags |= IDX_SYMTAB;
		return elfsyms_collect(b, dbg, elf, false);
	}
	rc = debugdata_open(elf, b, path, &md);
	if (md.elf && elfsyms_has_symtab(md.elf))
		b->flags |= IDX_SYMTAB;
	if (!rc)
		rc = elfsyms_collect(b, elf, md.elf, true);
	debugdata_close(&md);
	return rc;
}

/*
 * Symbols, and the table of the DWARF's compile units: their rows and
 * scopes are read when a lookup first lands in them (dwlazy.c), so a cold
 * index of libc with libc6-dbg costs the units a profile touches, not
 * all 1,700 of them.  src is left open for those reads.
 */
static int build(struct idx_builder *b, Elf *elf, int fd, const char *path,
		 const struct elfidx_opts *o, struct dwsrc *src)
{
	bool own_dwarf = dwsrc_has_dwarf(elf);
	Elf *dbg = NULL;
	int dbgfd = -1;
	int rc = elfsyms_phdrs(b, elf);

	if (!rc && !own_dwarf && (!o->no_dwarf || !elfsyms_has_symtab(elf)))
		dbg = debuglink_open(elf, fd, path, b->build_id, b, &dbgfd);
	if (!rc)
		rc = build_syms(b, elf, dbg, path);
	if (own_dwarf || dbg)
		b->flags |= IDX_DEBUG_FOUND;
	else	/* no DWARF, no lines to leave out: one entry for all */
		b->flags &= ~(uint32_t)IDX_NO_LINES;
	if (!rc && !o->no_dwarf && (own_dwarf || dbg)) {
		int r = dwsrc_from(fd, own_dwarf, dbg, dbgfd, o, path, src);
		dbg = NULL;	/* taken */
		if (!r) {
			dwsrc_check_alt(b, src);
			r = dwarfidx_cus(b, src);
		}
		if (!r && b->neager)
			r = dwarfidx_collect(b, src, b->eager, b->neager);
		if (!r)
			b->flags |= IDX_DWARF_LAZY;
		if (r != -ENOENT)
			rc = r;
	}
	if (dbg) {
		elf_end(dbg);
		close(dbgfd);
	}
	return rc;
}

static struct elf_index *open_built(Elf *elf, int fd, const char *path,
				    const struct elfidx_opts *o,
				    const char *key, const char *bid,
				    struct sf_err *err)
{
	struct idx_builder b;
	unsigned char *blob = NULL;
	size_t len = 0;
	struct elf_index *idx = calloc(1, sizeof(*idx));

	if (!idx || idxb_init(&b)) {
		free(idx);
		sf_err_set(err, ENOMEM, "out of memory indexing '%s'", path);
		return NULL;
	}
	struct dwsrc src = { 0 };
	char nkey[NKEY_LEN];
	idxb_start(&b, o, bid);
	int rc = build(&b, elf, fd, path, o, &src);
	bool no_store = b.dwo_missing;
	lines_key(nkey, key, !(b.flags & IDX_NO_LINES));
	if (!rc)
		rc = idxb_freeze(&b, nkey, &blob, &len);
	idxb_release(&b);
	if (!rc)
		rc = idx_attach(idx, blob, len, nkey, err);
	if (!rc)
		idx->no_store = no_store;
	/* Without it (no fd left to dup: EMFILE) the index still answers,
	 * from its symbols and the units already read. */
	if (!rc && (idx->hdr->flags & IDX_DWARF_LAZY))
		(void)dwlazy_attach(idx, fd, path, o, &src);
	dwarfidx_close(&src);	/* not taken: no lazy DWARF */
	if (rc) {
		free(blob);
		free(idx);
		sf_err_set(err, -rc, "cannot index '%s': %s", path,
			   strerror(-rc));
		return NULL;
	}
	return idx;
}

static void warn(const struct elfidx_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(const struct elfidx_opts *o, const char *fmt, ...)
{
	char msg[SF_ERRLEN + 64];
	va_list ap;

	if (!o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->warn(o->warn_ctx, msg);
}

/* A cached index for key, or NULL (a corrupt entry is deleted and
 * reported once through o->warn, so the caller rebuilds it). */
#define IDX_DEBUGINFOD_RETRY_S 86400
#define IDX_DEBUGINFOD_DOWN_RETRY_S 600

/*
 * Was a cached entry built from a poorer copy of this file?  Copies that
 * share a build-id (a stripped binary and the unstripped one, or one
 * whose debug file was installed later) share the entry, and the first
 * one indexed must not hide what a richer one provides.
 */
static bool entry_poorer(const struct elf_index *idx, Elf *elf,
			 const char *path, const struct elfidx_opts *o)
{
	uint32_t f = idx->hdr->flags;

	if (!(f & IDX_SYMTAB) && elfsyms_has_symtab(elf))
		return true;
	if ((f & IDX_NO_LINES) && !o->no_lines)
		return true;
	if (o->no_dwarf || (f & IDX_DEBUG_FOUND))
		return false;
	if (dwsrc_has_dwarf(elf) || debuglink_buildid_exists(idx->hdr->build_id) ||
	    debuglink_appeared(elf, path, idx->hdr->built_at))
		return true;
	/* Built without debug info while debuginfod is configured now:
	 * rebuilt when no server was set then; asked again after a day
	 * when a server answered "not found" (libdebuginfod remembers its
	 * own such answers for 10 minutes), after 10 minutes when the
	 * servers were down (an offline machine with DEBUGINFOD_URLS set,
	 * as Debian's profile.d sets it, must not wait out the deadline
	 * and rebuild every entry on every run). */
	const char *urls = getenv("DEBUGINFOD_URLS");
	uint64_t age = (uint64_t)time(NULL) - idx->hdr->built_at;
	if (!urls || !*urls || !*idx->hdr->build_id)
		return false;
	if (f & IDX_DINFOD_MISS)
		return age > IDX_DEBUGINFOD_RETRY_S;
	if (f & IDX_DINFOD_DOWN)
		return age > IDX_DEBUGINFOD_DOWN_RETRY_S;
	return true;
}

/*
 * Was it built from a file laid out otherwise?  The key is the build-id,
 * which a separate debug file shares (its text segment has no bytes in
 * the file) and which patchelf keeps while it moves segments; the entry's
 * program headers are that other file's, and no offset of this one's
 * mappings would land in them.
 */
static bool layout_differs(const struct elf_index *idx, Elf *elf)
{
	struct idx_builder b = { 0 };	/* only its phdrs are used */
	/* struct idx_phdr is five uint64_t: no padding for memcmp to see */
	bool differs = elfsyms_phdrs(&b, elf) || b.nphdrs != idx->nphdrs ||
		(b.nphdrs && memcmp(b.phdrs, idx->phdrs,
				    b.nphdrs * sizeof(*b.phdrs)));

	free(b.phdrs);
	return differs;
}

static struct elf_index *open_cached(const struct elfidx_opts *o,
				     const char *key, Elf *elf, int fd,
				     const char *path)
{
	struct elf_index *idx = calloc(1, sizeof(*idx));
	struct sf_err e = { "" };

	if (!idx)
		return NULL;
	int rc = idxcache_load(o->cache_dir, key, idx, &e);
	if (!rc && (entry_poorer(idx, elf, path, o) || layout_differs(idx, elf))) {
		idx_release_blob(idx);
		free(idx);
		return NULL;
	}
	if (!rc && (idx->hdr->flags & IDX_DWARF_LAZY))
		(void)dwlazy_attach(idx, fd, path, o, NULL);	/* as above */
	if (!rc) {
		idx->from_cache = true;
		return idx;
	}
	if (rc == -EINVAL)
		warn(o, "%s; rebuilt", e.msg);
	else if (rc != -ENOENT)
		warn(o, "%s; index cache not used", e.msg);
	free(idx);
	return NULL;
}

/*
 * The cached index for key, or NULL.  An index without line tables
 * (no_lines; only of a file with DWARF) is stored under KEY-n, but one
 * with them answers as well and is tried first; its units not read yet
 * are then read with their lines, so that the entry stays whole.
 */
static struct elf_index *open_any_cached(const struct elfidx_opts *o,
					 const char *key, Elf *elf, int fd,
					 const char *path)
{
	struct elfidx_opts full = *o;
	struct elf_index *idx = NULL;
	char nkey[NKEY_LEN];

	if (!o->cache_dir)
		return NULL;
	full.no_lines = false;
	idx = open_cached(&full, key, elf, fd, path);
	if (!idx && o->no_lines) {
		lines_key(nkey, key, false);
		idx = open_cached(o, nkey, elf, fd, path);
	}
	return idx;
}

struct elf_index *elfidx_open(int fd, const char *path,
			      const struct elfidx_opts *opts,
			      struct sf_err *err)
{
	static const struct elfidx_opts defaults;
	struct elfidx_opts eo = opts ? *opts : defaults;
	const struct elfidx_opts *o = &eo;
	struct elf_index *idx = NULL;
	char bid[48], key[IDX_KEY_LEN];

	if (eo.no_dwarf)
		eo.no_lines = false;	/* one key for symbols only */

	if (!path)
		path = "?";
	Elf *elf = dwsrc_elf_open(fd, elf_read_cmd(fd));
	if (!elf) {
		sf_err_set(err, EINVAL, "cannot read '%s': not an ELF file",
			   path);
		return NULL;
	}
	build_id_hex(elf, bid, sizeof(bid));
	if (cache_key(fd, bid, o->no_dwarf, key, sizeof(key))) {
		elf_end(elf);
		sf_err_set(err, EIO, "cannot stat '%s'", path);
		return NULL;
	}
	idx = open_any_cached(o, key, elf, fd, path);
	if (!idx) {
		idx = open_built(elf, fd, path, o, key, bid, err);
		if (idx && o->cache_dir &&	/* under KEY or KEY-n */
		    (idx->no_store ||
		     idxcache_put(o, idx->hdr->key, idx->blob, idx->len)))
			dwlazy_uncache(idx);
	}
	elf_end(elf);
	if (idx)
		idx->no_demangle = o->no_demangle;
	if (idx && !o->no_demangle && (idx->hdr->flags & IDX_SYMS_RAW))
		idx->dm = demangle_cache_new();	/* NULL: names stay raw */
	return idx;
}
