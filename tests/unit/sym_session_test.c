/*
 * sym_session_test.c - drive a struct sym_session from the command line so
 * tests/t40-symbolizer*.sh can script snapshot / kill / lookup sequences
 * inside one session.  Each word of argv is a command, run in order:
 *
 *   snap PID             sym_process_snapshot; prints "snap PID RC"
 *   snapstack PID STACK  the same, with the start of stack the sample saw
 *   newer PID:IMG        sym_process_newer_known; prints "newer PID 0|1"
 *   kill PID             SIGKILL PID and wait until its memory is gone
 *   forget PID           sym_process_forget; prints "forget PID N"
 *   forgetolder PID:IMG  sym_process_forget_older; prints "forgetolder PID N"
 *   dropretired          sym_session_drop_retired; prints "dropretired N"
 *   refresh PID          sym_process_refresh; prints "refresh PID RC"
 *   name PID             sym_process_name; prints "name PID NAME" (a
 *                        newline in it as \n; "-" when unknown)
 *   user PID ADDR [ret]  sym_lookup_user; prints a result line
 *   kern ADDR [ret]      sym_lookup_kernel
 *   elf PATH ADDR        sym_lookup_elf
 *   write PID FILE       sym_process_write_maps
 *   load PID FILE        sym_process_load_maps
 *   stats                prints every sym_stats counter (two lines)
 *   warnings             drains the warning queue ("warning: ...")
 *   refused              "refused files=N bounds=M": files not read and
 *                        refusals past a size bound (sym_stats)
 *   fds                  prints "fds N" (open fds of this process)
 *   maps FILE            parse FILE with maps.h; prints counts, CPU ms,
 *                        max RSS and every kept entry
 *   perfmap FILE ADDR    perfmap.h lookup in FILE
 *   bench PID ADDR N     N sym_lookup_user calls; prints "bench NS" (CPU
 *                        ns per lookup)
 *
 *   sh COMMAND           system(COMMAND), between two steps of a session
 *
 * PID may be PID:IMAGE, the image of sym_process_snapshot() (default 0),
 * or @FILE: the pid is FILE's first number (a process a `sh` started).
 *
 * A result line: "user ADDR reason=R name=N module=M main=0|1
 * maddr=0xA frames=K", with "-" for missing names.  Exits 2 on usage
 * errors, 0 otherwise (tests assert on the output).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "proc/maps.h"
#include "proc/perfmap.h"
#include "symbolizer.h"

static const char *kind_str(enum maps_kind k)
{
	static const char *const n[] = { "file", "anon", "anon-named", "vdso",
					 "vsyscall", "heap", "stack", "pseudo",
					 "anon-shm" };
	return (unsigned)k < sizeof(n) / sizeof(n[0]) ? n[k] : "?";
}

static void print_result(const char *what, uint64_t addr,
			 const struct sym_result *r)
{
	printf("%s 0x%" PRIx64 " reason=%s name=%s module=%s main=%d "
	       "maddr=0x%" PRIx64 " frames=%u bid=%s\n",
	       what, addr, sym_reason_str(r->reason),
	       r->nframes ? r->frames[r->nframes - 1].name : "-",
	       r->module ? r->module->path : "-",
	       r->module ? r->module->is_main : 0, r->module_addr, r->nframes,
	       r->module && r->module->build_id[0] ? r->module->build_id : "-");
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3;	/* ., .. and the dir's own fd */
}

static void kill_wait(int pid)
{
	char path[64];
	kill(pid, SIGKILL);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		int c = f ? fgetc(f) : EOF;
		if (f)
			fclose(f);
		if (c == EOF)
			return;	/* gone, or a zombie without memory */
		usleep(10000);
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
			}
			b = nb;
		}
	}
	fclose(f);
	*len = n;
	return b;
}

/* CPU time of this process: steadier than wall time on a busy machine. */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmd_maps(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("maps error %s\n", strerror(errno));
		return 0;
	}
	struct maps_list ml;
	maps_list_init(&ml);
	double t0 = now_ms();
	int rc = maps_list_read_fd(&ml, fd);
	double t1 = now_ms();
	close(fd);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("maps rc=%d lines=%" PRIu64 " kept=%zu bad=%" PRIu64
	       " first_bad=%" PRIu64 " ms=%.0f maxrss_kb=%ld\n", rc, ml.lines,
	       ml.n, ml.bad_lines, ml.first_bad_line, t1 - t0, ru.ru_maxrss);
	for (size_t i = 0; i < ml.n && i < 64; i++) {
		const struct maps_entry *e = &ml.v[i];
		printf("KEPT %" PRIx64 "-%" PRIx64 " off=%" PRIx64
		       " dev=%x:%x ino=%" PRIu64 " kind=%s deleted=%d%s "
		       "path=%s\n", e->start, e->limit, e->offset,
		       e->dev_major, e->dev_minor, e->inode, kind_str(e->kind),
		       e->deleted, e->remapped ? " remapped=1" : e->memfd ?
		       " memfd=1" : "", e->path);
	}
	maps_list_release(&ml);
	return 0;
}

