/*
 * vdso.c - [vdso] images for the session (see vdso.h).
 *
 * The vDSO is not a file: its image is copied into a memfd so the ELF index
 * can read it like one.  The kernel maps one image per ABI into every
 * process of that ABI, so a live process whose [vdso] has our image's
 * length and lies above 4 GiB (a 64-bit process: compat and x32 ones live
 * below) is given our own image, read from our memory once, without
 * reading its /proc/PID/mem; the first such process of a session is read
 * and compared all the same, and if it differs no one is trusted so.
 * Other snapshots read the target's image through /proc/PID/mem; when
 * that fails our own vDSO is used if the process's executable has our
 * ELF class, and for saved maps only if its build-id is the one recorded.
 * Images are shared by content, so there is normally one per session.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "proc/maps.h"
#include "proc/vdso.h"

#define VDSO_MAX (1u << 20)

static struct sym_file *find_image(struct vdso_set *s, const void *img,
				   size_t len)
{
	for (size_t i = 0; i < s->nvdsos; i++) {
		struct sym_file *f = s->vdsos[i];
		struct stat st;
		if (fstat(f->fd, &st) || (size_t)st.st_size != len)
			continue;
		char *buf = malloc(len);
		bool same = buf && pread(f->fd, buf, len, 0) == (ssize_t)len &&
			    memcmp(buf, img, len) == 0;
		free(buf);
		if (same)
			return f;
	}
	return NULL;
}

static struct sym_file *add_image(struct vdso_set *s, const void *img,
				  size_t len)
{
	struct sym_file *f = find_image(s, img, len);
	if (f)
		return f;
	if (sf_grow((void **)&s->vdsos, &s->vdso_cap, s->nvdsos + 1,
		    sizeof(*s->vdsos)))
		return NULL;
	int fd = memfd_create("stackfold-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (write(fd, img, len) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	f = filetab_add_memfd(s->files, fd, "[vdso]");
	if (f)
		s->vdsos[s->nvdsos++] = f;
	return f;
}

static void *read_target(struct vdso_set *s, int pid, uint64_t start,
			 size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	(*s->reads)++;
	void *buf = malloc(len);
	if (buf && pread(fd, buf, len, (off_t)start) != (ssize_t)len) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	return buf;
}

/* Our own [vdso] mapping: its start from the aux vector, its length from
 * /proc/self/maps into *len (0: we have none).  0, or -errno when the
 * maps could not be read (worth trying again later). */
static int own_vdso(const void **img, size_t *len)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	*len = 0;
	if (!base)
		return 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct maps_list ml;
	maps_list_init(&ml);
	int rc = maps_list_read_fd(&ml, fd);
	if (!rc) {
		ptrdiff_t i = maps_list_find(&ml, base);
		if (i >= 0 && ml.v[i].kind == MAPS_VDSO)
			*len = (size_t)(ml.v[i].limit - base);
	}
	maps_list_release(&ml);
	close(fd);
	*img = (const void *)(uintptr_t)base;
	return rc < 0 ? rc : 0;
}

/* Our own vDSO's image file, made once a session: reading /proc/self/maps
 * for every process of a replayed capture was 6% of its CPU. */
static struct sym_file *own_file(struct vdso_set *s)
{
	if (!s->own_vdso_done) {
		const void *img = NULL;
		size_t len;
		if (own_vdso(&img, &len))
			return NULL;		/* EMFILE, ENOMEM: next time */
		s->own_vdso = len ? add_image(s, img, len) : NULL;
		s->own_vdso_img = img;
		s->own_vdso_len = len;
		s->own_vdso_done = !len || s->own_vdso;	/* retry on ENOMEM */
	}
	return s->own_vdso;
}

/* Is pid's executable of our ELF class (its vDSO then is ours)? */
static bool same_class(int pid)
{
	char path[64];
	unsigned char ident[EI_NIDENT];
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = pread(fd, ident, sizeof(ident), 0) == (ssize_t)sizeof(ident) &&
		  !memcmp(ident, ELFMAG, SELFMAG) &&
		  ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 :
							    ELFCLASS32);
	close(fd);
	return ok;
}

/* Is live pid's [vdso] at start, len bytes, our own image (see the top)?
 * The first one asked is read and compared (false: read it). */
static bool is_own_image(struct vdso_set *s, int pid, uint64_t start,
			 size_t len)
{
	if (sizeof(void *) != 8 || start >> 32 == 0 || s->own_vdso_same < 0 ||
	    !own_file(s) || s->own_vdso_len != len)
		return false;
	if (s->own_vdso_same > 0)
		return true;
	void *img = read_target(s, pid, start, len);
	if (!img)
		return false;	/* gone: the next process tells */
	s->own_vdso_same = memcmp(img, s->own_vdso_img, len) ? -1 : 1;
	free(img);
	return s->own_vdso_same > 0;
}

void vdso_set_init(struct vdso_set *v, struct filetab *files,
		   uint64_t *reads)
{
	*v = (struct vdso_set){ .files = files, .reads = reads };
}

void vdso_set_release(struct vdso_set *v)
{
	free(v->vdsos);
	*v = (struct vdso_set){ 0 };
}

struct sym_file *vdso_file(struct vdso_set *s, int pid, uint64_t start,
			   uint64_t limit, const char *expect_bid)
{
	size_t len = (size_t)(limit - start);
	if (len == 0 || len > VDSO_MAX)
		return NULL;
	if (pid > 0 && !expect_bid && is_own_image(s, pid, start, len))
		return s->own_vdso;
	if (pid > 0 && !expect_bid) {
		void *img = read_target(s, pid, start, len);
		if (img) {
			struct sym_file *f = add_image(s, img, len);
			free(img);
			return f;
		}
	}
	struct sym_file *f = own_file(s);
	if (!f || (!expect_bid && (s->own_vdso_len != len || !same_class(pid))))
		return NULL;
	if (expect_bid && strcmp(f->build_id, expect_bid))
		return NULL;
	return f;
}
