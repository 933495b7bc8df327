/*
 * fuzz_elfindex.c - libFuzzer target for the per-file symbol index
 * (symbolizer/elf/elfindex.c, elfsyms.c, dwarfidx.c, debuglink.c, idxblob.c),
 * modelled on oss-fuzz's elfutils fuzz-libdwfl.c: "build the ELF index,
 * then look up N addresses".
 *
 * Two input kinds:
 *   - an ELF file (starts with \x7fELF): written to a memfd, indexed with
 *     elfidx_open() (no cache), then looked up at every symbol, every
 *     PT_LOAD boundary and addresses taken from the input's tail;
 *   - anything else: a cache entry blob (corrupt-cache case).  The
 *     header's fixed fields and CRC are set first, so mutations reach the
 *     section and reference checks of idx_attach() instead of all dying
 *     at the checksum.
 * Checked: no crash, results are well formed (nframes <= SYM_MAX_INLINE,
 * names readable, reason consistent with nframes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/elfidx_priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static volatile unsigned g_sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	unsetenv("DEBUGINFOD_URLS");
	/* debug roots that hold nothing (the default /usr/lib/debug is
	 * still looked at after these) */
	setenv("STACKFOLD_DEBUG_DIRS", "/nonexistent-stackfold-fuzz", 1);
	return 0;
}

static void touch(const char *s)
{
	if (s)
		g_sink += (unsigned)strlen(s);
}

static void lookup(const struct elf_index *idx, uint64_t addr)
{
	struct sym_result res;
	memset(&res, 0, sizeof(res));
	elfidx_lookup(idx, addr, &res);
	if (res.nframes > SYM_MAX_INLINE)
		abort();
	if ((res.reason == SYM_OK) != (res.nframes > 0))
		abort();
	for (unsigned i = 0; i < res.nframes; i++) {
		if (!res.frames[i].name)
			abort();
		touch(res.frames[i].name);
		touch(res.frames[i].system_name);
		touch(res.frames[i].file);
	}
	g_sink += elfidx_discriminator(idx, addr);
	uint64_t v;
	if (elfidx_file_offset_to_vaddr(idx, addr, &v))
		g_sink += (unsigned)v;
}

static void exercise(const struct elf_index *idx, const uint8_t *data,
		     size_t size)
{
	struct elfidx_caps caps;
	elfidx_caps(idx, &caps);
	touch(elfidx_build_id(idx));
	for (size_t i = 0; i < idx->nsyms && i < 256; i++) {
		lookup(idx, idx->syms[i].lo);
		lookup(idx, idx->syms[i].lo + idx->syms[i].size / 2);
		lookup(idx, idx->syms[i].lo + idx->syms[i].size);
	}
	for (size_t i = 0; i < idx->nphdrs; i++) {
		lookup(idx, idx->phdrs[i].vaddr);
		lookup(idx, idx->phdrs[i].vaddr + idx->phdrs[i].memsz - 1);
	}
	for (size_t i = 0; i < idx->nlines && i < 64; i++)
		lookup(idx, idx->hdr->addr_base + idx->lines[i].addr);
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a;
		memcpy(&a, data + size - 8 - i, 8);
		lookup(idx, a);
	}
	lookup(idx, 0);
	lookup(idx, UINT64_MAX);
}

static void elf_input(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	struct elfidx_opts o = { .cache_dir = NULL };
	struct sf_err err;
	struct elf_index *idx = elfidx_open(fd, "/nonexistent-stackfold-fuzz/f",
					    &o, &err);
	char hex[64];
	g_sink += (unsigned)elf_read_build_id(fd, hex, sizeof(hex));
	if (idx) {
		exercise(idx, data, size);
		elfidx_free(idx);
	}
	close(fd);
}

static void blob_input(const uint8_t *data, size_t size)
{
	struct elf_index idx;
	struct sf_err err;
	unsigned char *blob = malloc(size ? size : 1);
	if (!blob)
		abort();
	memcpy(blob, data, size);
	if (size >= sizeof(struct idx_hdr)) {
		struct idx_hdr *h = (struct idx_hdr *)blob;
		memcpy(h->magic, IDX_MAGIC, 8);
		h->version = IDX_VERSION;
		h->total_len = size;
		h->nsect = IDX_NSECT;
		h->key[sizeof(h->key) - 1] = 0;
		h->build_id[sizeof(h->build_id) - 1] = 0;
		h->crc = idx_crc(blob, size);
	}
	memset(&idx, 0, sizeof(idx));
	if (idx_attach(&idx, blob, size, NULL, &err)) {
		free(blob);
		return;
	}
	struct elf_index *p = malloc(sizeof(*p));
	if (!p)
		abort();
	*p = idx;
	exercise(p, data, size);
	elfidx_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4 && memcmp(data, "\x7f" "ELF", 4) == 0)
		elf_input(data, size);
	else
		blob_input(data, size);
	return 0;
}