static int cmd_perfmap(const char *path, uint64_t addr)
{
	struct perfmap pm;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || perfmap_init(&pm))
		return 2;
	int rc = perfmap_update(&pm, fd);
	const char *n = perfmap_find(&pm, addr);
	printf("perfmap rc=%d entries=%zu bad=%" PRIu64 " name=%s\n", rc,
	       pm.n, pm.bad_lines, n ? n : "-");
	perfmap_release(&pm);
	close(fd);
	return 0;
}

static void cmd_bench(struct sym_session *s, int pid, uint64_t addr, long n)
{
	struct sym_result r;
	sym_lookup_user(s, pid, 0, addr, true, &r);	/* builds the index */
	double t0 = now_ms();
	for (long i = 0; i < n; i++)
		sym_lookup_user(s, pid, 0, addr + (uint64_t)(i & 15), i & 1, &r);
	double t1 = now_ms();
	printf("bench %.0f %s\n", n > 0 ? (t1 - t0) * 1e6 / (double)n : 0.0,
	       sym_reason_str(r.reason));
}

static void print_stats(struct sym_session *s)
{
	struct sym_stats st;
	sym_session_stats(s, &st);
	printf("stats lookups=%" PRIu64 " unresolved=%" PRIu64
	       " processes=%" PRIu64 " files_pinned=%" PRIu64
	       " files_mismatched=%" PRIu64 " bad_maps_lines=%" PRIu64
	       " index_builds=%" PRIu64 " index_cache_hits=%" PRIu64
	       " index_corrupt=%" PRIu64 "\n",
	       st.lookups, st.unresolved, st.processes, st.files_pinned,
	       st.files_mismatched, st.bad_maps_lines, st.index_builds,
	       st.index_cache_hits, st.index_corrupt);
	printf("vdso_reads %" PRIu64 "\n", st.vdso_reads);
}

/* "PID" or "PID:IMAGE" */
static int pid_arg(const char *s, uint32_t *image)
{
	const char *c = strchr(s, ':');
	*image = c ? (uint32_t)strtoul(c + 1, NULL, 10) : 0;
	if (*s == '@') {
		int pid = 0;
		FILE *f = fopen(s + 1, "r");
		if (!f || fscanf(f, "%d", &pid) != 1)
			pid = 0;
		if (f)
			fclose(f);
		return pid;
	}
	return atoi(s);
}

static int cmd_load(struct sym_session *s, const char *pids, const char *path)
{
	size_t len;
	char *text = slurp(path, &len);
	struct sf_err err = { "" };
	uint32_t image;
	int pid = pid_arg(pids, &image);
	int rc = text ? sym_process_load_maps(s, pid, image, text, len, NULL, &err)
		      : -1;
	printf("load %d %d %s\n", pid, rc, err.msg);
	free(text);
	return 0;
}

static int cmd_write(struct sym_session *s, const char *pids, const char *path)
{
	FILE *f = fopen(path, "w");
	uint32_t image;
	int pid = pid_arg(pids, &image);
	int rc = f ? sym_process_write_maps(s, pid, image, f) : -1;
	if (f)
		fclose(f);
	printf("write %d %d\n", pid, rc);
	return 0;
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 0);
}


#define NEED(k)                                                        \
	do {                                                           \
		if (i + (k) >= argc) {                                 \
			fprintf(stderr, "%s: missing argument\n", a); \
			return 2;                                      \
		}                                                      \
	} while (0)

