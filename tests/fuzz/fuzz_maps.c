/*
 * fuzz_maps.c - libFuzzer target: /proc/PID/maps text (symbolizer/proc/maps.c),
 * fed in fuzzer-chosen chunks, the same text as a JIT perf map
 * (symbolizer/proc/perfmap.c) and, for one input in four, as a saved snapshot
 * through sym_process_load_maps()/sym_process_write_maps().
 *
 * Checked: kept entries are sorted, non-empty ranges; maps_list_find()
 * returns an entry that holds the address or -1 (and finds every entry's
 * addresses when entries do not overlap); a
 * one-shot parse and a chunked parse agree; perfmap_find() names are
 * readable.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/maps.h"
#include "proc/perfmap.h"
#include "symbolizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static volatile unsigned g_sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	unsetenv("DEBUGINFOD_URLS");
	return 0;
}

/* Kept entries are sorted non-empty ranges; in a list without overlaps
 * (what the kernel writes) every address of an entry finds it. */
static void check_list(const struct maps_list *ml)
{
	bool overlap = false;
	for (size_t i = 0; i < ml->n; i++) {
		const struct maps_entry *e = &ml->v[i];
		if (e->limit <= e->start)
			abort();
		if (i && e->start < ml->v[i - 1].start)
			abort();
		if (i && e->start < ml->v[i - 1].limit)
			overlap = true;
		g_sink += (unsigned)strlen(e->path) + e->line_len;
		for (uint32_t k = 0; k < e->line_len; k++)
			g_sink += (unsigned char)e->line[k];
	}
	for (size_t i = 0; i < ml->n; i++) {
		uint64_t probe[3] = { ml->v[i].start, ml->v[i].limit - 1,
				      ml->v[i].limit };
		for (int k = 0; k < 3; k++) {
			ptrdiff_t j = maps_list_find(ml, probe[k]);
			if (j >= 0 && (probe[k] < ml->v[j].start ||
				       probe[k] >= ml->v[j].limit))
				abort();
			if (k < 2 && j < 0 && !overlap)
				abort();
		}
	}
}

static void maps_chunked(const uint8_t *data, size_t size)
{
	struct maps_list a, b;
	maps_list_init(&a);
	maps_list_init(&b);
	if (maps_list_feed(&a, (const char *)data, size) ||
	    maps_list_finish(&a))
		abort();
	/* chunk sizes from the data itself */
	size_t off = 0, step = size ? (size_t)data[0] % 61 + 1 : 1;
	while (off < size) {
		size_t n = size - off < step ? size - off : step;
		if (maps_list_feed(&b, (const char *)data + off, n))
			abort();
		off += n;
		step = step * 7 % 61 + 1;
	}
	if (maps_list_finish(&b))
		abort();
	if (a.n != b.n || a.bad_lines != b.bad_lines ||
	    a.first_bad_line != b.first_bad_line)
		abort();
	check_list(&a);
	maps_list_release(&a);
	maps_list_release(&b);
}

static void snapshot(const uint8_t *data, size_t size)
{
	char *buf = NULL;
	size_t len = 0;
	struct sym_opts so = { .no_cache = true };
	struct sym_session *sess = sym_session_new(&so, NULL);
	if (!sess)
		abort();
	/* "[vdso]" makes the session read our own /proc/self/maps (huge
	 * under ASan) to find the vdso: that is not input, so skip it */
	char *text = malloc(size ? size : 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	for (char *v = text; (v = memmem(v, size - (size_t)(v - text), "[vdso]", 6));)
		v[4] = 'X';
	/* a pid no process has: files are never opened */
	if (sym_process_load_maps(sess, 0x3ffffff0, 0, text, size, NULL, NULL))
		abort();
	free(text);
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	int ret = sym_process_write_maps(sess, 0x3ffffff0, 0, f);
	fclose(f);
	if (ret && ret != -ENOENT)
		abort();
	free(buf);
	while (sym_session_next_warning(sess))
		;
	sym_session_free(sess);
}

static void perf_map(const uint8_t *data, size_t size)
{
	struct perfmap pm;
	size_t used = 0;
	if (perfmap_init(&pm))
		abort();
	if (perfmap_parse(&pm, (const char *)data, size, &used) < 0)
		abort();
	if (used > size)
		abort();
	for (size_t i = 0; i < pm.n; i++) {
		const char *name = perfmap_find(&pm, pm.v[i].start);
		if (name)
			g_sink += (unsigned)strlen(name);
	}
	perfmap_release(&pm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	maps_chunked(data, size);
	perf_map(data, size);
	/* a session costs more than the parse: one input in four */
	if (size && (data[size / 2] & 3) == 0)
		snapshot(data, size);
	return 0;
}
