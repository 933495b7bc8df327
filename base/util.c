/* util.c - see util.h. */
#include "base/util.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

int sf_err_set(struct sf_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code > 0 ? -code : code;
}

uint64_t sf_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t sf_hash_fast(const void *p, size_t n, uint64_t seed)
{
	/* four independent lanes hide the multiply latency */
	const unsigned char *b = p;
	uint64_t h0 = seed ^ (n * 0x9e3779b97f4a7c15ULL), h1 = ~seed, h2 = n,
		 h3 = 0x2545f4914f6cdd1dULL, w[4];
	for (; n >= 32; b += 32, n -= 32) {
		memcpy(w, b, 32);
		h0 = (h0 ^ w[0]) * 0xbf58476d1ce4e5b9ULL;
		h1 = (h1 ^ w[1]) * 0x94d049bb133111ebULL;
		h2 = (h2 ^ w[2]) * 0xbf58476d1ce4e5b9ULL;
		h3 = (h3 ^ w[3]) * 0x94d049bb133111ebULL;
		h0 ^= h0 >> 31;
		h1 ^= h1 >> 29;
		h2 ^= h2 >> 32;
		h3 ^= h3 >> 30;
	}
	uint64_t h = h0 ^ sf_hash_u64(h1) ^ sf_hash_u64(h2 + h3);
	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&w[0], b, 8);
		h = (h ^ w[0]) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	w[0] = 0;
	memcpy(&w[0], b, n);
	h = (h ^ w[0]) * 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

