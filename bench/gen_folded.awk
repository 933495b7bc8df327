# gen_folded.awk - a synthetic folded profile for bench/svg.sh and the t60
# property tests (no bpftrace needed, same bytes on every run).
#
#   awk -v lines=230000 -v seed=1 -f bench/gen_folded.awk > big.folded
#
# Shape, modelled on a system-wide 999 Hz capture with kstack+ustack:
# 40 processes; each stack walks a fixed random call graph of 3000
# user functions (C, C++ with namespaces and arguments, inlined "_[i]",
# JIT "_[j]", ".cold" clones called next to the original) 4 to 45 deep, and 60% of them continue into a kernel call
# graph of 800 "_[k]" functions 3 to 20 deep.  Counts are skewed: most
# stacks are seen once, a few thousands of times.  Prints exactly `lines`
# unique stacks.
function pick(n) { return int(rand() * n) }
function uname(i,   k) {
	k = i % 7
	if (k == 0) return sprintf("ns%d::Class%d::method_%d(int, char const*)", i % 13, i % 97, i)
	if (k == 1) return sprintf("lib_func_%d_[i]", i)
	if (k == 2) return sprintf("Interp%d.run_%d_[j]", i % 11, i)
	return sprintf("user_function_%d", i)
}
BEGIN {
	if (!lines) lines = 230000
	srand(seed ? seed : 1)
	NU = 3000; NK = 800; NC = 40; NB = 4000
	for (i = 0; i < NU; i++) {
		un[i] = uname(i)
		nc = 2 + pick(5)
		uc[i] = nc
		for (j = 0; j < nc; j++) ucall[i, j] = pick(NU)
		# gcc's hot/cold split: callee "f" next to "f.cold", which
		# bytewise sorting interleaves with "f;..." (see fold_cmp in fold.h)
		if (rand() < 0.5) ucall[i, 1] = NU + ucall[i, 0]
	}
	for (i = 0; i < NU; i++) {
		un[NU + i] = un[i] ".cold"
		uc[NU + i] = uc[i]
		for (j = 0; j < uc[i]; j++) ucall[NU + i, j] = ucall[i, j]
	}
	for (i = 0; i < NK; i++) {
		kn[i] = sprintf("kernel_fn_%d_[k]", i)
		nc = 2 + pick(4)
		kc[i] = nc
		for (j = 0; j < nc; j++) kcall[i, j] = pick(NK)
	}
	for (i = 0; i < NC; i++) comm[i] = sprintf("proc-%d", i)
	# hot call paths: each process spends its time under a few thousand
	# paths; stacks share them and differ in the last frames, so sorted
	# neighbours share long prefixes as in a real capture
	for (b = 0; b < NB; b++) {
		f = pick(NU)
		s = comm[b % NC] ";main"
		d = 2 + pick(18)
		for (j = 0; j < d; j++) {
			s = s ";" un[f]
			f = ucall[f, pick(uc[f])]
		}
		base[b] = s
		bnext[b] = f
	}
	n = 0
	while (n < lines) {
		r = rand()
		b = int(NB * r * r)
		s = base[b]
		f = bnext[b]
		d = pick(9)
		for (j = 0; j < d; j++) {
			s = s ";" un[f]
			f = ucall[f, pick(uc[f])]
		}
		if (rand() < 0.6) {
			k = pick(8)
			s = s ";entry_SYSCALL_64_[k];do_syscall_64_[k]"
			d = 1 + pick(14)
			for (j = 0; j < d; j++) {
				s = s ";" kn[k]
				k = kcall[k, pick(kc[k])]
			}
		}
		if (s in seen) continue
		seen[s] = 1
		r = rand()
		cnt = r < 0.8 ? 1 : (r < 0.97 ? 1 + pick(20) : 1 + pick(3000))
		print s " " cnt
		n++
	}
}
