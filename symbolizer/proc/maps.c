/* maps.c - /proc/PID/maps parser, see maps.h. */
#include "proc/maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/util.h"

#define READ_CHUNK (64 * 1024)	/* read() buffer, freed after */
#define DELETED_SUFFIX " (deleted)"

static int hexdig(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Hex number of 1..16 digits at *p, ending exactly at terminator `end`.
 * Advances *p past the terminator. */
static bool take_hex(const char **p, const char *lim, char term, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;
	for (; s < lim && *s != term; s++, n++) {
		int d = hexdig((unsigned char)*s);
		if (d < 0 || n >= 16)
			return false;
		v = (v << 4) | (uint64_t)d;
	}
	if (n == 0 || s >= lim)
		return false;
	*out = v;
	*p = s + 1;
	return true;
}

/* Decimal inode ending at a space or at the end of the line. */
static bool take_dec(const char **p, const char *lim, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;
	for (; s < lim && *s != ' '; s++, n++) {
		if (*s < '0' || *s > '9' || n >= 20)
			return false;
		uint64_t nv = v * 10 + (uint64_t)(*s - '0');
		if (nv / 10 != v)
			return false;
		v = nv;
	}
	if (n == 0)
		return false;
	*out = v;
	*p = s;
	return true;
}

static bool perms_ok(const char *p)
{
	return (p[0] == 'r' || p[0] == '-') && (p[1] == 'w' || p[1] == '-') &&
	       (p[2] == 'x' || p[2] == '-') && (p[3] == 'p' || p[3] == 's');
}

/* path: " (deleted)" stripped, which `deleted` says.  Shared anonymous
 * memory has a deleted path: shmem_kernel_file_setup()'s names. */
static enum maps_kind classify(const char *path, size_t len, bool deleted)
{
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(path, lit, len) == 0)
	if (len == 0)
		return MAPS_ANON;
	if (path[0] == '/')
		return deleted && (IS("/dev/zero") || IS("/anon_hugepage") ||
				   (len == 13 && memcmp(path, "/SYSV", 5) == 0))
			       ? MAPS_ANON_SHM : MAPS_FILE;
	if (path[0] != '[')
		return MAPS_PSEUDO;
	if (IS("[vdso]"))
		return MAPS_VDSO;
	if (IS("[vsyscall]"))
		return MAPS_VSYSCALL;
	if (IS("[heap]"))
		return MAPS_HEAP;
	if (IS("[stack]") || (len > 7 && memcmp(path, "[stack:", 7) == 0))
		return MAPS_STACK;
	if (len > 6 && memcmp(path, "[anon:", 6) == 0)
		return MAPS_ANON_NAMED;
	return MAPS_PSEUDO;
#undef IS
}

/* Fields up to and including the inode; leaves *p at the path's padding. */
static bool parse_fields(const char **p, const char *lim, struct maps_entry *e)
{
	uint64_t maj, min;
	if (!take_hex(p, lim, '-', &e->start) ||
	    !take_hex(p, lim, ' ', &e->limit) || e->limit <= e->start)
		return false;
	if (lim - *p < 5 || !perms_ok(*p) || (*p)[4] != ' ')
		return false;
	memcpy(e->perms, *p, 4);
	*p += 5;
	if (!take_hex(p, lim, ' ', &e->offset) ||
	    !take_hex(p, lim, ':', &maj) || !take_hex(p, lim, ' ', &min) ||
	    maj > 0xfff || min > 0xfffff)
		return false;
	e->dev_major = (uint32_t)maj;
	e->dev_minor = (uint32_t)min;
	return take_dec(p, lim, &e->inode);
}

enum maps_line_status maps_parse_line(const char *line, size_t len,
				      struct maps_entry *e, size_t *path_len)
{
	const char *p = line, *lim = line + len;
	if (len == 0)
		return MAPS_LINE_SKIP;
	if (!parse_fields(&p, lim, e))
		return MAPS_LINE_BAD;
	if (p < lim && *p != ' ')
		return MAPS_LINE_BAD;
	while (p < lim && *p == ' ')
		p++;
	size_t plen = (size_t)(lim - p);
	size_t sl = sizeof(DELETED_SUFFIX) - 1;
	e->deleted = plen > sl && memcmp(lim - sl, DELETED_SUFFIX, sl) == 0;
	if (e->deleted)
		plen -= sl;
	e->kind = classify(p, plen, e->deleted);
	e->memfd = e->kind == MAPS_FILE && plen > 7 &&
		   memcmp(p, "/memfd:", 7) == 0;
	e->remapped = false;
	e->path = p;
	e->line = line;
	e->line_len = (uint32_t)len;
	*path_len = plen;
	return e->perms[2] == 'x' ? MAPS_LINE_KEEP : MAPS_LINE_SKIP;
}

dev_t maps_entry_dev(const struct maps_entry *e)
{
	return makedev(e->dev_major, e->dev_minor);
}

void maps_list_init(struct maps_list *ml)
{
	memset(ml, 0, sizeof(*ml));
}

void maps_list_release(struct maps_list *ml)
{
	sf_strpool_release(&ml->pool);
	free(ml->v);
	free(ml->carry);
	free(ml->prev_path);
	memset(ml, 0, sizeof(*ml));
}

/* Remember a file-backed line (its path copied: line may be transient). */
static int remember_file(struct maps_list *ml, const struct maps_entry *e,
			 size_t plen)
{
	if (sf_grow((void **)&ml->prev_path, &ml->prev_path_cap, plen + 1, 1))
		return -ENOMEM;
	memcpy(ml->prev_path, e->path, plen);
	ml->prev_path[plen] = 0;
	ml->prev = *e;
	ml->prev.path = ml->prev_path;
	ml->prev_valid = true;
	return 0;
}

