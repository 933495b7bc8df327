/*
 * protocol_test.c - checks of collapse/capture/protocol.c (the capture
 * protocol's lines, as record and continuous write them and the parser
 * reads them), run by tests/t11-units.sh.  Prints one "ok NAME" or
 * "FAIL NAME: why" per check and exits 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/protocol.h"

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name, why);
	failed |= !ok;
}

static enum protocol_line kind(const char *s)
{
	return protocol_line(s, strlen(s));
}

static void lines(void)
{
	static const struct { const char *s; enum protocol_line k; } t[] = {
		{ "#pid 42 bash", PROTOCOL_PID },
		{ "#pid ", PROTOCOL_PID },
		{ "#pidx 42", PROTOCOL_OTHER },
		{ "#attached", PROTOCOL_ATTACHED },
		{ "#attached 3 probes", PROTOCOL_ATTACHED },
		{ "#flushed", PROTOCOL_FLUSHED },
		{ "#flushed ", PROTOCOL_OTHER },
		{ "#end", PROTOCOL_END },
		{ "#ended", PROTOCOL_OTHER },
		{ "#endmaps", PROTOCOL_ENDMAPS },
		{ "#maps 42", PROTOCOL_MAPS },
		{ "#maps", PROTOCOL_OTHER },
		{ "#meta hz 99", PROTOCOL_META },
		{ "# stackfold-capture 1", PROTOCOL_OTHER },
		{ "@stackfold_total: 5", PROTOCOL_TOTAL },
		{ "@stackfold_total_b: 5", PROTOCOL_TOTAL },
		{ "@stackfold_t: 5", PROTOCOL_TOTAL },
		{ "@stackfold_t_b: 5", PROTOCOL_TOTAL },
		{ "@stackfold_tx: 5", PROTOCOL_OTHER },
		{ "@stackfold_t[1]: 5", PROTOCOL_OTHER },
		{ "@stackfold[1, 2]: 3", PROTOCOL_OTHER },
		{ "@[1]: 3", PROTOCOL_OTHER },
		{ "", PROTOCOL_OTHER },
	};
	char why[128] = "";
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!why[0] && kind(t[i].s) != t[i].k)
			snprintf(why, sizeof(why), "'%s' is %d, want %d", t[i].s,
				 kind(t[i].s), t[i].k);
	check(!why[0], "each directive known by its start, near misses other", why);
	/* a prefix of the line only: the length bounds the match */
	check(protocol_line("#pid 42", 3) == PROTOCOL_OTHER &&
	      protocol_line("#flushedX", 8) == PROTOCOL_FLUSHED,
	      "protocol_line reads len bytes, no more", "read past len");
}

static void own_maps(void)
{
	check(protocol_own_map("@stackfold_a", 12) == 0 &&
	      protocol_own_map("@stackfold_b", 12) == 1 &&
	      protocol_own_map("@stackfold", 10) == 2 &&
	      protocol_own_map("@stackfold_c", 12) == -1 &&
	      protocol_own_map("@stackfold_total", 16) == -1 &&
	      protocol_own_map("@", 1) == -1 &&
	      protocol_own_map("@stackfold_ab", 13) == -1,
	      "own sample maps: _a 0, _b 1, plain 2, others -1", "wrong index");
	check(protocol_own_total("@stackfold_total_a", 18) == 0 &&
	      protocol_own_total("@stackfold_total_b", 18) == 1 &&
	      protocol_own_total("@stackfold_total", 16) == 2 &&
	      protocol_own_total("@stackfold", 10) == -1,
	      "own totals: _a 0, _b 1, plain 2, others -1", "wrong index");
	/* bt/continuous.bt's, unique within the kernel's 15 characters */
	check(protocol_own_total("@stackfold_t_b", 14) == 1 &&
	      protocol_own_total("@stackfold_t", 12) == 2 &&
	      protocol_own_total("@stackfold_tt", 13) == -1,
	      "own short totals: _t_b 1, _t 2, others -1", "wrong index");
	const char *e1 = "@stackfold_b[1, ustack]: 3", *e2 = "@stackfold: 3",
		   *e3 = "@x[@stackfold]: 1";
	check(protocol_own_entry(e1, strlen(e1)) == 1 &&
	      protocol_own_entry(e2, strlen(e2)) == -1 &&
	      protocol_own_entry(e3, strlen(e3)) == -1,
	      "protocol_own_entry names an entry's own map", "wrong map");
	check(protocol_own_stem("@stackfold_seen") && !protocol_own_stem("@stack"),
	      "protocol_own_stem", "wrong stem");
}

static int in_print(const char *s)
{
	return protocol_in_print(s, strlen(s));
}