int sf_grow(void **buf, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	/* small first arrays (16 elements up to 64 bytes each, else 4):
	 * many are per process and hold a few (a saved map's lines and
	 * modules) */
	size_t ncap = *cap ? *cap : size > 64 ? 4 : 16;
	if (!size || need > SIZE_MAX / 2 / size)
		return -ENOMEM;	/* (so neither doubling nor ncap * size wraps) */
	while (ncap < need)
		ncap *= 2;
	void *nb = realloc(*buf, ncap * size);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

void *sf_alloc_huge(size_t n)
{
	size_t sz = (n + SF_HUGE_PAGE - 1) & ~(size_t)(SF_HUGE_PAGE - 1);
	if (!sz)
		sz = SF_HUGE_PAGE;
	void *p = aligned_alloc(SF_HUGE_PAGE, sz);
	if (p)
		(void)madvise(p, sz, MADV_HUGEPAGE);	/* advice only */
	return p;
}

void sf_heap_hugepages(void)
{
	/* not trimmed below the pad: a heap shrunk and grown again would be a
	 * new mapping, without the advice */
	mallopt(M_TRIM_THRESHOLD, 2 * SF_HEAP_PAD);
	mallopt(M_TOP_PAD, SF_HEAP_PAD);
	/* grow the heap now, by SF_HEAP_PAD more than asked (requests that fit
	 * in that room are then served from it, not by mmap); growth past it
	 * is a new mapping without the advice */
	void *p = malloc(1u << 20);
	if (!p)
		return;
	uintptr_t lo = ((uintptr_t)p + SF_HUGE_PAGE - 1) & ~(uintptr_t)(SF_HUGE_PAGE - 1);
	uintptr_t hi = (uintptr_t)sbrk(0);
	if (hi != (uintptr_t)-1 && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);	/* advice only */
	free(p);
}

struct sf_arena_chunk {
	struct sf_arena_chunk *prev;
	size_t used, cap;	/* bytes after this header */
	max_align_t data[];
};

#define ARENA_FIRST (64u << 10)

static struct sf_arena_chunk *arena_chunk(struct sf_arena *a, size_t need)
{
	size_t hdr = sizeof(struct sf_arena_chunk);
	size_t sz = a->next > ARENA_FIRST ? a->next : ARENA_FIRST;
	while (sz - hdr < need && sz < SIZE_MAX / 2)
		sz *= 2;
	if (sz - hdr < need)
		return NULL;
	struct sf_arena_chunk *k;
	if (sz >= SF_ARENA_HUGE) {
		sz = (sz + SF_HUGE_PAGE - 1) & ~(size_t)(SF_HUGE_PAGE - 1);
		k = sf_alloc_huge(sz);
	} else {
		k = malloc(sz);
	}
	if (!k)
		return NULL;
	k->prev = a->head;
	k->used = 0;
	k->cap = sz - hdr;
	a->head = k;
	a->next = sz * 2;
	return k;
}

static struct sf_arena_chunk *block_chunk(struct sf_arena *a, size_t len)
{
	struct sf_arena_chunk *k = malloc(sizeof(*k) + len);
	if (!k)
		return NULL;
	k->prev = a->head;
	k->used = 0;
	k->cap = len;
	a->head = k;
	return k;
}

void *sf_arena_zalloc(struct sf_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t len = (n * size + 15) & ~(size_t)15;
	if (len < n * size || len > SIZE_MAX - sizeof(struct sf_arena_chunk))
		return NULL;
	struct sf_arena_chunk *k = a->head;
	/* Under AddressSanitizer every block is a chunk of its own, of the
	 * exact size, so its redzones catch an overrun into the next one. */
	if (SF_ASAN) {
		k = block_chunk(a, n * size);
		if (!k)
			return NULL;
		memset(k->data, 0, n * size);
		return k->data;
	}
	if (!k || k->cap - k->used < len) {
		k = arena_chunk(a, len);
		if (!k)
			return NULL;
	}
	char *p = (char *)k->data + k->used;
	k->used += len;
	memset(p, 0, len);
	return p;
}

void sf_arena_release(struct sf_arena *a)
{
	while (a->head) {
		struct sf_arena_chunk *k = a->head;
		a->head = k->prev;
		free(k);
	}
	a->next = 0;
}

#define POOL_FIRST_SHIFT 8	/* 256 B: a process's saved map is a few lines */
#define POOL_MAX_SHIFT 16	/* 64 KiB */
#define POOL_SMALL_CHUNKS 16	/* then SF_HUGE_PAGE each */

/* A new chunk for p, at least need bytes; its size in *sz. */
static char *pool_chunk(const struct sf_strpool *p, size_t need, size_t *sz)
{
	size_t shift = POOL_FIRST_SHIFT + p->n;
	*sz = (size_t)1 << (shift < POOL_MAX_SHIFT ? shift : POOL_MAX_SHIFT);
	if (need > *sz)
		*sz = need;
	if (p->n < POOL_SMALL_CHUNKS || *sz > SF_HUGE_PAGE)
		return malloc(*sz);
	*sz = SF_HUGE_PAGE;
	return sf_alloc_huge(SF_HUGE_PAGE);
}

char *sf_strpool_copy(struct sf_strpool *p, const char *s, size_t len)
{
	if (!p->n || p->used + len + 1 > p->size) {
		size_t sz;
		if (sf_grow((void **)&p->chunks, &p->cap, p->n + 1,
			    sizeof(*p->chunks)))
			return NULL;
		char *c = pool_chunk(p, len + 1, &sz);
		if (!c)
			return NULL;
		p->chunks[p->n++] = c;
		p->size = sz;
		p->used = 0;
	}
	char *dst = p->chunks[p->n - 1] + p->used;
	memcpy(dst, s, len);
	dst[len] = 0;
	p->used += len + 1;
	return dst;
}

void sf_strpool_release(struct sf_strpool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->chunks[i]);
	free(p->chunks);
	memset(p, 0, sizeof(*p));
}

int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->nslots = 1024;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	return strtab_intern(t, "", 0) < 0 ? -ENOMEM : 0;
}

