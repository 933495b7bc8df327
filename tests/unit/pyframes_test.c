/*
 * pyframes_test.c - checks of the pieces of --python that need no live
 * process (run by tests/t48-python-live.sh, under the sanitizers too):
 * CPython 3.11's line table read as Python reads it, the "#python"
 * line, and the integers a key carries after its stacks
 * (ingest/bt_parse.h), none in a key of bt/profile.bt's, and the merge
 * rule of docs/python.md on a made-up record.  Prints one
 * "ok NAME" or "FAIL NAME: why" per check; exits 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "ingest/bt_parse.h"
#include "ingest/pyframes.h"
#include "ingest/resolver.h"
#include "model/profile.h"

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name, why);
	failed |= !ok;
}

/* tests/fixtures/py/known.py's rec(): its co_linetable, co_firstlineno,
 * and the line of each code unit as its co_positions() gives them */
static const unsigned char rec_lt[] = {
	0x80, 0x00, 0xd8, 0x07, 0x0c, 0x90, 0x01, 0x82, 0x7a, 0x80, 0x7a,
	0xdd, 0x0f, 0x10, 0x90, 0x15, 0x89, 0x78, 0x8c, 0x78, 0x88, 0x0f,
	0xdd, 0x0b, 0x0e, 0x88, 0x75, 0x90, 0x71, 0x89, 0x79, 0x89, 0x3e,
	0x8c, 0x3e, 0xd0, 0x04, 0x19,
};
static const int rec_lines[40] = {
	25, 26, 26, 26, 26, 26, 26, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27,
	27, 27, 27, 27, 27, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
	28, 28, 28, 28, 28, 28,
};

static void line_table(void)
{
	char why[128] = "";
	for (int q = 0; q < 40 && !*why; q++) {
		int l = pyframes_line(rec_lt, sizeof(rec_lt), 25, q);
		if (l != rec_lines[q])
			snprintf(why, sizeof(why), "unit %d: line %d, not %d", q, l,
				 rec_lines[q]);
	}
	check(!*why, "3.11 line table: every code unit's line as co_positions()", why);
	check(pyframes_line(rec_lt, sizeof(rec_lt), 25, -1) == 25,
	      "before the first instruction: the first line", "");
	check(pyframes_line(rec_lt, sizeof(rec_lt), 25, 40) == -1,
	      "past the table: no line", "");
	check(pyframes_line(rec_lt, 5, 25, 39) == -1 &&
	      pyframes_line((const unsigned char *)"\x01\x02", 2, 25, 0) == -1,
	      "a cut or malformed table: no line, no read past it", "");
}

static void python_line(void)
{
	uint64_t off[PY_OFF_COUNT];
	const char *good = "#python 10838560 576 56 8 32 48 56 68 9782336 9779584 128 112 72 136 184 48 16 32 32 16 152";
	check(pyframes_parse_line(good, strlen(good), off) && off[PY_RUNTIME] == 10838560 &&
	      off[PY_THREAD_ID] == 152, "#python line read in pyoffsets's order", "");
	const char *shortl = "#python 1 2 3";
	const char *bad = "#python 10838560 576 x 8 32 48 56 68 9782336 9779584 128 112 72 136 184 48 16 32 32 16 152";
	check(!pyframes_parse_line(shortl, strlen(shortl), off) &&
	      !pyframes_parse_line(bad, strlen(bad), off),
	      "#python line: too short or not numbers refused", "");
	/* the tags' two offsets (co_name, the hash) follow; a line without
	 * them (an older capture) leaves them 0: no tags */
	const char *tagged = "#python 10838560 576 56 8 32 48 56 68 9782336 9779584 128 112 72 136 184 48 16 32 32 16 152 120 24";
	uint64_t o2[PY_OFF_COUNT];
	struct pyframes *a = NULL, *b = NULL;
	check(pyframes_parse_line(tagged, strlen(tagged), o2) && o2[PY_CO_NAME] == 120 &&
	      o2[PY_ASCII_HASH] == 24 && pyframes_parse_line(good, strlen(good), off) &&
	      off[PY_CO_NAME] == 0 && off[PY_ASCII_HASH] == 0 &&
	      (a = pyframes_new(o2, true)) && (b = pyframes_new(off, true)) &&
	      pyframes_tagged(a) && !pyframes_tagged(b),
	      "#python line: the tags' offsets read; an older line's: no tags", "");
	pyframes_free(a);
	pyframes_free(b);
	const char *cut = "#python 10838560 576 56 8 32 48 56 68 9782336 9779584 128 112 72 136 184 48 16 32 32 16 152 120";
	check(!pyframes_parse_line(cut, strlen(cut), o2), "#python line: one tag offset of two refused", "");
}

/* The sample's tag as the program computes it: (acc ^ hash ^ line) *
 * FNV's 64-bit prime, frame by frame, wrapping (bpftrace's u64). */
static void tag_fold(void)
{
	uint64_t acc = pyframes_fold(0, 0x1122334455667788ull, 3);
	check(acc == (0x1122334455667788ull ^ 3) * 1099511628211ull,
	      "fold: (0 ^ hash ^ first line) * FNV prime, wrapping", "");
	uint64_t x = pyframes_fold(acc, (uint64_t)-4228238704574986447ll, 40);
	uint64_t y = pyframes_fold(acc, (uint64_t)-4228238704574986447ll, 41);
	uint64_t z = pyframes_fold(pyframes_fold(0, (uint64_t)-4228238704574986447ll, 40),
				   0x1122334455667788ull, 3);
	check(x != y && x != z, "fold: another first line, or the frames' order, another tag", "");
}

