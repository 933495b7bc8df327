/*
 * pprof_gen.c - builds small profiles through the profile.h API and writes
 * them with out_pprof_write() (tests only), to exercise cases the parsers
 * cannot easily produce from text: mappings with build-ids and a flagged
 * executable, unsymbolized addresses, synthetic marks, inline chains,
 * kernel locations without a mapping, odd bytes in names, zero samples.
 *
 * usage: pprof_gen [--raw] SCENARIO > out.pb.gz
 *   SCENARIO: mixed (executable found by comm) | main (flagged is_main) |
 *             procs (one library, three processes) |
 *             kernel (no kernel mapping) | empty | bigcount | nullprof (fold only, no profile)
 * Exit 0, or 1 with a message on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/out.h"
#include "model/profile.h"

#define CHECK(x)                                                         \
	do {                                                             \
		if ((x) < 0) {                                           \
			fprintf(stderr, "pprof_gen: %s failed\n", #x);   \
			exit(1);                                         \
		}                                                        \
	} while (0)

static uint32_t S(struct profile *p, const char *s)
{
	int64_t id = strtab_intern_cstr(&p->strs, s);
	CHECK(id);
	return (uint32_t)id;
}

static uint32_t map(struct profile *p, const char *file, const char *bid,
		    uint64_t start, bool kernel, bool is_main, bool syms)
{
	struct pf_mapping m = {
		.start = start, .limit = start + 0x100000, .offset = 0,
		.filename = S(p, file), .build_id = bid ? S(p, bid) : 0,
		.is_kernel = kernel, .is_main = is_main,
		.has_functions = syms, .has_filenames = syms,
		.has_line_numbers = syms, .has_inline_frames = syms,
	};
	int64_t id = profile_mapping(p, &m);
	CHECK(id);
	return (uint32_t)id;
}

static uint32_t fn(struct profile *p, const char *name, const char *sys,
		   const char *file)
{
	struct pf_function f = {
		.name = S(p, name), .system_name = sys ? S(p, sys) : 0,
		.filename = file ? S(p, file) : 0, .start_line = file ? 10 : 0,
	};
	int64_t id = profile_function(p, &f);
	CHECK(id);
	return (uint32_t)id;
}

/* A location at addr in mapping m with lines (innermost first). */
static uint32_t loc(struct profile *p, uint32_t m, uint64_t addr,
		    enum pf_loc_kind kind, const uint32_t *fns, uint32_t n,
		    const char *unknown)
{
	struct pf_line lines[8];
	struct pf_location key = {
		.mapping = m, .address = addr, .kind = kind,
		.unknown_name = unknown ? S(p, unknown) : 0,
	};
	for (uint32_t i = 0; i < n; i++)
		lines[i] = (struct pf_line){ .function = fns[i], .line = 20 + i };
	int64_t id = profile_location(p, &key, lines, n);
	CHECK(id);
	return (uint32_t)id;
}

static void sample(struct profile *p, uint32_t pid, uint32_t tid,
		   const char *comm, const uint32_t *locs, uint32_t n,
		   uint64_t count)
{
	uint32_t c = comm ? S(p, comm) : 0;
	CHECK(profile_add_sample(p, pid, tid, c, c, locs, n, count));
}

