/* cfirules.c - CFI rows in the unwinder's form, and as a cache blob; see
 * cfirules.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/util.h"
#include "unwind/cfirules.h"

const int cfr_regs[CFR_NREGS] = { 3, 6, 12, 13, 14, 15, 16 };

#define CFR_MAGIC "SFCFIRUL"
#define CFR_VERSION 2		/* 1: rows as libdw reported them, no entry */
/* bounds a blob must keep */
#define CFR_MAX_SEGS 64
#define CFR_MAX_ROWS (1u << 22)
#define CFR_MAX_BLOB_OPS (1u << 24)

struct disk_hdr {
	char magic[8];
	uint32_t version, nsegs, nrows, nops, crc, pad;
	uint64_t entry;
};

struct disk_row {
	uint64_t start, end;
	uint32_t op0;
	uint8_t signal;
	uint8_t kind[CFR_NEXPR];
	uint8_t nops[CFR_NEXPR];
	uint8_t pad[3];
};

struct disk_op {
	uint64_t number, number2;
	uint8_t atom;
	uint8_t pad[7];
};

_Static_assert(sizeof(struct disk_hdr) == 40, "disk_hdr layout");
_Static_assert(sizeof(struct disk_row) == 40, "disk_row layout");
_Static_assert(sizeof(struct disk_op) == 24, "disk_op layout");
_Static_assert(sizeof(struct cfr_seg) == 24, "cfr_seg layout");

void cfr_release(struct cfr_table *t)
{
	free(t->rows);
	free(t->ops);
	free(t->segs);
	memset(t, 0, sizeof(*t));
}

/* One expression into the table's operations: its kind. */
static int put_expr(struct cfr_table *t, const Dwarf_Op *ops, size_t n,
		    uint8_t *kind, uint8_t *nops)
{
	*nops = 0;
	if (n > CFR_MAX_OPS) {
		*kind = CFR_BAD;
		return 0;
	}
	if (sf_grow((void **)&t->ops, &t->ocap, t->nops + n, sizeof(*t->ops)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		t->ops[t->nops++] = (struct cfr_op){ ops[i].atom, ops[i].number,
						     ops[i].number2 };
	*kind = CFR_EXPR;
	*nops = (uint8_t)n;
	return 0;
}

int cfr_add(struct cfr_table *t, Dwarf_Frame *fr, uint64_t from, size_t *row)
{
	if (sf_grow((void **)&t->rows, &t->rcap, t->nrows + 1, sizeof(*t->rows)))
		return -ENOMEM;
	struct cfr_row r = { .op0 = (uint32_t)t->nops };
	Dwarf_Addr start = 0, end = 0;
	bool signal = false;
	dwarf_frame_info(fr, &start, &end, &signal);
	r.start = from > start ? from : start;
	r.end = end > r.start ? end : r.start + 1;
	r.signal = signal;
	Dwarf_Op *ops, mem[3];
	size_t nops;
	int ret = 0;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0)
		r.kind[0] = CFR_BAD;
	else
		ret = put_expr(t, ops, nops, &r.kind[0], &r.nops[0]);
	for (int i = 0; i < CFR_NREGS && !ret; i++) {
		uint8_t *k = &r.kind[1 + i];
		if (dwarf_frame_register(fr, cfr_regs[i], mem, &ops, &nops) != 0)
			*k = CFR_BAD;
		else if (!ops)
			*k = CFR_SAME;
		else if (!nops)
			*k = CFR_UNDEF;
		else
			ret = put_expr(t, ops, nops, k, &r.nops[1 + i]);
	}
	if (ret)
		return ret;
	*row = t->nrows;
	t->rows[t->nrows++] = r;
	t->dirty = true;
	return 0;
}

size_t cfr_find(const struct cfr_table *t, uint64_t a)
{
	size_t lo = 0, hi = t->nsorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cfr_row *r = &t->rows[mid];
		if (a < r->start)
			hi = mid;
		else if (a >= r->end)
			lo = mid + 1;
		else
			return mid;
	}
	return SIZE_MAX;
}

static int row_cmp(const void *a, const void *b)
{
	const struct cfr_row *x = *(const struct cfr_row *const *)a;
	const struct cfr_row *y = *(const struct cfr_row *const *)b;
	return (x->start > y->start) - (x->start < y->start);
}

static size_t row_ops(const struct cfr_row *r)
{
	size_t n = 0;
	for (int i = 0; i < CFR_NEXPR; i++)
		n += r->nops[i];
	return n;
}

static uint32_t blob_crc(const unsigned char *blob, size_t len)
{
	struct disk_hdr h;
	memcpy(&h, blob, sizeof(h));
	h.crc = 0;
	uLong c = crc32(0L, (const Bytef *)&h, sizeof(h));
	return (uint32_t)crc32(c, blob + sizeof(h), (uInt)(len - sizeof(h)));
}

