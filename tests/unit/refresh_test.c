/*
 * refresh_test.c - checks of report_opts' keep_refreshed and
 * report_next_refreshed() (collapse/ingest/report.h): a raw user address
 * outside a live process's snapshot makes the report take its map again,
 * and stackfold record asks for each such refresh, once, to save the map
 * into its raw capture.  This process is the live one: a record names an
 * address of its own code, then one of a mapping made after that first
 * snapshot.  Run by tests/t11-units.sh.  Prints one "ok NAME" or
 * "FAIL NAME: why" per check and exits 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ingest/report.h"

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name, why);
	failed |= !ok;
}

/* One record of stackfold's own map (pid, tid, comm, ustack, kstack)
 * with addr as its only user frame. */
static int feed(struct report *r, const void *addr)
{
	char rec[256];
	int n = snprintf(rec, sizeof(rec), "@stackfold_a[%d, %d, refresh_test,\n"
			 "\t%lx\n, ]: 1\n", (int)getpid(), (int)getpid(),
			 (unsigned long)addr);
	for (char *s = rec, *e; s < rec + n; s = e + 1) {
		e = strchr(s, '\n');
		if (report_line(r, s, (size_t)(e - s)))
			return -1;
	}
	return 0;
}

/* The refreshes report r has: how many, and whether each is this pid's. */
static int drain(struct report *r, int *mine)
{
	int n = 0, pid;
	uint32_t image;
	*mine = 1;
	while (report_next_refreshed(r, &pid, &image)) {
		n++;
		*mine &= pid == (int)getpid();
	}
	return n;
}

/* Feed a record of this code, then one of a fresh mapping; the counts of
 * refreshes asked for after each, and after the input's end. */
static int run(bool keep, int got[3], int *mine)
{
	struct report *r = NULL;
	struct sf_err err = { "" };
	int m;
	struct report_opts ro = { .lazy_snapshot = true, .keep_refreshed = keep };
	if (!(r = report_new(&ro)) || !report_session(r, &err)) {
		report_free(r);
		return -1;
	}
	report_begin_input(r, NULL);
	int ret = feed(r, (const void *)run);	/* the snapshot */
	got[0] = drain(r, mine);
	void *fresh = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fresh == MAP_FAILED)
		ret = -1;
	if (!ret)
		ret = feed(r, (const char *)fresh + 16);
	got[1] = drain(r, &m);
	*mine &= m;
	struct report_input_stats st;
	if (!ret)
		ret = report_end_input(r, &st);
	got[2] = drain(r, &m);
	*mine &= m;
	if (!ret && report_samples(r) != 2)
		ret = -1;
	if (fresh != MAP_FAILED)
		munmap(fresh, 4096);
	report_free(r);
	return ret;
}

int main(void)
{
	char why[128];
	int got[3], mine;
	/* no symbol cache written into the home directory */
	if (setenv("STACKFOLD_CACHE_DIR", "/nonexistent/refresh_test", 1))
		return 1;
	int ret = run(true, got, &mine);
	snprintf(why, sizeof(why), "ret %d, refreshes %d then %d then %d",
		 ret, got[0], got[1], got[2]);
	check(!ret && got[0] == 0 && got[1] == 1 && got[2] == 0 && mine,
	      "a map taken again for an address mapped later is asked for once",
	      why);
	ret = run(false, got, &mine);
	snprintf(why, sizeof(why), "ret %d, refreshes %d then %d then %d",
		 ret, got[0], got[1], got[2]);
	check(!ret && !got[0] && !got[1] && !got[2],
	      "none kept unless asked (keep_refreshed)", why);
	return failed;
}
