/*
 * elfsyms.c - function symbols and PT_LOAD segments of an ELF file (libelf)
 * into an idx_builder.
 *
 * Kept: STT_FUNC and STT_GNU_IFUNC, plus sized STT_NOTYPE symbols in
 * executable sections (hand-written assembly).  Aliases at one address are
 * reduced to one name: sized before sizeless (a sizeless alias must not
 * shrink the function to one byte), then global, weak, local, then the
 * shortest, then the lexicographically smallest name; the range is the
 * largest size among them.  PLT stubs get synthesized names (elfplt.c),
 * below any symbol at the same address.  Every libelf call is checked, so a
 * malformed file gives fewer symbols, never a crash.
 */
#include "elf/elfidx_priv.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct rawsym {
	uint64_t lo, size;
	const char *name;	/* points into libelf's data, valid until elf_end */
	int rank;		/* binding: 0 global, 1 weak, 2 local/other;
				 * 3 a PLT stub's synthesized name */
};

struct rawsyms {
	struct rawsym *v;
	size_t n, cap;
};

static int bind_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int add_raw(struct rawsyms *out, uint64_t lo, uint64_t size,
		   const char *name, int rank)
{
	if (sf_grow((void **)&out->v, &out->cap, out->n + 1, sizeof(*out->v)))
		return -ENOMEM;
	out->v[out->n++] = (struct rawsym){
		.lo = lo, .size = size, .name = name, .rank = rank,
	};
	return 0;
}

static bool section_is_exec(Elf *elf, size_t shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static bool sym_wanted(Elf *elf, const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info);

	if (s->st_shndx == SHN_UNDEF || s->st_shndx == SHN_ABS ||
	    s->st_shndx == SHN_COMMON)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	return type == STT_NOTYPE && s->st_size > 0 &&
	       s->st_shndx < SHN_LORESERVE && section_is_exec(elf, s->st_shndx);
}

static int read_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       struct rawsyms *out)
{
	size_t ent = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *d = elf_getdata(scn, NULL);

	/* Don't trust sh_entsize (CVE-2017-7612, CVE-2018-18521). */
	if (!d || !ent || sh->sh_entsize != ent)
		return 0;
	size_t n = d->d_size / ent;
	if (n > (size_t)INT32_MAX)	/* gelf_getsym takes an int index */
		n = (size_t)INT32_MAX;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s) || !sym_wanted(elf, &s))
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (add_raw(out, s.st_value, s.st_size, name,
			    bind_rank(s.st_info)))
			return -ENOMEM;
	}
	return 0;
}

/* Read .symtab if there is one with entries, else .dynsym.  want_dynsym
 * false: .symtab only (used for separate debug files). */
static int collect(Elf *elf, bool want_dynsym, struct rawsyms *out)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh, ssh, dsh;
	size_t shnum;

	if (elf_getshdrnum(elf, &shnum))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			ssh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dsh = sh;
		}
	}
	if (symtab)
		return read_symtab(elf, symtab, &ssh, out);
	if (dynsym && want_dynsym)
		return read_symtab(elf, dynsym, &dsh, out);
	return 0;
}

/* Does a beat b as the name for their shared address? */
static int alias_cmp(const struct rawsym *a, const struct rawsym *b)
{
	if ((a->size > 0) != (b->size > 0))
		return a->size > 0 ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	size_t la = strlen(a->name), lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int rawsym_cmp(const void *pa, const void *pb)
{
	const struct rawsym *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return alias_cmp(a, b);
}

/* Sorted, alias-reduced symbols into b->syms (replacing what is there). */
static int emit(struct idx_builder *b, struct rawsyms *rs)
{
	if (rs->n)
		qsort(rs->v, rs->n, sizeof(*rs->v), rawsym_cmp);
	bool real = false;	/* a symbol from a table, not only PLT names */
	b->nsyms = 0;
	for (size_t i = 0; i < rs->n;) {
		real |= rs->v[i].rank < 3;
		size_t j = i;
		uint64_t size = 0;
		for (; j < rs->n && rs->v[j].lo == rs->v[i].lo; j++)
			size = rs->v[j].size > size ? rs->v[j].size : size;
		if (sf_grow((void **)&b->syms, &b->symcap, b->nsyms + 1,
			    sizeof(*b->syms)))
			return -ENOMEM;
		struct idx_sym *s = &b->syms[b->nsyms++];
		s->lo = rs->v[i].lo;
		s->size = size;
		/* raw: demangled at lookup (IDX_SYMS_RAW, demangle.c) */
		int64_t id = idxb_str(b, rs->v[i].name);
		if (id < 0)
			return -ENOMEM;
		s->name = s->sysname = (uint32_t)id;
		i = j;
	}
	if (b->nsyms)
		b->flags |= IDX_SYMS_RAW;
	if (real)
		b->flags |= IDX_HAS_SYMBOLS;
	return 0;
}

int elfsyms_collect(struct idx_builder *b, Elf *elf, Elf *extra,
		    bool want_dynsym)
{
	struct rawsyms rs = { 0 };
	struct pltsyms plt = { 0 };
	int rc = collect(elf, want_dynsym, &rs);

	if (!rc && extra)
		rc = collect(extra, true, &rs);
	if (!rc)	/* only the file that is mapped has its PLT's bytes */
		rc = elfplt_collect(elf, &plt);
	if (!rc && extra)
		rc = elfplt_collect(extra, &plt);
	for (size_t i = 0; !rc && i < plt.n; i++)
		rc = add_raw(&rs, plt.v[i].lo, plt.v[i].size, plt.v[i].name, 3);
	if (!rc)
		rc = emit(b, &rs);
	free(rs.v);
	pltsyms_release(&plt);
	return rc;
}

int elfsyms_phdrs(struct idx_builder *b, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n && i < 65536; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (sf_grow((void **)&b->phdrs, &b->phcap, b->nphdrs + 1,
			    sizeof(*b->phdrs)))
			return -ENOMEM;
		b->phdrs[b->nphdrs++] = (struct idx_phdr){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz, .memsz = ph.p_memsz,
			.flags = ph.p_flags,
		};
	}
	return 0;
}

/* Does any symbol table in elf have entries?  (For choosing sources.) */
bool elfsyms_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB &&
		    sh.sh_size > sh.sh_entsize)
			return true;
	return false;
}
