/*
 * loading.c - snapshot again the processes caught while ld.so was loading,
 * and the young ones when their map changes (loading.h).
 */
#include "cmd/loading.h"

#include <errno.h>
#include <stdlib.h>

#include "base/util.h"

/* Is pid's image a program that started running lately? */
static bool started_lately(struct sym_session *ss, int pid, uint32_t image)
{
	return sym_process_age_ns(ss, pid, image) < YOUNG_NS ||
	       (image > 1 && sym_process_known(ss, pid, image - 1));
}

/* now + gap, rounded up to SETTLE_GRID_NS: the settling looks of the
 * processes a fork storm starts fall due together, one wake-up for many. */
static uint64_t settle_due(uint64_t now_ns, uint64_t gap_ns)
{
	uint64_t t = now_ns + gap_ns;
	return t + (SETTLE_GRID_NS - t % SETTLE_GRID_NS) % SETTLE_GRID_NS;
}

void loading_add(struct loading_list *l, struct sym_session *ss, int pid,
		 uint32_t image, bool settle, bool is_new, uint64_t now_ns)
{
	bool loading = sym_process_loading(ss, pid, image);
	bool young = settle && (is_new || started_lately(ss, pid, image));
	if ((!loading && !young) ||
	    sf_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return;
	l->v[l->n++] = (struct loading_entry){
		.pid = pid, .image = image,
		.tries = loading ? LOADING_TRIES : 0, .young = young,
		.gap_ns = SETTLE_FIRST_NS,
		.due_ns = loading ? now_ns + LOADING_GAP_NS :
				    settle_due(now_ns, SETTLE_FIRST_NS),
	};
}

uint64_t loading_next_due(const struct loading_list *l)
{
	uint64_t due = UINT64_MAX;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].due_ns < due)
			due = l->v[i].due_ns;
	return due;
}

/* Settling: the next look after the current gap (doubled), or false when
 * past the last one. */
static bool settle_next(struct loading_entry *e, uint64_t now_ns)
{
	if (!e->young || e->gap_ns > SETTLE_LAST_NS)
		return false;
	e->due_ns = settle_due(now_ns, e->gap_ns);
	e->gap_ns *= 2;
	return true;
}

/* Look at e, due: whether to keep it. */
static bool look(struct loading_entry *e, struct sym_session *ss,
		 uint64_t now_ns, void (*fn)(void *ctx, int pid, uint32_t image),
		 void *ctx)
{
	if (!e->tries) {	/* settling: only a changed map is taken */
		int changed = sym_process_maps_changed(ss, e->pid, e->image);
		if (changed < 0 && changed != -ENOMEM)
			return false;	/* exited: nothing more to see */
		if (changed > 0 &&
		    sym_process_refresh(ss, e->pid, e->image, NULL) == 0 && fn)
			fn(ctx, e->pid, e->image);
		return settle_next(e, now_ns);
	}
	if (sym_process_refresh(ss, e->pid, e->image, NULL) != 0)
		return false;
	if (fn)
		fn(ctx, e->pid, e->image);
	if (sym_process_loading(ss, e->pid, e->image) && --e->tries) {
		e->due_ns = now_ns + LOADING_GAP_NS;
		return true;
	}
	e->tries = 0;
	return settle_next(e, now_ns);
}

void loading_check(struct loading_list *l, struct sym_session *ss,
		   uint64_t now_ns, void (*fn)(void *ctx, int pid, uint32_t image),
		   void *ctx)
{
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct loading_entry *e = &l->v[i];
		if (now_ns < e->due_ns || look(e, ss, now_ns, fn, ctx))
			l->v[w++] = *e;
	}
	l->n = w;
}

void loading_clear(struct loading_list *l)
{
	l->n = 0;
}

void loading_release(struct loading_list *l)
{
	free(l->v);
	*l = (struct loading_list){ 0 };
}
