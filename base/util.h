/*
 * util.h - small shared primitives: error buffer, hashing, string interning,
 * growable arrays.  Used by both symbolizer/ and collapse/.
 *
 * Nothing here prints or exits.  Allocation failure is reported to the caller
 * (NULL or -ENOMEM); callers turn it into a message.
 */
#ifndef SF_UTIL_H
#define SF_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

/* Library error channel: a whole call that fails returns a negative errno
 * and, when err is not NULL, leaves a one-line lowercase message in it. */
#define SF_ERRLEN 512
struct sf_err {
	char msg[SF_ERRLEN];
};
/* printf-style fill of err (NULL is fine); returns -code so callers can
 * write `return sf_err_set(err, EINVAL, "bad '%s'", x);`. */
int sf_err_set(struct sf_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* 64-bit FNV-1a over bytes (stable: SVG colours derive from it), and a
 * mixer for integers. */
uint64_t sf_hash_bytes(const void *p, size_t n, uint64_t seed);
/* a + b, held at UINT64_MAX rather than wrapping (loss counters: a
 * counter that wrapped would say fewer were lost). */
static inline uint64_t sf_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}
static inline void sf_sat_addto(uint64_t *to, uint64_t n)
{
	*to = sf_sat_add(*to, n);
}

/* Faster hash for in-memory tables only (8 bytes per step; its values may
 * change between versions, so never persist or display them). */
uint64_t sf_hash_fast(const void *p, size_t n, uint64_t seed);
static inline uint64_t sf_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * struct u64map - open addressing from nonzero 64-bit keys to fixed-size
 * values (valsz bytes, set by the caller before first use; zero-filled
 * struct otherwise).  u64map_slot() returns the value slot of key, adding
 * it (value left for the caller to fill, *found false) when absent; NULL
 * on ENOMEM.  Slots move when the map grows: use one before the next call.
 */
struct u64map {
	uint64_t *keys;
	unsigned char *vals;
	size_t valsz, cap, n;
};
void *u64map_slot(struct u64map *m, uint64_t key, bool *found);
/* key's value slot, or NULL when absent; never adds. */
void *u64map_find(const struct u64map *m, uint64_t key);
void u64map_release(struct u64map *m);

/* 1 when built with AddressSanitizer (gcc or clang): code that packs
 * several buffers into one allocation gives each its own instead, so
 * ASan's redzones sit between them. */
#if defined(__SANITIZE_ADDRESS__)
#define SF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SF_ASAN 1
#endif
#endif
#ifndef SF_ASAN
#define SF_ASAN 0
#endif

/* buf = the XDG cache home's subdirectory sub: $XDG_CACHE_HOME/sub when
 * that is set and not empty (and absolute, unless relative_ok: the XDG spec
 * says to ignore a relative one, elfutils takes it), else home/.cache/sub.
 * false when home is NULL and no XDG path applies, or when the
 * path does not fit in size bytes. */
bool sf_xdg_cache(char *buf, size_t size, const char *home, const char *sub,
		  bool relative_ok);

/* Every NUL byte of p[n] made '?' (text read for parsing: names are C
 * strings further on). */
void sf_nul_to_q(char *p, size_t n);

/* clock_gettime(clk) in nanoseconds (0 when it fails). */
uint64_t sf_clock_ns(int clk);

struct stat;
/* Has the file open as fd been rewritten since then was taken (its size
 * or mtime differ), or can it not be stat'ed? */
bool sf_file_changed(int fd, const struct stat *then);

/* mkdir -p dir: its parents 0755, dir itself last_mode.  0 or -errno
 * (-ENAMETOOLONG past PATH_MAX). */
int sf_mkdir_p(const char *dir, unsigned last_mode);

/* n bytes, 2 MiB-aligned and rounded up to whole 2 MiB pages, advised for
 * transparent huge pages (faulting big buffers 4 KiB at a time is dear on
 * this kind of VM); freed with free().  NULL on ENOMEM. */
#define SF_HUGE_PAGE (2u << 20)
void *sf_alloc_huge(size_t n);

/*
 * struct sf_arena - a bump allocator for many blocks freed together.
 * Chunks start small and double; from SF_ARENA_HUGE bytes on they come
 * from sf_alloc_huge(), so filling a big arena costs one page fault per
 * 2 MiB instead of one per 4 KiB.  Zero-initialise with {0}.
 */
