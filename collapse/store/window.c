/*
 * window.c - see window.h.
 */
#include "store/window.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>


/* Window files bigger than this are refused (memory bound). */
#define WIN_MAX_BYTES (256u << 20)

const char *win_loss_key(int i)
{
	return loss_table[loss_stored((unsigned)i)].key;
}

uint64_t win_stack_id(const char *comm, size_t comm_len,
		      const struct win_frame *f, uint32_t n)
{
	uint64_t h = sf_hash_bytes(comm, comm_len, 0xcbf29ce484222325ULL);
	h = sf_hash_bytes("", 1, h);
	for (uint32_t i = 0; i < n; i++) {
		h = sf_hash_bytes(f[i].s, f[i].len, h);
		h = sf_hash_bytes("", 1, h);
	}
	return h;
}

/* fd's bytes (st_size of them) into *buf, NUL-terminated. */
static int read_all(int fd, size_t size, char **buf)
{
	*buf = malloc(size + 1);
	if (!*buf)
		return -ENOMEM;
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd, *buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EBADMSG;
		got += (size_t)n;
	}
	(*buf)[size] = 0;
	return 0;
}

/* A gzip file (one member: what the pprof writer makes) inflated by
 * libdeflate, to the size its trailer gives. */
static int gunzip(char **buf, size_t *len)
{
	if (*len < 18)
		return -EBADMSG;
	const unsigned char *t = (const unsigned char *)*buf + *len - 4;
	size_t out_len = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 |
			 (size_t)t[3] << 24;
	if (out_len > WIN_MAX_BYTES)
		return -EFBIG;
	char *out = malloc(out_len + 1);
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	size_t got = 0;
	enum libdeflate_result r = out && d
		? libdeflate_gzip_decompress(d, *buf, *len, out, out_len, &got)
		: LIBDEFLATE_INSUFFICIENT_SPACE;
	if (d)
		libdeflate_free_decompressor(d);
	free(*buf);
	*buf = out;
	if (!out || !d)
		return -ENOMEM;
	if (r != LIBDEFLATE_SUCCESS || got != out_len)
		return -EBADMSG;
	out[out_len] = 0;
	*len = out_len;
	return 0;
}

/* path's bytes (gunzipped when gz) into *buf, NUL-terminated.  The file is
 * opened without following a symlink and without blocking, and must be
 * ours (-EPERM): DIR may be shared, and another user's file there is no
 * window of this host's (windir.c's rule). */
static int slurp(const char *path, bool gz, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = -EBADMSG;
	else if (st.st_uid != geteuid())
		ret = -EPERM;
	else if (st.st_size > WIN_MAX_BYTES)
		ret = -EFBIG;
	else
		ret = read_all(fd, (size_t)st.st_size, buf);
	close(fd);
	if (!ret) {
		*len = (size_t)st.st_size;
		if (gz)
			ret = gunzip(buf, len);
	}
	return ret;
}

/* "key=V" words of a comment. */
static void comment_words(struct store_window *w, const char *c)
{
	while (*c) {
		size_t n = strcspn(c, " ");
		const char *eq = memchr(c, '=', n);
		if (eq) {
			size_t kl = (size_t)(eq - c), vl = n - kl - 1;
			const char *v = eq + 1;
			char *end;
			for (int i = 0; i < WIN_NLOSS; i++)
				if (strlen(win_loss_key(i)) == kl &&
				    !memcmp(c, win_loss_key(i), kl)) {
					if (vl == 7 && !memcmp(v, "unknown", 7))
						w->losses_unknown = 1;
					else
						w->loss[i] = strtoull(v, &end, 10);
				}
			if (kl == 7 && !memcmp(c, "samples", 7))
				w->samples = strtoull(v, &end, 10);
			if (kl == 4 && !memcmp(c, "host", 4) && !w->host[0])
				snprintf(w->host, sizeof(w->host), "%.*s", (int)vl, v);
			if (kl == 6 && !memcmp(c, "kernel", 6))
				snprintf(w->kernel, sizeof(w->kernel), "%.*s", (int)vl, v);
		}
		c += n;
		while (*c == ' ')
			c++;
	}
}

