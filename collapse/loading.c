/*
 * loading.c - snapshot again the processes caught while ld.so was loading
 * (loading.h).
 */
#include "loading.h"

#include <stdlib.h>

#include "util.h"

void loading_add(struct loading_list *l, struct sym_session *ss, int pid,
		 uint32_t image, uint64_t now_ns)
{
	if (!sym_process_loading(ss, pid, image) ||
	    sf_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return;
	l->v[l->n++] = (struct loading_entry){ pid, image, LOADING_TRIES,
					       now_ns + LOADING_GAP_NS };
}

uint64_t loading_next_due(const struct loading_list *l)
{
	uint64_t due = UINT64_MAX;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].due_ns < due)
			due = l->v[i].due_ns;
	return due;
}

void loading_check(struct loading_list *l, struct sym_session *ss,
		   uint64_t now_ns, void (*fn)(void *ctx, int pid, uint32_t image),
		   void *ctx)
{
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct loading_entry *e = &l->v[i];
		if (now_ns >= e->due_ns) {
			if (sym_process_refresh(ss, e->pid, e->image, NULL) != 0)
				continue;	/* exited: nothing more to see */
			if (fn)
				fn(ctx, e->pid, e->image);
			if (!sym_process_loading(ss, e->pid, e->image) ||
			    !--e->tries)
				continue;
			e->due_ns = now_ns + LOADING_GAP_NS;
		}
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