struct got {
	size_t n, nints;
	uint64_t ints[4];
	int python;
};

static int on_record(void *ctx, const struct bt_record *r)
{
	struct got *g = ctx;
	g->n++;
	g->nints = r->nints;
	for (size_t i = 0; i < r->nints && i < 4; i++)
		g->ints[i] = r->ints[i];
	return 0;
}

static int on_python(void *ctx, const char *line, size_t len)
{
	(void)line, (void)len;
	((struct got *)ctx)->python++;
	return 0;
}

static void feed(struct bt_parser *bp, const char *text)
{
	const char *s = text;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		bt_parser_line(bp, s, n);
		s += n + (e != NULL);
	}
}

static void key_ints(void)
{
	struct got g = { 0 };
	struct bt_callbacks cb = { .ctx = &g, .record = on_record, .python = on_python };
	struct bt_parser *bp = bt_parser_new(&cb);
	if (!bp) {
		check(0, "parser", "out of memory");
		return;
	}
	feed(bp, "#python 1 2\n"
		 "@stackfold_a[4294967297, 7, py\\x00\\x00, \n"
		 "\t5474e4 0x5474e4 ([unknown])\n"
		 ", , 514, 140035411240528, 140035411240679]: 3\n");
	check(g.n == 1 && g.nints == 3 && g.ints[0] == 514 &&
	      g.ints[1] == 140035411240528ull && g.ints[2] == 140035411240679ull,
	      "a key's integers after its stacks reach the record", "");
	check(g.python == 1, "a #python line reaches its callback", "");
	feed(bp, "@stackfold_a[4294967297, 7, py\\x00\\x00, \n"
		 "\t5474e4 0x5474e4 ([unknown])\n"
		 ", \n"
		 "\tffffffff81000e06 asm_sysvec_apic_timer_interrupt+22\n"
		 "]: 1\n");
	check(g.n == 2 && g.nints == 0, "bt/profile.bt's key: no integers", "");
	bt_parser_free(bp);
}

/* The folded text of sample id of p (root first): the names of each
 * location's outermost line. */
static void folded(const struct profile *p, int64_t id, char *out, size_t cap)
{
	const struct pf_sample *sm = &p->samples[id];
	size_t n = 0;
	out[0] = '\0';
	for (uint32_t i = sm->depth; i-- > 0;) {
		const struct pf_location *l = &p->locations[p->stack_ids[sm->stack_start + i]];
		const char *nm = l->nlines ? profile_str(p, p->functions[p->lines[l->line_start + l->nlines - 1].function].name)
					   : profile_str(p, l->unknown_name);
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? ";" : "", nm ? nm : "?");
	}
}

static struct bt_frame named(const char *s)
{
	return (struct bt_frame){ .kind = BT_FRAME_NAME, .name = s, .name_len = strlen(s) };
}

/* Native frames leaf (C code) -> eval loop -> list_sort -> eval loop ->
 * main; Python frames k0, k1 (entry), m0, m1 (entry), x (no eval loop
 * left): k0 and k1 go above the first eval loop, m0 and m1 above the
 * second, x at the root end.  The test process is no Python: every
 * Python frame is [python:unknown] (its place is what is checked) and
 * counted for each sample. */
static void merge(void)
{
	struct profile p;
	if (profile_init(&p)) {
		check(0, "merge", "out of memory");
		return;
	}
	struct resolver *r = resolver_new(&p, NULL, false);
	uint64_t off[PY_OFF_COUNT] = { 0 };
	if (!r || resolver_set_python(r, off, true)) {
		check(0, "merge", "out of memory");
		resolver_free(r);
		profile_release(&p);
		return;
	}
	struct bt_frame fr[5] = {	/* root first */
		named("main"), named("_PyEval_EvalFrameDefault"), named("list_sort"),
		named("_PyEval_EvalFrameDefault"), named("leafC"),
	};
	uint64_t ints[6] = { 512 + 5, 0x1000, 0x2001, 0x3000, 0x4001, 0x5000 };
	struct bt_record rec = { .map = "@", .map_len = 1, .has_pid = true,
				 .pid = (uint32_t)getpid(), .frames = fr, .nframes = 5,
				 .nuser = 5, .had_stack = true, .count = 3,
				 .ints = ints, .nints = 6 };
	int64_t id = resolver_record_id(r, &rec);
	char got[512] = "";
	if (id > 0)
		folded(&p, id, got, sizeof(got));
	const char *want = "[python:unknown];main;_PyEval_EvalFrameDefault;"
			   "[python:unknown];[python:unknown];list_sort;"
			   "_PyEval_EvalFrameDefault;[python:unknown];[python:unknown];leafC";
	check(strcmp(got, want) == 0, "merge: each eval loop owns its frames down to the entry one", got);
	check(p.counters.py_unknown_frames == 15, "merge: unnamed frames counted per sample", "");
	ints[0] = 512 + 256 + 5;
	rec.count = 2;
	resolver_record_id(r, &rec);
	check(p.counters.py_cut_stacks == 2, "merge: a walk cut at the bound counted", "");
	ints[0] = 5;	/* not a Python thread: nothing merged */
	id = resolver_record_id(r, &rec);
	if (id > 0)
		folded(&p, id, got, sizeof(got));
	check(strcmp(got, "main;_PyEval_EvalFrameDefault;list_sort;_PyEval_EvalFrameDefault;leafC") == 0,
	      "merge: a thread without Python frames keeps its native stack", got);
	resolver_free(r);
	profile_release(&p);
}

int main(void)
{
	merge();
	line_table();
	python_line();
	tag_fold();
	key_ints();
	return failed;
}
