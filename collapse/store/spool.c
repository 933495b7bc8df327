/*
 * spool.c - see spool.h.
 */
#include "store/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "store/clickhouse.h"
#include "store/labels.h"
#include "store/pyroscope.h"
#include "store/window.h"

#define STEM_MAX 64
#define DELAY_MAX_S 60
/* The journal is compacted (rewritten with the windows still on disk)
 * once this many lines were appended. */
#define JOURNAL_COMPACT 8192
/* A store still away is said again this often (seconds). */
#define SAY_AGAIN_S 60

typedef char stem_t[STEM_MAX];

struct target {
	struct store_url url;
	struct ch_store ch;		/* kind clickhouse */
	struct http_conn http;		/* kind pyroscope */
	char journal[4200];
	int jfd;
	unsigned jlines;
	stem_t *q;			/* the queue: q[qhead..qn) */
	size_t qhead, qn, qcap;
	bool retry;			/* the head's last attempt may have landed */
	size_t nretry;			/* the queue's first windows, found at
					 * start: each may have landed too */
	bool down;
	uint64_t down_since, said_at;	/* monotonic s */
	uint64_t next_try_ns;		/* monotonic */
	unsigned delay;
	uint64_t delivered, expired, failures, delivered_down;
	uint64_t jfails;		/* journal lines not written */
	bool auth_failed;		/* the store's last refusal was 401/403 */
};

struct spool {
	struct spool_opts o;
	char dir[4096];
	char host[256];
	char labels[sizeof(((struct labels *)0)->text)];
	struct target t[SPOOL_MAX_TARGETS];
	unsigned n;
	pthread_t th;
	bool th_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	stem_t *in;			/* notified, not yet queued */
	size_t nin, incap;
	bool in_lost;			/* a notification found no room */
	bool stop;
	uint64_t stop_deadline_ns;
	uint64_t abort_at_ns;		/* the same, for the transport: a
					 * request under way then is abandoned
					 * (atomic; 0 until the stop) */
	struct lrange *lr;		/* the labels journal (below) */
	size_t nlr, lrcap;
	stem_t first_stem, last_stem;	/* this run's range of windows */
	uint64_t cpu_ns;		/* the thread's CPU time, at its end */
};

static uint64_t now_ns(void)
{
	return sf_clock_ns(CLOCK_MONOTONIC);
}

/* Windows after `after` (up to the next range's) were written with these
 * labels ("" none). */
struct lrange {
	stem_t after;
	char labels[sizeof(((struct labels *)0)->text)];
};

static void say(struct spool *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct spool *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (s->o.log)
		s->o.log(s->o.log_ctx, line);
}

static void say_line(void *ctx, const char *line)
{
	say(ctx, "%s", line);
}

/* ---- the queue -------------------------------------------------------- */

static int q_push(struct target *t, const char *stem)
{
	if (t->qhead && t->qhead * 2 >= t->qn) {
		memmove(t->q, t->q + t->qhead, (t->qn - t->qhead) * sizeof(*t->q));
		t->qn -= t->qhead;
		t->qhead = 0;
	}
	if (sf_grow((void **)&t->q, &t->qcap, t->qn + 1, sizeof(*t->q)))
		return -ENOMEM;
	snprintf(t->q[t->qn++], STEM_MAX, "%s", stem);
	return 0;
}

static size_t q_len(const struct target *t)
{
	return t->qn - t->qhead;
}

/* ---- the journal -------------------------------------------------------- */

static bool window_on_disk(const struct spool *s, const char *stem)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s.pb.gz", s->dir, stem);
	return access(path, F_OK) == 0;
}

/* The journal for reading: only a regular file of ours, opened without
 * following a link or blocking (DIR may be shared: another user's name
 * there is no journal).  NULL when there is none. */
static FILE *journal_open_read(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	FILE *f = NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* The journal's temporary, created afresh: whatever has its name (a link
 * planted there) is removed, never written through. */
static FILE *journal_open_tmp(const char *tmp)
{
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      0666);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f && fd >= 0) {
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
	}
	return f;
}

/* Read the journal into sent (names of windows still on disk) and rewrite
 * it with those only. */
