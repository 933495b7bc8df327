/*
 * savedmaps.c - a process snapshot as text and back: sym_process_write_maps()
 * and sym_process_load_maps() (symbolizer.h), for raw captures.
 *
 * The text format (what sym_process_write_maps() writes):
 *   - the kept /proc/PID/maps lines, verbatim (except text remapped onto
 *     anonymous pages, written as the file mapping it replaced, see
 *     maps.h `remapped`), and `#remap START-HEX` after them for each
 *     such mapping, so that a reload still asks the JIT's perf map about
 *     addresses the file cannot name;
 *   - `#bid START-HEX BUILDID-HEX` for every mapping with a build-id;
 *   - `#main START-HEX` for the mapping of the process's executable;
 *   - `#starttime TICKS` and `#nspid PID`: identify the process (so files
 *     are reopened through /proc/PID only while it is the same process) and
 *     find its JIT perf map;
 *   - `#comm NAME`: the process's name (status Name:, escaped there).
 * Other lines starting with '#' are ignored, so the format can grow.
 */
#include "process.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/procfs.h"

struct saved_meta {
	uint64_t *bid_start;	/* #bid lines */
	char (*bid)[41];
	size_t nbid, cap_s, cap_b;
	uint64_t *mains;	/* #main lines */
	size_t nmains, cap_m;
	uint64_t *remaps;	/* #remap lines */
	size_t nremaps, cap_r;
};

static int push_start(uint64_t **v, size_t *n, size_t *cap, uint64_t a)
{
	if (sf_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = a;
	return 0;
}

/* "#bid START BID", "#main START", "#remap START", "#starttime N",
 * "#nspid N", "#comm NAME" */
static int parse_meta(struct sym_process *p, struct saved_meta *mt,
		      const char *line, size_t len)
{
	char buf[160];
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, line, len);
	buf[len] = 0;
	unsigned long long a, b;
	char hex[64];
	if (sscanf(buf, "#bid %llx %63s", &a, hex) == 2 && strlen(hex) <= 40) {
		if (sf_grow((void **)&mt->bid_start, &mt->cap_s, mt->nbid + 1,
			    sizeof(*mt->bid_start)) ||
		    sf_grow((void **)&mt->bid, &mt->cap_b, mt->nbid + 1,
			    sizeof(*mt->bid)))
			return -ENOMEM;
		mt->bid_start[mt->nbid] = a;
		memcpy(mt->bid[mt->nbid++], hex, strlen(hex) + 1);
	} else if (sscanf(buf, "#main %llx", &a) == 1) {
		return push_start(&mt->mains, &mt->nmains, &mt->cap_m, a);
	} else if (sscanf(buf, "#remap %llx", &a) == 1) {
		return push_start(&mt->remaps, &mt->nremaps, &mt->cap_r, a);
	} else if (sscanf(buf, "#starttime %llu", &b) == 1) {
		p->starttime = b;
	} else if (sscanf(buf, "#nspid %llu", &b) == 1 && b && b < 1u << 30) {
		p->nspid = (int)b;
	} else if (!strncmp(buf, "#comm ", 6)) {
		size_t n = strnlen(buf + 6, sizeof(p->name) - 1);
		memcpy(p->name, buf + 6, n);
		p->name[n] = 0;
		procfs_unescape(p->name);	/* as put_name() wrote it */
	}
	return 0;
}

static int parse_saved(struct sym_process *p, struct saved_meta *mt,
		       const char *text, size_t len)
{
	const char *q = text, *lim = text + len;
	while (q < lim) {
		const char *nl = memchr(q, '\n', (size_t)(lim - q));
		const char *e = nl ? nl : lim;
		int rc = 0;
		if (*q == '#') {	/* a line too, for first_bad_line */
			p->ml.lines++;
			rc = parse_meta(p, mt, q, (size_t)(e - q));
		} else {
			rc = maps_list_add_line(&p->ml, q, (size_t)(e - q));
		}
		if (rc)
			return rc;
		q = e + 1;
	}
	return maps_list_finish(&p->ml);
}

