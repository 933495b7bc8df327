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
#include <zlib.h>

#include "output/profile.pb-c.h"

/* Window files bigger than this are refused (memory bound). */
#define WIN_MAX_BYTES (256u << 20)

const char *const win_loss_keys[WIN_NLOSS] = {
	"map_dropped", "over_total", "stackid_errors", "lost_events",
	"map_full_warnings", "captures_cut", "unparsable_lines",
	"incomplete_records", "maps_unsaved",
};

uint64_t win_stack_id(const struct win_frame *f, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (uint32_t i = 0; i < n; i++) {
		h = sf_hash_bytes(f[i].s, f[i].len, h);
		h = sf_hash_bytes("", 1, h);
	}
	return h;
}

/* path's bytes (gunzipped when gz) into *buf, NUL-terminated.  The file is
 * opened without following a symlink and without blocking. */
static int slurp(const char *path, bool gz, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EBADMSG;
	}
	gzFile f = gzdopen(fd, "rb");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	if (!gz)
		gzdirect(f);
	size_t cap = 0;
	int n;
	*buf = NULL;
	*len = 0;
	do {
		if (*len + 65537 > WIN_MAX_BYTES) {
			gzclose(f);
			return -EFBIG;
		}
		if (sf_grow((void **)buf, &cap, *len + 65537, 1)) {
			gzclose(f);
			return -ENOMEM;
		}
		n = gzread(f, *buf + *len, 65536);
		if (n > 0)
			*len += (size_t)n;
	} while (n > 0);
	gzclose(f);
	(*buf)[*len] = 0;
	return n < 0 ? -EBADMSG : 0;
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
				if (strlen(win_loss_keys[i]) == kl &&
				    !memcmp(c, win_loss_keys[i], kl)) {
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
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(
		NULL, len, (const uint8_t *)buf);
	free(buf);
	if (!p)
		return sf_err_set(err, EBADMSG, "'%s' is not a pprof profile", path);
	w->start_ns = p->time_nanos > 0 ? (uint64_t)p->time_nanos : 0;
	w->duration_ns = p->duration_nanos > 0 ? (uint64_t)p->duration_nanos : 0;
	w->hz = p->period > 0 ? (uint32_t)((1000000000LL + p->period / 2) / p->period) : 0;
	for (size_t i = 0; i < p->n_comment; i++)
		if (p->comment[i] >= 0 && (size_t)p->comment[i] < p->n_string_table)
			comment_words(w, p->string_table[p->comment[i]]);
	perftools__profiles__profile__free_unpacked(p, NULL);
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
		w->stacks[i].stack_id = win_stack_id(w->frames + w->stacks[i].frame0,
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