static int journal_load(struct spool *s, struct target *t, struct u64map *sent)
{
	char tmp[4300];
	FILE *f = journal_open_read(t->journal);
	snprintf(tmp, sizeof(tmp), "%s.tmp", t->journal);
	FILE *out = journal_open_tmp(tmp);
	int oe = out ? 0 : errno;	/* read all the same: what was sent */
	char line[256];
	unsigned kept = 0;
	bool found;
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || strlen(line) >= STEM_MAX || strchr(line, '/') ||
		    !window_on_disk(s, line))
			continue;
		uint64_t h = sf_hash_bytes(line, strlen(line), 1) | 1;
		if (!u64map_slot(sent, h, &found)) {
			fclose(f);
			if (out)
				fclose(out);
			unlink(tmp);
			return -ENOMEM;
		}
		if (out)
			fprintf(out, "%s\n", line);
		kept++;
	}
	if (f)
		fclose(f);
	if (!out)
		return -oe;
	int e = fflush(out) || fdatasync(fileno(out)) ? errno : 0;
	if (fclose(out) && !e)
		e = errno;
	if (!e && rename(tmp, t->journal))
		e = errno;
	if (e) {
		unlink(tmp);
		return -e;
	}
	t->jlines = kept;
	t->jfd = open(t->journal, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	return t->jfd < 0 ? -errno : 0;
}

/* The journal for appending, made when missing (not through a link, not
 * blocking on a FIFO planted there). */
static int journal_open_append(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
		      O_NONBLOCK | O_CLOEXEC, 0666);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
			st.st_uid != geteuid())) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

static void journal_add(struct spool *s, struct target *t, const char *stem)
{
	char line[STEM_MAX + 1];
	int n = snprintf(line, sizeof(line), "%s\n", stem);
	if (t->jfd < 0)
		t->jfd = journal_open_append(t->journal);
	off_t end = t->jfd >= 0 ? lseek(t->jfd, 0, SEEK_END) : -1;
	if (t->jfd < 0 || write(t->jfd, line, (size_t)n) != n ||
	    fdatasync(t->jfd)) {
		int e = errno;
		if (end >= 0 && ftruncate(t->jfd, end))	/* no half line */
			e = errno;
		t->jfails++;
		if (t->jfails == 1 || !(t->jfails & (t->jfails - 1)))
			say(s, "push %s: cannot write '%s': %s (window %s may be "
			    "sent again after a restart; the store keeps it "
			    "once; %" PRIu64 " so far)", t->url.text, t->journal,
			    strerror(e), stem, t->jfails);
	}
	if (++t->jlines >= JOURNAL_COMPACT) {
		struct u64map tmp = { .valsz = 1 };
		close(t->jfd);
		t->jfd = -1;
		if (journal_load(s, t, &tmp))
			say(s, "push %s: cannot compact '%s'", t->url.text,
			    t->journal);
		u64map_release(&tmp);
	}
}

/* ---- the labels journal ------------------------------------------------- */

/* DIR/.push-labels: lines "AFTER\tLABELS" (LABELS "" for none), one
 * written at each start (AFTER: the newest window then on disk, "-" for
 * none) and one at the stop (the newest window written, no labels: what
 * a later run without --push writes has none).  A window takes the
 * labels of the last line whose AFTER sorts before its name (names sort
 * in time order): those of the run that wrote it, whichever run sends
 * it.  A window older than every line (a version before the journal)
 * takes the sending run's. */
#define LABELS_FILE ".push-labels"
#define LRANGES_MAX 4096

static bool labels_text_ok(const char *t)
{
	return strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_.-=,") == strlen(t);
}

static int lr_add(struct spool *s, const char *after, const char *labels)
{
	if (s->nlr >= LRANGES_MAX) {	/* the oldest go */
		memmove(s->lr, s->lr + 1, (s->nlr - 1) * sizeof(*s->lr));
		s->nlr--;
	}
	if (sf_grow((void **)&s->lr, &s->lrcap, s->nlr + 1, sizeof(*s->lr)))
		return -ENOMEM;
	snprintf(s->lr[s->nlr].after, STEM_MAX, "%s", after);
	snprintf(s->lr[s->nlr].labels, sizeof(s->lr[0].labels), "%s", labels);
	s->nlr++;
	return 0;
}

