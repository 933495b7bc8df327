/*
 * sidemaps.c - processes' executable mappings from side-band records:
 * see sidemaps.h.
 */
#include <stdlib.h>
#include <string.h>

#include "capture/sidemaps.h"

void sidemaps_init(struct sidemaps *sm, uint64_t keep_ns)
{
	memset(sm, 0, sizeof(*sm));
	sm->keep_ns = keep_ns;
}

static void clear_maps(struct side_proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->m[i].path);
	p->n = 0;
	p->main_set = false;
}

static void proc_free(struct side_proc *p)
{
	clear_maps(p);
	free(p->m);
	free(p);
}

void sidemaps_release(struct sidemaps *sm)
{
	for (size_t i = 0; i < SIDEMAPS_BUCKETS; i++)
		while (sm->b[i]) {
			struct side_proc *p = sm->b[i];
			sm->b[i] = p->next;
			proc_free(p);
		}
	sm->nprocs = 0;
}

static struct side_proc **slot(struct sidemaps *sm, int pid)
{
	struct side_proc **pp = &sm->b[(unsigned)pid % SIDEMAPS_BUCKETS];
	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static struct side_proc *lookup(const struct sidemaps *sm, int pid)
{
	struct side_proc *p = sm->b[(unsigned)pid % SIDEMAPS_BUCKETS];
	while (p && p->pid != pid)
		p = p->next;
	return p;
}

/* A fresh entry for pid in place of any older one (a pid reused). */
static struct side_proc *fresh(struct sidemaps *sm, int pid)
{
	struct side_proc **pp = slot(sm, pid);
	struct side_proc *p = calloc(1, sizeof(*p));
	if (!p) {
		sm->dropped++;
		return NULL;
	}
	p->pid = pid;
	if (*pp) {
		p->next = (*pp)->next;
		proc_free(*pp);
		sm->nprocs--;
	}
	*pp = p;
	sm->nprocs++;
	sm->made++;
	return p;
}

/* pid's entry for an event at t, made when none (a process begun before
 * the capture), or when pid's last one exited before t (a pid reused). */
static struct side_proc *live(struct sidemaps *sm, int pid, uint64_t t)
{
	struct side_proc *p = lookup(sm, pid);
	return p && (!p->exited || t <= p->exit_ns) ? p : fresh(sm, pid);
}

static int push(struct sidemaps *sm, struct side_proc *p,
		const struct side_map *m)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		struct side_map *v = realloc(p->m, cap * sizeof(*v));
		if (!v)
			return -1;
		p->m = v, p->cap = cap;
	}
	char *path = strdup(m->path ? m->path : "");
	if (!path)
		return -1;
	p->m[p->n] = *m;
	p->m[p->n++].path = path;
	return 0;
}

void sidemaps_fork(struct sidemaps *sm, int pid, int ppid, uint64_t t)
{
	struct side_proc *p = lookup(sm, pid);
	/* its exec, mmap or exit read first, in an earlier drain */
	if (p && p->last_ns > t) {
		p->start_ns = t, p->fork_known = true;
		return;
	}
	if (!(p = fresh(sm, pid)))
		return;
	p->start_ns = p->last_ns = t;
	p->fork_known = true;
	const struct side_proc *par = lookup(sm, ppid);
	if (!par || par == p)
		return;
	memcpy(p->comm, par->comm, sizeof(p->comm));
	p->complete = par->complete;
	p->main_set = par->main_set, p->main_start = par->main_start;
	for (size_t i = 0; i < par->n; i++)
		if (push(sm, p, &par->m[i])) {
			sm->dropped++;
			return;
		}
}

void sidemaps_comm(struct sidemaps *sm, int pid, const char *comm, bool exec,
		   uint64_t t)
{
	struct side_proc *p = live(sm, pid, t);
	if (!p)
		return;
	if (exec) {
		clear_maps(p);
		p->complete = true;
		p->execs += p->execs < 126;
	}
	strncpy(p->comm, comm, sizeof(p->comm) - 1);
	p->comm[sizeof(p->comm) - 1] = 0;
	p->last_ns = t;
}

void sidemaps_exit(struct sidemaps *sm, int pid, uint64_t t)
{
	struct side_proc *p = lookup(sm, pid);
	if (p && !p->exited)
		p->exited = true, p->exit_ns = p->last_ns = t;
}

/* A mapping replaces whatever it overlaps, as mmap(MAP_FIXED) does. */
static void drop_overlaps(struct side_proc *p, uint64_t start, uint64_t end)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct side_map *o = &p->m[i];
		if (o->start < end && start < o->start + o->len)
			free(o->path);
		else
			p->m[k++] = *o;
	}
	p->n = k;
}

void sidemaps_mmap(struct sidemaps *sm, int pid, const struct side_map *m,
		   uint64_t t)
{
	struct side_proc *p = live(sm, pid, t);
	if (!p)
		return;
	drop_overlaps(p, m->start, m->start + m->len);
	if (push(sm, p, m)) {
		sm->dropped++;
		return;
	}
	p->last_ns = t;
	/* the kernel maps the executable before its interpreter */
	if (!p->main_set && p->execs && m->path && m->path[0] == '/')
		p->main_set = true, p->main_start = m->start;
}

void sidemaps_expire(struct sidemaps *sm, uint64_t now)
{
	for (size_t i = 0; i < SIDEMAPS_BUCKETS; i++) {
		struct side_proc **pp = &sm->b[i];
		while (*pp) {
			struct side_proc *p = *pp;
			if (p->exited && p->exit_ns + sm->keep_ns < now) {
				*pp = p->next;
				proc_free(p);
				sm->nprocs--;
			} else {
				pp = &p->next;
			}
		}
	}
}

/* image (protocol.h): bits 7-30 the leader's start time >> 22 (4.2 ms
 * units), bits 0-6 its exec count + 1 (127: past the cap).  A start
 * time is matched within one unit: the fork record's time is taken a
 * moment after the task's start time. */
const struct side_proc *sidemaps_find(const struct sidemaps *sm, int pid,
				      uint32_t image)
{
	const struct side_proc *p = lookup(sm, pid);
	uint32_t execs = image & 127, when = image >> 7;
	if (!p || !p->n || !p->complete || execs == 0 || execs == 127 || p->execs != execs - 1)
		return NULL;
	if (!p->fork_known)
		return p;
	uint32_t mine = (uint32_t)(p->start_ns >> 22) & 0xffffff;
	uint32_t d = (mine - when) & 0xffffff;
	return d <= 1 || d == 0xffffff ? p : NULL;
}