/* Anonymous exec memory starting where the last file mapping ends: that
 * file's text remapped.  Only after a read-only or executable mapping of
 * it: text lies before a file's writable data, and a JIT's region placed
 * right after a library's data is not that library (it would be named
 * from the library's symbols).  Rewrites *e as the file mapping it
 * replaced; the line becomes what maps would show without the remap.
 * A path too long for the line leaves the region anonymous. */
static int adopt_remapped(struct maps_list *ml, struct maps_entry *e)
{
	const struct maps_entry *pf = &ml->prev;
	char buf[4096 + 128];
	int n = snprintf(buf, sizeof(buf),
			 "%" PRIx64 "-%" PRIx64 " %.4s %08" PRIx64
			 " %02x:%02x %" PRIu64 " %s%s", e->start, e->limit,
			 e->perms, pf->offset + (pf->limit - pf->start),
			 pf->dev_major, pf->dev_minor, pf->inode, pf->path,
			 pf->deleted ? DELETED_SUFFIX : "");
	if (n < 0 || (size_t)n >= sizeof(buf))
		return 0;
	e->offset = pf->offset + (pf->limit - pf->start);
	e->dev_major = pf->dev_major;
	e->dev_minor = pf->dev_minor;
	e->inode = pf->inode;
	e->deleted = pf->deleted;
	e->kind = MAPS_FILE;
	e->remapped = true;
	e->line = sf_strpool_copy(&ml->pool, buf, (size_t)n);
	e->line_len = (uint32_t)n;
	e->path = sf_strpool_copy(&ml->pool, pf->path, strlen(pf->path));
	return e->line && e->path ? 0 : -ENOMEM;
}

static int keep(struct maps_list *ml, struct maps_entry *e, const char *line,
		size_t len, size_t plen)
{
	if (!e->remapped) {
		size_t poff = (size_t)(e->path - line);
		char *copy = sf_strpool_copy(&ml->pool, line, len);
		char *path = copy ? sf_strpool_copy(&ml->pool, copy + poff, plen) : NULL;
		if (!path)
			return -ENOMEM;
		e->line = copy;
		e->path = path;
	}
	if (sf_grow((void **)&ml->v, &ml->cap, ml->n + 1, sizeof(*ml->v)))
		return -ENOMEM;
	ml->v[ml->n++] = *e;
	return 0;
}

int maps_list_add_line(struct maps_list *ml, const char *line, size_t len)
{
	struct maps_entry e;
	size_t plen = 0;
	int rc = 0;
	ml->lines++;
	enum maps_line_status st = maps_parse_line(line, len, &e, &plen);
	if (st == MAPS_LINE_BAD) {
		if (!ml->bad_lines)
			ml->first_bad_line = ml->lines;
		ml->bad_lines++;
		return 0;
	}
	if (len == 0)
		return 0;
	if (st == MAPS_LINE_KEEP && e.kind == MAPS_ANON && ml->prev_valid &&
	    e.start == ml->prev.limit && ml->prev.perms[1] != 'w')
		rc = adopt_remapped(ml, &e);
	if (rc < 0)
		return rc;
	if (e.remapped) {
		/* a next remapped piece continues from this one */
		ml->prev.start = e.start;
		ml->prev.limit = e.limit;
		ml->prev.offset = e.offset;
	} else if (e.kind == MAPS_FILE) {
		rc = remember_file(ml, &e, plen);
	}
	if (rc)
		return rc;
	return st == MAPS_LINE_KEEP ? keep(ml, &e, line, len, plen) : 0;
}

static int carry_append(struct maps_list *ml, const char *buf, size_t len)
{
	if (sf_grow((void **)&ml->carry, &ml->carry_cap, ml->carry_len + len,
		    1))
		return -ENOMEM;
	memcpy(ml->carry + ml->carry_len, buf, len);
	ml->carry_len += len;
	return 0;
}

int maps_list_feed(struct maps_list *ml, const char *buf, size_t len)
{
	const char *p = buf, *lim = buf + len;
	while (p < lim) {
		const char *nl = memchr(p, '\n', (size_t)(lim - p));
		if (!nl)
			return carry_append(ml, p, (size_t)(lim - p));
		int rc;
		if (ml->carry_len) {
			rc = carry_append(ml, p, (size_t)(nl - p));
			if (!rc)
				rc = maps_list_add_line(ml, ml->carry,
							ml->carry_len);
			ml->carry_len = 0;
		} else {
			rc = maps_list_add_line(ml, p, (size_t)(nl - p));
		}
		if (rc)
			return rc;
		p = nl + 1;
	}
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct maps_entry *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int maps_list_finish(struct maps_list *ml)
{
	if (ml->carry_len) {
		int rc = maps_list_add_line(ml, ml->carry, ml->carry_len);
		ml->carry_len = 0;
		if (rc)
			return rc;
	}
	/* /proc output is already sorted; saved text may not be */
	for (size_t i = 1; i < ml->n; i++) {
		if (ml->v[i - 1].start > ml->v[i].start) {
			qsort(ml->v, ml->n, sizeof(*ml->v), entry_cmp);
			break;
		}
	}
	return 0;
}

int maps_list_read_fd(struct maps_list *ml, int fd)
{
	char *buf = malloc(READ_CHUNK);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (;;) {
		ssize_t n = read(fd, buf, READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		rc = maps_list_feed(ml, buf, (size_t)n);
		if (rc)
			break;
	}
	free(buf);
	return rc ? rc : maps_list_finish(ml);
}

ptrdiff_t maps_list_find(const struct maps_list *ml, uint64_t addr)
{
	size_t lo = 0, hi = ml->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ml->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= ml->v[lo - 1].limit)
		return -1;
	return (ptrdiff_t)(lo - 1);
}