static const char *labels_of(const struct spool *s, const char *stem)
{
	for (size_t i = s->nlr; i > 0; i--)
		if (strcmp(s->lr[i - 1].after, stem) < 0)
			return s->lr[i - 1].labels;
	return s->labels;
}

/* Rewrite the file with the ranges kept (0, or a negative errno). */
static int labels_save(struct spool *s)
{
	char path[4200], tmp[4300];
	snprintf(path, sizeof(path), "%s/" LABELS_FILE, s->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *out = journal_open_tmp(tmp);
	if (!out)
		return -errno;
	for (size_t i = 0; i < s->nlr; i++)
		fprintf(out, "%s\t%s\n", s->lr[i].after, s->lr[i].labels);
	int e = fflush(out) || fdatasync(fileno(out)) ? errno : 0;
	if (fclose(out) && !e)
		e = errno;
	if (!e && rename(tmp, path))
		e = errno;
	if (e)
		unlink(tmp);
	return -e;
}

/* Read the file, keep the ranges that hold windows still on disk (oldest:
 * the first of all[]), add this run's, and write it again. */
static int labels_load(struct spool *s, const stem_t *all, size_t nall)
{
	char path[4200], line[STEM_MAX + sizeof(s->lr[0].labels) + 2];
	snprintf(path, sizeof(path), "%s/" LABELS_FILE, s->dir);
	FILE *f = journal_open_read(path);
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *tab = strchr(line, '\t');
		if (!tab || tab == line || (size_t)(tab - line) >= STEM_MAX ||
		    !labels_text_ok(tab + 1))
			continue;
		*tab = 0;
		if (lr_add(s, line, tab + 1)) {
			fclose(f);
			return -ENOMEM;
		}
	}
	if (f)
		fclose(f);
	size_t drop = 0;	/* ranges that end before the oldest window */
	while (nall && drop + 1 < s->nlr && strcmp(s->lr[drop + 1].after, all[0]) < 0)
		drop++;
	if (!nall)
		drop = s->nlr;
	if (drop)
		memmove(s->lr, s->lr + drop, (s->nlr - drop) * sizeof(*s->lr));
	s->nlr -= drop;
	snprintf(s->first_stem, STEM_MAX, "%s", nall ? all[nall - 1] : "-");
	snprintf(s->last_stem, STEM_MAX, "%s", s->first_stem);
	if ((!s->nlr || strcmp(s->lr[s->nlr - 1].labels, s->labels)) &&
	    lr_add(s, s->first_stem, s->labels))
		return -ENOMEM;
	return labels_save(s);
}

static int labels_start(struct spool *s, const stem_t *all, size_t nall,
			struct sf_err *err)
{
	int ret = labels_load(s, all, nall);
	if (ret == -ENOMEM)
		return sf_err_set(err, ENOMEM, "out of memory");
	if (ret)	/* a full disk: this run's windows keep them all the same */
		say(s, "push: cannot write '%s/" LABELS_FILE "': %s (windows "
		    "sent after a restart take that run's labels)", s->dir,
		    strerror(-ret));
	return 0;
}

/* At the stop: what is written after this run has no labels. */
static void labels_close(struct spool *s)
{
	if (!s->labels[0] || !strcmp(s->last_stem, s->first_stem))
		return;
	int ret = lr_add(s, s->last_stem, "");
	if (!ret)
		ret = labels_save(s);
	if (ret)
		say(s, "push: cannot write '%s/" LABELS_FILE "': %s (windows "
		    "written later without --push may be sent with this run's "
		    "labels)", s->dir, strerror(-ret));
}

/* ---- set-up ------------------------------------------------------------ */

static int stem_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The windows in DIR (their .pb.gz: written last, the commit mark),
 * sorted: names sort in time order. */
static int scan(struct spool *s, stem_t **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	DIR *d = opendir(s->dir);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 7 || len - 6 >= STEM_MAX || de->d_name[0] < '0' ||
		    de->d_name[0] > '9' || strcmp(de->d_name + len - 6, ".pb.gz") ||
		    strstr(de->d_name, ".tmp."))
			continue;
		if (sf_grow((void **)out, &cap, *n + 1, sizeof(**out))) {
			closedir(d);
			return -ENOMEM;
		}
		snprintf((*out)[(*n)++], STEM_MAX, "%.*s", (int)(len - 6), de->d_name);
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), stem_cmp);
	return 0;
}

