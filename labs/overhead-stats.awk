# overhead-stats.awk - lab 12: one mode's readings (MODE.readings, as
# 12-overhead.sh's reading() writes them) into the first part of its
# .stats line: the measured window, then each figure's change over it.
# Usage: awk -v m=MODE -f labs/overhead-stats.awk MODE.readings
# Shared by 12-overhead.sh and the tests that doctor its answers.
$1 == "reading" { r = $2; next }
$1 == "bpftool" {
	for (i = 2; i < NF; i++)
		if ($i == "run_time_ns" || $i == "run_cnt")
			v[r, $i] = $(i + 1)
	next
}
{ v[r, $1] = $2; if ($1 == "bpftrace_ticks") hz = $3 }
function d(k) { return v["end", k] - v["start", k] }
END {
	w = (v["end", "wall_before_ns"] + v["end", "wall_after_ns"] - v["start", "wall_before_ns"] - v["start", "wall_after_ns"]) / 2
	printf "mode=%s window_ns=%.0f runs=%.0f bpf_run_ns=%.0f bpftrace_cpu_ns=%.0f bpftrace_ps_ns=%.0f work_cpu_ns=%.0f emitted=%.0f printed=%.0f",
		m, w, d("run_cnt"), d("run_time_ns"), d("bpftrace_cpu_ns"), d("bpftrace_ticks") * 1e9 / hz, d("work_cpu_ns"), d("emitted"), d("printed")
}
