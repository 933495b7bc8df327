/* libopen.c - see libopen.h. */
#include "base/libopen.h"
#include "base/untrusted.h"

#include <dlfcn.h>
#include <gelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t g_refused, g_refused_bound;
static __thread uint64_t t_refused, t_refused_bound;

uint64_t sf_libopen_refused(void)
{
	return __atomic_load_n(&g_refused, __ATOMIC_RELAXED);
}

uint64_t sf_libopen_refused_bound(void)
{
	return __atomic_load_n(&g_refused_bound, __ATOMIC_RELAXED);
}

uint64_t sf_libopen_refused_here(bool bound)
{
	return bound ? t_refused_bound : t_refused;
}

/* this program's own text (the linker's symbols): its opens, the many
 * of /proc among them, are told apart without a lookup */
extern const char __executable_start[], etext[];

/* Is the code at pc in libdw, libelf or libdebuginfod?  (libdebuginfod
 * is loaded with dlopen(), so its place is looked up at each call rather
 * than once: these opens are a few a file, not a hot path.) */
static bool from_elfutils(const void *pc)
{
	if ((const char *)pc >= __executable_start && (const char *)pc < etext)
		return false;
	static const char *const libs[] = {
		"libdw.so", "libdw-", "libelf.so", "libelf-", "libdebuginfod"
	};
	Dl_info info;
	if (!dladdr(pc, &info) || !info.dli_fname)
		return false;
	const char *base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (strncmp(base, libs[i], strlen(libs[i])) == 0)
			return true;
	return false;
}

static int sys_open(const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

/* Past this a file another user can write is not copied (refused). */
#define COPY_MAX (4ull << 30)

/* libdw maps what it is given (dwarf_begin(fd): ELF_C_READ_MMAP); a file
 * that another user can truncate would then kill us with SIGBUS at the
 * next touch of a lost page.  So unless only root can write it, its
 * bytes are copied into a sealed memfd, handed over instead: a
 * truncation during the copy is a short file, which libdw refuses.
 * Takes fd; the descriptor to give, or -1 with errno. */
static int private_copy(int fd, const struct stat *st)
{
	if (st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH)))
		return fd;
	int mfd = (uint64_t)st->st_size <= COPY_MAX ?
		  memfd_create("stackfold-lib", MFD_CLOEXEC | MFD_ALLOW_SEALING) : -1;
	int e = mfd < 0 ? ((uint64_t)st->st_size > COPY_MAX ? EFBIG : errno) : 0;
	off_t off = 0;
	while (mfd >= 0 && off < st->st_size) {
		ssize_t n = sendfile(mfd, fd, &off, (size_t)(st->st_size - off));
		if (n <= 0)
			break;	/* shrunk meanwhile, or a read error: short */
	}
	close(fd);
	if (mfd < 0) {
		errno = e;
		return -1;
	}
	fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
	      F_SEAL_SEAL);
	lseek(mfd, 0, SEEK_SET);
	return mfd;
}

/* The decompressed size a section claims: SHF_COMPRESSED's header, or
 * a .zdebug section's "ZLIB" and big-endian size; 0 when it claims none. */
static uint64_t claimed(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
			size_t shstrndx)
{
	GElf_Chdr ch;
	if (sh->sh_flags & SHF_COMPRESSED)
		return gelf_getchdr(scn, &ch) ? ch.ch_size : UINT64_MAX;
	const char *n = elf_strptr(e, shstrndx, sh->sh_name);
	Elf_Data *d;
	if (!n || strncmp(n, ".zdebug", 7) || sh->sh_type == SHT_NOBITS ||
	    !(d = elf_rawdata(scn, NULL)) || d->d_size < 12 ||
	    memcmp(d->d_buf, "ZLIB", 4))
		return 0;
	uint64_t size = 0;
	for (int i = 4; i < 12; i++)
		size = size << 8 | ((const unsigned char *)d->d_buf)[i];
	return size;
}

/* libdw decompresses the compressed sections of what it opens itself to
 * the sizes their headers claim: a file whose claims pass untrusted.h's
 * bounds (its ratio a section, its most for the file) is refused whole,
 * as the index refuses its own (a 58 KB file claimed 300 MB).  fd is
 * a private copy or root's: mapped safely. */
static bool claims_ok(int fd)
{
	size_t shstrndx;
	uint64_t total = 0, most = sf_inflate_bound(NULL, UINT64_MAX);
	bool ok = true;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx)) {
		if (e)
			elf_end(e);
		return true;	/* no ELF file: libdw refuses it itself */
	}
	for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		uint64_t c = gelf_getshdr(scn, &sh) ? claimed(e, scn, &sh, shstrndx) : 0;
		ok = c <= sf_inflate_bound(NULL, sh.sh_size) &&
		     !__builtin_add_overflow(total, c, &total) && total <= most;
	}
	elf_end(e);
	return ok;
}

/* A read-only open made by one of those libraries: a regular file, opened
 * without blocking (copied when another user may write it), or -1 with
 * errno (ENXIO for a name that is not a regular file, counted). */
static int open_for_lib(const char *path, int flags)
{
	struct stat st;
	int fd = sf_open_untrusted(path, &st);
	if (fd == -SF_ENOTREG) {
		__atomic_add_fetch(&g_refused, 1, __ATOMIC_RELAXED);
		t_refused++;
		errno = ENXIO;
		return -1;
	}
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	if ((fd = private_copy(fd, &st)) < 0)
		return -1;
	if (!claims_ok(fd)) {
		close(fd);
		__atomic_add_fetch(&g_refused_bound, 1, __ATOMIC_RELAXED);
		t_refused_bound++;
		errno = EFBIG;
		return -1;
	}
	/* the caller's flags (no O_CLOEXEC asked: still set, harmless) and
	 * blocking reads, as it asked */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, (fl & ~O_NONBLOCK) | (flags & O_NONBLOCK));
	return fd;
}

/* open(2)'s rule for when a mode is passed (O_TMPFILE includes
 * O_DIRECTORY, which alone passes none) */
static bool has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static int any_open(const void *caller, const char *path, int flags,
		    mode_t mode)
{
	bool reading = (flags & O_ACCMODE) == O_RDONLY &&
		       !has_mode(flags) && !(flags & (O_PATH | O_DIRECTORY));
	if (reading && from_elfutils(caller))
		return open_for_lib(path, flags);
	return sys_open(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (has_mode(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return any_open(__builtin_return_address(0), path, flags, mode);
}

/* (the same function: libraries built with large-file names call it) */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));