static int target_open(struct spool *s, struct target *t, const stem_t *all,
		       size_t nall, struct sf_err *err)
{
	t->jfd = -1;
	t->delay = 1;
	snprintf(t->journal, sizeof(t->journal), "%s/.push-%016" PRIx64 ".sent",
		 s->dir, sf_hash_bytes(t->url.text, strlen(t->url.text), 7));
	int ret = t->url.kind == STORE_CLICKHOUSE
		? ch_store_init(&t->ch, &t->url, s->o.store_max_age)
		: http_conn_init(&t->http, &t->url);
	if (ret)
		return sf_err_set(err, ENOMEM, "out of memory");
	/* a request under way when the stop's grace ends is abandoned */
	t->ch.conn.abort_at_ns = t->http.abort_at_ns = &s->abort_at_ns;
	t->ch.log = say_line;
	t->ch.log_ctx = s;
	struct u64map sent = { .valsz = 1 };
	ret = journal_load(s, t, &sent);
	if (ret == -ENOMEM) {
		u64map_release(&sent);
		return sf_err_set(err, ENOMEM, "out of memory");
	}
	/* a full disk: the journal as it was is appended to when it can be;
	 * until then deliveries are not recorded (sent again after a
	 * restart, kept once by the store) */
	if (ret)
		say(s, "push %s: cannot write '%s': %s (retried at each "
		    "delivery)", t->url.text, t->journal, strerror(-ret));
	ret = 0;
	for (size_t i = 0; i < nall && !ret; i++)
		if (!u64map_find(&sent, sf_hash_bytes(all[i], strlen(all[i]), 1) | 1))
			ret = q_push(t, all[i]);
	u64map_release(&sent);
	/* the first try of a window found at start may follow a crash that
	 * came after its delivery and before its journal line */
	t->nretry = q_len(t);
	return ret ? sf_err_set(err, ENOMEM, "out of memory") : 0;
}

/* ---- delivery ------------------------------------------------------------ */

static int deliver(struct spool *s, struct target *t,
		   const struct store_window *w, struct sf_err *e)
{
	if (t->url.kind == STORE_CLICKHOUSE)
		return ch_deliver(&t->ch, w, t->retry || t->nretry, e);
	return pyro_deliver(&t->http, w, e);
}

static void went_down(struct spool *s, struct target *t, int ret,
		      const char *why)
{
	uint64_t now = now_ns() / 1000000000ULL;
	bool auth = ret == -EACCES, was = t->auth_failed;
	/* a store of an older layout: waits, like one away, for its move */
	const char *down = auth ? "authentication failed"
		: ret == -EMEDIUMTYPE ? "store refused" : "store unreachable";
	const char *still = auth ? "authentication still failing"
		: ret == -EMEDIUMTYPE ? "store still refused" : "still unreachable";
	t->failures++;
	t->next_try_ns = now_ns() + (uint64_t)t->delay * 1000000000ULL;
	t->auth_failed = auth;
	if (!t->down || auth != was) {
		if (!t->down)
			t->down_since = now;
		t->down = true;
		t->said_at = now;
		t->delivered_down = 0;
		say(s, "push %s: %s (%s); %zu window%s wait%s, retrying with "
		    "backoff", t->url.text, down, why, q_len(t), q_len(t) == 1 ? "" : "s",
		    q_len(t) == 1 ? "s" : "");
	} else if (now - t->said_at >= SAY_AGAIN_S) {
		t->said_at = now;
		say(s, "push %s: %s after %" PRIu64 " s (%s); %zu window%s wait",
		    t->url.text, still, now - t->down_since, why,
		    q_len(t), q_len(t) == 1 ? "" : "s");
	}
	t->delay = t->delay * 2 > DELAY_MAX_S ? DELAY_MAX_S : t->delay * 2;
}

static void came_back(struct spool *s, struct target *t)
{
	if (!t->down || q_len(t))
		return;
	uint64_t now = now_ns() / 1000000000ULL;
	say(s, "push %s: store back after %" PRIu64 " s; %" PRIu64 " waiting "
	    "window%s delivered, none waits", t->url.text, now - t->down_since,
	    t->delivered_down, t->delivered_down == 1 ? "" : "s");
	t->down = false;
	t->delay = 1;
}

