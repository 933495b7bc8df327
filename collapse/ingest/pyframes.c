/*
 * pyframes.c - CPython 3.11 frame names from a live process's memory
 * (pyframes.h).
 */
#include "ingest/pyframes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "base/util.h"
#include "capture/protocol.h"

#define NAME_MAX_LEN 256	/* a qualname or file name longer: unknown */
#define LINETABLE_MAX (64u << 10)
#define CACHE_SLOTS 4096	/* code objects kept; full: start again */

struct code_info {
	uint32_t pid, image;
	bool used, ok;
	uint64_t code;
	uint64_t name_hash;	/* its co_name's hash (pyframes_fold()) */
	int firstlineno;
	char *qualname, *file;	/* file: the base name */
	unsigned char *lt;
	size_t ltlen;
};

#define PIDS_MAX 64		/* processes whose offsets were checked */

struct pid_check {
	uint32_t pid, image;
	uint32_t gen;		/* pyframes.gen when asked */
	bool ok;
};

struct pyframes {
	uint64_t off[PY_OFF_COUNT];
	bool live;
	struct pid_check pids[PIDS_MAX];
	size_t npids, next_pid;
	struct code_info slots[CACHE_SLOTS];
	size_t used;
	uint32_t gen;		/* pyframes_new_window()s so far */
};

struct pyframes *pyframes_new(const uint64_t off[PY_OFF_COUNT], bool live)
{
	struct pyframes *pf = calloc(1, sizeof(*pf));
	if (pf) {
		memcpy(pf->off, off, sizeof(pf->off));
		pf->live = live;
	}
	return pf;
}

static void info_clear(struct code_info *ci)
{
	free(ci->qualname);
	free(ci->file);
	free(ci->lt);
	memset(ci, 0, sizeof(*ci));
}

void pyframes_free(struct pyframes *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		info_clear(&pf->slots[i]);
	free(pf);
}

bool pyframes_parse_line(const char *s, size_t len, uint64_t off[PY_OFF_COUNT])
{
	const char *e = s + len;
	size_t n = sizeof(PROTOCOL_PYTHON_WORD);	/* with its space */
	if (len < n || memcmp(s, PROTOCOL_PYTHON_WORD " ", n))
		return false;
	s += n;
	memset(off, 0, PY_OFF_COUNT * sizeof(off[0]));
	for (int k = 0; k < PY_OFF_COUNT; k++) {
		while (s < e && *s == ' ')
			s++;
		if (s == e && k == PY_OFF_OLD_COUNT)
			return true;	/* an older capture's: no tags */
		const char *t = s;
		while (t < e && *t >= '0' && *t <= '9')
			t++;
		if (t == s || !sf_parse_u64(s, (size_t)(t - s), &off[k]))
			return false;
		s = t;
	}
	return true;
}

uint64_t pyframes_fold(uint64_t acc, uint64_t name_hash, uint32_t firstlineno)
{
	return (acc ^ name_hash ^ firstlineno) * 1099511628211ull;
}

bool pyframes_tagged(const struct pyframes *pf)
{
	return pf->off[PY_CO_NAME] != 0;
}

/* n bytes at addr of pid into buf: all of them, or false. */
static bool rd(uint32_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };
	return addr && process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0) == (ssize_t)n;
}

static bool rd64(uint32_t pid, uint64_t addr, uint64_t *v)
{
	return rd(pid, addr, v, sizeof(*v));
}

/* One code point as UTF-8 into s (4 bytes of room): its length.  A
 * folded frame's separator (';'), a control character or a surrogate
 * (not a character: no UTF-8 for it) is written as '?'. */
