#!/usr/bin/env bash
# bench/memcost.sh - what fresh memory costs on this machine, the floor
# under every cold run: CPU per MiB to fault in anonymous memory in 4 KiB
# pages, in transparent huge pages right after other huge pages were freed
# (the host still backs them), and in huge pages after IDLE seconds of
# idleness (default 20; a VM host may have taken the memory back), and to
# write the same into a memfd (page cache: the kernel allocates, no user
# page fault), and to write it so and then map it read-only and read it
# (what handing libdw decoded sections through page cache would cost,
# besides decoding them in a stream).  On a PVM guest each 4 KiB fault
# traps to the host.
# Prints "mode ms_per_MiB" per run; not a test.
set -eu
IDLE=${IDLE:-20}
MIB=${MIB:-64}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat >"$W/memcost.c" <<'EOF'
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return r.ru_utime.tv_sec + r.ru_stime.tv_sec +
	       (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

/* memcost MODE MIB: MODE 4k, huge, memfd or memfdmap */
int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	size_t n = (size_t)atoi(argv[2]) << 20, al = 2u << 20;
	double t0 = cpu_s();
	if (!strncmp(argv[1], "memfd", 5)) {
		static char buf[256 << 10];
		int fd = memfd_create("memcost", 0);
		memset(buf, 1, sizeof(buf));
		t0 = cpu_s();
		for (size_t o = 0; o < n; o += sizeof(buf))
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				return 1;
		if (!strcmp(argv[1], "memfdmap")) {
			const volatile char *q = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
			long s = 0;
			if (q == MAP_FAILED)
				return 1;
			for (size_t i = 0; i < n; i += 4096)
				s += q[i];
			if (s != (long)(n / 4096))
				return 1;
		}
	} else {
		char *p = mmap(NULL, n + al, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		p = (char *)(((uintptr_t)p + al - 1) & ~(uintptr_t)(al - 1));
		madvise(p, n, strcmp(argv[1], "huge") ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
		t0 = cpu_s();
		for (size_t i = 0; i < n; i += 4096)
			p[i] = 1;
	}
	printf("%s %.2f\n", argv[1], (cpu_s() - t0) * 1e3 / (double)(n >> 20));
	return 0;
}
EOF
cc -O2 -o "$W/memcost" "$W/memcost.c"
echo "# fresh memory on $(uname -n), ms of CPU per MiB ($MIB MiB a run)"
for _ in 1 2 3; do
	"$W/memcost" 4k "$MIB" | sed 's/^4k/anon_4k_pages/'
	"$W/memcost" huge "$MIB" >/dev/null	# frees huge pages for the next
	"$W/memcost" huge "$MIB" | sed 's/^huge/anon_huge_pages_just_freed/'
	sleep "$IDLE"
	"$W/memcost" huge "$MIB" | sed 's/^huge/anon_huge_pages_after_idle/'
	"$W/memcost" memfd "$MIB" | sed 's/^memfd/memfd_write/'
	"$W/memcost" memfdmap "$MIB" | sed 's/^memfdmap/memfd_write_then_map_read/'
done