static bool is_ret(int argc, char **argv, int *i)
{
	if (*i + 1 < argc && !strcmp(argv[*i + 1], "ret")) {
		(*i)++;
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct sf_err err = { "" };
	struct sym_opts o = { .no_cache = getenv("SF_TEST_CACHE") == NULL,
			      .dwarf_whole = getenv("SF_TEST_DWARF_WHOLE") != NULL };
	struct sym_session *s = sym_session_new(&o, &err);
	struct sym_result r;
	if (!s) {
		fprintf(stderr, "session: %s\n", err.msg);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "snap") || !strcmp(a, "snapstack")) {
			NEED(a[4] ? 2 : 1);
			uint32_t image;
			int pid = pid_arg(argv[++i], &image);
			uint64_t stack = a[4] ? num(argv[++i]) : 0;
			int rc = sym_process_snapshot(s, pid, image, stack, &err);
			printf("snap %d %d %s\n", pid, rc, rc ? err.msg : "");
		} else if (!strcmp(a, "newer")) {
			NEED(1);
			uint32_t image;
			int pid = pid_arg(argv[++i], &image);
			printf("newer %d %d\n", pid,
			       sym_process_newer_known(s, pid, image));
		} else if (!strcmp(a, "forget")) {
			NEED(1);
			int pid = atoi(argv[++i]);
			printf("forget %d %zu\n", pid, sym_process_forget(s, pid));
		} else if (!strcmp(a, "forgetolder")) {
			NEED(1);
			uint32_t image;
			int pid = pid_arg(argv[++i], &image);
			printf("forgetolder %d %zu\n", pid,
			       sym_process_forget_older(s, pid, image));
		} else if (!strcmp(a, "dropretired")) {
			printf("dropretired %zu\n", sym_session_drop_retired(s));
		} else if (!strcmp(a, "refresh")) {
			NEED(1);
			uint32_t image;
			int pid = pid_arg(argv[++i], &image);
			printf("refresh %d %d\n", pid,
			       sym_process_refresh(s, pid, image, &err));
		} else if (!strcmp(a, "name")) {
			NEED(1);
			uint32_t image;
			int pid = pid_arg(argv[++i], &image);
			const char *n = sym_process_name(s, pid, image);
			printf("name %d ", pid);
			for (; n && *n; n++)
				fputs(*n == '\n' ? "\\n" : (char[]){ *n, 0 }, stdout);
			puts(n ? "" : "-");
		} else if (!strcmp(a, "kill")) {
			NEED(1);
			uint32_t image;
			kill_wait(pid_arg(argv[++i], &image));
		} else if (!strcmp(a, "sh")) {
			NEED(1);
			int rc = system(argv[++i]);
			printf("sh %d\n", rc);
		} else if (!strcmp(a, "user")) {
			NEED(2);
			uint32_t image;
			int pid = pid_arg(argv[++i], &image);
			uint64_t addr = num(argv[++i]);
			bool ret = is_ret(argc, argv, &i);
			sym_lookup_user(s, pid, image, addr, ret, &r);
			print_result("user", addr, &r);
		} else if (!strcmp(a, "kern")) {
			NEED(1);
			uint64_t addr = num(argv[++i]);
			bool ret = is_ret(argc, argv, &i);
			sym_lookup_kernel(s, addr, ret, &r);
			print_result("kern", addr, &r);
		} else if (!strcmp(a, "elf")) {
			NEED(2);
			const char *path = argv[++i];
			uint64_t addr = num(argv[++i]);
			sym_lookup_elf(s, path, addr, &r);
			print_result("elf", addr, &r);
		} else if (!strcmp(a, "write")) {
			NEED(2);
			cmd_write(s, argv[i + 1], argv[i + 2]);
			i += 2;
		} else if (!strcmp(a, "load")) {
			NEED(2);
			cmd_load(s, argv[i + 1], argv[i + 2]);
			i += 2;
		} else if (!strcmp(a, "stats")) {
			print_stats(s);
		} else if (!strcmp(a, "refused")) {
			struct sym_stats st;
			sym_session_stats(s, &st);
			printf("refused files=%" PRIu64 " bounds=%" PRIu64 "\n",
			       st.files_refused, st.bounds_refused);
		} else if (!strcmp(a, "warnings")) {
			const char *w;
			while ((w = sym_session_next_warning(s)))
				printf("warning: %s\n", w);
		} else if (!strcmp(a, "fds")) {
			printf("fds %d\n", count_fds());
		} else if (!strcmp(a, "maps")) {
			NEED(1);
			cmd_maps(argv[++i]);
		} else if (!strcmp(a, "bench")) {
			NEED(3);
			cmd_bench(s, atoi(argv[i + 1]), num(argv[i + 2]),
				  atol(argv[i + 3]));
			i += 3;
		} else if (!strcmp(a, "perfmap")) {
			NEED(2);
			cmd_perfmap(argv[i + 1], num(argv[i + 2]));
			i += 2;
		} else {
			fprintf(stderr, "unknown command '%s'\n", a);
			sym_session_free(s);
			return 2;
		}
	}
	sym_session_free(s);
	return 0;
}