/* Two processes; the executable is not the leaf's mapping. */
static void mixed(struct profile *p, bool flag_main)
{
	uint32_t libc = map(p, "/usr/lib/x86_64-linux-gnu/libc.so.6",
			    "aabbccdd00112233", 0x7f0000000000, false, false, true);
	uint32_t demo = map(p, "/usr/bin/demo", "0123456789abcdef", 0x400000,
			    false, flag_main, true);
	uint32_t vmlinux = map(p, "[kernel.kallsyms]", NULL,
			       0xffffffff81000000, true, false, true);
	uint32_t f_memcpy = fn(p, "memcpy", "__memcpy_avx_unaligned", "memcpy.S");
	uint32_t f_work[2] = { fn(p, "inner_inlined", NULL, "demo.c"),
			       fn(p, "work", NULL, "demo.c") };
	uint32_t f_main = fn(p, "main", NULL, "demo.c");
	uint32_t f_odd = fn(p, "std::vec<[T; 4]> odd name", "_ZN3odd", NULL);
	uint32_t f_bad = fn(p, "bad\xff\xfe" "utf8\xc3", NULL, NULL);
	uint32_t f_sys = fn(p, "do_syscall_64", NULL, NULL);
	uint32_t f_entry = fn(p, "entry_SYSCALL_64", NULL, NULL);

	uint32_t l_memcpy = loc(p, libc, 0x7f0000001000, PF_LOC_USER, &f_memcpy, 1, NULL);
	uint32_t l_work = loc(p, demo, 0x401000, PF_LOC_USER, f_work, 2, NULL);
	uint32_t l_main = loc(p, demo, 0x402000, PF_LOC_USER, &f_main, 1, NULL);
	/* another address on the same line: its own pprof location */
	uint32_t l_main2 = loc(p, demo, 0x402004, PF_LOC_USER, &f_main, 1, NULL);
	uint32_t l_odd = loc(p, demo, 0x403000, PF_LOC_USER, &f_odd, 1, NULL);
	uint32_t l_bad = loc(p, demo, 0x404000, PF_LOC_USER, &f_bad, 1, NULL);
	uint32_t l_unk = loc(p, libc, 0x7f0000099000, PF_LOC_USER, NULL, 0,
			     "libc.so.6+0x99000");
	uint32_t l_sys = loc(p, vmlinux, 0xffffffff81001000, PF_LOC_KERNEL, &f_sys, 1, NULL);
	uint32_t l_entry = loc(p, 0, 0, PF_LOC_KERNEL, &f_entry, 1, NULL);
	uint32_t l_kunk = loc(p, 0, 0xffffffff81099000, PF_LOC_KERNEL, NULL, 0,
			      "[unknown]");
	uint32_t l_mark = loc(p, 0, 0, PF_LOC_MARK, NULL, 0, "[missed user stack]");
	uint32_t l_unk2 = loc(p, 0, 0, PF_LOC_USER, NULL, 0, "[unknown]");

	uint32_t s1[] = { l_memcpy, l_work, l_main };
	uint32_t s2[] = { l_sys, l_entry, l_work, l_main };
	uint32_t s3[] = { l_odd, l_main };
	uint32_t s4[] = { l_bad, l_main };
	uint32_t s5[] = { l_unk, l_main };
	uint32_t s6[] = { l_kunk, l_mark };
	uint32_t s7[] = { l_unk2 };
	uint32_t s8[] = { l_odd, l_main2 };	/* not s3: another address */

	sample(p, 42, 42, "demo", s1, 3, 5);
	sample(p, 42, 43, "demo", s2, 4, 7);
	sample(p, 42, 42, "demo", s3, 2, 3);
	sample(p, 42, 42, "demo", s4, 2, 2);
	sample(p, 42, 42, "demo", s5, 2, 1);
	sample(p, 0, 0, "swapper/0", s6, 2, 11);
	sample(p, 0, 0, NULL, s7, 1, 1);
	sample(p, 42, 42, "demo", s8, 2, 3);
	sample(p, 7, 7, "nostack", NULL, 0, 4);	/* both stacks empty */
	p->meta.hz = 49;
	p->meta.time_nanos = 1700000000000000000ULL;
	p->meta.duration_nanos = 2000000000ULL;
	p->meta.bpftrace_version = S(p, "v0.17.0");
	p->meta.kernel_release = S(p, "6.1.0-test");
	p->meta.hostname = S(p, "host1");
	p->meta.cmdline = S(p, "stackfold record -- demo \xff");
	p->counters.lost_events = 3;
	p->counters.unsymbolized_frames = 2;
}

/* Kernel frames with no kernel mapping in the profile (kstack text). */
static void kernel(struct profile *p)
{
	uint32_t f1 = fn(p, "native_safe_halt", NULL, NULL);
	uint32_t f2 = fn(p, "default_idle", NULL, NULL);
	uint32_t s[] = { loc(p, 0, 0, PF_LOC_KERNEL, &f1, 1, NULL),
			 loc(p, 0, 0, PF_LOC_KERNEL, &f2, 1, NULL),
			 loc(p, 0, 0xffffffffc0001234, PF_LOC_KERNEL, NULL, 0,
			     "[unknown]") };
	sample(p, 0, 0, "swapper/1", s, 3, 9);
	p->meta.time_nanos = 1;
}

/* One library in three processes (three mappings, each with its range, one
 * memcpy location per address); a symbolized location on a mapping the
 * symbolizer gave no flags (kept as it is); a pre-symbolized location
 * without an address on a mapping with no flags (marked [FN], or pprof
 * would re-symbolize address 0); a kernel address with no kernel mapping. */
