/*
 * dwoplace.c - may libdw open the .dwo a skeleton unit names?
 *
 * libdw opens a split unit itself, with a blocking open(2) of
 * DW_AT_dwo_name beside the file it reads, then under DW_AT_comp_dir:
 * names the binary's own data chooses, any absolute path included.  So
 * before a lookup may reach libdw, every name libdw would try is checked
 * here (docs/security.md).  A file's split units may come from files and
 * directories of root or of the owner of the file that names them (who
 * controls that file's DWARF already):
 *   - a name that exists must be a regular file (after symlinks) owned by
 *     one of them, in a directory owned by one of them that others cannot
 *     write, or that is sticky (/tmp: others cannot replace the file);
 *   - a name that does not exist must not be creatable by anyone else:
 *     its nearest existing directory is owned by one of them and writable
 *     by no one else (sticky is not enough: anyone may create there).
 * A refusal is counted (sf_limits refused_place, or refused_type for a
 * FIFO, socket or device) and said once a file; the unit is then read as
 * a skeleton (file:line, names from the symbol table).
 */
#include "elf/elfidx_priv.h"

#include <dwarf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct dwo_ctx {
	uid_t owner;		/* of the file holding the skeleton */
	const char *why;	/* refusal, for the message */
	mode_t mode;		/* of a name that is not a regular file */
};

static bool trusted_uid(const struct dwo_ctx *c, uid_t u)
{
	return u == 0 || u == c->owner;
}

/* path's directory into dir[PATH_MAX]. */
static void parent_of(const char *path, char *dir)
{
	const char *s = strrchr(path, '/');
	size_t n = s ? (size_t)(s - path) : 0;
	if (!s) {
		strcpy(dir, ".");
		return;
	}
	if (!n)
		n = 1;	/* "/x": the root */
	memcpy(dir, path, n);
	dir[n] = '\0';
}

/* Directory dir may hold a split unit: sticky allowed when the file
 * exists (its owner alone may replace it there). */
static bool dir_ok(struct dwo_ctx *c, const char *dir, bool file_exists)
{
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		c->why = "its directory cannot be checked";
		return false;
	}
	if (!trusted_uid(c, st.st_uid)) {
		c->why = "its directory belongs to another user";
		return false;
	}
	if (!(st.st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	if (file_exists && (st.st_mode & S_ISVTX))
		return true;
	c->why = "its directory is writable by other users";
	return false;
}

/* The nearest existing ancestor of path's directory, writable only by a
 * trusted user: nobody else can create the name. */
static bool absent_ok(struct dwo_ctx *c, const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	parent_of(path, dir);
	while (lstat(dir, &st) && strcmp(dir, "/") && strcmp(dir, ".")) {
		char up[PATH_MAX];
		parent_of(dir, up);
		strcpy(dir, up);
	}
	return dir_ok(c, dir, false);
}

static bool name_ok(struct dwo_ctx *c, const char *path)
{
	struct stat lst, st;
	char real[PATH_MAX], dir[PATH_MAX];

	if (lstat(path, &lst)) {
		if (errno == ENOENT || errno == ENOTDIR)
			return absent_ok(c, path);
		c->why = "it cannot be checked";
		return false;
	}
	if (stat(path, &st)) {	/* a dangling symlink: nothing to read */
		c->why = "it is a dangling symlink";
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		c->mode = st.st_mode;
		c->why = sf_file_kind(st.st_mode);
		return false;
	}
	if (!trusted_uid(c, lst.st_uid) || !trusted_uid(c, st.st_uid)) {
		c->why = "it belongs to another user";
		return false;
	}
	parent_of(path, dir);
	if (!dir_ok(c, dir, true))
		return false;
	if (!realpath(path, real)) {
		c->why = "it cannot be resolved";
		return false;
	}
	parent_of(real, dir);
	return dir_ok(c, dir, true);
}

/* libdw's __libdw_filepath(): file if absolute, else dir/file, a relative
 * dir (or none) under debugdir.  false when libdw would try nothing. */
static bool libdw_path(char *out, const char *debugdir, const char *dir,
		       const char *file)
{
	int n;
	if (file[0] == '/')
		n = snprintf(out, PATH_MAX, "%s", file);
	else if (dir && dir[0] == '/')
		n = snprintf(out, PATH_MAX, "%s/%s", dir, file);
	else if (!debugdir)
		return false;
	else if (dir)
		n = snprintf(out, PATH_MAX, "%s/%s/%s", debugdir, dir, file);
	else
		n = snprintf(out, PATH_MAX, "%s/%s", debugdir, file);
	return n > 0 && n < PATH_MAX;
}

/* The directory libdw takes for the Dwarf's file: that of the name of fd. */
static bool debugdir_of(int fd, char *dir)
{
	char self[64], path[PATH_MAX];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(self, path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return false;
	path[n] = '\0';
	parent_of(path, dir);
	return true;
}

bool dwo_place_ok(struct idx_builder *b, const struct dwsrc *src,
		  Dwarf_Die *cudie)
{
	Dwarf_Attribute a;
	const char *name = dwarf_formstring(dwarf_attr(cudie, DW_AT_dwo_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr(cudie, DW_AT_GNU_dwo_name, &a));
	if (!name || !src)
		return true;	/* libdw looks for nothing */
	const char *comp = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	char ddir[PATH_MAX], p[PATH_MAX];
	bool have_dd = src->fd >= 0 && debugdir_of(src->fd, ddir);
	struct dwo_ctx c = { .owner = src->st.st_uid };

	for (int i = 0; i < 2; i++) {
		if (i == 1 && !comp)
			break;
		if (!libdw_path(p, have_dd ? ddir : NULL, i ? comp : NULL, name) ||
		    name_ok(&c, p))
			continue;
		sf_limits_count(b->limits, c.mode ? SF_REFUSED_TYPE :
						    SF_REFUSED_PLACE);
		if (!b->dwo_warned)
			idxb_warn(b, "split DWARF '%s' is not read: %s "
				  "(docs/security.md): file:line only, names "
				  "from the symbol table, no inlined frames",
				  p, c.why);
		b->dwo_warned = true;	/* said: not also "not found" */
		return false;
	}
	return true;
}