/* Deliver the queue's head.  false when the store failed (try later). */
static bool deliver_head(struct spool *s, struct target *t)
{
	const char *stem = t->q[t->qhead];
	struct store_window w;
	struct sf_err e = { "" };
	int ret = store_window_read(&w, s->dir, stem, s->o.host, &e);
	w.labels = labels_of(s, stem);
	if (ret == -ENOENT) {
		t->expired++;
		say(s, "push %s: window %s removed (--max-size or --max-age) "
		    "before its delivery", t->url.text, stem);
	} else if (ret) {
		t->expired++;
		say(s, "push %s: window %s not sent: %s", t->url.text, stem, e.msg);
	} else if ((ret = deliver(s, t, &w, &e))) {
		store_window_release(&w);
		t->retry = true;
		went_down(s, t, ret, e.msg);
		return false;
	} else {
		journal_add(s, t, stem);
		t->delivered++;
		if (t->down)
			t->delivered_down++;
	}
	store_window_release(&w);
	t->qhead++;
	t->retry = false;
	if (t->nretry)
		t->nretry--;
	came_back(s, t);
	return true;
}

static void deliver_due(struct spool *s, struct target *t, bool stopping)
{
	/* at the stop, a store away is not waited for (its connect timeout
	 * would hold the exit): its windows wait on disk */
	if (t->down && (stopping || now_ns() < t->next_try_ns))
		return;
	while (q_len(t)) {
		if (stopping && now_ns() > s->stop_deadline_ns)
			return;
		if (!deliver_head(s, t))
			return;
		pthread_mutex_lock(&s->mu);
		bool news = s->nin > 0;
		pthread_mutex_unlock(&s->mu);
		if (news && !stopping)
			return;		/* take them in first: order */
	}
}

/* ---- the thread ------------------------------------------------------------ */

/* Move the notified names to every queue; a lost notification (no
 * memory for it) rescans the directory. */
static void take_incoming(struct spool *s, stem_t *in, size_t nin, bool lost)
{
	for (size_t j = 0; j < nin; j++)
		if (strcmp(in[j], s->last_stem) > 0)
			snprintf(s->last_stem, STEM_MAX, "%s", in[j]);
	for (unsigned i = 0; i < s->n; i++)
		for (size_t j = 0; j < nin; j++)
			if (q_push(&s->t[i], in[j]))
				lost = true;
	if (!lost)
		return;
	stem_t *all;
	size_t nall;
	if (scan(s, &all, &nall))
		return;
	for (unsigned i = 0; i < s->n; i++) {
		struct target *t = &s->t[i];
		const char *last = q_len(t) ? t->q[t->qn - 1] : "";
		for (size_t j = 0; j < nall; j++)
			if (strcmp(all[j], last) > 0)
				q_push(t, all[j]);
		t->nretry = q_len(t);	/* delivered ones may be among them */
	}
	free(all);
}

static uint64_t next_due(struct spool *s)
{
	uint64_t due = UINT64_MAX;
	for (unsigned i = 0; i < s->n; i++)
		if (q_len(&s->t[i]) && s->t[i].down && s->t[i].next_try_ns < due)
			due = s->t[i].next_try_ns;
	return due;
}

static void *spool_main(void *arg)
{
	struct spool *s = arg;
	/* a background job: the window writer comes first */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
	stem_t *in = NULL;
	size_t incap = 0;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		uint64_t due = next_due(s);
		bool work = false;
		for (unsigned i = 0; i < s->n; i++)
			work |= q_len(&s->t[i]) && !s->t[i].down;
		while (!s->stop && !s->nin && !work && now_ns() < due) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		}
		bool stopping = s->stop, lost = s->in_lost;
		size_t nin = s->nin;
		if (nin && !sf_grow((void **)&in, &incap, nin, sizeof(*in)))
			memcpy(in, s->in, nin * sizeof(*in));
		else if (nin)
			lost = true;
		s->nin = 0;
		s->in_lost = false;
		pthread_mutex_unlock(&s->mu);
		take_incoming(s, in, nin, lost);
		for (unsigned i = 0; i < s->n; i++)
			deliver_due(s, &s->t[i], stopping);
		if (stopping)
			break;
	}
	free(in);
	struct timespec cpu;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
		s->cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ULL + (uint64_t)cpu.tv_nsec;
	return NULL;
}

