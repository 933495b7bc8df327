/*
 * fuzz_cfirules.c - libFuzzer target: the unwinder's cached CFI rows
 * (symbolizer/unwind/cfirules.h) decoded from arbitrary bytes, as a
 * cache file that is not to be trusted.
 *
 * Checked on every input: a blob that decodes has rows sorted and apart,
 * each row's expressions inside the operations (read whole: ASan sees an
 * overrun), every address of a row found in it and none between rows;
 * encoding it again gives a blob that decodes to the same rows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfirules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static size_t row_ops(const struct cfr_row *r)
{
	size_t n = 0;
	for (int i = 0; i < CFR_NEXPR; i++)
		n += r->nops[i];
	return n;
}

static void check(const struct cfr_table *t)
{
	for (size_t i = 0; i < t->nrows; i++) {
		const struct cfr_row *r = &t->rows[i];
		if (r->start >= r->end || (i && r->start < t->rows[i - 1].end))
			abort();
		for (size_t k = 0; k < row_ops(r); k++)
			sink += t->ops[r->op0 + k].number;
		if (cfr_find(t, r->start) != i || cfr_find(t, r->end - 1) != i)
			abort();
		if (i && r->start > t->rows[i - 1].end &&
		    cfr_find(t, t->rows[i - 1].end) != SIZE_MAX)
			abort();
	}
	for (size_t i = 0; i < t->nsegs; i++)
		sink += t->segs[i].vaddr;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfr_table t = { 0 }, u = { 0 };
	if (cfr_decode(&t, data, size)) {
		cfr_release(&t);
		return 0;
	}
	check(&t);
	unsigned char *blob;
	size_t len;
	if (cfr_encode(&t, &blob, &len))
		abort();	/* only -ENOMEM: not under the fuzzer */
	if (cfr_decode(&u, blob, len) || u.nrows != t.nrows || u.nops != t.nops ||
	    u.nsegs != t.nsegs)
		abort();
	for (size_t i = 0; i < t.nrows; i++)
		if (u.rows[i].start != t.rows[i].start || u.rows[i].end != t.rows[i].end ||
		    memcmp(u.rows[i].kind, t.rows[i].kind, CFR_NEXPR) ||
		    memcmp(u.rows[i].nops, t.rows[i].nops, CFR_NEXPR))
			abort();
	free(blob);
	cfr_release(&t);
	cfr_release(&u);
	return 0;
}