int cfr_encode(const struct cfr_table *t, unsigned char **blob, size_t *len)
{
	const struct cfr_row **order = malloc((t->nrows ? t->nrows : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < t->nrows; i++)
		order[i] = &t->rows[i];
	qsort(order, t->nrows, sizeof(*order), row_cmp);
	/* a row overlapping the one kept before it keeps only its part
	 * past that one: a row holds on any part of its range */
	uint64_t *starts = malloc((t->nrows ? t->nrows : 1) * sizeof(*starts));
	if (!starts) {
		free(order);
		return -ENOMEM;
	}
	size_t nrows = 0, nops = 0;
	uint64_t last_end = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		uint64_t start = order[i]->start;
		if (nrows && start < last_end)
			start = last_end;
		if (start >= order[i]->end)
			continue;	/* within the rows kept before it */
		starts[nrows] = start;
		order[nrows++] = order[i];
		last_end = order[i]->end;
		nops += row_ops(order[i]);
	}
	size_t n = sizeof(struct disk_hdr) + t->nsegs * sizeof(struct cfr_seg) +
		   nrows * sizeof(struct disk_row) + nops * sizeof(struct disk_op);
	unsigned char *b = calloc(1, n);
	if (!b) {
		free(order);
		free(starts);
		return -ENOMEM;
	}
	struct disk_hdr h = { .version = CFR_VERSION, .nsegs = (uint32_t)t->nsegs,
			      .nrows = (uint32_t)nrows, .nops = (uint32_t)nops,
			      .entry = t->entry };
	memcpy(h.magic, CFR_MAGIC, 8);
	unsigned char *p = b + sizeof(h);
	memcpy(p, t->segs, t->nsegs * sizeof(struct cfr_seg));
	p += t->nsegs * sizeof(struct cfr_seg);
	unsigned char *po = p + nrows * sizeof(struct disk_row);
	uint32_t op0 = 0;
	for (size_t i = 0; i < nrows; i++) {
		const struct cfr_row *r = order[i];
		struct disk_row d = { .start = starts[i], .end = r->end, .op0 = op0,
				      .signal = r->signal };
		memcpy(d.kind, r->kind, sizeof(d.kind));
		memcpy(d.nops, r->nops, sizeof(d.nops));
		memcpy(p + i * sizeof(d), &d, sizeof(d));
		for (size_t k = 0; k < row_ops(r); k++) {
			const struct cfr_op *o = &t->ops[r->op0 + k];
			struct disk_op dop = { .number = o->number, .number2 = o->number2,
					       .atom = o->atom };
			memcpy(po + (size_t)op0++ * sizeof(dop), &dop, sizeof(dop));
		}
	}
	free(order);
	free(starts);
	memcpy(b, &h, sizeof(h));
	h.crc = blob_crc(b, n);
	memcpy(b, &h, sizeof(h));
	*blob = b;
	*len = n;
	return 0;
}

/* A row as cfr_encode() writes it: a range after the previous row's, its
 * operations right after the previous row's (*op_at, advanced). */
static bool row_ok(const struct disk_row *d, uint64_t prev_end, bool first,
		   uint64_t nops, uint64_t *op_at)
{
	if (d->start >= d->end || (!first && d->start < prev_end) || d->signal > 1)
		return false;
	uint64_t n = 0;
	for (int i = 0; i < CFR_NEXPR; i++) {
		if (d->kind[i] > CFR_BAD || d->nops[i] > CFR_MAX_OPS ||
		    (d->kind[i] != CFR_EXPR && d->nops[i]))
			return false;
		n += d->nops[i];
	}
	if (d->op0 != *op_at || *op_at + n > nops)
		return false;
	*op_at += n;
	return true;
}

int cfr_decode(struct cfr_table *t, const unsigned char *blob, size_t len)
{
	struct disk_hdr h;
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, blob, sizeof(h));
	if (memcmp(h.magic, CFR_MAGIC, 8))
		return -EINVAL;
	if (h.version != CFR_VERSION)
		return -ESTALE;
	if (!h.nsegs || h.nsegs > CFR_MAX_SEGS || h.nrows > CFR_MAX_ROWS || h.nops > CFR_MAX_BLOB_OPS ||
	    len != sizeof(h) + (size_t)h.nsegs * sizeof(struct cfr_seg) +
			   (size_t)h.nrows * sizeof(struct disk_row) +
			   (size_t)h.nops * sizeof(struct disk_op) ||
	    blob_crc(blob, len) != h.crc)
		return -EINVAL;
	const unsigned char *p = blob + sizeof(h);
	t->segs = malloc((h.nsegs ? h.nsegs : 1) * sizeof(*t->segs));
	t->rows = malloc((h.nrows ? h.nrows : 1) * sizeof(*t->rows));
	t->ops = malloc((h.nops ? h.nops : 1) * sizeof(*t->ops));
	if (!t->segs || !t->rows || !t->ops) {
		cfr_release(t);
		return -ENOMEM;
	}
	t->rcap = h.nrows ? h.nrows : 1;
	t->ocap = h.nops ? h.nops : 1;
	memcpy(t->segs, p, h.nsegs * sizeof(*t->segs));
	t->nsegs = h.nsegs;
	p += h.nsegs * sizeof(struct cfr_seg);
	uint64_t prev_end = 0, op_at = 0;
	for (uint32_t i = 0; i <= h.nrows; i++) {
		if (i == h.nrows) {	/* every operation belongs to a row */
			if (op_at == h.nops)
				break;
			cfr_release(t);
			return -EINVAL;
		}
		struct disk_row d;
		memcpy(&d, p + (size_t)i * sizeof(d), sizeof(d));
		if (!row_ok(&d, prev_end, i == 0, h.nops, &op_at)) {
			cfr_release(t);
			return -EINVAL;
		}
		prev_end = d.end;
		struct cfr_row *r = &t->rows[i];
		*r = (struct cfr_row){ .start = d.start, .end = d.end, .op0 = d.op0,
				       .signal = d.signal };
		memcpy(r->kind, d.kind, sizeof(r->kind));
		memcpy(r->nops, d.nops, sizeof(r->nops));
	}
	p += (size_t)h.nrows * sizeof(struct disk_row);
	for (uint32_t i = 0; i < h.nops; i++) {
		struct disk_op d;
		memcpy(&d, p + (size_t)i * sizeof(d), sizeof(d));
		t->ops[i] = (struct cfr_op){ d.atom, d.number, d.number2 };
	}
	t->nrows = t->nsorted = h.nrows;
	t->nops = h.nops;
	t->entry = h.entry;
	t->dirty = false;
	return 0;
}