/* Expected build-id per kept mapping ("" where none was recorded). */
static const char **saved_bids(struct sym_process *p,
			       const struct saved_meta *mt)
{
	const char **bids = calloc(p->ml.n ? p->ml.n : 1, sizeof(*bids));
	if (!bids)
		return NULL;
	for (size_t i = 0; i < p->ml.n; i++) {
		bids[i] = "";
		for (size_t k = 0; k < mt->nbid; k++)
			if (mt->bid_start[k] == p->ml.v[i].start)
				bids[i] = mt->bid[k];
	}
	return bids;
}

/* Index of the kept mapping that starts at start (a #main or #remap
 * line's), or -1. */
static ptrdiff_t entry_at(const struct sym_process *p, uint64_t start)
{
	ptrdiff_t k = maps_list_find(&p->ml, start);
	return k >= 0 && p->ml.v[k].start == start ? k : -1;
}

static int load(struct sym_session *s, struct sym_process *p,
		const char *text, size_t len)
{
	struct saved_meta mt = { 0 };
	const char **bids = NULL;
	int rc = parse_saved(p, &mt, text, len);
	if (!rc)
		rc = (bids = saved_bids(p, &mt)) ? 0 : -ENOMEM;
	p->n = p->ml.n;
	for (size_t i = 0; !rc && i < mt.nremaps; i++) {
		ptrdiff_t k = entry_at(p, mt.remaps[i]);
		if (k >= 0 && p->ml.v[k].kind == MAPS_FILE)
			p->ml.v[k].remapped = true;
	}
	if (!rc)
		rc = process_set_pm_path(s, p);
	if (!rc)
		rc = process_attach_files(s, p, bids);
	for (size_t i = 0; !rc && i < mt.nmains; i++) {
		ptrdiff_t k = entry_at(p, mt.mains[i]);
		if (k >= 0)
			p->m[k].mod.is_main = true;
	}
	free(bids);
	free(mt.bid_start);
	free(mt.bid);
	free(mt.mains);
	free(mt.remaps);
	return rc;
}

int sym_process_load_maps(struct sym_session *s, int pid, uint32_t image,
			  const char *text, size_t len,
			  const struct sym_origin *at, struct sf_err *err)
{
	struct sym_process *p = process_new(pid, image);
	if (!p)
		return sf_err_set(err, ENOMEM, "out of memory");
	p->loaded = true;
	int rc = load(s, p, text, len);
	if (!rc)
		rc = process_put(s, p);
	if (rc) {
		process_free(s, p);
		return sf_err_set(err, -rc, "saved maps of process %d: %s",
				  pid, strerror(-rc));
	}
	process_warn_bad_lines(s, p, "saved maps", at);
	return 0;
}

/* A name on one line, escaped as /proc/PID/status does (procfs_unescape()
 * reads it back). */
static void put_name(FILE *out, const char *name)
{
	for (; *name; name++)
		if (*name == '\n')
			fputs("\\n", out);
		else if (*name == '\\')
			fputs("\\\\", out);
		else
			fputc(*name, out);
}

int sym_process_write_maps(struct sym_session *s, int pid, uint32_t image,
			   FILE *out)
{
	struct sym_process *p = sym_process_find(s, pid, image);
	if (!p)
		return -ENOENT;
	for (size_t i = 0; i < p->n; i++) {
		fwrite(p->m[i].e->line, 1, p->m[i].e->line_len, out);
		fputc('\n', out);
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct sym_mapping *m = &p->m[i];
		if (m->file && m->file->bid_known && m->file->build_id[0])
			fprintf(out, "#bid %" PRIx64 " %s\n", m->e->start,
				m->file->build_id);
		if (m->mod.is_main)
			fprintf(out, "#main %" PRIx64 "\n", m->e->start);
		if (m->e->remapped)
			fprintf(out, "#remap %" PRIx64 "\n", m->e->start);
	}
	if (p->starttime)
		fprintf(out, "#starttime %" PRIu64 "\n", p->starttime);
	fprintf(out, "#nspid %d\n", p->nspid);
	if (p->name[0]) {
		fputs("#comm ", out);
		put_name(out, p->name);
		fputc('\n', out);
	}
	return fflush(out) || ferror(out) ? -EIO : 0;
}
