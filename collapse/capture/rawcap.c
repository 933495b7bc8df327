/*
 * rawcap.c - stackfold record's raw capture: see rawcap.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/protocol.h"
#include "capture/rawcap.h"
#include "base/util.h"

int rawcap_open(struct rawcap *rc, const char *path, struct sf_err *err)
{
	memset(rc, 0, sizeof(*rc));
	/* owner-only from its creation: its maps blocks (ASLR bases,
	 * build-ids) come first, and stack copies may follow */
	int ret = atomic_open_mode(&rc->f, path, 0600, err);
	rc->open = ret == 0;
	return ret;
}

void rawcap_maps(struct rawcap *rc, struct sym_session *ss, int pid,
		 uint32_t image)
{
	if (!rc->open || !ss)
		return;
	fprintf(rc->f.fp, PROTOCOL_MAPS_WORD " %" PRIu64 "\n",
		protocol_pid_field((uint32_t)pid, image));
	sym_process_write_maps(ss, pid, image, rc->f.fp);
	fputs(PROTOCOL_ENDMAPS_WORD "\n", rc->f.fp);
}

static void write_due(struct rawcap *rc, struct sym_session *ss)
{
	for (size_t i = 0; i < rc->ndue; i++)
		rawcap_maps(rc, ss, rc->due[i].pid, rc->due[i].image);
	rc->ndue = 0;
}

static void write_held(struct rawcap *rc)
{
	fwrite(rc->held, 1, rc->nheld, rc->f.fp);
	rc->nheld = 0;
}

/* The snapshots due, then the lines held; after them when part of the
 * record went out already (a block must not land inside a record). */
static void release_held(struct rawcap *rc, struct sym_session *ss)
{
	if (!rc->split)
		write_due(rc, ss);
	write_held(rc);
	if (rc->split)
		write_due(rc, ss);
	rc->split = false;
}

/* A record of 127 + 127 frames is some 10 KiB; text the parser takes for
 * a record that never ends is not held past this (memory would grow with
 * the input): it goes out in order of arrival. */
#define RAWCAP_HOLD_MAX (1u << 20)

void rawcap_line(struct rawcap *rc, struct sym_session *ss, const char *s,
		 size_t len, bool whole)
{
	if (!rc->open)
		return;
	bool room = !sf_grow((void **)&rc->held, &rc->heldcap,
			     rc->nheld + len + 1, 1);
	if (room) {
		memcpy(rc->held + rc->nheld, s, len);
		rc->held[rc->nheld + len] = '\n';
		rc->nheld += len + 1;
	}
	if (room && (whole || rc->nheld <= RAWCAP_HOLD_MAX)) {
		if (whole)
			release_held(rc, ss);
		return;
	}
	/* too much (or no room) to hold: the record so far goes out, in
	 * order of arrival, and its snapshots after it */
	write_held(rc);
	if (!room) {
		fwrite(s, 1, len, rc->f.fp);
		fputc('\n', rc->f.fp);
	}
	rc->split = true;
	if (whole)
		release_held(rc, ss);
}

void rawcap_due(struct rawcap *rc, struct sym_session *ss, int pid,
		uint32_t image)
{
	if (!rc->open)
		return;
	for (size_t i = 0; i < rc->ndue; i++)
		if (rc->due[i].pid == pid && rc->due[i].image == image)
			return;	/* written once, as it is then */
	if (sf_grow((void **)&rc->due, &rc->duecap, rc->ndue + 1,
		    sizeof(*rc->due))) {
		if (!rc->split)	/* else it would land inside a record: lost */
			rawcap_maps(rc, ss, pid, image);
		return;
	}
	rc->due[rc->ndue++] = (struct rawcap_due){ .pid = pid, .image = image };
}

static void release(struct rawcap *rc)
{
	free(rc->held);
	free(rc->due);
	memset(rc, 0, sizeof(*rc));
}

int rawcap_commit(struct rawcap *rc, struct sym_session *ss,
		  struct sf_err *err)
{
	if (!rc->open)
		return 0;
	release_held(rc, ss);	/* a record cut short ends the file */
	int ret = atomic_commit(&rc->f, err);
	release(rc);
	return ret;
}

void rawcap_abort(struct rawcap *rc)
{
	if (rc->open)
		atomic_abort(&rc->f);
	release(rc);
}
