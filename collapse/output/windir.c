/*
 * windir.c - see windir.h.
 */
#include "output/windir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

/* YYYYMMDDTHHMMSSZ, optionally _NNN (or -N, older versions' suffix); the
 * time it names in *t. */
static bool stem_parse(const char *s, size_t len, time_t *t)
{
	static const char pat[] = "ddddddddTddddddZ";
	if (len < 16)
		return false;
	for (size_t i = 0; i < 16; i++)
		if (pat[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != pat[i])
			return false;
	if (len > 16) {
		if ((s[16] != '_' && s[16] != '-') || len == 17)
			return false;
		for (size_t i = 17; i < len; i++)
			if (s[i] < '0' || s[i] > '9')
				return false;
	}
	struct tm tm = { 0 };
	if (!strptime(s, "%Y%m%dT%H%M%SZ", &tm))
		return false;
	*t = timegm(&tm);
	return true;
}

/* The suffix after a stem's second: 0 for none, N for _NNN or -N. */
static unsigned long stem_suffix(const char *stem)
{
	return strlen(stem) > 17 ? strtoul(stem + 17, NULL, 10) : 0;
}

/* A temporary of base/atomic.h: FINAL.tmp.XXXXXX, six characters mkstemp()
 * draws. */
static bool tmp_suffix(const char *s)
{
	if (strncmp(s, ".tmp.", 5) != 0 || strlen(s + 5) != 6)
		return false;
	for (const char *p = s + 5; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

/* Our file kinds: 0 not ours, 1 .pb.gz, 2 .folded, 3 a temporary of either
 * (exactly STEM.pb.gz.tmp.XXXXXX or STEM.folded.tmp.XXXXXX: a user's
 * STEM.tmp.mine is not one). */
static int file_kind(const char *name, char *stem, time_t *t)
{
	const char *dot = strchr(name, '.');
	if (!dot || dot - name >= WINDIR_STEM_MAX ||
	    !stem_parse(name, (size_t)(dot - name), t))
		return 0;
	memcpy(stem, name, (size_t)(dot - name));
	stem[dot - name] = 0;
	static const char *const ext[] = { ".pb.gz", ".folded" };
	for (int i = 0; i < 2; i++) {
		size_t n = strlen(ext[i]);
		if (strncmp(dot, ext[i], n) != 0)
			continue;
		if (!dot[n])
			return i + 1;
		return tmp_suffix(dot + n) ? 3 : 0;
	}
	return 0;
}

/* Only files this user made are indexed or removed: a regular file (not a
 * link, whose target unlink() would spare but whose name is someone
 * else's) owned by us.  Another user who can create names in DIR cannot
 * make one, so nothing of theirs is ever taken for a window. */
static bool ours(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       st.st_uid == geteuid();
}

bool windir_path(const struct windir *w, char *buf, size_t n,
		 const char *stem, const char *suffix)
{
	int k = snprintf(buf, n, "%s/%s%s", w->dir, stem, suffix);
	return k >= 0 && (size_t)k < n;
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Both files of a window (0 for one that is not there). */
static uint64_t window_bytes(const struct windir *w, const char *stem)
{
	char pb[4096], fo[4096];
	if (!windir_path(w, pb, sizeof(pb), stem, ".pb.gz") ||
	    !windir_path(w, fo, sizeof(fo), stem, ".folded"))
		return 0;
	return file_size(pb) + file_size(fo);
}

/* By time, then suffix: "T-1" (older versions) is later than "T", though
 * '-' < '.'. */
static int file_cmp(const void *a, const void *b)
{
	const struct windir_file *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	unsigned long nx = stem_suffix(x->stem), ny = stem_suffix(y->stem);
	return nx < ny ? -1 : nx > ny;
}

static int index_add(struct windir *w, const char *stem, time_t t,
		     uint64_t bytes)
{
	if (sf_grow((void **)&w->files, &w->cap, w->nfiles + 1,
		    sizeof(*w->files)))
		return -ENOMEM;
	struct windir_file *f = &w->files[w->nfiles++];
	snprintf(f->stem, sizeof(f->stem), "%s", stem);
	f->t = t;
	f->bytes = bytes;
	w->total_bytes += bytes;
	return 0;
}

/* First pass of the scan: temporaries are removed (a crash mid-write),
 * and windows are indexed. */
static int scan_entry(struct windir *w, const char *name, uint64_t *stale)
{
	char stem[WINDIR_STEM_MAX], path[4096];
	time_t t;
	int kind = file_kind(name, stem, &t);
	if (!kind || !windir_path(w, path, sizeof(path), name, ""))
		return 0;
	if (!ours(path))
		return 0;
	if (kind == 3) {
		if (unlink(path) == 0)
			(*stale)++;
		return 0;
	}
	return kind == 1 ? index_add(w, stem, t, window_bytes(w, stem)) : 0;
}

/* Second pass: a .folded whose .pb.gz is missing is half a window. */
static void drop_orphan(struct windir *w, const char *name, uint64_t *stale)
{
	char stem[WINDIR_STEM_MAX], path[4096], pb[4096];
	time_t t;
	if (file_kind(name, stem, &t) != 2 ||
	    !windir_path(w, pb, sizeof(pb), stem, ".pb.gz") ||
	    !windir_path(w, path, sizeof(path), name, ""))
		return;
	if (access(pb, F_OK) != 0 && ours(path) && unlink(path) == 0)
		(*stale)++;
}

int windir_scan(struct windir *w, uint64_t *stale)
{
	w->nfiles = 0;
	w->total_bytes = 0;
	for (int pass = 0; pass < 2; pass++) {
		DIR *d = opendir(w->dir);
		if (!d)
			return -errno;
		struct dirent *de;
		int ret = 0;
		while (!ret && (de = readdir(d))) {
			if (pass == 1)
				drop_orphan(w, de->d_name, stale);
			else
				ret = scan_entry(w, de->d_name, stale);
		}
		closedir(d);
		if (ret)
			return ret;
	}
	if (w->nfiles)	/* qsort(NULL, 0) is undefined */
		qsort(w->files, w->nfiles, sizeof(*w->files), file_cmp);
	return 0;
}

/* The first suffix free for a window of second t: past every window of t
 * in the index (also one an earlier run wrote) and past the last name
 * given here (written or failed). */
static unsigned long first_suffix(const struct windir *w, time_t t)
{
	unsigned long n = w->named && w->last_t == t ? w->last_n + 1 : 0;
	for (size_t i = 0; i < w->nfiles; i++)
		if (w->files[i].t == t && stem_suffix(w->files[i].stem) >= n)
			n = stem_suffix(w->files[i].stem) + 1;
	return n;
}

bool windir_name(struct windir *w, time_t t, char *stem)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	char base[24], path[4096];
	strftime(base, sizeof(base), "%Y%m%dT%H%M%SZ", &tm);
	/* three digits sort in time order; a thousand windows starting in
	 * one second would need as many restarts of bpftrace */
	for (unsigned long n = first_suffix(w, t); n < 1000; n++) {
		if (n)
			snprintf(stem, WINDIR_STEM_MAX, "%s_%03lu", base, n);
		else
			snprintf(stem, WINDIR_STEM_MAX, "%s", base);
		/* past the index's names (first_suffix); a file put there
		 * since the scan is not in it */
		if (windir_path(w, path, sizeof(path), stem, ".pb.gz") &&
		    access(path, F_OK) != 0) {
			w->named = true;
			w->last_t = t;
			w->last_n = (unsigned)n;
			return true;
		}
	}
	snprintf(stem, WINDIR_STEM_MAX, "%s_1000", base);
	return false;
}

int windir_add(struct windir *w, const char *stem, time_t t, uint64_t *bytes)
{
	*bytes = window_bytes(w, stem);
	return index_add(w, stem, t, *bytes);
}

/* Drop window i from the index and its files from DIR (only files still
 * ours: one replaced since the scan is left).  True when its .pb.gz was
 * removed here. */
static bool remove_file(struct windir *w, size_t i)
{
	char path[4096];
	bool removed = false;
	if (windir_path(w, path, sizeof(path), w->files[i].stem, ".pb.gz"))
		removed = ours(path) && unlink(path) == 0;
	if (windir_path(w, path, sizeof(path), w->files[i].stem, ".folded") &&
	    ours(path))
		unlink(path);
	w->total_bytes -= w->files[i].bytes;
	memmove(&w->files[i], &w->files[i + 1],
		(w->nfiles - i - 1) * sizeof(*w->files));
	w->nfiles--;
	return removed;
}

uint64_t windir_retain(struct windir *w, uint64_t max_size, uint64_t max_age,
		       bool keep_newest)
{
	uint64_t removed = 0;
	time_t now = time(NULL);
	while (w->nfiles > (keep_newest ? 1u : 0u) &&
	       ((max_size && w->total_bytes > max_size) ||
		(max_age && now > w->files[0].t &&
		 (uint64_t)(now - w->files[0].t) > max_age))) {
		removed += remove_file(w, 0);
	}
	return removed;
}

void windir_release(struct windir *w)
{
	free(w->files);
	w->files = NULL;
	w->nfiles = w->cap = 0;
}