#define SF_ARENA_HUGE (512u << 10)
struct sf_arena {
	struct sf_arena_chunk *head;
	size_t next;		/* size of the next chunk */
};

/* n * size zeroed bytes, 16-aligned, valid until sf_arena_release().
 * NULL on overflow or ENOMEM. */
void *sf_arena_zalloc(struct sf_arena *a, size_t n, size_t size);
void sf_arena_release(struct sf_arena *a);

/*
 * Back this process's malloc heap with transparent huge pages, for the
 * short-lived commands (not the continuous mode, whose RSS is budgeted):
 * the heap grows SF_HEAP_PAD ahead of need, is advised MADV_HUGEPAGE, and
 * is trimmed only past twice that (allocations big enough for glibc to
 * mmap them keep 4 KiB pages and mremap growth).  Faulting fresh 4 KiB
 * pages in one at a time was a third of a cold report and half of a warm
 * one on a VM (docs/performance.md); the price is some MiB of RSS.  Call once, first
 * thing in main(); advice only, so nothing fails.  (glibc's
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1 does about the same, but must be
 * set before the process starts.)
 */
#define SF_HEAP_PAD (32u << 20)
void sf_heap_hugepages(void);

/*
 * struct sf_strpool - NUL-terminated copies of byte strings, freed
 * together; each stays at its address until sf_strpool_release().  Chunks
 * start at 256 bytes and double up to 64 KiB, so a short pool (a process's
 * memory map, the names of a small ELF file) takes little: on a
 * huge-page heap every byte asked for is a byte the kernel zeroes
 * (docs/performance.md).  Past 16 chunks (a big table: folded input keeps every line)
 * they are huge-page sized and aligned: filling 4 KiB pages one fault at a
 * time was a third of reading a 100 MB folded file on this VM.
 * Zero-initialise.
 */
struct sf_strpool {
	char **chunks;
	size_t n, cap, used, size;	/* chunks; bytes used, size of the last */
};
/* A copy of s[0..len) plus a NUL, or NULL on ENOMEM. */
char *sf_strpool_copy(struct sf_strpool *p, const char *s, size_t len);
void sf_strpool_release(struct sf_strpool *p);	/* zeroed after */

/* Grow *buf (element size `size`) so it holds at least `need` elements.
 * Returns 0, or -ENOMEM leaving *buf and *cap untouched. */
int sf_grow(void **buf, size_t *cap, size_t need, size_t size);

/*
 * struct strtab - interned byte strings, identified by dense ids from 0.
 * Id 0 is always the empty string (pprof's string_table[0] == "").
 * Strings may hold any bytes but NUL; the table owns its copies and they
 * stay valid (and at the same address) until strtab_release().
 */
struct strtab {
	char **strs;	/* id -> NUL-terminated string */
	uint32_t *lens;
	size_t n, cap, lcap;
	uint32_t *slots;	/* open addressing: id+1, 0 = empty */
	size_t nslots;
	struct sf_strpool pool;	/* the string bytes */
	bool unindexed;		/* strtab_append() added strings the hash
				 * index does not hold yet */
};
int strtab_init(struct strtab *t);	/* 0 or -ENOMEM */
void strtab_release(struct strtab *t);
/* Intern s[0..len); returns id >= 0 or -ENOMEM. */
int64_t strtab_intern(struct strtab *t, const char *s, size_t len);
int64_t strtab_intern_cstr(struct strtab *t, const char *s);
/* Add s[0..len) as a new id without looking it up: for a caller that knows
 * it is new (sorted, unique input).  The hash index is rebuilt on the next
 * strtab_intern().  Returns the id or -ENOMEM. */
int64_t strtab_append(struct strtab *t, const char *s, size_t len);
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return t->strs[id];
}
static inline uint32_t strtab_len(const struct strtab *t, uint32_t id)
{
	return t->lens[id];
}

/* The value of hex digit c (either case), or -1. */
int sf_hexval(int c);

/* Parse hex (optional 0x) into *out; returns false on junk, empty or > 64 bits. */
bool sf_parse_hex(const char *s, size_t len, uint64_t *out);
/* Parse an unsigned decimal; false on junk, empty or overflow. */
bool sf_parse_u64(const char *s, size_t len, uint64_t *out);
/* Do the len bytes at s start with the string prefix?  (Inline: the
 * parsers ask it of every line.) */
static inline bool sf_starts(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	return len >= n && memcmp(s, prefix, n) == 0;
}

#endif
