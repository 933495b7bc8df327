/* dwarfin.c - unwound --call-graph dwarf samples as records; see
 * dwarfin.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/dwarfin.h"

static int on_sample(void *ctx, const struct dw_sample *s);

int dwarfin_init(struct dwarfin *d, struct sym_session *(*session)(void *),
		 int (*record)(void *, const struct bt_record *), void *ctx,
		 struct pf_counters *counters)
{
	memset(d, 0, sizeof(*d));
	d->session = session;
	d->record = record;
	d->ctx = ctx;
	d->counters = counters;
	d->rec = dwrec_new(on_sample, d);
	return d->rec ? 0 : -ENOMEM;
}

void dwarfin_release(struct dwarfin *d)
{
	dwrec_free(d->rec);
	uw_free(d->uw);
	free(d->frames);
	memset(d, 0, sizeof(*d));
}

bool dwarfin_wants(const struct dwarfin *d, const char *s, size_t len)
{
	return dwrec_wants(d->rec, s, len);
}

/* Counters are the recorder's plus the unwinder's; brought into the
 * profile's as they change (a total, not an increment: set, not added). */
static void sync_counters(struct dwarfin *d)
{
	const struct dwrec_counters *c = dwrec_counters(d->rec);
	d->counters->dwarf_samples = c->samples;
	d->counters->dwarf_partial = c->partial;
	d->counters->dwarf_badregs = c->badregs;
	d->counters->dwarf_bad_lines = c->bad_lines;
	if (d->uw) {
		d->counters->dwarf_cfi_files = uw_stats(d->uw)->files;
		d->counters->dwarf_cfi_cached = uw_stats(d->uw)->cached_files;
	}
}

int dwarfin_line(struct dwarfin *d, const char *s, size_t len, size_t line)
{
	int ret = dwrec_line(d->rec, s, len, line);
	sync_counters(d);
	return ret;
}

int dwarfin_finish(struct dwarfin *d)
{
	if (!d->rec)
		return 0;
	int ret = dwrec_finish(d->rec);
	sync_counters(d);
	uw_save(d->uw);
	return ret;
}

static struct bt_frame *frame_at(struct dwarfin *d, size_t i)
{
	if (sf_grow((void **)&d->frames, &d->fcap, i + 1, sizeof(*d->frames)))
		return NULL;
	return &d->frames[i];
}

static int push_name(struct dwarfin *d, size_t *n, const char *name)
{
	struct bt_frame *f = frame_at(d, *n);
	if (!f)
		return -ENOMEM;
	*f = (struct bt_frame){ .kind = BT_FRAME_NAME, .name = name,
				.name_len = strlen(name) };
	(*n)++;
	return 0;
}

static int push_addr(struct dwarfin *d, size_t *n, uint64_t a, bool kernel)
{
	struct bt_frame *f = frame_at(d, *n);
	if (!f)
		return -ENOMEM;
	*f = (struct bt_frame){ .kind = BT_FRAME_ADDR, .has_addr = true,
				.addr = a, .kernel = kernel };
	(*n)++;
	return 0;
}

/* The user frames of s, root first, into d->frames from 0; *n their
 * count. */
static int user_frames(struct dwarfin *d, const struct dw_sample *s,
		       size_t *n)
{
	*n = 0;
	if (s->flags & DWREC_KTHREAD)
		return 0;
	if (s->flags & DWREC_BADREGS)
		return push_name(d, n, "[unwind-error]");
	struct uw_result *r = &d->res;
	struct sym_session *ss = d->session(d->ctx);
	if (ss && !d->uw && !(d->uw = uw_new(ss)))
		return -ENOMEM;
	struct uw_stack st = { s->stack, s->stack_len, s->regs[UW_RSP] };
	if (!ss) {	/* no symbolizer at all: the ip alone, marked */
		r->n = 1;
		r->pc[0] = s->regs[UW_RIP];
		r->end = UW_ERROR;
	} else {
		int ret = uw_unwind(d->uw, (int)s->pid, s->image, s->regs, &st, r);
		if (ret)
			return ret;
	}
	int ret = 0;
	if (r->end == UW_TRUNCATED) {
		d->counters->dwarf_truncated++;
		if (s->flags & DWREC_CUT) {
			d->counters->dwarf_cut++;
			if (s->stack_len > d->counters->dwarf_cut_bytes)
				d->counters->dwarf_cut_bytes = s->stack_len;
		}
		ret = push_name(d, n, "[truncated]");
	} else if (r->end == UW_ERROR) {
		d->counters->dwarf_unwind_errors++;
		ret = push_name(d, n, "[unwind-error]");
	}
	for (size_t i = r->n; i-- > 0 && !ret;) {
		/* the resolver looks up every frame but the leaf at address
		 * - 1 (inside the call); a pc a signal interrupted is exact:
		 * one more, so that it is looked up as itself */
		uint64_t a = r->pc[i] + (i > 0 && r->exact[i]);
		ret = push_addr(d, n, a, false);
	}
	return ret;
}

static int on_sample(void *ctx, const struct dw_sample *s)
{
	struct dwarfin *d = ctx;
	size_t n;
	int ret = user_frames(d, s, &n);
	if (ret)
		return ret;
	size_t nuser = n;
	for (size_t i = s->nkframes; i-- > 0;)
		if ((ret = push_addr(d, &n, s->kframes[i], true)))
			return ret;
	static const char map[] = "@stackfold_dwarf";
	struct bt_record rec = {
		.map = map, .map_len = sizeof(map) - 1,
		.has_pid = true, .has_tid = true,
		.pid = s->pid, .tid = s->tid, .image = s->image,
		.comm = s->comm, .comm_len = s->comm_len,
		.frames = d->frames, .nframes = n,
		.nuser = nuser, .nkernel = n - nuser,
		.had_stack = true, .empty_only = n == 0,
		.count = 1, .line = s->line,
	};
	return d->record(d->ctx, &rec);
}
