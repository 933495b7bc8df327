/* libopen.c - see libopen.h. */
#include "base/libopen.h"
#include "base/untrusted.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t g_refused;

uint64_t sf_libopen_refused(void)
{
	return __atomic_load_n(&g_refused, __ATOMIC_RELAXED);
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

/* A read-only open made by one of those libraries: a regular file, opened
 * without blocking, or -1 with errno (ENXIO for a name that is not a
 * regular file, counted). */
static int open_for_lib(const char *path, int flags)
{
	int fd = sf_open_untrusted(path, NULL);
	if (fd == -SF_ENOTREG) {
		__atomic_add_fetch(&g_refused, 1, __ATOMIC_RELAXED);
		errno = ENXIO;
		return -1;
	}
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	/* the caller's flags (no O_CLOEXEC asked: still set, harmless) and
	 * blocking reads, as it asked */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, (fl & ~O_NONBLOCK) | (flags & O_NONBLOCK));
	return fd;
}

static int any_open(const void *caller, const char *path, int flags,
		    mode_t mode)
{
	bool reading = (flags & O_ACCMODE) == O_RDONLY &&
		       !(flags & (O_CREAT | O_PATH | O_DIRECTORY | O_TMPFILE));
	if (reading && from_elfutils(caller))
		return open_for_lib(path, flags);
	return sys_open(path, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return any_open(__builtin_return_address(0), path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return any_open(__builtin_return_address(0), path, flags, mode);
}
