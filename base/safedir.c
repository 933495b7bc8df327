/* safedir.c - see safedir.h. */
#include "base/safedir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the kernel's own bound on links followed in one lookup */
#define HOPS_MAX 40

bool sf_uid_trusted(uid_t uid)
{
	if (uid == 0 || uid == geteuid())
		return true;
	const char *s = geteuid() == 0 ? getenv("SUDO_UID") : NULL;
	char *end;
	if (!s || !*s)
		return false;
	unsigned long u = strtoul(s, &end, 10);
	return !*end && u == (unsigned long)uid;
}

/* "root or uid U" (the users trusted besides root), for messages. */
static const char *trusted_list(char *buf, size_t n)
{
	const char *s = geteuid() == 0 ? getenv("SUDO_UID") : NULL;
	if (geteuid() != 0)
		snprintf(buf, n, "root or uid %u", (unsigned)geteuid());
	else if (s && *s)
		snprintf(buf, n, "root or the sudo user, uid %s", s);
	else
		snprintf(buf, n, "root");
	return buf;
}

bool sf_path_split(const char *path, char *dir, size_t dirsize,
		   const char **base)
{
	const char *s = strrchr(path, '/');
	size_t n = s ? (size_t)(s - path) : 0;
	*base = s ? s + 1 : path;
	if (s && n == 0)
		n = 1;	/* "/x": the root */
	if (n >= dirsize)
		return false;
	memcpy(dir, path, n);
	dir[n] = '\0';
	return true;
}

struct walk {
	unsigned flags;		/* SF_DIR_* */
	int fd;			/* the directory reached so far (O_PATH) */
	char rest[PATH_MAX];	/* components still to walk */
	char shown[PATH_MAX];	/* walked so far, for messages */
	int hops;
};

static int walk_reset(struct walk *w, bool absolute)
{
	int fd = open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = fd;
	return 0;
}

/* Take the next component of w->rest into name[NAME_MAX + 1] (empty
 * when it is too long for a name); false at the end. */
static bool next_name(struct walk *w, char *name)
{
	char *r = w->rest;
	while (*r == '/')
		r++;
	size_t n = strcspn(r, "/");
	if (!n)
		return false;
	size_t keep = n > NAME_MAX ? 0 : n;
	memcpy(name, r, keep);
	name[keep] = '\0';
	memmove(w->rest, r + n, strlen(r + n) + 1);
	return true;
}

static void shown_add(struct walk *w, const char *name)
{
	size_t n = strlen(w->shown);
	snprintf(w->shown + n, sizeof(w->shown) - n, "%s%s",
		 n && w->shown[n - 1] != '/' ? "/" : "", name);
}

/* A link at w->fd/name, owned by a trusted user: its target is walked in
 * place of the name. */
static int follow(struct walk *w, int lfd, const char *for_path,
		  const struct stat *lst, struct sf_err *err)
{
	char target[PATH_MAX], buf[64];
	if (!sf_uid_trusted(lst->st_uid))
		return sf_err_set(err, EPERM, "refusing to write '%s': '%s' is a "
				  "symbolic link owned by uid %u, not %s",
				  for_path, w->shown, (unsigned)lst->st_uid,
				  trusted_list(buf, sizeof(buf)));
	ssize_t n = readlinkat(lfd, "", target, sizeof(target) - 1);
	if (n <= 0 || ++w->hops > HOPS_MAX)
		return sf_err_set(err, n <= 0 ? EIO : ELOOP, "cannot write '%s': "
				  "%s", for_path, strerror(n <= 0 ? EIO : ELOOP));
	target[n] = '\0';
	if (strlen(target) + 1 + strlen(w->rest) + 1 > sizeof(w->rest))
		return sf_err_set(err, ENAMETOOLONG, "cannot write '%s': %s",
				  for_path, strerror(ENAMETOOLONG));
	size_t t = strlen(target);
	memmove(w->rest + t + 1, w->rest, strlen(w->rest) + 1);
	memcpy(w->rest, target, t);
	w->rest[t] = '/';
	if (target[0] == '/') {
		int rc = walk_reset(w, true);
		if (rc)
			return sf_err_set(err, -rc, "cannot write '%s': %s",
					  for_path, strerror(-rc));
	}
	return 0;
}