static void flush_state(void)
{
	check(in_print("@stackfold_a[42, 7]: 1") == 1 &&
	      in_print("@stackfold_b[42, 7]: 1") == 1 &&
	      in_print("@stackfold_total_a: 9") == 0 &&
	      in_print("@stackfold_seen[42]: 1") == 0 &&
	      in_print("@stackfold[1]: 1") == -1 &&
	      in_print("@stackfold_a") == -1 && in_print("#flushed") == -1,
	      "in_print: a buffer's print begins, another own map ends it",
	      "wrong state");
}

static void meta(void)
{
	char buf[64], why[128] = "";
	for (int i = 0; i < PROTOCOL_META_UNKNOWN; i++) {
		const char *n = protocol_meta_name((enum protocol_meta)i);
		if (!why[0] && (!*n || (int)protocol_meta_key(n, strlen(n)) != i))
			snprintf(why, sizeof(why), "key %d '%s'", i, n);
	}
	check(!why[0] && protocol_meta_key("hzz", 3) == PROTOCOL_META_UNKNOWN &&
	      protocol_meta_key("hz", 1) == PROTOCOL_META_UNKNOWN,
	      "every #meta key reads back, no other does", why);
	check(!strcmp(protocol_meta_name(PROTOCOL_META_START_NS), "start_ns") &&
	      !strcmp(protocol_meta_name(PROTOCOL_META_LOST), "lost") &&
	      !strcmp(protocol_meta_name(PROTOCOL_META_ENDED), "ended"),
	      "#meta keys are the capture format's", "renamed key");
	size_t n = protocol_meta_line(buf, sizeof(buf), PROTOCOL_META_HZ, "99");
	check(n == 11 && !strcmp(buf, "#meta hz 99"), "meta line made", buf);
	char small[10];
	n = protocol_meta_line(small, sizeof(small), PROTOCOL_META_CMDLINE,
			       "a long command line");
	check(n == sizeof(small) - 1 && strlen(small) == n &&
	      !strncmp(small, "#meta cmd", n),
	      "meta line cut to the buffer, terminated", small);
	check(!protocol_meta_line(small, 0, PROTOCOL_META_HZ, "1"),
	      "meta line into no buffer is 0", "not 0");
}

static bool pid_line(const char *s, struct protocol_pid *pl)
{
	return protocol_pid_line(s, strlen(s), pl);
}

static void pids(void)
{
	struct protocol_pid pl;
	bool ok = pid_line("#pid 42 bash", &pl);
	check(ok && pl.pid == 42 && pl.image == 0 && pl.start_stack == 0 &&
	      pl.comm_len == 4 && !memcmp(pl.comm, "bash", 4),
	      "pid line, plain", "misread");
	/* image 3 in the high half, a start of stack, a buf() comm */
	ok = pid_line("#pid 12884901930:140737488347136  my prog\\x00\\x00", &pl);
	check(ok && pl.pid == 42 && pl.image == 3 &&
	      pl.start_stack == 140737488347136ull && pl.comm_len == 7 &&
	      !memcmp(pl.comm, "my prog", 7),
	      "pid line with image, stack, NUL escapes", "misread");
	check(!pid_line("#pid 0 x", &pl) && !pid_line("#pid 2147483648 x", &pl) &&
	      !pid_line("#pid x1 y", &pl) && !pid_line("#pid 4:x y", &pl) &&
	      !pid_line("#pid ", &pl) && !pid_line("#maps 4", &pl),
	      "bad pid lines refused", "one taken");
	check(protocol_pid_of(protocol_pid_field(42, 3)) == 42 &&
	      protocol_image_of(protocol_pid_field(42, 3)) == 3 &&
	      protocol_pid_field(42, 3) == 12884901930ull,
	      "pid field: pid low, image high", "wrong split");
}

static void snapshots(void)
{
	struct protocol_pid pl = { .pid = (uint32_t)getpid(), .image = 0 };
	check(protocol_snapshot(NULL, &pl) == -1,
	      "no session: the map is not saved", "claimed saved");
	struct sym_opts o = { .no_cache = true };
	struct sf_err err = { "" };
	struct sym_session *ss = sym_session_new(&o, &err);
	if (!ss) {
		check(0, "session", err.msg);
		return;
	}
	check(protocol_snapshot(ss, &pl) == 0 &&
	      sym_process_current(ss, (int)pl.pid, 0),
	      "a live process's map is saved", "not saved");
	/* an older image after a newer one's: the process runs the newer */
	struct protocol_pid newer = pl, older = pl;
	newer.image = 257;	/* one exec later */
	older.image = 256;
	check(protocol_snapshot(ss, &newer) == 0 &&
	      protocol_snapshot(ss, &older) == -1,
	      "an older image than one known is not saved", "saved");
	sym_session_free(ss);
}

int main(void)
{
	lines();
	own_maps();
	flush_state();
	meta();
	pids();
	snapshots();
	return failed;
}