struct spool *spool_start(const struct spool_opts *o, struct sf_err *err)
{
	if (o->nurls > SPOOL_MAX_TARGETS) {
		sf_err_set(err, EINVAL, "at most %d --push targets", SPOOL_MAX_TARGETS);
		return NULL;
	}
	if (http_global_init(err))
		return NULL;
	struct spool *s = calloc(1, sizeof(*s));
	if (!s) {
		sf_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	s->o = *o;
	snprintf(s->dir, sizeof(s->dir), "%s", o->dir);
	if (o->host) {
		snprintf(s->host, sizeof(s->host), "%s", o->host);
		s->o.host = s->host;
	}
	snprintf(s->labels, sizeof(s->labels), "%s", o->labels ? o->labels : "");
	s->o.labels = s->labels;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	stem_t *all = NULL;
	size_t nall = 0;
	int ret = scan(s, &all, &nall);
	if (ret)
		sf_err_set(err, -ret, "cannot read '%s': %s", s->dir, strerror(-ret));
	if (!ret)
		ret = labels_start(s, all, nall, err);
	for (unsigned i = 0; !ret && i < o->nurls; i++) {
		s->t[i].url = o->urls[i];
		s->n++;
		ret = target_open(s, &s->t[i], all, nall, err);
	}
	free(all);
	if (!ret) {
		ret = pthread_create(&s->th, NULL, spool_main, s);
		if (ret)
			sf_err_set(err, ret, "cannot start the push thread: %s",
				   strerror(ret));
		s->th_started = !ret;
		if (!ret)	/* for top -H and bench/overhead */
			pthread_setname_np(s->th, "sf-push");
	}
	if (ret) {
		spool_stop(s, 0);
		return NULL;
	}
	for (unsigned i = 0; i < s->n; i++)
		if (q_len(&s->t[i]))
			say(s, "push %s: %zu window%s from earlier runs wait",
			    s->t[i].url.text, q_len(&s->t[i]),
			    q_len(&s->t[i]) == 1 ? "" : "s");
	return s;
}

void spool_notify(struct spool *s, const char *stem)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	if (!sf_grow((void **)&s->in, &s->incap, s->nin + 1, sizeof(*s->in)))
		snprintf(s->in[s->nin++], STEM_MAX, "%s", stem);
	else
		s->in_lost = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

void spool_stop(struct spool *s, unsigned grace_s)
{
	if (!s)
		return;
	if (s->th_started) {
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		s->stop_deadline_ns = now_ns() + (uint64_t)grace_s * 1000000000ULL;
		__atomic_store_n(&s->abort_at_ns, s->stop_deadline_ns,
				 __ATOMIC_RELEASE);
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->th, NULL);
	}
	uint64_t windows = 0;
	for (unsigned i = 0; i < s->n; i++)
		windows += s->t[i].delivered;
	if (s->th_started)
		labels_close(s);
	if (s->th_started && windows)
		say(s, "push: %" PRIu64 " window%s delivered, %.1f ms of CPU (%.2f ms "
		    "a window)", windows, windows == 1 ? "" : "s", s->cpu_ns / 1e6,
		    s->cpu_ns / 1e6 / (double)windows);
	for (unsigned i = 0; i < s->n; i++) {
		struct target *t = &s->t[i];
		size_t sent = t->url.kind == STORE_CLICKHOUSE ? t->ch.conn.sent_bytes
							      : t->http.sent_bytes;
		if (t->delivered)
			say(s, "push %s: %" PRIu64 " window%s, %zu bytes of request "
			    "bodies", t->url.text, t->delivered,
			    t->delivered == 1 ? "" : "s", sent);
		if (q_len(t))
			say(s, "push %s: %zu window%s not delivered yet: sent at "
			    "the next start", t->url.text, q_len(t),
			    q_len(t) == 1 ? "" : "s");
		if (t->url.kind == STORE_CLICKHOUSE)
			ch_store_release(&t->ch);
		else
			http_conn_release(&t->http);
		if (t->jfd >= 0)
			close(t->jfd);
		free(t->q);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->in);
	free(s->lr);
	free(s);
}