/* One component: a directory is entered, a trusted link followed. */
static int step(struct walk *w, const char *name, const char *for_path,
		struct sf_err *err)
{
	struct stat st;
	if (!name[0])
		return sf_err_set(err, ENAMETOOLONG, "cannot write '%s': %s",
				  for_path, strerror(ENAMETOOLONG));
	if (!strcmp(name, "."))
		return 0;
	int fd = openat(w->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int e = fd < 0 || fstat(fd, &st) ? errno : 0;
	shown_add(w, name);
	if (e) {
		if (fd >= 0)
			close(fd);
		return sf_err_set(err, e, "cannot write '%s': %s", for_path,
				  strerror(e));
	}
	if (S_ISLNK(st.st_mode)) {
		int rc = follow(w, fd, for_path, &st, err);
		close(fd);
		return rc;
	}
	if (!S_ISDIR(st.st_mode)) {
		close(fd);
		return sf_err_set(err, ENOTDIR, "cannot write '%s': %s",
				  for_path, strerror(ENOTDIR));
	}
	if ((w->flags & SF_DIR_STRICT) && geteuid() == 0 &&
	    !sf_uid_trusted(st.st_uid)) {
		char buf[64];
		close(fd);
		return sf_err_set(err, EPERM, "refusing to write '%s': '%s' on "
				  "the way is owned by uid %u, not %s", for_path,
				  w->shown, (unsigned)st.st_uid,
				  trusted_list(buf, sizeof(buf)));
	}
	close(w->fd);
	w->fd = fd;
	return 0;
}

int sf_dir_open(const char *dir, const char *for_path, unsigned flags,
		int *fd, struct stat *st, struct sf_err *err)
{
	struct walk w = { .flags = flags, .fd = -1 };
	char name[NAME_MAX + 1], buf[64];
	if (!dir)
		dir = "";
	if (snprintf(w.rest, sizeof(w.rest), "%s", dir) >= (int)sizeof(w.rest))
		return sf_err_set(err, ENAMETOOLONG, "cannot write '%s': %s",
				  for_path, strerror(ENAMETOOLONG));
	int rc = walk_reset(&w, dir[0] == '/');
	if (rc)
		return sf_err_set(err, -rc, "cannot write '%s': %s", for_path,
				  strerror(-rc));
	snprintf(w.shown, sizeof(w.shown), "%s", dir[0] == '/' ? "/" : "");
	while (!rc && next_name(&w, name))
		rc = step(&w, name, for_path, err);
	if (!rc && fstat(w.fd, st))
		rc = sf_err_set(err, errno, "cannot write '%s': %s", for_path,
				strerror(errno));
	/* (another user's program may write into any directory it can:
	 * only root's writes are held to trusted users' directories) */
	if (!rc && geteuid() == 0 && !sf_uid_trusted(st->st_uid))
		rc = sf_err_set(err, EPERM, "refusing to write '%s': its "
				"directory '%s' is owned by uid %u, not %s",
				for_path, *dir ? dir : ".", (unsigned)st->st_uid,
				trusted_list(buf, sizeof(buf)));
	if (rc) {
		close(w.fd);
		return rc;
	}
	*fd = w.fd;
	return 0;
}

/* sf_dir_open(SF_DIR_STRICT) of dir, or of its nearest existing ancestor
 * while dir does not exist. */
static int strict_check(const char *dir, const char *for_path,
			struct sf_err *err)
{
	char up[PATH_MAX];
	const char *base;
	struct stat st;
	int fd, rc = sf_dir_open(dir, for_path, SF_DIR_STRICT, &fd, &st, err);
	if (!rc)
		close(fd);
	if (rc != -ENOENT || !sf_path_split(dir, up, sizeof(up), &base) ||
	    !*up || !strcmp(up, dir))
		return rc;
	return strict_check(up, for_path, err);
}

bool sf_cache_dir_usable(const char *dir, struct sf_err *err)
{
	if (strict_check(dir, dir, err) == -EPERM)
		return false;
	if (sf_mkdir_p(dir, 0700))
		return true;
	return strict_check(dir, dir, err) != -EPERM;
}
