/*
 * elfplt.c - names for the PLT stubs of an x86-64 ELF file: `atoi@plt`,
 * as perf and objdump -d print them.  No symbol table covers a stub, so
 * without this a sample in one reads `module+0x1040`.
 *
 * Written here because no maintained library does it in a usable way:
 * libelf gives sections and relocations but synthesizes nothing, and
 * libbfd's bfd_get_synthetic_symtab() (binutils-dev) has no stable ABI
 * and would be a second ELF reader beside libelf.
 *
 * Method (binutils' elf_x86_64_get_synthetic_symtab does the same): every
 * entry of .plt, .plt.sec and .plt.got whose first instruction, after an
 * optional endbr64 and bnd prefix, is `jmp *disp32(%rip)` jumps through
 * a GOT slot; the JUMP_SLOT or GLOB_DAT relocation of that slot names the
 * function.  Entries without such a jump (the lazy-binding PLT0, the IBT
 * .plt entries whose callers go through .plt.sec) and slots without a
 * named relocation (IRELATIVE) stay unnamed.  Other machines: nothing.
 */
#include "elf/elfidx_priv.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	uint64_t got;
	const char *name;	/* libelf's data, valid until elf_end */
};

struct slots {
	struct slot *v;
	size_t n, cap;
};

static int slot_cmp(const void *pa, const void *pb)
{
	const struct slot *a = pa, *b = pb;
	return a->got < b->got ? -1 : a->got > b->got;
}

/* JUMP_SLOT and GLOB_DAT relocations of one SHT_RELA section */
static int read_rela(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		     struct slots *out)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr ssh;
	Elf_Data *d = elf_getdata(scn, NULL), *sd;
	size_t ent = gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT);

	if (!d || !ent || sh->sh_entsize != ent || !symscn ||
	    !gelf_getshdr(symscn, &ssh) || !(sd = elf_getdata(symscn, NULL)))
		return 0;
	size_t n = d->d_size / ent;
	for (size_t i = 0; i < n && i < (size_t)INT32_MAX; i++) {
		GElf_Rela r;
		GElf_Sym s;
		if (!gelf_getrela(d, (int)i, &r))
			continue;
		uint64_t type = GELF_R_TYPE(r.r_info), sym = GELF_R_SYM(r.r_info);
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !sym || sym > INT32_MAX || !gelf_getsym(sd, (int)sym, &s))
			continue;
		const char *name = elf_strptr(elf, ssh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (sf_grow((void **)&out->v, &out->cap, out->n + 1,
			    sizeof(*out->v)))
			return -ENOMEM;
		out->v[out->n++] = (struct slot){ r.r_offset, name };
	}
	return 0;
}

/* The GOT slot an entry at vaddr jumps through, or 0. */
static uint64_t entry_got(const unsigned char *p, size_t len, uint64_t vaddr)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = 0;

	if (len >= 4 && !memcmp(p, endbr64, 4))
		i = 4;
	if (i < len && p[i] == 0xf2)	/* bnd */
		i++;
	if (i + 6 > len || p[i] != 0xff || p[i + 1] != 0x25)
		return 0;
	int32_t disp;
	memcpy(&disp, p + i + 2, 4);	/* little-endian: x86-64 only */
	return vaddr + i + 6 + (uint64_t)(int64_t)disp;
}

static const char *slot_name(const struct slots *s, uint64_t got)
{
	struct slot key = { got, NULL };
	struct slot *hit = s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v),
					  slot_cmp) : NULL;
	return hit ? hit->name : NULL;
}

static bool is_plt_section(const char *n)
{
	return !strcmp(n, ".plt") || !strcmp(n, ".plt.sec") ||
	       !strcmp(n, ".plt.got");
}

static int add_sym(struct pltsyms *out, uint64_t lo, uint64_t size,
		   const char *name)
{
	size_t len = strlen(name);
	char *s = malloc(len + sizeof("@plt"));
	if (!s || sf_grow((void **)&out->v, &out->cap, out->n + 1,
			  sizeof(*out->v))) {
		free(s);
		return -ENOMEM;
	}
	memcpy(s, name, len);
	memcpy(s + len, "@plt", sizeof("@plt"));
	out->v[out->n++] = (struct pltsym){ lo, size, s };
	return 0;
}

/* Entries of one PLT section: sh_entsize (8 or 16) apart, else 16. */
static int read_plt(Elf_Scn *scn, const GElf_Shdr *sh,
		    const struct slots *slots, struct pltsyms *out)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	uint64_t ent = sh->sh_entsize == 8 || sh->sh_entsize == 16 ?
		       sh->sh_entsize : 16;

	if (!d || !d->d_buf || d->d_size > sh->sh_size)
		return 0;
	for (uint64_t off = 0; off + ent <= d->d_size; off += ent) {
		const unsigned char *p = (const unsigned char *)d->d_buf + off;
		const char *name = slot_name(slots,
					     entry_got(p, ent, sh->sh_addr + off));
		if (name && add_sym(out, sh->sh_addr + off, ent, name))
			return -ENOMEM;
	}
	return 0;
}

int elfplt_collect(Elf *elf, struct pltsyms *out)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	struct slots slots = { 0 };
	int rc = 0;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while (!rc && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
			rc = read_rela(elf, scn, &sh, &slots);
	if (!rc && slots.n)
		qsort(slots.v, slots.n, sizeof(*slots.v), slot_cmp);
	while (!rc && slots.n && (scn = elf_nextscn(elf, scn))) {
		const char *n;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_EXECINSTR) &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) && is_plt_section(n))
			rc = read_plt(scn, &sh, &slots, out);
	}
	free(slots.v);
	return rc;
}

void pltsyms_release(struct pltsyms *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
