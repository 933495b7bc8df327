/*
 * vdso.h - [vdso] images as files of a file table (elf/filetab.h): the
 * images seen, shared by content, and our own (how each is found: vdso.c).
 *
 * Ownership: the set borrows the file table (which owns the image files,
 * and must outlive the set) and the read counter; vdso_set_release()
 * frees the set's own array.  Internal to symbolizer/: the session keeps
 * one set.  Nothing prints.
 */
#ifndef SF_VDSO_H
#define SF_VDSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/filetab.h"

struct vdso_set {
	struct filetab *files;	/* where image files are added */
	uint64_t *reads;	/* images read from a process's memory */
	struct sym_file **vdsos;	/* the images seen, by content */
	size_t nvdsos, vdso_cap;
	struct sym_file *own_vdso;	/* NULL: not made yet, or none */
	const void *own_vdso_img;	/* our mapping of it */
	size_t own_vdso_len;
	int own_vdso_same;	/* a live 64-bit process's is ours: 1 yes,
				 * -1 no, 0 not compared yet */
	bool own_vdso_done;		/* looked up, made or absent */
};

/* An empty set adding to files, counting reads in *reads. */
void vdso_set_init(struct vdso_set *v, struct filetab *files,
		   uint64_t *reads);
void vdso_set_release(struct vdso_set *v);	/* zeroed: fine twice */

/* The [vdso] image file for a mapping of pid (snapshot: our own when it
 * is the same, else read through /proc/PID/mem; else our own vdso, when
 * expect_bid is NULL or matches it).  NULL when none is available. */
struct sym_file *vdso_file(struct vdso_set *v, int pid, uint64_t start,
			   uint64_t limit, const char *expect_bid);

#endif