void strtab_release(struct strtab *t)
{
	sf_strpool_release(&t->pool);
	free(t->strs);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static int strtab_rehash_to(struct strtab *t, size_t ns)
{
	uint32_t *slots = calloc(ns, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t id = 0; id < t->n; id++) {
		size_t i = sf_hash_fast(t->strs[id], t->lens[id], 0) & (ns - 1);
		while (slots[i])
			i = (i + 1) & (ns - 1);
		slots[i] = (uint32_t)id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
	t->unindexed = false;
	return 0;
}

static int strtab_rehash(struct strtab *t)
{
	return strtab_rehash_to(t, t->nslots * 2);
}

/* Index every string strtab_append() added, at a load of at most 1/2. */
static int strtab_reindex(struct strtab *t)
{
	size_t ns = t->nslots;
	while (t->n * 2 > ns)
		ns *= 2;
	return strtab_rehash_to(t, ns);
}

/* Store a copy of s as the next id; the hash slots are not touched. */
static int64_t strtab_add(struct strtab *t, const char *s, size_t len)
{
	if (sf_grow((void **)&t->strs, &t->cap, t->n + 1, sizeof(*t->strs)) ||
	    sf_grow((void **)&t->lens, &t->lcap, t->n + 1, sizeof(*t->lens)))
		return -ENOMEM;
	char *copy = sf_strpool_copy(&t->pool, s, len);
	if (!copy)
		return -ENOMEM;
	uint32_t id = (uint32_t)t->n++;
	t->strs[id] = copy;
	t->lens[id] = (uint32_t)len;
	return id;
}

int64_t strtab_append(struct strtab *t, const char *s, size_t len)
{
	int64_t id = strtab_add(t, s, len);
	if (id >= 0)
		t->unindexed = true;
	return id;
}

int64_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	if (t->unindexed && strtab_reindex(t))
		return -ENOMEM;
	size_t mask = t->nslots - 1;
	size_t i = sf_hash_fast(s, len, 0) & mask;
	for (; t->slots[i]; i = (i + 1) & mask) {
		uint32_t id = t->slots[i] - 1;
		if (t->lens[id] == len && memcmp(t->strs[id], s, len) == 0)
			return id;
	}
	int64_t id = strtab_add(t, s, len);
	if (id < 0)
		return id;
	t->slots[i] = (uint32_t)id + 1;
	if (t->n * 2 > t->nslots && strtab_rehash(t))
		return -ENOMEM;
	return id;
}

int64_t strtab_intern_cstr(struct strtab *t, const char *s)
{
	return strtab_intern(t, s, strlen(s));
}

int sf_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool sf_parse_hex(const char *s, size_t len, uint64_t *out)
{
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (len == 0 || len > 16)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		int d = sf_hexval((unsigned char)s[i]);
		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

bool sf_parse_u64(const char *s, size_t len, uint64_t *out)
{
	if (len == 0)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		uint64_t d = (uint64_t)((unsigned char)s[i] - '0');
		/* (the overflow flags, not a division a digit: dwarf
		 * captures are millions of decimal words) */
		if (d > 9 || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, d, &v))
			return false;
	}
	*out = v;
	return true;
}

static bool u64map_grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 256;
	uint64_t *k = calloc(ncap, sizeof(*k));
	unsigned char *v = malloc(ncap * m->valsz);

	if (!k || !v) {
		free(k);
		free(v);
		return false;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = sf_hash_u64(m->keys[i]) & (ncap - 1);
		while (k[j])
			j = (j + 1) & (ncap - 1);
		k[j] = m->keys[i];
		memcpy(v + j * m->valsz, m->vals + i * m->valsz, m->valsz);
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = ncap;
	return true;
}

void *u64map_slot(struct u64map *m, uint64_t key, bool *found)
{
	if ((m->n + 1) * 2 > m->cap && !u64map_grow(m))
		return NULL;
	size_t j = sf_hash_u64(key) & (m->cap - 1);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	*found = m->keys[j] == key;
	if (!*found) {
		m->keys[j] = key;
		m->n++;
	}
	return m->vals + j * m->valsz;
}

void *u64map_find(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t j = sf_hash_u64(key) & (m->cap - 1);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	return m->keys[j] == key ? m->vals + j * m->valsz : NULL;
}

void u64map_release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

bool sf_xdg_cache(char *buf, size_t size, const char *home, const char *sub,
		  bool relative_ok)
{
	const char *x = getenv("XDG_CACHE_HOME");
	int n;

	if (x && *x && (relative_ok || *x == '/'))
		n = snprintf(buf, size, "%s/%s", x, sub);
	else if (home)
		n = snprintf(buf, size, "%s/.cache/%s", home, sub);
	else
		return false;
	return n >= 0 && (size_t)n < size;
}

int sf_mkdir_p(const char *dir, unsigned last_mode)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, (mode_t)last_mode) && errno != EEXIST)
		return -errno;
	return 0;
}

uint64_t sf_clock_ns(int clk)
{
	struct timespec t;
	if (clock_gettime((clockid_t)clk, &t))
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

bool sf_file_changed(int fd, const struct stat *then)
{
	struct stat now;

	return fstat(fd, &now) || now.st_size != then->st_size ||
	       now.st_mtim.tv_sec != then->st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != then->st_mtim.tv_nsec;
}

void sf_nul_to_q(char *p, size_t n)
{
	char *e = p + n;
	while (p < e && (p = memchr(p, 0, (size_t)(e - p))))
		*p++ = '?';
}
