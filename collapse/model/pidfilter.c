/* pidfilter.c - see pidfilter.h. */
#include "model/pidfilter.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The pid of a root frame "comm-PID" or "comm-PID/TID", 0 when none. */
static uint32_t root_pid(const struct profile *p, const struct pf_sample *s)
{
	if (!s->depth)
		return 0;
	const struct pf_location *l = &p->locations[profile_stack(p, s)[s->depth - 1]];
	if (!l->nlines)
		return 0;
	const struct pf_line *ln = &p->lines[l->line_start + l->nlines - 1];
	const char *name = profile_str(p, p->functions[ln->function].name);
	const char *slash = strrchr(name, '/'), *end = slash ? slash : name + strlen(name);
	const char *d = end;
	while (d > name && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (d == end || d == name || d[-1] != '-')
		return 0;
	unsigned long v = strtoul(d, NULL, 10);
	return v <= 0x7fffffffUL ? (uint32_t)v : 0;
}

uint64_t profile_keep_pids(struct profile *p, const int *pids, unsigned n)
{
	uint64_t out = 0;
	for (size_t i = 1; i < p->nsamples; i++) {
		struct pf_sample *s = &p->samples[i];
		uint32_t pid = s->pid ? s->pid : root_pid(p, s);
		bool keep = false;
		for (unsigned k = 0; k < n && !keep; k++)
			keep = pid && pid == (uint32_t)pids[k];
		if (keep || !s->count)
			continue;
		out += s->count;
		p->counters.samples -= s->count;
		s->count = 0;
	}
	return out;
}
