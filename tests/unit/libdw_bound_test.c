/*
 * libdw_bound_test.c - elfidx_bound_libdw() before dwarf_begin_elf(), as
 * the --call-graph dwarf unwinder opens a file's .debug_frame: libdw
 * decompresses every compressed debug section itself, to the size its
 * header claims.  Run by tests/t74-hostile-bounds.sh with
 *   LIBDW_BOMB  a file with a compressed debug section of 512 MiB zeros
 *   LIBDW_OK    the same program with its debug sections compressed
 * Prints "ok NAME" or "FAIL NAME: why" per check; exits 1 if any failed.
 */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/untrusted.h"
#include "elf/elfindex.h"

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name, why);
	failed |= !ok;
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Open path as the unwinder does, bound, begin libdw: its CFI or NULL. */
static Dwarf_CFI *open_cfi(const char *path, struct sf_limits *l,
			   uint64_t *charged, Dwarf **dw, Elf **e, int *fd)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	*e = *fd >= 0 ? elf_begin(*fd, ELF_C_READ_MMAP, NULL) : NULL;
	*charged = *e ? elfidx_bound_libdw(*e, l) : 0;
	*dw = *e ? dwarf_begin_elf(*e, DWARF_C_READ, NULL) : NULL;
	return *dw ? dwarf_getcfi(*dw) : NULL;
}

static void close_cfi(Dwarf *dw, Elf *e, int fd)
{
	if (dw)
		dwarf_end(dw);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	const char *bomb = getenv("LIBDW_BOMB"), *good = getenv("LIBDW_OK");
	struct sf_limits l = { 0 };
	uint64_t charged;
	Dwarf *dw;
	Elf *e;
	int fd;
	char why[160];

	if (!bomb || !good) {
		puts("FAIL setup: LIBDW_BOMB and LIBDW_OK must name files");
		return 1;
	}
	sf_limits_init(&l);
	elf_version(EV_CURRENT);
	long before = maxrss_kb();
	open_cfi(bomb, &l, &charged, &dw, &e, &fd);
	long grown = maxrss_kb() - before;
	snprintf(why, sizeof(why), "RSS grew %ld KB, %llu bytes charged, %llu refused",
		 grown, (unsigned long long)charged, (unsigned long long)l.refused_bound);
	check(grown < 64 << 10 && !charged && l.refused_bound == 1,
	      "libdw bomb: hidden before libdw opens it, refused and counted", why);
	close_cfi(dw, e, fd);

	Dwarf_CFI *cfi = open_cfi(good, &l, &charged, &dw, &e, &fd);
	snprintf(why, sizeof(why), "cfi %p, %llu bytes charged, %llu held",
		 (void *)cfi, (unsigned long long)charged,
		 (unsigned long long)l.inflate_held);
	check(cfi && charged && l.inflate_held == charged,
	      "compressed debug sections within the bounds: .debug_frame read, bytes charged", why);
	close_cfi(dw, e, fd);
	sf_limits_give(&l, charged);
	check(!l.inflate_held, "the charge given back", "inflate_held not 0");
	return failed;
}
