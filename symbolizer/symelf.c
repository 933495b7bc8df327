/* symelf.c - one ELF file's symbols through its index; see symelf.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elfindex.h"
#include "symelf.h"

struct sym_elf {
	struct elf_index *idx;
};

struct sym_elf *sym_elf_open(int fd, const char *path,
			     const struct sym_elf_opts *opts,
			     struct sf_err *err)
{
	struct elfidx_opts o = {
		.cache_dir = opts->cache_dir,
		.no_demangle = opts->no_demangle,
		.no_dwarf = opts->no_dwarf,
		.warn = opts->warn,
		.warn_ctx = opts->warn_ctx,
		.limits = opts->limits,
	};
	struct sym_elf *e = calloc(1, sizeof(*e));
	if (!e) {
		sf_err_set(err, ENOMEM, "%s: %s", path, strerror(ENOMEM));
		return NULL;
	}
	e->idx = elfidx_open(fd, path, &o, err);
	if (!e->idx) {
		free(e);
		return NULL;
	}
	return e;
}

void sym_elf_free(struct sym_elf *e)
{
	if (!e)
		return;
	elfidx_flush(e->idx);
	elfidx_free(e->idx);
	free(e);
}

void sym_elf_lookup(const struct sym_elf *e, uint64_t vaddr,
		    struct sym_result *res)
{
	elfidx_lookup(e ? e->idx : NULL, vaddr, res);
}

uint32_t sym_elf_discriminator(const struct sym_elf *e, uint64_t vaddr)
{
	return elfidx_discriminator(e ? e->idx : NULL, vaddr);
}