/* A protobuf varint at *p (< end); false when cut short. */
static bool pb_varint(const unsigned char **p, const unsigned char *end,
		      uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		unsigned char c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

struct pb_str {
	const unsigned char *s;
	uint32_t len;
};

struct pb_meta {
	size_t nstr;			/* string_table entries so far */
	bool second;			/* the pass that keeps the comments */
	uint64_t comments[8];
	struct pb_str cstr[8];		/* comments[i]'s string, in the input */
	size_t ncomments;
};

/* One top-level field of a Profile message (profile.proto): the string
 * table, time_nanos (9), duration_nanos (10), period (12), comment (13,
 * packed or not) are kept; the rest (samples, locations: most of the
 * bytes) are skipped unread, which costs a tenth of unpacking them. */
static int pb_field(struct store_window *w, struct pb_meta *m,
		    const unsigned char **p, const unsigned char *end)
{
	uint64_t key, v, period = 0;
	if (!pb_varint(p, end, &key))
		return -EBADMSG;
	unsigned field = (unsigned)(key >> 3), type = key & 7;
	if (type == 0) {
		if (!pb_varint(p, end, &v))
			return -EBADMSG;
		if (field == 9)
			w->start_ns = v;
		else if (field == 10)
			w->duration_ns = v;
		else if (field == 12)
			period = v;
		else if (field == 13 && m->ncomments < 8 && !m->second)
			m->comments[m->ncomments++] = v;
		if (period)
			w->hz = (uint32_t)((1000000000ULL + period / 2) / period);
		return 0;
	}
	if (type == 1 || type == 5) {
		size_t n = type == 1 ? 8 : 4;
		if ((size_t)(end - *p) < n)
			return -EBADMSG;
		*p += n;
		return 0;
	}
	if (type != 2 || !pb_varint(p, end, &v) || v > (uint64_t)(end - *p))
		return -EBADMSG;
	const unsigned char *body = *p;
	*p += v;
	if (field == 6) {	/* a comment's string: kept (second pass) */
		for (size_t i = 0; m->second && i < m->ncomments; i++)
			if (m->comments[i] == m->nstr)
				m->cstr[i] = (struct pb_str){ body, (uint32_t)v };
		m->nstr++;
	} else if (field == 13 && !m->second) {	/* packed comments */
		for (const unsigned char *q = body; q < *p && m->ncomments < 8;)
			if (!pb_varint(&q, *p, &m->comments[m->ncomments++]))
				return -EBADMSG;
	}
	return 0;
}

static int read_meta(struct store_window *w, const char *path, struct sf_err *err)
{
	char *buf;
	size_t len;
	int ret = slurp(path, true, &buf, &len);
	if (ret) {
		free(buf);
		return ret == -ENOENT ? ret
			: sf_err_set(err, -ret == EBADMSG ? EBADMSG : -ret,
				     "cannot read '%s': %s", path, strerror(-ret));
	}
	/* two passes: the comments' indexes, then their strings (keeping
	 * every string's place cost 16 bytes for each 2-byte entry) */
	struct pb_meta m = { 0 };
	const unsigned char *end = (const unsigned char *)buf + len, *p;
	for (int pass = 0; !ret && pass < (m.ncomments ? 2 : 1); pass++) {
		m.second = pass;
		m.nstr = 0;
		for (p = (const unsigned char *)buf; !ret && p < end;)
			ret = pb_field(w, &m, &p, end);
	}
	char c[4096];
	for (size_t i = 0; !ret && i < m.ncomments; i++)
		if (m.comments[i] < m.nstr) {
			size_t n = m.cstr[i].len;
			if (n >= sizeof(c))
				n = sizeof(c) - 1;
			memcpy(c, m.cstr[i].s, n);
			c[n] = 0;
			comment_words(w, c);
		}
	free(buf);
	if (ret == -ENOMEM)
		return sf_err_set(err, ENOMEM, "out of memory");
	if (ret)
		return sf_err_set(err, EBADMSG, "'%s' is not a pprof profile", path);
	return 0;
}

static int add_frame(struct store_window *w, const char *s, size_t len)
{
	if (sf_grow((void **)&w->frames, &w->frames_cap, w->nframes + 1,
		    sizeof(*w->frames)))
		return -ENOMEM;
	w->frames[w->nframes++] = (struct win_frame){ s, (uint32_t)len };
	return 0;
}

/* "comm-PID;f1;f2 COUNT": the process frame split at its last '-'. */
static int parse_line(struct store_window *w, char *s, size_t len)
{
	char *sp = memrchr(s, ' ', len), *end;
	if (!sp || sp == s)
		return -EBADMSG;
	errno = 0;
	unsigned long long count = strtoull(sp + 1, &end, 10);
	if (end != s + len || end == sp + 1 || errno || !count)
		return -EBADMSG;
	if (sf_grow((void **)&w->stacks, &w->stacks_cap, w->nstacks + 1,
		    sizeof(*w->stacks)))
		return -ENOMEM;
	struct win_stack *k = &w->stacks[w->nstacks];
	*k = (struct win_stack){ .comm = s, .count = count,
				 .frame0 = (uint32_t)w->nframes };
	size_t plen = strcspn(s, ";");
	if (plen > (size_t)(sp - s))
		plen = (size_t)(sp - s);
	const char *dash = memrchr(s, '-', plen);
	k->comm_len = (uint32_t)plen;
	if (dash && dash + 1 < s + plen && strspn(dash + 1, "0123456789") ==
	    (size_t)(s + plen - dash - 1)) {
		k->comm_len = (uint32_t)(dash - s);
		k->pid = (uint32_t)strtoul(dash + 1, NULL, 10);
	}
	for (char *f = s + plen; f < sp && *f == ';';) {
		char *e = memchr(f + 1, ';', (size_t)(sp - f - 1));
		if (!e)
			e = sp;
		if (add_frame(w, f + 1, (size_t)(e - f - 1)))
			return -ENOMEM;
		f = e;
	}
	k->nframes = (uint32_t)(w->nframes - k->frame0);
	w->total += count;
	w->nstacks++;
	return 0;
}

static int read_folded(struct store_window *w, const char *path, struct sf_err *err)
{
	size_t len;
	int ret = slurp(path, false, &w->text, &len);
	if (ret)
		return ret == -ENOENT ? ret
			: sf_err_set(err, -ret, "cannot read '%s': %s", path,
				     strerror(-ret));
	size_t lineno = 0;
	for (char *s = w->text, *end = w->text + len; s < end;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		lineno++;
		if (n && (ret = parse_line(w, s, n)))
			return ret == -ENOMEM ? sf_err_set(err, ENOMEM, "out of memory")
				: sf_err_set(err, EBADMSG, "%s:%zu: not a folded "
					     "line (STACK COUNT)", path, lineno);
		s += n + 1;
	}
	/* frames point into text: stack ids once every frame is in place */
	for (size_t i = 0; i < w->nstacks; i++)
		w->stacks[i].stack_id = win_stack_id(w->stacks[i].comm,
						     w->stacks[i].comm_len,
						     w->frames + w->stacks[i].frame0,
						     w->stacks[i].nframes);
	return 0;
}

int store_window_read(struct store_window *w, const char *dir,
		      const char *stem, const char *host_override,
		      struct sf_err *err)
{
	*w = (struct store_window){ 0 };
	char path[4096];
	snprintf(w->stem, sizeof(w->stem), "%s", stem);
	if (host_override)
		snprintf(w->host, sizeof(w->host), "%s", host_override);
	snprintf(path, sizeof(path), "%s/%s.pb.gz", dir, stem);
	int ret = read_meta(w, path, err);
	if (!ret) {
		snprintf(path, sizeof(path), "%s/%s.folded", dir, stem);
		ret = read_folded(w, path, err);
	}
	if (ret == -ENOENT)
		sf_err_set(err, ENOENT, "window %s is gone", stem);
	uint64_t h = sf_hash_bytes(w->host, strlen(w->host) + 1, 0x5f3759df);
	h = sf_hash_bytes(stem, strlen(stem) + 1, h);
	w->id = sf_hash_bytes(&w->start_ns, sizeof(w->start_ns), h);
	return ret;
}

void store_window_release(struct store_window *w)
{
	free(w->text);
	free(w->stacks);
	free(w->frames);
	*w = (struct store_window){ 0 };
}
