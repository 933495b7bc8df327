/* perfmap.c - /tmp/perf-PID.map reader, see perfmap.h. */
#include "proc/perfmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes read per pread(2). */
#define PERFMAP_CHUNK (1u << 20)

/* A lookup scans back at most this many overlapping entries. */
#define PERFMAP_MAX_SCAN 64

int perfmap_init(struct perfmap *pm)
{
	memset(pm, 0, sizeof(*pm));
	return strtab_init(&pm->names);
}

void perfmap_release(struct perfmap *pm)
{
	free(pm->v);
	strtab_release(&pm->names);
	memset(pm, 0, sizeof(*pm));
}

static const char *field_end(const char *p, const char *lim)
{
	while (p < lim && *p != ' ' && *p != '\t')
		p++;
	return p;
}

static const char *skip_blank(const char *p, const char *lim)
{
	while (p < lim && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* One line; returns 1 if parsed, 0 if garbage, -ENOMEM. */
static int parse_line(struct perfmap *pm, const char *p, const char *lim)
{
	if (lim > p && lim[-1] == '\r')
		lim--;
	uint64_t start, size;
	const char *e = field_end(p, lim);
	if (!sf_parse_hex(p, (size_t)(e - p), &start))
		return 0;
	p = skip_blank(e, lim);
	e = field_end(p, lim);
	if (!sf_parse_hex(p, (size_t)(e - p), &size) || size == 0 ||
	    start + size < start)
		return 0;
	p = skip_blank(e, lim);
	if (p >= lim)
		return 0;
	int64_t id = strtab_intern(&pm->names, p, (size_t)(lim - p));
	if (id < 0 || sf_grow((void **)&pm->v, &pm->cap, pm->n + 1,
			      sizeof(*pm->v)))
		return -ENOMEM;
	pm->v[pm->n] = (struct perfmap_entry){ start, size, (uint32_t)id,
					       (uint32_t)pm->n };
	pm->n++;
	return 1;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct perfmap_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Append the entries of the complete lines in text (unsorted). */
static int parse_text(struct perfmap *pm, const char *text, size_t len,
		      size_t *used)
{
	const char *p = text, *lim = text + len;
	while (p < lim) {
		const char *nl = memchr(p, '\n', (size_t)(lim - p));
		if (!nl)
			break;
		int rc = parse_line(pm, p, nl);
		if (rc < 0)
			return rc;
		if (rc == 0 && nl > p)
			pm->bad_lines++;
		p = nl + 1;
	}
	*used = (size_t)(p - text);
	return 0;
}

static void sort_entries(struct perfmap *pm, size_t before)
{
	if (pm->n != before)
		qsort(pm->v, pm->n, sizeof(*pm->v), entry_cmp);
}

int perfmap_parse(struct perfmap *pm, const char *text, size_t len,
		  size_t *used)
{
	size_t before = pm->n;
	int rc = parse_text(pm, text, len, used);
	sort_entries(pm, before);
	return rc;
}

/* Read [parsed_bytes, size) in chunks; a chunk's partial last line is
 * read again with the next one. */
int perfmap_update(struct perfmap *pm, int fd)
{
	struct stat st;
	if (fstat(fd, &st))
		return -errno;
	char *buf = NULL;
	int rc = 0;
	size_t before = pm->n;
	while (!rc && (uint64_t)st.st_size > pm->parsed_bytes) {
		uint64_t left = (uint64_t)st.st_size - pm->parsed_bytes;
		size_t len = left < PERFMAP_CHUNK ? (size_t)left : PERFMAP_CHUNK;
		if (!buf && !(buf = malloc(PERFMAP_CHUNK)))
			return -ENOMEM;
		ssize_t r = pread(fd, buf, len, (off_t)pm->parsed_bytes);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t used = 0;
		rc = parse_text(pm, buf, (size_t)r, &used);
		if (!used && (size_t)r == PERFMAP_CHUNK) {
			pm->bad_lines++;	/* a line longer than a chunk */
			used = (size_t)r;
		}
		if (!used)
			break;	/* an unfinished last line: wait for more */
		pm->parsed_bytes += used;
	}
	free(buf);
	sort_entries(pm, before);
	return rc;
}

const char *perfmap_find(const struct perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* entries starting at or below addr, nearest first; the newest
	 * covering entry wins */
	const struct perfmap_entry *best = NULL;
	for (size_t i = lo, k = 0; i > 0 && k < PERFMAP_MAX_SCAN; i--, k++) {
		const struct perfmap_entry *e = &pm->v[i - 1];
		if (addr - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best ? strtab_get(&pm->names, best->name) : NULL;
}

bool perfmap_any_in(const struct perfmap *pm, uint64_t start, uint64_t limit)
{
	size_t lo = 0, hi = pm->n;
	while (lo < hi) {	/* the first entry starting at or after start */
		size_t mid = lo + (hi - lo) / 2;
		if (pm->v[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pm->n && pm->v[lo].start < limit;
}
