/* procfs.c - /proc/PID readers, see procfs.h. */
#include "base/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/untrusted.h"
#include "base/util.h"

/* ENOENT on /proc/PID/... means the process is gone. */
static int proc_errno(int e)
{
	return e == ENOENT ? -ESRCH : -e;
}

int procfs_read_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	int rc = b ? 0 : -ENOMEM;
	while (!rc) {
		if (n + 1 >= cap && sf_grow((void **)&b, &cap, cap * 2, 1)) {
			rc = -ENOMEM;
			break;
		}
		ssize_t r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rc = -errno;
		else if (r == 0)
			break;
		else
			n += (size_t)r;
	}
	close(fd);
	if (rc) {
		free(b);
		return rc;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

/* "/proc/PID/REL" into path (PROC_PATH_MAX bytes): 0 or -ENAMETOOLONG. */
#define PROC_PATH_MAX (4096 + 64)
static int proc_path(char *path, int pid, const char *rel)
{
	int n = snprintf(path, PROC_PATH_MAX, "/proc/%d/%s", pid, rel);
	return n < 0 || n >= PROC_PATH_MAX ? -ENAMETOOLONG : 0;
}

int procfs_open(int pid, const char *rel)
{
	char path[PROC_PATH_MAX];
	int rc = proc_path(path, pid, rel);
	if (rc)
		return rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int procfs_open_untrusted(int pid, const char *rel, struct stat *st)
{
	char path[PROC_PATH_MAX];
	int rc = proc_path(path, pid, rel);
	return rc ? rc : sf_open_untrusted(path, st);
}

int procfs_boot_time(uint64_t *sec)
{
	char *b;
	size_t len;
	int rc = procfs_read_file("/proc/stat", &b, &len);
	if (rc)
		return rc;
	const char *p = strstr(b, "\nbtime ");
	unsigned long long v = 0;
	rc = p && sscanf(p + 7, "%llu", &v) == 1 && v ? 0 : -EINVAL;
	*sec = v;
	free(b);
	return rc;
}

int procfs_stat_path(int pid, const char *rel, struct stat *st)
{
	char path[PROC_PATH_MAX];
	int rc = proc_path(path, pid, rel);
	if (rc)
		return rc;
	return stat(path, st) ? -errno : 0;
}

static int read_proc(int pid, const char *name, char **buf, size_t *len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	int rc = procfs_read_file(path, buf, len);
	return rc < 0 ? proc_errno(-rc) : 0;
}

int procfs_stat(int pid, struct procfs_stat *out)
{
	char *b;
	size_t len;
	int rc = read_proc(pid, "stat", &b, &len);
	if (rc)
		return rc;
	*out = (struct procfs_stat){ .state = '?' };
	/* comm may hold spaces and ')': fields restart after the last ')' */
	char *p = strrchr(b, ')');
	char *open = strchr(b, '(');
	if (p && open && open < p)
		snprintf(out->comm, sizeof(out->comm), "%.*s",
			 (int)(p - open - 1), open + 1);
	rc = -EINVAL;
	if (p && p[1] == ' ' && p[2])
		out->state = p[2];
	for (int field = 2; p && *p; p++) {
		if (*p != ' ')
			continue;
		char *end;
		if (++field == 20) {
			out->num_threads = strtoull(p + 1, &end, 10);
		} else if (field == 22) {
			out->starttime = strtoull(p + 1, &end, 10);
			rc = end > p + 1 ? 0 : -EINVAL;
		} else if (field == 28) {
			out->startstack = strtoull(p + 1, &end, 10);
		} else if (field == 48) {
			out->argstart = strtoull(p + 1, &end, 10);
			break;
		}
	}
	free(b);
	return rc;
}

bool procfs_same_process(int pid, uint64_t starttime)
{
	struct procfs_stat st;
	if (pid <= 0 || procfs_stat(pid, &st))
		return false;
	if (st.state == 'Z' || st.state == 'X')
		return false;	/* exited: its memory and files are gone */
	return starttime == 0 || st.starttime == starttime;
}

/* The value of status line KEY ("\nNSpid:"), cut at its newline; NULL
 * when absent.  b is modified. */
static char *status_field(char *b, const char *key)
{
	char *p = strstr(b, key);
	if (!p)
		return NULL;
	p += strlen(key);
	char *eol = strchr(p, '\n');
	if (eol)
		*eol = 0;
	return p;
}

int procfs_status(int pid, int *nspid, char *name, size_t namesz)
{
	char *b, *p;
	size_t len;
	int rc = read_proc(pid, "status", &b, &len);
	if (rc)
		return rc;
	*nspid = pid;
	name[0] = 0;
	/* NSpid: first, then Name:, the first line (each cut at its end) */
	if ((p = status_field(b, "\nNSpid:"))) {
		/* the last number is the pid in the innermost namespace */
		char *last = NULL;
		for (char *t = strtok(p, " \t"); t; t = strtok(NULL, " \t"))
			last = t;
		if (last && atoi(last) > 0)
			*nspid = atoi(last);
	}
	if (!strncmp(b, "Name:", 5) && (p = status_field(b, "Name:")))
		snprintf(name, namesz, "%s", p + (*p == '\t'));	/* "Name:\t" */
	free(b);
	procfs_unescape(name);	/* "a\\nb" -> "a\nb" */
	return 0;
}

int procfs_uids(int pid, uid_t uids[4])
{
	char *b, *p;
	size_t len;
	unsigned u[4];
	int rc = read_proc(pid, "status", &b, &len);
	if (rc)
		return rc;
	rc = (p = status_field(b, "\nUid:")) &&
	     sscanf(p, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4 ? 0 : -EINVAL;
	for (int i = 0; !rc && i < 4; i++)
		uids[i] = (uid_t)u[i];
	free(b);
	return rc;
}

static bool is_odigit(char c)
{
	return c >= '0' && c <= '7';
}

void procfs_unescape(char *s)
{
	char *w = s;
	for (const char *r = s; *r; w++) {
		if (r[0] == '\\' && r[1] == 'n') {
			*w = '\n';
			r += 2;
		} else if (r[0] == '\\' && r[1] == '\\') {
			*w = '\\';
			r += 2;
		} else if (r[0] == '\\' && is_odigit(r[1]) && is_odigit(r[2]) &&
			   is_odigit(r[3]) && r[1] <= '3') {
			*w = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 |
				    (r[3] - '0'));
			r += 4;
		} else {
			*w = *r++;
		}
	}
	*w = 0;
}

int procfs_exe_id(int pid, dev_t *dev, ino_t *ino)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return proc_errno(errno);
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}