static void procs(struct profile *p)
{
	const char *lib = "/usr/lib/libc.so.6", *bid = "feedface";
	uint32_t ma = map(p, lib, bid, 0x7f0000000000, false, false, true);
	uint32_t mb = map(p, lib, bid, 0x7f1100000000, false, false, true);
	uint32_t mc = map(p, lib, bid, 0x7f2200000000, false, false, true);
	uint32_t f = fn(p, "memcpy", NULL, "memcpy.S");
	/* symbolized, but the mapping says it has no functions (a JIT map,
	 * say): flags and address written as they are */
	uint32_t md = map(p, "/tmp/jit.so", NULL, 0x7f3300000000, false, false,
			  false);
	uint32_t ld = loc(p, md, 0x7f3300000040, PF_LOC_USER, &f, 1, NULL);
	uint32_t la = loc(p, ma, 0x7f0000001000, PF_LOC_USER, &f, 1, NULL);
	uint32_t lb = loc(p, mb, 0x7f1100001000, PF_LOC_USER, &f, 1, NULL);
	uint32_t lc = loc(p, mc, 0x7f2200005000, PF_LOC_USER, NULL, 0,
			  "libc.so.6+0x5000");
	uint32_t mp = map(p, "/opt/pre.so", NULL, 0x7f4400000000, false, false,
			  false);
	uint32_t fp = fn(p, "presym", NULL, NULL);
	uint32_t lp = loc(p, mp, 0, PF_LOC_USER, &fp, 1, NULL);
	/* a kernel address and no kernel mapping: the synthetic one, sorted
	 * among the others */
	uint32_t fk = fn(p, "do_kern", NULL, NULL);
	uint32_t lk[2] = { loc(p, 0, 0xffffffff81000100, PF_LOC_KERNEL, &fk, 1,
			       NULL), la };

	sample(p, 1, 1, "a", &la, 1, 2);
	sample(p, 2, 2, "b", &lb, 1, 3);
	sample(p, 3, 3, "c", &lc, 1, 4);
	sample(p, 4, 4, "d", &ld, 1, 1);
	sample(p, 5, 5, "e", &lp, 1, 6);
	sample(p, 1, 1, "a", lk, 2, 1);
	p->meta.time_nanos = 1;
}

static void bigcount(struct profile *p)
{
	uint32_t f = fn(p, "hot", NULL, NULL);
	uint32_t l = loc(p, 0, 0, PF_LOC_USER, &f, 1, NULL);
	sample(p, 1, 1, "x", &l, 1, (uint64_t)1 << 62);
	p->meta.time_nanos = 1;
}

int main(int argc, char **argv)
{
	struct profile p;
	struct fold f;
	struct sf_err err = { "" };
	struct out_opts opts = { 0 };
	struct out_input in = { .prof = &p, .fold = NULL };
	int a = 1;

	if (a < argc && !strcmp(argv[a], "--raw")) {
		opts.pprof_no_gzip = true;
		a++;
	}
	if (a >= argc) {
		fprintf(stderr, "usage: pprof_gen [--raw] mixed|main|procs|kernel|empty|bigcount|nullprof\n");
		return 1;
	}
	CHECK(profile_init(&p));
	if (!strcmp(argv[a], "mixed"))
		mixed(&p, false);
	else if (!strcmp(argv[a], "main"))
		mixed(&p, true);
	else if (!strcmp(argv[a], "procs"))
		procs(&p);
	else if (!strcmp(argv[a], "kernel"))
		kernel(&p);
	else if (!strcmp(argv[a], "bigcount"))
		bigcount(&p);
	else if (!strcmp(argv[a], "nullprof")) {
		/* folded-only input: the writer builds the profile itself */
		static const char *st[] = { "a;b;c", "a;b;d e", "x" };
		CHECK(fold_init(&f));
		for (int i = 0; i < 3; i++)
			CHECK(fold_add(&f, st[i], strlen(st[i]), i + 1, 0));
		CHECK(fold_finish(&f));
		in.prof = NULL;
		in.fold = &f;
	} else if (strcmp(argv[a], "empty")) {
		fprintf(stderr, "pprof_gen: unknown scenario '%s'\n", argv[a]);
		return 1;
	}
	int rc = out_pprof_write(stdout, &in, &opts, &err);
	if (rc)
		fprintf(stderr, "pprof_gen: %s\n", err.msg);
	if (!in.prof)
		fold_release(&f);
	profile_release(&p);
	return rc ? 1 : 0;
}