static size_t put_utf8(char *s, uint32_t c)
{
	if (c == ';' || c < 32 || c == 127 || (c >= 0xd800 && c < 0xe000) ||
	    c > 0x10ffff) {
		*s = '?';
		return 1;
	}
	if (c < 0x80) {
		*s = (char)c;
		return 1;
	}
	if (c < 0x800) {
		s[0] = (char)(0xc0 | c >> 6);
		s[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		s[0] = (char)(0xe0 | c >> 12);
		s[1] = (char)(0x80 | (c >> 6 & 63));
		s[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	s[0] = (char)(0xf0 | c >> 18);
	s[1] = (char)(0x80 | (c >> 12 & 63));
	s[2] = (char)(0x80 | (c >> 6 & 63));
	s[3] = (char)(0x80 | (c & 63));
	return 4;
}

/* 3.11's PyCompactUnicodeObject (PyASCIIObject, then utf8_length, utf8
 * and wstr_length, three words): a non-ASCII compact string's code
 * points follow it, kind bytes each. */
#define COMPACT_EXTRA (3 * sizeof(uint64_t))

/* A PyUnicode object at addr, compact (ASCII, or code points of 1, 2 or
 * 4 bytes: PEP 393's kinds), as a malloc'd UTF-8 string (put_utf8()'s
 * replacements made); NULL if not one. */
static char *read_str(const struct pyframes *pf, uint32_t pid, uint64_t addr)
{
	const uint64_t *o = pf->off;
	uint64_t type, len;
	uint32_t state;
	if (!rd64(pid, addr + 8, &type) || type != o[PY_UNICODE_TYPE] ||
	    !rd64(pid, addr + o[PY_ASCII_LENGTH], &len) ||
	    !rd(pid, addr + o[PY_ASCII_STATE], &state, sizeof(state)))
		return NULL;
	/* state: interned:2, kind:3, compact:1, ascii:1, ready:1 */
	unsigned kind = state >> 2 & 7;
	bool compact = state >> 5 & 1, ascii = state >> 6 & 1;
	if (!compact || len == 0 || len > NAME_MAX_LEN || (ascii && kind != 1) ||
	    (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	uint64_t data = addr + o[PY_ASCII_SIZE] + (ascii ? 0 : COMPACT_EXTRA);
	unsigned char raw[NAME_MAX_LEN * 4];
	char *s = malloc(len * 4 + 1);
	if (!s || !rd(pid, data, raw, len * kind)) {
		free(s);
		return NULL;
	}
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		uint32_t c = 0;
		memcpy(&c, raw + i * kind, kind);	/* little-endian host */
		if (ascii && c > 126)
			c = '?';
		n += put_utf8(s + n, c);
	}
	s[n] = '\0';
	return s;
}

/* Read code object code of pid into ci: ci->ok when it looks like one. */
static void read_code(const struct pyframes *pf, uint32_t pid, uint32_t image,
		      uint64_t code, struct code_info *ci)
{
	const uint64_t *o = pf->off;
	uint64_t type, qn, fn, lt, ltlen;
	int32_t first;
	ci->used = true;
	ci->pid = pid;
	ci->image = image;
	ci->code = code;
	if (!rd64(pid, code + 8, &type) || type != o[PY_CODE_TYPE] ||
	    !rd64(pid, code + o[PY_CO_QUALNAME], &qn) ||
	    !rd64(pid, code + o[PY_CO_FILENAME], &fn) ||
	    !rd64(pid, code + o[PY_CO_LINETABLE], &lt) ||
	    !rd(pid, code + o[PY_CO_FIRSTLINENO], &first, sizeof(first)) ||
	    first < 0)
		return;
	if (o[PY_CO_NAME]) {	/* the tag the capture compares (pyframes.h) */
		uint64_t nm, hash;
		if (!rd64(pid, code + o[PY_CO_NAME], &nm) ||
		    !rd64(pid, nm + o[PY_ASCII_HASH], &hash))
			return;
		ci->name_hash = hash;
	}
	ci->qualname = read_str(pf, pid, qn);
	char *path = read_str(pf, pid, fn);
	if (!ci->qualname || !path) {
		free(path);
		return;
	}
	const char *b = strrchr(path, '/');
	ci->file = strdup(b && b[1] ? b + 1 : path);
	free(path);
	ci->firstlineno = first;
	/* the line table: a bytes object; unread, lines are the first's */
	if (rd64(pid, lt + o[PY_VAR_SIZE], &ltlen) && ltlen <= LINETABLE_MAX &&
	    (ci->lt = malloc(ltlen ? ltlen : 1)) &&
	    rd(pid, lt + o[PY_BYTES_SVAL], ci->lt, ltlen))
		ci->ltlen = ltlen;
	else {
		free(ci->lt);
		ci->lt = NULL;
	}
	ci->ok = ci->file != NULL;
}

/* Do the offsets match what pid's interpreter's DWARF says now?  A
 * capture's offsets came from it, unless the pid is another program's
 * (a child that is not Python, a pid taken again), the capture a replay
 * of an older one, or the offsets wrong: then none of its frames is
 * named.  Asked once a process (pid and image: a pid taken again, or an
 * exec, is asked again; the newest PIDS_MAX kept); a refusal is asked
 * again in the next window (pyframes_new_window()), so that a failure of
 * the moment does not leave a process unnamed for a whole run. */
static bool pid_ok(struct pyframes *pf, uint32_t pid, uint32_t image)
{
	struct pid_check *c = NULL;
	for (size_t i = 0; i < pf->npids && !c; i++)
		if (pf->pids[i].pid == pid && pf->pids[i].image == image)
			c = &pf->pids[i];
	if (c && (c->ok || c->gen == pf->gen))
		return c->ok;
	struct py_offsets *o = malloc(sizeof(*o));
	struct sf_err err;
	bool ok = o && py_offsets_find((int)pid, NULL, o, &err) == 0 &&
		  memcmp(o->v, pf->off, sizeof(o->v)) == 0;
	free(o);
	if (!c) {	/* (a refusal asked again keeps its place) */
		c = &pf->pids[pf->next_pid];
		pf->next_pid = (pf->next_pid + 1) % PIDS_MAX;
		if (pf->npids < PIDS_MAX)
			pf->npids++;
	}
	*c = (struct pid_check){ .pid = pid, .image = image, .gen = pf->gen, .ok = ok };
	return ok;
}

static void cache_clear(struct pyframes *pf)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		info_clear(&pf->slots[i]);
	pf->used = 0;
}

static struct code_info *lookup(struct pyframes *pf, uint32_t pid,
				uint32_t image, uint64_t code)
{
	uint64_t h = sf_hash_bytes(&code, sizeof(code),
				   (uint64_t)pid << 32 | image);
	if (pf->used >= CACHE_SLOTS / 2)	/* full enough: start again */
		cache_clear(pf);
	for (size_t i = 0;; i++) {
		struct code_info *ci = &pf->slots[(h + i) % CACHE_SLOTS];
		if (!ci->used) {
			pf->used++;
			read_code(pf, pid, image, code, ci);
			return ci;
		}
		if (ci->pid == pid && ci->image == image && ci->code == code)
			return ci;
	}
}

void pyframes_forget_code(struct pyframes *pf)
{
	cache_clear(pf);
}

void pyframes_new_window(struct pyframes *pf)
{
	cache_clear(pf);
	pf->gen++;
}

/* 3.11's line table (Objects/locations.md): entries of a first byte
 * 1CCCCLLL (code C, L+1 code units), then C's data: 15 no line, 14 long
 * (line delta svarint, then three varints), 13 line delta svarint only,
 * 10..12 line delta C-10 (two column bytes), 0..9 same line (one byte). */
static bool varint(const unsigned char *lt, size_t n, size_t *i, uint64_t *v)
{
	unsigned shift = 0;
	*v = 0;
	while (*i < n && shift < 60) {
		unsigned char b = lt[(*i)++];
		*v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			return true;
	}
	return false;
}

static bool svarint(const unsigned char *lt, size_t n, size_t *i, int64_t *v)
{
	uint64_t u;
	if (!varint(lt, n, i, &u))
		return false;
	*v = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

int pyframes_line(const unsigned char *lt, size_t n, int firstlineno,
		  int64_t addrq)
{
	int64_t line = firstlineno, addr = 0;
	size_t i = 0;
	if (addrq < 0)
		return firstlineno;
	while (i < n) {
		unsigned char b = lt[i++];
		if (!(b & 128))
			return -1;	/* not an entry's start: malformed */
		int code = b >> 3 & 15, len = (b & 7) + 1;
		int64_t delta = 0;
		bool none = code == 15;
		uint64_t skip;
		if (code == 14) {
			if (!svarint(lt, n, &i, &delta) || !varint(lt, n, &i, &skip) ||
			    !varint(lt, n, &i, &skip) || !varint(lt, n, &i, &skip))
				return -1;
		} else if (code == 13) {
			if (!svarint(lt, n, &i, &delta))
				return -1;
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
			i += 2;
		} else if (code < 10) {
			i += 1;
		}
		line += delta;
		if (addrq < addr + len)
			return none ? -1 : (int)line;
		addr += len;
	}
	return -1;
}

bool pyframes_fold_code(struct pyframes *pf, uint32_t pid, uint32_t image,
			uint64_t code, uint64_t *acc)
{
	if (!pf->live || !pyframes_tagged(pf) || !pid_ok(pf, pid, image))
		return false;
	struct code_info *ci = lookup(pf, pid, image, code);
	if (!ci->ok)
		return false;
	*acc = pyframes_fold(*acc, ci->name_hash, (uint32_t)ci->firstlineno);
	return true;
}

bool pyframes_name(struct pyframes *pf, uint32_t pid, uint32_t image,
		   uint64_t code, uint64_t instr, char *buf, size_t cap)
{
	if (!pf->live || !pid_ok(pf, pid, image))
		return false;
	struct code_info *ci = lookup(pf, pid, image, code);
	if (!ci->ok)
		return false;
	/* prev_instr points at the last instruction run (2-byte units from
	 * co_code_adaptive; one before the first at the frame's start) */
	uint64_t base = code + pf->off[PY_CO_CODE_ADAPTIVE];
	int64_t addrq = instr >= base ? (int64_t)((instr - base) / 2) : -1;
	int line = ci->lt ? pyframes_line(ci->lt, ci->ltlen, ci->firstlineno, addrq)
			  : ci->firstlineno;
	if (line < 0)
		line = ci->firstlineno;
	snprintf(buf, cap, "%s (%s:%d)", ci->qualname, ci->file, line);
	return true;
}
