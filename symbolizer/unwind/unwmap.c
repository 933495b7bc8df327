/* unwmap.c - the session's mappings and files for the unwinder; see
 * unwmap.h. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "elf/filetab.h"
#include "symbolizer_priv.h"
#include "unwind/unwmap.h"

int sym_unwind_map(struct sym_session *s, int pid, uint32_t image,
		   uint64_t addr, struct sym_unwind_map *out)
{
	struct sym_process *p = sym_process_find(s, pid, image);
	if (!p)
		return -ESRCH;
	struct sym_mapping *m = sym_process_mapping(p, addr);
	if (!m)
		return -ENOENT;
	*out = (struct sym_unwind_map){
		.file = m->e->kind == MAPS_FILE || m->e->kind == MAPS_VDSO
				? m->file : NULL,
		.start = m->e->start, .limit = m->e->limit,
		.offset = m->e->offset, .vdso = m->e->kind == MAPS_VDSO,
	};
	/* JIT code in remapped text or a memfd is the perf map's */
	if (maps_entry_file_may_jit(m->e) &&
	    sym_process_jit_region(s, p, m->e->start, m->e->limit))
		out->file = NULL;
	return 0;
}

int sym_unwind_file_fd(struct sym_session *s, const void *file)
{
	struct sym_file *f = (struct sym_file *)file;
	if (!f)
		return -ENOENT;
	int ret = filetab_open(&s->files, f);
	if (ret)
		return ret;
	int fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

const char *sym_unwind_file_build_id(const void *file)
{
	const struct sym_file *f = file;
	return f && f->bid_known && f->build_id[0] ? f->build_id : NULL;
}

const struct elfidx_opts *sym_unwind_cache(struct sym_session *s)
{
	return s->cache_dir ? &s->eopts : NULL;
}

struct sf_limits *sym_unwind_limits(struct sym_session *s)
{
	return &s->limits;
}
